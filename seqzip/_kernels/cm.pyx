# cython: language_level=3
"""Context mixing: a bank of experts predicting each bit of a symbol, mixed by a learned
network and refined by adaptive secondary estimation.

A bit-mode kernel (``seqzip._core``): a symbol of an alphabet of A values is coded as
B = ceil(log2 A) binary decisions, most significant first.  A decision whose other branch holds
no symbol of the alphabet is forced and costs nothing.  For every decision:

1. *Experts* each give a probability that the bit is 1:
   - context models: order 0 and 1 from direct tables, orders 2 and up (and word, sparse and
     record contexts) from one hash table of 16-byte slots, one slot per context and group of
     up to 4 bits, found by a hash of the context and the bits of the symbol coded so far, with
     a check byte (a collision is rare and never fatal: it only mixes statistics).  Each slot
     holds a *bit history* per node: a nonstationary pair of counts (the count of the other
     bit is halved when it is large, so recent statistics weigh more), mapped to a probability
     by an adaptive table per context (state -> p, learned online);
   - match models: the last earlier occurrence of the current context (a hash of the last m
     bytes) predicts the symbol that followed it; its confidence is learned per match length;
   - word contexts (the current word's prefix, case folded; with the previous word(s)), sparse
     contexts (skipping bytes), record contexts (the byte one and two records above, with the
     record length detected from repeating byte distances);
   - symbol experts: any symbol-mode kernel (CTW, order2, an online network) through its
     ``ModelInterface``; its distribution over the alphabet gives the bit's probability as the
     ratio of the masses below the node.
2. A *mixer* combines the experts' stretched probabilities (log-odds): several weight sets,
   each chosen by a small context (the node of the symbol, the match state, the previous
   symbol, how many contexts are known), and one weight set *gated* by the online network's
   state (weights = U . a); a second layer mixes their outputs.  Trained per bit by Ollivier's
   quasi-diagonal Newton step (QDH, ``qd.pxd``), or plain SGD, or Adam.
3. *Secondary estimation* (APM): the mixed probability is refined by interpolated tables
   indexed by short contexts (order 0, order 1, a hash of order 2) and averaged in.

The result is P(1) in units of 2^-16, clamped to [1, 65535] (``seqzip._core`` codes it).

Determinism: tables and counts are integers; the mixer and APMs use float64 with + - * / in
fixed orders and table-driven stretch/squash computed at import from seqzip's det_log/det_exp.
Memory: every table is allocated once, at its configured size (``memory_bytes``); nothing grows.

    >>> from types import SimpleNamespace
    >>> config = SimpleNamespace(orders="2,3,4", match=4, match2=0, word=1, sparse=0, record=0,
    ...     indirect=0,
    ...     table_bits=14, history_bits=16, sets="node,match", layer2=1, optimizer="qdh",
    ...     rate=1.0, rate2=1.0, decay=0.999, eps=0.5, apm=2, apm_rate=7, gate_units=0,
    ...     gate_rate=0.1)
    >>> k = CMKernel(config, b"abc")
    >>> for s in [0, 1, 2] * 300:
    ...     k.update(s)
    >>> k.predict_bit() > 60000   # after "... b c" the first bit of "a" (0b00) is 0: P(1) low
    False
"""
cimport cython
import numpy as np
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.math cimport sqrt
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from seqzip._core import nested, put, take

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SEQZIP_PREFETCH(p) __builtin_prefetch((p), 1, 1)
    #else
    #define SEQZIP_PREFETCH(p) ((void)(p))
    #endif
    """
    void prefetch "SEQZIP_PREFETCH"(const void* p) noexcept nogil

from seqzip._core cimport (BIT_MODE, PROB_ONE, STATUS_MEMORY, STATUS_OK, STATUS_SYMBOL,
                           SYMBOL_MODE, Kernel, ModelInterface, raw_get, raw_set)
from seqzip._kernels.detmath cimport det_exp, det_log
from seqzip._kernels.qd cimport qd_row_step, qd_row_step_reciprocal

# ---------------------------------------------------------------- tables built at import

cdef enum:
    COUNT_LIMIT = 30      # the larger count of a bit history
    RECENT_LIMIT = 8      # histories this short also remember their last bit
    MAX_STATES = 256
    SM_LIMIT = 1023       # adaptation count cap of the state -> probability maps
    MAX_INPUTS = 96
    MAX_CONTEXTS = 48
    MAX_SETS = 8
    MAX_SYMBOL_EXPERTS = 4
    APM_BINS = 33
    MAX_APM = 5
    JOURNAL = 2 * 8 * MAX_CONTEXTS  # slots written or emptied below a save point
    SQUASH_SIZE = 4097    # squash over [-16, 16] in steps of 1/128

WORD_CONTEXTS = (0, 2, 4, 8)  # word contexts at word levels 0..3
cdef uint8_t EMPTY_SLOT[16]      # all-zero: the slot of a context never seen
cdef double PRIOR = 4.0        # QDH: prior curvature of each weight (samples of unit variance)
cdef double ADAM_B1 = 0.9
cdef double ADAM_B2 = 0.999

cdef uint8_t STATE_NEXT[MAX_STATES][2]
cdef uint8_t STATE_N0[MAX_STATES]
cdef uint8_t STATE_N1[MAX_STATES]
cdef uint8_t STATE_LAST[MAX_STATES]   # 0: not kept, 1: the last bit was 0, 2: it was 1
cdef int N_STATES = 0
cdef double STRETCH[4096]          # ln(p / (1 - p)) at p = (i + 1/2) / 4096
cdef double SQUASH[SQUASH_SIZE]    # 1 / (1 + e^-x) at x = i / 128 - 16
cdef uint32_t RECIPROCAL[SM_LIMIT + 1]   # 2^16 / (n + 1.5): the maps' learning rates


cdef void _build_states():
    """Bit histories (n0, n1): on bit y, n_y grows (to COUNT_LIMIT) and a count of the other
    bit above 2 drops to half plus one, so that a context that changes its mind is believed
    soon; while both counts are non-zero and their sum is at most RECENT_LIMIT the state also
    remembers which bit came last.  Breadth-first from (0, 0): state 0 is the empty history."""
    global N_STATES
    cdef int head = 0, s, y, t, n0, n1, last
    cdef int code[64][64][3]
    for n0 in range(64):
        for n1 in range(64):
            for last in range(3):
                code[n0][n1][last] = -1
    STATE_N0[0] = 0
    STATE_N1[0] = 0
    STATE_LAST[0] = 0
    code[0][0][0] = 0
    N_STATES = 1
    while head < N_STATES:
        s = head
        head += 1
        for y in range(2):
            n0 = STATE_N0[s]
            n1 = STATE_N1[s]
            if y:
                n1 = n1 + 1 if n1 < COUNT_LIMIT else n1
                if n0 > 2:
                    n0 = n0 // 2 + 1
            else:
                n0 = n0 + 1 if n0 < COUNT_LIMIT else n0
                if n1 > 2:
                    n1 = n1 // 2 + 1
            last = y + 1 if n0 > 0 and n1 > 0 and n0 + n1 <= RECENT_LIMIT else 0
            t = code[n0][n1][last]
            if t < 0:
                t = N_STATES
                code[n0][n1][last] = t
                STATE_N0[t] = n0
                STATE_N1[t] = n1
                STATE_LAST[t] = last
                N_STATES += 1
            STATE_NEXT[s][y] = t


cdef void _build_tables():
    cdef int i
    cdef double p, x
    _build_states()
    for i in range(4096):
        p = (i + 0.5) / 4096.0
        STRETCH[i] = det_log(p / (1.0 - p))
    for i in range(SQUASH_SIZE):
        x = i / 128.0 - 16.0
        SQUASH[i] = 1.0 / (1.0 + det_exp(-x))
    for i in range(SM_LIMIT + 1):
        RECIPROCAL[i] = <uint32_t>(65536.0 / (i + 1.5))


_build_tables()


cdef inline double squash(double x) noexcept nogil:
    """1 / (1 + e^-x), linearly interpolated from the table (exact at multiples of 1/128)."""
    cdef double pos
    cdef int i
    if x >= 16.0:
        return SQUASH[SQUASH_SIZE - 1]
    if x <= -16.0:
        return SQUASH[0]
    pos = (x + 16.0) * 128.0
    i = <int>pos
    return SQUASH[i] + (SQUASH[i + 1] - SQUASH[i]) * (pos - i)


cdef inline double stretch_p(double p) noexcept nogil:
    """ln(p / (1 - p)) of a probability, from the 12-bit table."""
    cdef int i = <int>(p * 4096.0)
    if i < 0:
        i = 0
    elif i > 4095:
        i = 4095
    return STRETCH[i]


cdef inline uint64_t hash2(uint64_t a, uint64_t b) noexcept nogil:
    """A 64-bit mix of two words (splitmix64's finaliser on a + golden-ratio b)."""
    cdef uint64_t z = a + (b + 0x9E3779B97F4A7C15ULL) * 0xD6E8FEB86659FD93ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


def bit_history_states():
    """The bit-history state table: ``(n0, n1, last, next_on_0, next_on_1)`` per state (last:
    0 not kept, 1 the last bit was 0, 2 it was 1)."""
    return [(STATE_N0[s], STATE_N1[s], STATE_LAST[s], STATE_NEXT[s][0], STATE_NEXT[s][1])
            for s in range(N_STATES)]


def py_squash(double x):
    return squash(x)


def py_stretch(double p):
    return stretch_p(p)


# ---------------------------------------------------------------- the kernel

cdef enum:  # context kinds, in the order of the inputs
    K_ORDER = 0
    K_WORD = 1
    K_SPARSE = 2
    K_RECORD = 3
    K_INDIRECT = 4

cdef enum:  # mixer weight-set selectors
    SEL_NODE = 0
    SEL_MATCH = 1
    SEL_C1 = 2
    SEL_ORDER = 3
    SEL_GATE = 4
    SEL_C2 = 5
    SEL_WORD = 6
    SEL_NET = 7

SELECTORS = {"node": SEL_NODE, "match": SEL_MATCH, "c1": SEL_C1, "order": SEL_ORDER,
             "gate": SEL_GATE, "c2": SEL_C2, "word": SEL_WORD, "net": SEL_NET}
OPTIMIZERS = {"qdh": 0, "sgd": 1, "adam": 2}


cdef struct StateMap:
    uint32_t* p          # (N_STATES,) P(1) << 16, per bit-history state
    uint16_t* n          # adaptation counts


cdef struct MatchModel:
    int min_len          # bytes hashed to find a candidate (0: off)
    uint32_t* table      # (2^bits,) last position + 1 of each hash
    uint64_t mask
    uint64_t ptr         # position of the predicted byte
    int length           # current match length (0: none)
    int predicted        # predicted symbol (alphabet index) or -1
    int miss             # the symbol's coded bits already disagree with the prediction
    uint32_t* sm         # (64 * 2,) P(1) << 16 by (length bucket, expected bit)
    uint16_t* smn
    int sm_index         # the entry used for the current bit (-1: none)


cdef struct Mixer:
    int n_sets           # weight sets in this selector
    double* w            # (n_sets, n_inputs)
    double* hd           # QDH running diagonal / Adam first moment
    double* hc           # QDH bias cross terms / Adam second moment
    int selected         # the set used for the current bit
    double dot           # its output (log-odds) and probability
    double p


@cython.final
cdef class CMKernel(Kernel):
    """The context-mixing model (see the module docstring).

    Args:
        config: the model's config: ``orders`` ("2,3,4,6": hashed context orders), ``match``
            and ``match2`` (minimum lengths of two match models, 0 = off), ``word`` (0-2),
            ``sparse`` (0-2), ``record`` (0/1), ``table_bits`` (2^table_bits slots of 16
            bytes), ``history_bits``, ``sets`` (weight-set selectors, comma-separated names of
            ``SELECTORS``), ``layer2``, ``optimizer`` (qdh, sgd, adam), ``rate``, ``rate2``,
            ``decay``, ``eps``, ``apm`` (0-5 stages), ``apm_rate``, ``gate_units``,
            ``gate_rate``.
        alphabet: the byte values of the symbols, in order (symbol i is alphabet[i]).
        experts: symbol-mode kernels whose distributions become inputs.
        network: a symbol-mode kernel with features (an online network): an input, and its
            state gates one weight set.  None for no network.
    """
    # alphabet
    cdef int A, B, n_groups
    cdef int group_bits[8]
    cdef uint8_t to_byte[256]
    # history
    cdef uint8_t* history
    cdef uint64_t history_mask, pos
    cdef uint64_t c8                       # the last 8 bytes, newest lowest
    cdef int c1_index                      # the last symbol's alphabet index
    cdef uint64_t line_start, prev_line_start
    # the symbol being coded
    cdef int node                          # 1, then 2 node + bit ...: the bits so far
    cdef int depth                         # bits coded in this symbol
    cdef int gnode                         # node inside the current group (1..15)
    cdef int group, group_left
    cdef int forced                        # the current bit is forced (0 or 1), or -1
    # hashed contexts and the direct tables
    cdef int n_hashed
    cdef int kinds[MAX_CONTEXTS]
    cdef int params[MAX_CONTEXTS]
    cdef uint64_t ctx_hash[MAX_CONTEXTS]
    cdef uint64_t group_hash[MAX_CONTEXTS]
    cdef uint8_t* slot[MAX_CONTEXTS]
    cdef uint8_t* table                    # (4 * buckets, 16): check byte + 15 bit histories
    cdef uint64_t bucket_mask
    cdef uint8_t* o0                       # (2^B,) order-0 bit histories by node
    cdef uint8_t* o1                       # (A, 2^B) order-1 bit histories
    cdef StateMap maps[MAX_CONTEXTS + 2]   # hashed contexts, then order 0, order 1
    cdef int map_state[MAX_CONTEXTS + 2]   # the state each map read for the current bit
    cdef int n_known                       # hashed contexts with a non-empty history
    # word and record state
    cdef int word_level, sparse_level, record_level
    cdef uint64_t word0, word1, word2
    cdef uint64_t separator, before_word, sentence
    cdef int word_len
    cdef uint64_t last_pos[256]
    cdef uint64_t last_dist[256]
    cdef uint64_t record_len, record_candidate
    cdef int record_votes, candidate_votes
    cdef uint16_t follow1[256]             # the last two bytes that followed each byte
    cdef uint16_t follow2[65536]           # ... and each pair of bytes
    # match models
    cdef MatchModel match[2]
    cdef int n_match
    # symbol experts (and the network, last)
    cdef list owned
    cdef ModelInterface expert_if[MAX_SYMBOL_EXPERTS + 1]
    cdef int n_experts
    cdef bint has_network
    cdef double* expert_probs              # (A,)
    cdef double* trees                     # (n_experts, 2^(B+1)) masses below each node
    cdef int tree_size
    # mixer
    cdef int n_inputs
    cdef double inputs[MAX_INPUTS]
    cdef int n_sets
    cdef int selector[MAX_SETS]
    cdef Mixer sets[MAX_SETS]
    cdef int gate_set                      # index of the gated set, or -1
    cdef int net_pattern                   # signs of the network's first six units
    cdef int gate_units                    # network features that gate it
    cdef double* gate_U                    # (2^B, gate_units, n_inputs): U per node
    cdef double* gate_hd
    cdef double* gate_hc
    cdef double* gate_features             # (gate_units,), [0] = 1
    cdef double* gate_z                    # (gate_units,) features times one input
    cdef bint layer2
    cdef Mixer final
    cdef double y2[MAX_SETS + 1]           # the second layer's inputs
    cdef int optimizer
    cdef double rate, rate2, gate_rate, decay, eps, adam_b1t, adam_b2t
    # secondary estimation
    cdef int n_apm, apm_rate
    cdef uint16_t* apm[MAX_APM]
    cdef int apm_ctx[MAX_APM]
    cdef int apm_bin[MAX_APM]
    cdef double apm_frac[MAX_APM]
    cdef double apm_out[MAX_APM]
    cdef double p_mix, p_final
    cdef readonly long symbols_seen
    # save points (Predictor.probs): while tracking, each 16-byte slot of the hash table is
    # journalled before it is written or emptied, so a save point need not copy the table
    cdef bint tracking
    cdef int jlen
    cdef uint8_t* jaddr[JOURNAL]
    cdef uint8_t jdata[JOURNAL][16]

    def __cinit__(self, *args, **kwargs):
        cdef int i
        self.history = NULL
        self.table = NULL
        self.o0 = NULL
        self.o1 = NULL
        self.expert_probs = NULL
        self.trees = NULL
        self.gate_U = NULL
        self.gate_hd = NULL
        self.gate_hc = NULL
        self.gate_features = NULL
        self.gate_z = NULL
        self.n_hashed = 0
        self.n_sets = 0
        self.n_match = 0
        self.n_apm = 0
        for i in range(MAX_CONTEXTS + 2):
            self.maps[i].p = NULL
            self.maps[i].n = NULL
        for i in range(2):
            self.match[i].table = NULL
            self.match[i].sm = NULL
            self.match[i].smn = NULL
        for i in range(MAX_SETS):
            self.sets[i].w = NULL
            self.sets[i].hd = NULL
            self.sets[i].hc = NULL
        self.final.w = NULL
        self.final.hd = NULL
        self.final.hc = NULL
        for i in range(MAX_APM):
            self.apm[i] = NULL

    def __dealloc__(self):
        cdef int i
        free(self.history)
        free(self.table)
        free(self.o0)
        free(self.o1)
        free(self.expert_probs)
        free(self.trees)
        free(self.gate_U)
        free(self.gate_hd)
        free(self.gate_hc)
        free(self.gate_features)
        free(self.gate_z)
        for i in range(MAX_CONTEXTS + 2):
            free(self.maps[i].p)
            free(self.maps[i].n)
        for i in range(2):
            free(self.match[i].table)
            free(self.match[i].sm)
            free(self.match[i].smn)
        for i in range(MAX_SETS):
            free(self.sets[i].w)
            free(self.sets[i].hd)
            free(self.sets[i].hc)
        free(self.final.w)
        free(self.final.hd)
        free(self.final.hc)
        for i in range(MAX_APM):
            free(self.apm[i])

    def __init__(self, config, bytes alphabet, list experts=None, Kernel network=None):
        cdef int i, k, A = len(alphabet)
        cdef Kernel expert
        if A < 1 or A > 256:
            raise ValueError("the alphabet must hold 1 to 256 byte values")
        self.A = A
        self.B = 1
        while (1 << self.B) < A:
            self.B += 1
        for i in range(A):
            self.to_byte[i] = alphabet[i]
        self.iface.alphabet_size = A
        self.iface.mode = BIT_MODE
        self.iface.bits = self.B
        # groups of at most 4 bits, the short one first (B = 7: 3 + 4)
        k = self.B - 4 * ((self.B - 1) // 4)
        self.group_bits[0] = k
        self.n_groups = 1
        while k < self.B:
            self.group_bits[self.n_groups] = 4
            self.n_groups += 1
            k += 4
        # history
        if not 10 <= config.history_bits <= 30:
            raise ValueError("history_bits must be in 10..30")
        self.history_mask = (<uint64_t>1 << config.history_bits) - 1
        self.history = <uint8_t*>calloc(self.history_mask + 1, 1)
        if self.history == NULL:
            raise MemoryError()
        # hashed contexts: orders, then word, sparse and record contexts
        orders = [int(v) for v in config.orders.split(",") if v] if config.orders else []
        if not 0 <= config.word <= 3 or not 0 <= config.sparse <= 2 or \
                not 0 <= config.record <= 1:
            raise ValueError("word is 0..3, sparse 0..2, record 0 or 1")
        self.word_level, self.sparse_level = config.word, config.sparse
        self.record_level = config.record
        specs = [(K_ORDER, o) for o in orders]
        specs += [(K_WORD, j) for j in range(WORD_CONTEXTS[self.word_level])]
        specs += [(K_SPARSE, j) for j in range((0, 3, 6)[self.sparse_level])]
        specs += [(K_RECORD, j) for j in range(3 if self.record_level else 0)]
        if not 0 <= config.indirect <= 1:
            raise ValueError("indirect is 0 or 1")
        specs += [(K_INDIRECT, j) for j in range(3 if config.indirect else 0)]
        if len(specs) > MAX_CONTEXTS:
            raise ValueError(f"at most {MAX_CONTEXTS} hashed contexts")
        for kind, param in specs:
            if kind == K_ORDER and not 2 <= param <= 32:
                raise ValueError("hashed orders must be in 2..32")
        self.n_hashed = len(specs)
        for i in range(self.n_hashed):
            self.kinds[i] = specs[i][0]
            self.params[i] = specs[i][1]
        if not 10 <= config.table_bits <= 28:
            raise ValueError("table_bits must be in 10..28")
        self.bucket_mask = ((<uint64_t>1 << config.table_bits) >> 2) - 1
        self.table = <uint8_t*>calloc((self.bucket_mask + 1) * 64, 1)
        self.o0 = <uint8_t*>calloc(1 << self.B, 1)
        self.o1 = <uint8_t*>calloc(A << self.B, 1)
        if self.table == NULL or self.o0 == NULL or self.o1 == NULL:
            raise MemoryError()
        for i in range(self.n_hashed + 2):
            self._init_map(&self.maps[i])
        # match models
        lengths = [m for m in (config.match, config.match2) if m]
        for i in range(len(lengths)):
            if not 2 <= lengths[i] <= 64:
                raise ValueError("match lengths must be in 2..64")
            self._init_match(&self.match[i], lengths[i], min(config.history_bits, 24))
        self.n_match = len(lengths)
        # symbol experts and the network
        self.owned = list(experts or []) + ([network] if network is not None else [])
        if len(self.owned) > MAX_SYMBOL_EXPERTS + 1:
            raise ValueError(f"at most {MAX_SYMBOL_EXPERTS} symbol experts and a network")
        self.n_experts = len(self.owned)
        self.has_network = network is not None
        for i in range(self.n_experts):
            expert = self.owned[i]
            if expert.iface.mode != SYMBOL_MODE or expert.iface.alphabet_size != A:
                raise ValueError("symbol experts must be symbol-mode kernels over the alphabet")
            self.expert_if[i] = expert.iface
        self.tree_size = 2 << self.B
        self.expert_probs = <double*>calloc(A, sizeof(double))
        self.trees = <double*>calloc(max(self.n_experts, 1) * self.tree_size, sizeof(double))
        if self.expert_probs == NULL or self.trees == NULL:
            raise MemoryError()
        # inputs: bias, hashed contexts, order 0 and 1, match models, symbol experts
        self.n_inputs = 1 + self.n_hashed + 2 + self.n_match + self.n_experts
        if self.n_inputs > MAX_INPUTS:
            raise ValueError("too many inputs")
        # mixer
        names = [s for s in config.sets.split(",") if s]
        if not 1 <= len(names) <= MAX_SETS or any(s not in SELECTORS for s in names):
            raise ValueError(f"sets must name 1 to {MAX_SETS} of {sorted(SELECTORS)}")
        if config.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {sorted(OPTIMIZERS)}")
        self.optimizer = OPTIMIZERS[config.optimizer]
        self.rate, self.rate2, self.gate_rate = config.rate, config.rate2, config.gate_rate
        self.decay, self.eps = config.decay, config.eps
        self.adam_b1t = self.adam_b2t = 1.0
        self.gate_set = -1
        self.gate_units = 0
        self.net_pattern = 0
        self.n_sets = len(names)
        for i in range(self.n_sets):
            self.selector[i] = SELECTORS[names[i]]
            if self.selector[i] == SEL_NET and not self.has_network:
                raise ValueError("the net selector needs a network")
            if self.selector[i] == SEL_GATE:
                if not self.has_network or config.gate_units < 1 or self.gate_set >= 0:
                    raise ValueError("one gated set, with a network and gate_units >= 1")
                self.gate_set = i
                self._init_gate(config.gate_units)
            self._init_mixer(&self.sets[i], self._selector_size(self.selector[i]),
                             self.n_inputs)
        self.layer2 = config.layer2 and self.n_sets > 1
        if self.layer2:
            self._init_mixer(&self.final, 1 << self.B, self.n_sets + 1)
            for i in range(1 << self.B):
                for k in range(self.n_sets):
                    self.final.w[i * (self.n_sets + 1) + 1 + k] = 1.0 / self.n_sets
        # secondary estimation
        if not 0 <= config.apm <= MAX_APM:
            raise ValueError(f"apm must be in 0..{MAX_APM}")
        if not 1 <= config.apm_rate <= 12:
            raise ValueError("apm_rate must be in 1..12")
        self.n_apm = config.apm
        self.apm_rate = config.apm_rate
        for i in range(self.n_apm):
            self._init_apm(i, self._apm_contexts(i))
        # ready for the first symbol
        self.pos = 0
        self.c8 = 0
        self.c1_index = 0
        self.line_start = self.prev_line_start = 0
        self.word0 = self.word1 = self.word2 = 0
        self.separator = self.before_word = self.sentence = 0
        self.word_len = 0
        memset(self.last_pos, 0, sizeof(self.last_pos))
        memset(self.last_dist, 0, sizeof(self.last_dist))
        self.record_len = self.record_candidate = 0
        self.record_votes = self.candidate_votes = 0
        memset(self.follow1, 0, sizeof(self.follow1))
        memset(self.follow2, 0, sizeof(self.follow2))
        self.symbols_seen = 0
        if self._begin_symbol() < 0:
            raise MemoryError()

    # ------------------------------------------------------------ allocation

    cdef int _init_map(self, StateMap* m) except -1:
        cdef int s
        m.p = <uint32_t*>malloc(MAX_STATES * sizeof(uint32_t))
        m.n = <uint16_t*>calloc(MAX_STATES, sizeof(uint16_t))
        if m.p == NULL or m.n == NULL:
            raise MemoryError()
        for s in range(MAX_STATES):  # the counts' own estimate (n1 + 1/2) / (n0 + n1 + 1)
            m.p[s] = <uint32_t>((STATE_N1[s] + 0.5) / (STATE_N0[s] + STATE_N1[s] + 1.0)
                                * 4294967295.0)
        return 0

    cdef int _init_match(self, MatchModel* m, int min_len, int bits) except -1:
        cdef int i
        m.min_len = min_len
        m.mask = (<uint64_t>1 << bits) - 1
        m.table = <uint32_t*>calloc(m.mask + 1, sizeof(uint32_t))
        m.sm = <uint32_t*>malloc(128 * sizeof(uint32_t))
        m.smn = <uint16_t*>calloc(128, sizeof(uint16_t))
        if m.table == NULL or m.sm == NULL or m.smn == NULL:
            raise MemoryError()
        for i in range(128):  # by (length bucket, expected bit): a weak belief at first
            m.sm[i] = 1073741824U if i & 1 == 0 else 3221225472U
        m.length = 0
        m.ptr = 0
        m.predicted = -1
        m.miss = 0
        m.sm_index = -1
        return 0

    cdef int _selector_size(self, int sel):
        if sel == SEL_NODE:
            return 1 << self.B
        if sel == SEL_MATCH:
            return 48 * 8
        if sel == SEL_C1:
            return self.A
        if sel == SEL_ORDER:
            return (self.n_hashed + 1) * 8
        if sel == SEL_C2:
            return 256 * 8
        if sel == SEL_WORD:
            return 16 * 4 * 8
        if sel == SEL_NET:
            return 64 * 8
        return 1  # SEL_GATE: its weights are computed from the gates

    cdef int _init_mixer(self, Mixer* m, int n_sets, int n) except -1:
        cdef int i
        m.n_sets = n_sets
        m.w = <double*>calloc(n_sets * n, sizeof(double))
        m.hd = <double*>calloc(n_sets * n, sizeof(double))
        m.hc = <double*>calloc(n_sets * n, sizeof(double))
        if m.w == NULL or m.hd == NULL or m.hc == NULL:
            raise MemoryError()
        if self.optimizer == 0:  # QDH: a prior curvature of a few samples
            for i in range(n_sets * n):
                m.hd[i] = PRIOR
        m.selected = 0
        m.dot = 0.0
        m.p = 0.5
        return 0

    cdef int _init_gate(self, int units) except -1:
        cdef int i, n = self.n_inputs
        self.gate_units = units
        cdef int size = (1 << self.B) * units * n
        self.gate_U = <double*>calloc(size, sizeof(double))
        self.gate_hd = <double*>calloc(size, sizeof(double))
        self.gate_hc = <double*>calloc(size, sizeof(double))
        self.gate_features = <double*>calloc(units, sizeof(double))
        self.gate_z = <double*>calloc(units, sizeof(double))
        if self.gate_U == NULL or self.gate_hd == NULL or self.gate_hc == NULL or \
                self.gate_features == NULL or self.gate_z == NULL:
            raise MemoryError()
        if self.optimizer == 0:
            for i in range(size):
                self.gate_hd[i] = PRIOR
        self.gate_features[0] = 1.0
        return 0

    cdef int _apm_contexts(self, int i):
        """Contexts of APM i: order 0 (the node), order 1, hashed order 2, hashed order 3,
        the match state."""
        return (1 << self.B, self.A << self.B, 1 << 14, 1 << 14, (48 << self.B))[i]

    cdef int _init_apm(self, int i, int contexts) except -1:
        cdef int c, j
        self.apm[i] = <uint16_t*>malloc(contexts * APM_BINS * sizeof(uint16_t))
        if self.apm[i] == NULL:
            raise MemoryError()
        for c in range(contexts):
            for j in range(APM_BINS):
                self.apm[i][c * APM_BINS + j] = <uint16_t>(squash((j - 16) * 0.5) * 65535.0)
        return 0

    # ------------------------------------------------------------ the hash table

    cdef uint8_t* _lookup(self, uint64_t h) noexcept nogil:
        """The slot of hash ``h``: the one with its check byte in its bucket of four, or the
        least used of the four, emptied (a bucket is one 64-byte cache line)."""
        cdef uint8_t check = <uint8_t>(h >> 56)
        cdef uint8_t* base = self.table + ((h & self.bucket_mask) << 6)
        cdef int i, best = 0, used, least
        if check == 0:
            check = 1
        for i in range(4):
            if base[i << 4] == check:
                return base + (i << 4)
        least = STATE_N0[base[1]] + STATE_N1[base[1]]
        for i in range(1, 4):
            used = STATE_N0[base[(i << 4) + 1]] + STATE_N1[base[(i << 4) + 1]]
            if used < least:
                least = used
                best = i
        base = base + (best << 4)
        if self.tracking:
            self._journal(base)
        memset(base, 0, 16)
        base[0] = check
        return base

    cdef inline void _journal(self, uint8_t* slot) noexcept nogil:
        """Keep the 16 bytes of ``slot`` before a write (only while tracking save points)."""
        if self.jlen < JOURNAL:
            self.jaddr[self.jlen] = slot
            memcpy(&self.jdata[self.jlen][0], slot, 16)
        self.jlen += 1

    # ------------------------------------------------------------ per symbol

    cdef uint64_t _back(self, uint64_t k) noexcept nogil:
        """The byte k positions back (1 = the last), 0 before the start."""
        if k > self.pos:
            return 0
        return self.history[(self.pos - k) & self.history_mask]

    cdef uint64_t _context_hash(self, int i) noexcept nogil:
        cdef int kind = self.kinds[i], j = self.params[i], k
        cdef uint64_t h, tag = <uint64_t>(kind * 64 + j + 1) << 48, r, column, above
        if kind == K_ORDER:
            if j <= 8:
                return hash2(tag, self.c8 & ((<uint64_t>-1) >> (64 - 8 * j)))
            h = hash2(tag, self.c8)
            for k in range(9, j + 1):
                h = hash2(h, self._back(k))
            return h
        if kind == K_WORD:
            # between words, the current "word" is the last two bytes (case folded)
            h = self.word0 if self.word_len else hash2(tag, (self.c8 & 0xFFFF) | 0x2020)
            if j == 0:
                return hash2(tag, h)
            if j == 1:
                return hash2(hash2(tag, h), self.word1)
            if j == 2:
                return hash2(hash2(hash2(tag, h), self.word1), self.word2)
            if j == 3:  # the column in the line and the byte above it in the previous line
                column = self.pos - self.line_start
                above = 0
                if self.line_start > self.prev_line_start and \
                        column < self.line_start - self.prev_line_start:
                    above = self.history[(self.prev_line_start + column) & self.history_mask]
                return hash2(tag, (above << 16) | (min(column, <uint64_t>255) << 8) |
                             (self.c8 & 0xFF))
            if j == 4:  # the word before the previous one, skipping it
                return hash2(hash2(tag, h), self.word2)
            if j == 5:  # the previous word and the separator after it
                return hash2(hash2(tag, self.word1), self.separator)
            if j == 6:  # the current word and the byte before it started
                return hash2(hash2(tag, h), self.before_word)
            # j == 7: the sentence so far (all words since the last end of sentence)
            return hash2(hash2(tag, h), self.sentence)
        if kind == K_SPARSE:
            if j == 0:
                return hash2(tag, (self.c8 >> 8) & 0xFF)
            if j == 1:
                return hash2(tag, (self.c8 >> 16) & 0xFF)
            if j == 2:
                return hash2(tag, (self.c8 >> 8) & 0xFFFF)
            if j == 3:
                return hash2(tag, (self.c8 & 0xFF) | ((self.c8 >> 8) & 0xFF00))
            if j == 4:
                return hash2(tag, (self.c8 >> 16) & 0xFFFF)
            return hash2(tag, (self.c8 >> 24) & 0xFFFFFFFFULL)
        if kind == K_INDIRECT:  # what followed the last byte(s) the previous times
            if j == 0:
                return hash2(tag, (self.c8 & 0xFF) | (<uint64_t>self.follow1[self.c8 & 0xFF] << 8))
            if j == 1:
                return hash2(tag, (self.c8 & 0xFFFF) |
                             (<uint64_t>self.follow2[self.c8 & 0xFFFF] << 16))
            return hash2(tag, (self.c8 & 0xFFFF) |
                         (<uint64_t>(self.follow1[self.c8 & 0xFF] & 0xFF) << 16))
        # K_RECORD: the bytes one and two records above (the record length is detected)
        r = self.record_len
        if r == 0:
            return hash2(tag, 0)
        if j == 0:
            return hash2(tag, (self._back(r) << 8) | (self.c8 & 0xFF))
        if j == 1:
            return hash2(tag, (self._back(r) << 8) | self._back(2 * r))
        return hash2(tag, (self._back(r) << 16) | (self._back(r - 1) << 8) |
                     self._back(r + 1) | (r << 24))

    cdef int _begin_symbol(self) noexcept:
        """Contexts, slots of the first group, match predictions and the symbol experts'
        distributions for the next symbol."""
        cdef int i, e, x, n, status
        cdef double* tree
        cdef const double* f
        cdef Py_ssize_t nf
        self.node = 1
        self.depth = 0
        self.gnode = 1
        self.group = 0
        self.group_left = self.group_bits[0]
        for i in range(self.n_hashed):  # hashes first, so that the buckets load in parallel
            self.ctx_hash[i] = self._context_hash(i)
            self.group_hash[i] = hash2(self.ctx_hash[i], 1)
            prefetch(self.table + ((self.group_hash[i] & self.bucket_mask) << 6))
        for i in range(self.n_hashed):
            self.slot[i] = self._lookup(self.group_hash[i])
        for i in range(self.n_match):
            self.match[i].miss = 0
        for e in range(self.n_experts):
            status = self.expert_if[e].predict(self.expert_if[e].state, self.expert_probs)
            if status < 0:
                return status
            tree = self.trees + e * self.tree_size
            n = 1 << self.B
            for x in range(n):
                tree[n + x] = self.expert_probs[x] if x < self.A else 0.0
            for x in range(n - 1, 0, -1):
                tree[x] = tree[2 * x] + tree[2 * x + 1]
        if self.has_network:
            f = self.expert_if[self.n_experts - 1].features(
                self.expert_if[self.n_experts - 1].state, &nf)
            self.net_pattern = 0
            for i in range(1, min(7, nf)):
                self.net_pattern = self.net_pattern * 2 + (f[i] > 0.0)
            for i in range(1, self.gate_units):
                self.gate_features[i] = f[i] if i < nf else 0.0
        return STATUS_OK

    cdef void _gate_weights(self) noexcept:
        """The gated set's weights at this node: w_i = sum_j U[node, j, i] a_j over the
        network's features."""
        cdef int i, j, n = self.n_inputs
        cdef double s
        cdef double* w = self.sets[self.gate_set].w
        cdef const double* U = self.gate_U + self.node * self.gate_units * n
        for i in range(n):
            s = 0.0
            for j in range(self.gate_units):
                s = s + U[j * n + i] * self.gate_features[j]
            w[i] = s

    cdef int _end_symbol(self, int x) noexcept:
        cdef uint8_t b = self.to_byte[x], folded
        cdef uint64_t here, d
        cdef int i, e, status
        here = self.pos
        self.follow1[self.c8 & 0xFF] = <uint16_t>((self.follow1[self.c8 & 0xFF] << 8) | b)
        self.follow2[self.c8 & 0xFFFF] = <uint16_t>((self.follow2[self.c8 & 0xFFFF] << 8) | b)
        self.history[here & self.history_mask] = b
        self.pos += 1
        self.c8 = (self.c8 << 8) | b
        self.c1_index = x
        self.symbols_seen += 1
        for i in range(self.n_match):
            self._match_update(&self.match[i], x)
        # words: letters (ASCII, case folded, and bytes >= 128 for UTF-8 text)
        folded = b | 0x20 if 65 <= b <= 90 else b
        if 97 <= folded <= 122 or b >= 128:
            if self.word_len == 0:
                self.before_word = (self.c8 >> 8) & 0xFF
            self.word0 = hash2(self.word0 + 0x57, folded)
            self.word_len += 1
        else:
            if self.word_len:
                self.word2 = self.word1
                self.word1 = self.word0
                self.sentence = hash2(self.sentence, self.word0)
                self.word0 = 0
                self.word_len = 0
                self.separator = 0
            self.separator = ((self.separator << 8) | b) & 0xFFFFFF
            if b == 46 or b == 33 or b == 63:  # . ! ? end a sentence
                self.sentence = 0
        if b == 10:
            self.prev_line_start = self.line_start
            self.line_start = self.pos
        # records: a byte value seen twice at the same distance votes for that period
        if self.record_level:
            if self.last_pos[b]:
                d = here + 1 - self.last_pos[b]
                if d == self.last_dist[b] and 2 <= d <= 65536:
                    if d == self.record_len:
                        if self.record_votes < 64:
                            self.record_votes += 1
                    elif d == self.record_candidate:
                        self.candidate_votes += 1
                        if self.candidate_votes > self.record_votes:
                            self.record_candidate = self.record_len
                            self.record_len = d
                            self.record_votes, self.candidate_votes = \
                                self.candidate_votes, 0
                    else:
                        self.record_candidate = d
                        self.candidate_votes = 1
                self.last_dist[b] = d
            self.last_pos[b] = here + 1
        for e in range(self.n_experts):
            status = self.expert_if[e].update(self.expert_if[e].state, x)
            if status < 0:
                return status
        return self._begin_symbol()

    cdef void _match_update(self, MatchModel* m, int x) noexcept:
        """After symbol x: extend the current match or drop it, then (re)find one by the hash
        of the last ``min_len`` bytes, verified backwards; remember this position."""
        cdef uint64_t h = 0, cand, k, limit
        cdef int j
        if m.length > 0:
            if m.predicted == x:
                if m.length < 65535:
                    m.length += 1
                m.ptr += 1
            else:
                m.length = 0
        if self.pos >= <uint64_t>m.min_len:
            for j in range(1, m.min_len + 1):
                h = hash2(h, self.history[(self.pos - j) & self.history_mask])
            h = h & m.mask
            if m.length == 0:
                cand = m.table[h]
                if cand > 0 and self.pos - cand < self.history_mask:
                    limit = min(cand, <uint64_t>64)
                    k = 0
                    while k < limit and self.history[(cand - 1 - k) & self.history_mask] == \
                            self.history[(self.pos - 1 - k) & self.history_mask]:
                        k += 1
                    if k >= <uint64_t>m.min_len:
                        m.length = <int>k
                        m.ptr = cand
            m.table[h] = <uint32_t>self.pos
        if m.length > 0 and m.ptr < self.pos:
            m.predicted = self._index_of(self.history[m.ptr & self.history_mask])
        else:
            m.length = 0
            m.predicted = -1

    cdef int _index_of(self, uint8_t b) noexcept:
        cdef int lo = 0, hi = self.A - 1, mid
        while lo <= hi:  # the alphabet is sorted
            mid = (lo + hi) >> 1
            if self.to_byte[mid] == b:
                return mid
            if self.to_byte[mid] < b:
                lo = mid + 1
            else:
                hi = mid - 1
        return -1

    # ------------------------------------------------------------ per bit

    cdef inline int _match_bucket(self, int length) noexcept nogil:
        """Length buckets 0..31: exact to 15, then logarithmic."""
        cdef int b = 16
        if length < 16:
            return length
        length >>= 4
        while length > 1 and b < 31:
            length >>= 1
            b += 1
        return b

    cdef inline int _byte_class(self, int b) noexcept nogil:
        """0 letter, 1 digit, 2 space or line break, 3 anything else."""
        if 97 <= (b | 32) <= 122 or b >= 128:
            return 0
        if 48 <= b <= 57:
            return 1
        if b == 32 or b == 10 or b == 13 or b == 9:
            return 2
        return 3

    cdef int _selected(self, int sel) noexcept:
        cdef MatchModel* m
        cdef int state
        if sel == SEL_NODE:
            return self.node
        if sel == SEL_C1:
            return self.c1_index
        if sel == SEL_ORDER:
            return self.n_known * 8 + self.depth
        if sel == SEL_C2:
            return <int>((self.c8 >> 8) & 0xFF) * 8 + self.depth
        if sel == SEL_NET:
            return self.net_pattern * 8 + self.depth
        if sel == SEL_WORD:  # letters into the word, and the kind of the last byte
            return (min(self.word_len, 15) * 4 + self._byte_class(<int>(self.c8 & 0xFF))) * 8 \
                + self.depth
        if sel == SEL_MATCH:
            if self.n_match == 0 or self.match[0].predicted < 0:
                state = 0
            elif self.match[0].miss:
                state = 1
            else:
                m = &self.match[0]
                state = 2 + 2 * min(self._match_bucket(m.length), 22) + \
                    ((m.predicted >> (self.B - 1 - self.depth)) & 1)
            return state * 8 + self.depth
        return 0

    cdef int c_predict_bit(self) noexcept:
        cdef int i, k, n = self.n_inputs, s, first_one, at, q, e, expected
        cdef double dot, p, pos, t
        cdef double* w
        cdef double* x = self.inputs
        cdef double* tree
        cdef Mixer* mix
        cdef MatchModel* m
        # a bit whose 1-branch holds no symbol of the alphabet is forced to 0
        first_one = ((self.node * 2 + 1) << (self.B - self.depth - 1)) - (1 << self.B)
        if first_one >= self.A:
            self.forced = 0
            return 0
        self.forced = -1
        if self.n_apm:  # the APM rows are known now: load them while the mixer works
            self.apm_ctx[0] = self.node
            self.apm_ctx[1] = (self.c1_index << self.B) | self.node
            self.apm_ctx[2] = <int>(hash2(self.c8 & 0xFFFF, <uint64_t>self.node) & 0x3FFF)
            self.apm_ctx[3] = <int>(hash2(self.c8 & 0xFFFFFF, <uint64_t>self.node) & 0x3FFF)
            for i in range(1, self.n_apm):
                prefetch(self.apm[i] + self.apm_ctx[i] * APM_BINS)
                prefetch(self.apm[i] + self.apm_ctx[i] * APM_BINS + 32)
        x[0] = 1.0
        at = 1
        self.n_known = 0
        for i in range(self.n_hashed):
            s = self.slot[i][self.gnode]
            self.map_state[i] = s
            self.n_known += s != 0
            x[at] = STRETCH[self.maps[i].p[s] >> 20] if s else 0.0
            at += 1
        s = self.o0[self.node]
        self.map_state[self.n_hashed] = s
        x[at] = STRETCH[self.maps[self.n_hashed].p[s] >> 20]
        s = self.o1[(self.c1_index << self.B) | self.node]
        self.map_state[self.n_hashed + 1] = s
        x[at + 1] = STRETCH[self.maps[self.n_hashed + 1].p[s] >> 20]
        at += 2
        for i in range(self.n_match):
            m = &self.match[i]
            if m.predicted >= 0 and not m.miss:
                expected = (m.predicted >> (self.B - 1 - self.depth)) & 1
                m.sm_index = 2 * self._match_bucket(m.length) + expected
                x[at] = STRETCH[m.sm[m.sm_index] >> 20]
            else:
                m.sm_index = -1
                x[at] = 0.0
            at += 1
        for e in range(self.n_experts):
            tree = self.trees + e * self.tree_size
            t = tree[self.node]
            x[at] = stretch_p(tree[2 * self.node + 1] / t) if t > 0.0 else 0.0
            at += 1
        # the mixer: each weight set, then the second layer
        if self.gate_set >= 0:
            self._gate_weights()
        for k in range(self.n_sets):
            mix = &self.sets[k]
            mix.selected = self._selected(self.selector[k])
            w = mix.w + mix.selected * n
            dot = 0.0
            for i in range(n):
                dot = dot + w[i] * x[i]
            if dot > 16.0:
                dot = 16.0
            elif dot < -16.0:
                dot = -16.0
            mix.dot = dot
            mix.p = squash(dot)
        if self.layer2:
            self.y2[0] = 1.0
            for k in range(self.n_sets):
                self.y2[k + 1] = self.sets[k].dot
            mix = &self.final
            mix.selected = self.node
            w = mix.w + mix.selected * (self.n_sets + 1)
            dot = 0.0
            for i in range(self.n_sets + 1):
                dot = dot + w[i] * self.y2[i]
            if dot > 16.0:
                dot = 16.0
            elif dot < -16.0:
                dot = -16.0
            mix.dot = dot
            mix.p = squash(dot)
        else:
            dot = 0.0
            for k in range(self.n_sets):
                dot = dot + self.sets[k].dot
            dot = dot / self.n_sets
        self.p_mix = squash(dot)
        # secondary estimation: interpolated tables over the mixed log-odds
        p = self.p_mix
        if self.n_apm:
            pos = (min(max(dot, -7.999), 7.999) + 8.0) * 2.0
            self.apm_ctx[4] = (self._selected(SEL_MATCH) >> 3 << self.B) | self.node
            for i in range(self.n_apm):
                self.apm_bin[i] = <int>pos
                self.apm_frac[i] = pos - self.apm_bin[i]
                at = self.apm_ctx[i] * APM_BINS + self.apm_bin[i]
                self.apm_out[i] = (self.apm[i][at] * (1.0 - self.apm_frac[i]) +
                                   self.apm[i][at + 1] * self.apm_frac[i]) * (1.0 / 65535.0)
                p = p + self.apm_out[i] * (i + 1)
            p = p / (1 + self.n_apm * (self.n_apm + 1) // 2)
        self.p_final = p
        q = <int>(p * 65536.0 + 0.5)
        if q < 16:
            q = 16
        elif q > 65520:
            q = 65520
        return q

    cdef void _train(self, Mixer* mix, const double* x, int n, double rate, int bit) noexcept:
        """One step of a weight set on its own error (all its inputs)."""
        cdef double err = bit - mix.p, var = mix.p * (1.0 - mix.p), g, bc1, bc2
        cdef double* w = mix.w + mix.selected * n
        cdef double* hd = mix.hd + mix.selected * n
        cdef double* hc = mix.hc + mix.selected * n
        cdef int i
        if self.optimizer == 0:
            qd_row_step_reciprocal(x, n, var, err, hd, hc, self.decay, self.eps, rate, w)
        elif self.optimizer == 1:
            for i in range(n):
                w[i] = w[i] + rate * err * x[i]
        else:
            bc1 = 1.0 - self.adam_b1t
            bc2 = 1.0 - self.adam_b2t
            for i in range(n):
                g = err * x[i]
                hd[i] = ADAM_B1 * hd[i] + (1.0 - ADAM_B1) * g
                hc[i] = ADAM_B2 * hc[i] + (1.0 - ADAM_B2) * g * g
                w[i] = w[i] + rate * (hd[i] / bc1) / (sqrt(hc[i] / bc2) + 1e-8)

    cdef void _gate_row_step(self, int i, int base, double var, double err) noexcept:
        """``qd_row_step_reciprocal`` over input i's gates U[node, :, i] (stride n_inputs)."""
        cdef int j, n = self.n_inputs, u = self.gate_units
        cdef double* hd = self.gate_hd + base + i
        cdef double* hc = self.gate_hc + base + i
        cdef double* w = self.gate_U + base + i
        cdef double inv, bias, c, ci, step, z
        for j in range(u):
            z = self.gate_z[j]
            hd[j * n] = self.decay * hd[j * n] + z * z * var
            hc[j * n] = self.decay * hc[j * n] + z * var
        inv = 1.0 / (hd[0] + self.eps)
        bias = err * inv
        for j in range(1, u):
            c = hc[j * n]
            ci = c * inv
            step = (self.gate_z[j] * err - err * ci) / (hd[j * n] + self.eps - c * ci)
            w[j * n] = w[j * n] + self.gate_rate * step
            bias = bias - ci * step
        w[0] = w[0] + self.gate_rate * bias

    cdef void _train_gate(self, int bit) noexcept:
        """The gates U[node] of the gated set: input i's weight is sum_j U[node, j, i] a_j,
        so its features are a_j x_i; one quasi-diagonal (or SGD, Adam) step per input."""
        cdef Mixer* mix = &self.sets[self.gate_set]
        cdef double err = bit - mix.p, var = mix.p * (1.0 - mix.p), g, bc1, bc2
        cdef int i, j, n = self.n_inputs, u = self.gate_units, at
        cdef int base = self.node * u * n
        for i in range(n):
            if self.optimizer == 0:
                for j in range(u):
                    self.gate_z[j] = self.gate_features[j] * self.inputs[i]
                self._gate_row_step(i, base, var, err)
            else:
                for j in range(u):
                    at = base + j * n + i
                    g = err * self.gate_features[j] * self.inputs[i]
                    if self.optimizer == 1:
                        self.gate_U[at] = self.gate_U[at] + self.gate_rate * g
                    else:
                        bc1 = 1.0 - self.adam_b1t
                        bc2 = 1.0 - self.adam_b2t
                        self.gate_hd[at] = ADAM_B1 * self.gate_hd[at] + (1.0 - ADAM_B1) * g
                        self.gate_hc[at] = ADAM_B2 * self.gate_hc[at] + (1.0 - ADAM_B2) * g * g
                        self.gate_U[at] = self.gate_U[at] + self.gate_rate * (
                            self.gate_hd[at] / bc1) / (sqrt(self.gate_hc[at] / bc2) + 1e-8)

    cdef inline void _learn_map(self, StateMap* m, int s, int bit) noexcept nogil:
        cdef int64_t target = 4294967295LL if bit else 0
        cdef int64_t p = m.p[s]
        m.p[s] = <uint32_t>(p + ((target - p) * RECIPROCAL[m.n[s]] >> 16))
        if m.n[s] < SM_LIMIT:
            m.n[s] += 1

    cdef int c_update_bit(self, int bit) noexcept:
        cdef int i, k, s, j, at, target, t
        cdef MatchModel* m
        cdef double frac
        cdef uint16_t* cell
        if bit != 0 and bit != 1:
            return STATUS_SYMBOL
        if self.forced >= 0:
            if bit != self.forced:
                return STATUS_SYMBOL
        else:
            # the experts' statistics
            for i in range(self.n_hashed):
                s = self.map_state[i]
                self._learn_map(&self.maps[i], s, bit)
                if self.tracking:
                    self._journal(self.slot[i])
                self.slot[i][self.gnode] = STATE_NEXT[s][bit]
            s = self.map_state[self.n_hashed]
            self._learn_map(&self.maps[self.n_hashed], s, bit)
            self.o0[self.node] = STATE_NEXT[s][bit]
            s = self.map_state[self.n_hashed + 1]
            self._learn_map(&self.maps[self.n_hashed + 1], s, bit)
            self.o1[(self.c1_index << self.B) | self.node] = STATE_NEXT[s][bit]
            for i in range(self.n_match):
                m = &self.match[i]
                if m.sm_index >= 0:
                    t = m.sm_index
                    m.sm[t] = <uint32_t>(<int64_t>m.sm[t] + (
                        ((4294967295LL if bit else 0) - <int64_t>m.sm[t]) *
                        RECIPROCAL[m.smn[t]] >> 16))
                    if m.smn[t] < SM_LIMIT:
                        m.smn[t] += 1
            # the mixer
            if self.optimizer == 2:
                self.adam_b1t = self.adam_b1t * ADAM_B1
                self.adam_b2t = self.adam_b2t * ADAM_B2
            for k in range(self.n_sets):
                if k == self.gate_set:
                    self._train_gate(bit)
                else:
                    self._train(&self.sets[k], self.inputs, self.n_inputs, self.rate, bit)
            if self.layer2:
                self._train(&self.final, self.y2, self.n_sets + 1, self.rate2, bit)
            # secondary estimation: both neighbouring bins move toward the bit
            target = 65535 if bit else 0
            for i in range(self.n_apm):
                at = self.apm_ctx[i] * APM_BINS + self.apm_bin[i]
                frac = self.apm_frac[i]
                cell = &self.apm[i][at]
                cell[0] = <uint16_t>(cell[0] + <int>((target - cell[0]) * (1.0 - frac)) //
                                     (1 << self.apm_rate))
                cell[1] = <uint16_t>(cell[1] + <int>((target - cell[1]) * frac) //
                                     (1 << self.apm_rate))
        # the symbol's prediction of each match model still holds?
        for i in range(self.n_match):
            m = &self.match[i]
            if m.predicted >= 0 and ((m.predicted >> (self.B - 1 - self.depth)) & 1) != bit:
                m.miss = 1
        self.node = self.node * 2 + bit
        self.depth += 1
        if self.depth == self.B:
            return self._end_symbol(self.node - (1 << self.B))
        self.group_left -= 1
        if self.group_left == 0:
            self.group += 1
            self.group_left = self.group_bits[self.group]
            self.gnode = 1
            for i in range(self.n_hashed):
                self.group_hash[i] = hash2(self.ctx_hash[i], <uint64_t>self.node)
                prefetch(self.table + ((self.group_hash[i] & self.bucket_mask) << 6))
            for i in range(self.n_hashed):
                self.slot[i] = self._lookup(self.group_hash[i])
        else:
            self.gnode = self.gnode * 2 + bit
        return STATUS_OK

    # ------------------------------------------------------------ the full distribution

    cdef uint8_t* _find(self, uint64_t h) noexcept nogil:
        """The slot of hash ``h`` if it exists, else an empty one (nothing is inserted)."""
        cdef uint8_t check = <uint8_t>(h >> 56)
        cdef uint8_t* base = self.table + ((h & self.bucket_mask) << 6)
        cdef int i
        if check == 0:
            check = 1
        for i in range(4):
            if base[i << 4] == check:
                return base + (i << 4)
        return EMPTY_SLOT

    cdef void _descend(self, int node, int depth, double mass, double* probs) noexcept:
        """Evaluate ``node`` (its bits so far are ``node``'s, ``depth`` of them) and recurse,
        writing mass x P(path) to the leaves; the slots of a new group are found read-only."""
        cdef int i, q, bit, group = 0, left = depth, start = 0, gnode
        cdef double p1
        if depth == self.B:
            if node - (1 << self.B) < self.A:
                probs[node - (1 << self.B)] = mass
            return
        while left >= self.group_bits[group]:  # the group of this bit and its first node
            left -= self.group_bits[group]
            start += self.group_bits[group]
            group += 1
        gnode = 1
        for i in range(left):  # the bits of this group so far
            gnode = gnode * 2 + ((node >> (left - 1 - i)) & 1)
        if left == 0 and depth > 0:
            for i in range(self.n_hashed):
                self.slot[i] = self._find(hash2(self.ctx_hash[i], <uint64_t>node))
        self.node, self.depth, self.gnode = node, depth, gnode
        for i in range(self.n_match):  # does the match's symbol still agree with the path?
            self.match[i].miss = self.match[i].predicted >= 0 and \
                (self.match[i].predicted >> (self.B - depth)) != (node - (1 << depth))
        q = self.c_predict_bit()
        p1 = q * (1.0 / PROB_ONE)
        for bit in range(2):
            if (p1 if bit else 1.0 - p1) > 0.0:
                self._descend(node * 2 + bit, depth + 1, mass * (p1 if bit else 1.0 - p1),
                              probs)
                if left == 0 and depth > 0 and bit == 0:  # restore this group's slots
                    for i in range(self.n_hashed):
                        self.slot[i] = self._find(hash2(self.ctx_hash[i], <uint64_t>node))

    cdef int c_predict(self, double* probs) noexcept:
        """The distribution over the alphabet implied by the bit predictions made before the
        symbol: each of the A - 1 decisions evaluated as ``predict_bit`` would, learning
        nothing (about A times its cost; for ``Predictor.probs``).  The coder's own charge for
        a symbol differs a little: the mixer and the maps learn after each of its bits, so
        the later bits are predicted by a model that has already seen the first ones
        (``seqzip._core.run`` with SCORE gives that exact charge)."""
        cdef int i, x
        cdef uint8_t* slots[MAX_CONTEXTS]
        cdef int miss[2]
        if self.depth != 0:
            return STATUS_SYMBOL  # only between symbols
        for i in range(self.n_hashed):
            slots[i] = self.slot[i]
        for i in range(self.n_match):
            miss[i] = self.match[i].miss
        for x in range(self.A):
            probs[x] = 0.0
        self._descend(1, 0, 1.0, probs)
        for i in range(self.n_hashed):
            self.slot[i] = slots[i]
        for i in range(self.n_match):
            self.match[i].miss = miss[i]
        self.node, self.depth, self.gnode = 1, 0, 1
        self.group, self.group_left = 0, self.group_bits[0]
        return STATUS_OK

    # ------------------------------------------------------------ inspection

    def mixer_inputs(self):
        """The mixer's inputs for the current bit (after ``predict_bit``): bias, hashed
        contexts, order 0, order 1, match models, symbol experts."""
        return np.array([self.inputs[i] for i in range(self.n_inputs)])

    def match_state(self, int i=0):
        """(length, predicted symbol or -1) of match model i."""
        if not 0 <= i < self.n_match:
            raise IndexError("no such match model")
        return self.match[i].length, self.match[i].predicted

    def match_probability(self, int i=0):
        """After ``predict_bit``: match model i's probability that the bit is the one its
        predicted symbol has (None when it predicts nothing for this bit)."""
        cdef MatchModel* m
        if not 0 <= i < self.n_match:
            raise IndexError("no such match model")
        m = &self.match[i]
        if m.sm_index < 0:
            return None
        p1 = m.sm[m.sm_index] * (1.0 / 4294967296.0)
        return p1 if m.sm_index & 1 else 1.0 - p1

    def record_length(self):
        """The detected record length (0: none)."""
        return self.record_len

    def word_hashes(self):
        """(current word, previous word, the one before): 0 for none."""
        return self.word0 if self.word_len else 0, self.word1, self.word2

    def context_count(self):
        """Hashed contexts, in input order."""
        return self.n_hashed

    def table_slots_used(self):
        """Slots of the hash table holding a context (check byte set)."""
        cdef uint64_t i, used = 0
        for i in range((self.bucket_mask + 1) * 4):
            used += self.table[i * 16] != 0
        return used

    def memory_allocated(self):
        """Bytes of the tables this kernel allocated (experts and network excluded)."""
        cdef int i
        cdef uint64_t total = (self.history_mask + 1) + (self.bucket_mask + 1) * 64 + \
            (1 << self.B) + (self.A << self.B) + (self.n_hashed + 2) * MAX_STATES * 6 + \
            self.A * sizeof(double) + max(self.n_experts, 1) * self.tree_size * sizeof(double)
        for i in range(self.n_match):
            total += (self.match[i].mask + 1) * 4 + 128 * 6
        for i in range(self.n_sets):
            total += 3 * self.sets[i].n_sets * self.n_inputs * sizeof(double)
        if self.layer2:
            total += 3 * self.final.n_sets * (self.n_sets + 1) * sizeof(double)
        total += self.gate_units * (3 * (1 << self.B) * self.n_inputs + 2) * sizeof(double)
        for i in range(self.n_apm):
            total += self._apm_contexts(i) * APM_BINS * 2
        return total

    # ------------------------------------------------------------ the full state

    def get_state(self):
        """The history, the hash table and direct tables, the state maps, the match models,
        the mixer's weights and curvature (or Adam moments), the gates, the APM tables, the
        symbol experts' and the network's states (under ``expertE.``) and the position inside
        the current symbol (see ``Kernel.get_state``)."""
        cdef int i
        state = Kernel.get_state(self)
        state.update(self._scalars())
        for name, size, address in self._buffers():
            state[name] = raw_get(<void*><size_t>address, size)
        for i in range(self.n_experts):
            for key, value in self.owned[i].get_state().items():
                state[f"expert{i}.{key}"] = value
        return state

    def set_state(self, dict state):
        """Trusted input: positions and indices inside the tables are checked only where a
        wrong one would reach outside them (the slots)."""
        cdef int i
        Kernel.set_state(self, state)
        scalars = self._check_scalars(state)
        for name, size, address in self._buffers():
            raw_set(<void*><size_t>address, size, state, name)
        for i in range(self.n_experts):
            self.owned[i].set_state(nested(state, f"expert{i}."))
        self._set_scalars(*scalars)
        self.jlen = 0

    # save points: what one bit's learning can change, short of the symbol's last bit (whose
    # update ends the symbol: history, match tables, experts and network move only then)

    def track_points(self, bint on):
        """Start (or stop) journalling the hash table's slots for :meth:`save_point`."""
        self.tracking = on
        self.jlen = 0

    def save_point(self):
        """A light copy of the state inside a symbol, for ``seqzip._core.bit_distribution``:
        valid while tracking and while no symbol ends (the kernel's last bit is never
        learnt below a save point)."""
        if not self.tracking or self.jlen > JOURNAL:
            raise RuntimeError("save points need track_points(True)")
        state = {"fallbacks": self.fallbacks}
        state.update(self._scalars())
        for name, size, address in self._buffers(True):
            state[name] = raw_get(<void*><size_t>address, size)
        return self.jlen, state

    def restore_point(self, point):
        """Return to a :meth:`save_point` taken since tracking started."""
        cdef int k, jlen = point[0]
        if not self.tracking or self.jlen > JOURNAL or not 0 <= jlen <= self.jlen:
            raise RuntimeError("not a save point of this tracking")
        for k in range(self.jlen - 1, jlen - 1, -1):
            memcpy(self.jaddr[k], &self.jdata[k][0], 16)
        self.jlen = jlen
        state = point[1]
        for name, size, address in self._buffers(True):
            raw_set(<void*><size_t>address, size, state, name)
        self.fallbacks = state["fallbacks"]
        self._set_scalars(*self._check_scalars(state))

    def _scalars(self):
        cdef int i
        cdef Py_ssize_t off
        ints = [self.c1_index, self.node, self.depth, self.gnode, self.group, self.group_left,
                self.forced, self.n_known, self.word_len, self.record_votes,
                self.candidate_votes, self.net_pattern, self.symbols_seen]
        for i in range(self.n_match):
            ints += [self.match[i].length, self.match[i].predicted, self.match[i].miss,
                     self.match[i].sm_index]
        for i in range(self.n_sets):
            ints.append(self.sets[i].selected)
        ints.append(self.final.selected)
        words = [self.pos, self.c8, self.line_start, self.prev_line_start, self.word0,
                 self.word1, self.word2, self.separator, self.before_word, self.sentence,
                 self.record_len, self.record_candidate]
        words += [self.match[i].ptr for i in range(self.n_match)]
        floats = [self.adam_b1t, self.adam_b2t, self.p_mix, self.p_final, self.final.dot,
                  self.final.p]
        for i in range(self.n_sets):
            floats += [self.sets[i].dot, self.sets[i].p]
        slots = []
        for i in range(self.n_hashed):
            if self.slot[i] == NULL:
                off = -2
            elif self.slot[i] == EMPTY_SLOT:
                off = -1
            else:
                off = self.slot[i] - self.table
            slots.append(off)
        return {"ints": np.array(ints, dtype=np.int64),
                "words": np.array(words, dtype=np.uint64),
                "floats": np.array(floats, dtype=np.float64),
                "slots": np.array(slots, dtype=np.int64)}

    def _check_scalars(self, dict state):
        ints = [int(v) for v in take(state, "ints", np.int64,
                                     (13 + 4 * self.n_match + self.n_sets + 1,))]
        words = [int(v) for v in take(state, "words", np.uint64, (12 + self.n_match,))]
        floats = [float(v) for v in take(state, "floats", np.float64, (6 + 2 * self.n_sets,))]
        slots = take(state, "slots", np.int64, (self.n_hashed,))
        limit = (self.bucket_mask + 1) * 64 - 16
        if (slots < -2).any() or (slots > limit).any() or \
                any(v >= 0 and v % 16 for v in slots):
            raise ValueError("model state holds slots outside the hash table")
        return ints, words, floats, [int(v) for v in slots]

    def _set_scalars(self, list ints, list words, list floats, list slots):
        cdef int i, k
        (self.c1_index, self.node, self.depth, self.gnode, self.group, self.group_left,
         self.forced, self.n_known, self.word_len, self.record_votes, self.candidate_votes,
         self.net_pattern, self.symbols_seen) = ints[:13]
        k = 13
        for i in range(self.n_match):
            self.match[i].length = ints[k]
            self.match[i].predicted = ints[k + 1]
            self.match[i].miss = ints[k + 2]
            self.match[i].sm_index = ints[k + 3]
            k += 4
        for i in range(self.n_sets):
            self.sets[i].selected = ints[k]
            k += 1
        self.final.selected = ints[k]
        (self.pos, self.c8, self.line_start, self.prev_line_start, self.word0, self.word1,
         self.word2, self.separator, self.before_word, self.sentence, self.record_len,
         self.record_candidate) = words[:12]
        for i in range(self.n_match):
            self.match[i].ptr = words[12 + i]
        self.adam_b1t, self.adam_b2t, self.p_mix, self.p_final = floats[:4]
        self.final.dot = floats[4]
        self.final.p = floats[5]
        for i in range(self.n_sets):
            self.sets[i].dot = floats[6 + 2 * i]
            self.sets[i].p = floats[7 + 2 * i]
        for i in range(self.n_hashed):
            if slots[i] == -2:
                self.slot[i] = NULL
            elif slots[i] == -1:
                self.slot[i] = EMPTY_SLOT
            else:
                self.slot[i] = self.table + <Py_ssize_t>slots[i]

    def _buffers(self, bint light=False):
        """(name, bytes, address) of every buffer the state holds; ``light``: of those one
        bit's learning can change, short of the symbol's last bit (the hash table is
        journalled instead)."""
        out = self._all_buffers()
        if light:
            heavy = {"history", "table", "last_pos", "last_dist", "follow1", "follow2",
                     "match0.table", "match1.table"}
            out = [b for b in out if b[0] not in heavy]
        return out

    def _all_buffers(self):
        cdef int i, n
        cdef list out = []
        out.append(("history", self.history_mask + 1, <size_t>self.history))
        out.append(("table", (self.bucket_mask + 1) * 64, <size_t>self.table))
        out.append(("o0", 1 << self.B, <size_t>self.o0))
        out.append(("o1", self.A << self.B, <size_t>self.o1))
        for i in range(self.n_hashed + 2):
            out.append((f"map{i}.p", MAX_STATES * 4, <size_t>self.maps[i].p))
            out.append((f"map{i}.n", MAX_STATES * 2, <size_t>self.maps[i].n))
        for i in range(self.n_match):
            out.append((f"match{i}.table", (self.match[i].mask + 1) * 4,
                        <size_t>self.match[i].table))
            out.append((f"match{i}.sm", 128 * 4, <size_t>self.match[i].sm))
            out.append((f"match{i}.smn", 128 * 2, <size_t>self.match[i].smn))
        out.append(("expert_probs", self.A * 8, <size_t>self.expert_probs))
        out.append(("trees", max(self.n_experts, 1) * self.tree_size * 8, <size_t>self.trees))
        for i in range(self.n_sets):
            n = self.sets[i].n_sets * self.n_inputs * 8
            out.append((f"set{i}.w", n, <size_t>self.sets[i].w))
            out.append((f"set{i}.hd", n, <size_t>self.sets[i].hd))
            out.append((f"set{i}.hc", n, <size_t>self.sets[i].hc))
        if self.layer2:
            n = self.final.n_sets * (self.n_sets + 1) * 8
            out.append(("final.w", n, <size_t>self.final.w))
            out.append(("final.hd", n, <size_t>self.final.hd))
            out.append(("final.hc", n, <size_t>self.final.hc))
        if self.gate_set >= 0:
            n = (1 << self.B) * self.gate_units * self.n_inputs * 8
            out.append(("gate_U", n, <size_t>self.gate_U))
            out.append(("gate_hd", n, <size_t>self.gate_hd))
            out.append(("gate_hc", n, <size_t>self.gate_hc))
            out.append(("gate_features", self.gate_units * 8, <size_t>self.gate_features))
            out.append(("gate_z", self.gate_units * 8, <size_t>self.gate_z))
        for i in range(self.n_apm):
            out.append((f"apm{i}", self._apm_contexts(i) * APM_BINS * 2, <size_t>self.apm[i]))
        out.append(("ctx_hash", sizeof(self.ctx_hash), <size_t>&self.ctx_hash[0]))
        out.append(("group_hash", sizeof(self.group_hash), <size_t>&self.group_hash[0]))
        out.append(("map_state", sizeof(self.map_state), <size_t>&self.map_state[0]))
        out.append(("last_pos", sizeof(self.last_pos), <size_t>&self.last_pos[0]))
        out.append(("last_dist", sizeof(self.last_dist), <size_t>&self.last_dist[0]))
        out.append(("follow1", sizeof(self.follow1), <size_t>&self.follow1[0]))
        out.append(("follow2", sizeof(self.follow2), <size_t>&self.follow2[0]))
        out.append(("inputs", sizeof(self.inputs), <size_t>&self.inputs[0]))
        out.append(("y2", sizeof(self.y2), <size_t>&self.y2[0]))
        out.append(("apm_ctx", sizeof(self.apm_ctx), <size_t>&self.apm_ctx[0]))
        out.append(("apm_bin", sizeof(self.apm_bin), <size_t>&self.apm_bin[0]))
        out.append(("apm_frac", sizeof(self.apm_frac), <size_t>&self.apm_frac[0]))
        out.append(("apm_out", sizeof(self.apm_out), <size_t>&self.apm_out[0]))
        return out
