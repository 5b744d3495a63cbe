# cython: language_level=3
"""Context mixing: a bank of experts predicting each bit of a symbol, mixed by a learned
network and refined by adaptive secondary estimation.

A bit-mode kernel (``seqzip._core``): a symbol of an alphabet of A values is coded as
B = ceil(log2 A) binary decisions, most significant first.  A decision whose other branch holds
no symbol of the alphabet is forced and costs nothing.  For every decision:

1. *Experts* each give a probability that the bit is 1:
   - context models: order 0 and 1 from direct tables, orders 2 and up (and word, sparse,
     record, indirect, column, text and aligned contexts: ``kinds.pxd``) from one hash table of 16-byte slots
     (``slots.pxd``), one slot per context and group of up to 4 bits.  Each slot holds a *bit
     history* per node, mapped to a probability by an adaptive table per context
     (``tables.pxd``: the states and the StateMap rule);
   - match models (``match.pxd``): the last earlier occurrence of the current context predicts
     the symbol that followed it; its confidence is learned per match length;
   - symbol experts (``experts.pxd``): any symbol-mode kernel (CTW, order2, an online network)
     through its ``ModelInterface``.
   The contexts read one shared context state (``context.pxd``: history, words, lines,
   records, follow tables), updated once per symbol.
2. A *mixer* (``mixer.pxd``) combines the experts' stretched probabilities (log-odds): several
   weight sets, each chosen by a small context (the node of the symbol, the match state, the
   previous symbol, how many contexts are known), and one weight set *gated* by the online
   network's state (weights = U . a); a second layer mixes their outputs.  Trained per bit by
   Ollivier's quasi-diagonal Newton step (QDH), or plain SGD, or Adam.
3. *Secondary estimation* (``apm.pxd``): the mixed probability is refined by interpolated
   tables indexed by short contexts (order 0, order 1, a hash of order 2) and averaged in.

The result is P(1) in units of 2^-16, clamped to [16, 65520] (``seqzip._core`` codes it).

Determinism: tables and counts are integers; the mixer and APMs use float64 with + - * / in
fixed orders and table-driven stretch/squash computed at import from seqzip's det_log/det_exp.
Memory: every table is allocated once, at its configured size (``memory_allocated``).

The kernel takes its config already parsed and checked (``seqzip.models.cm.CMConfig.spec``):

    >>> from types import SimpleNamespace
    >>> spec = SimpleNamespace(contexts=((KINDS["order"], 2), (KINDS["order"], 3)),
    ...     matches=(4,), table_bits=14, history_bits=16, selectors=(SELECTORS["node"],),
    ...     layer2=False, optimizer=OPTIMIZERS["qdh"], rate=1.0, rate2=1.0, decay=0.999,
    ...     eps=0.5, apm=2, apm_rate=7, gate_units=0, gate_rate=0.1, periods=False)
    >>> k = CMKernel(spec, b"abc")
    >>> for s in [0, 1, 2] * 300:
    ...     k.update(s)
    >>> k.predict_bit() < 5000   # after "... b c" the first bit of "a" (0b00) is 0: P(1) low
    True
"""
cimport cython
import numpy as np
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

from seqzip._core import nested, put, take
from seqzip._kernels.cm.checks import check_state
from seqzip._kernels.cm.names import legacy_scalars, scalar_type

from seqzip._core cimport (BIT_MODE, PROB_ONE, STATUS_MEMORY, STATUS_OK, STATUS_SYMBOL,
                           SYMBOL_MODE, Kernel, ModelInterface, raw_get, raw_set)
from seqzip._kernels.cm.apm cimport (APM_BINS, MAX_APM, Apm, apm_init_stage, apm_learn,
                                     apm_memory, apm_prefetch, apm_refine)
from seqzip._kernels.cm.context cimport (Context, byte_class, ctx_init, ctx_record_length,
                                         ctx_update)
from seqzip._kernels.cm.experts cimport (MAX_SYMBOL_EXPERTS, SymbolExperts, se_begin,
                                         se_init, se_input, se_memory, se_update)
from seqzip._kernels.cm.kinds cimport (K_ALIGNED, K_COLUMN, K_INDIRECT, K_ORDER, K_RECORD,
                                       K_SPARSE, K_TEXT, K_WORD, N_KINDS, kind_function, kind_hash, kind_tag)
from seqzip._kernels.cm.match cimport (MatchModel, mm_after_bit, mm_init, mm_input, mm_learn,
                                       mm_memory, mm_state, mm_update)
from seqzip._kernels.cm.mixer cimport (OPT_ADAM, OPT_QDH, OPT_SGD, PRIOR, Mixer, Optimiser,
                                       adam_step, mixer_init, mixer_memory, mixer_predict,
                                       mixer_train, optimiser_tick, qdh_step)
from seqzip._kernels.cm.slots cimport (EMPTY_SLOT, JOURNAL, MAX_CONTEXTS, SlotTable, st_bytes,
                                       st_find, st_init, st_lookup, st_prefetch, st_rewind,
                                       st_write)
from seqzip._kernels.cm.tables cimport (MAX_STATES, N_STATES, STATE_LAST, STATE_N0, STATE_N1,
                                        STATE_NEXT, StateMap, build_tables, hash2, sm_init_states,
                                        sm_learn, sm_memory, sm_stretch, squash, stretch_p)

build_tables()

cdef enum:
    MAX_INPUTS = 96
    MAX_SETS = 8
    MAX_MATCH = 2

cdef enum:  # mixer weight-set selectors
    SEL_NODE = 0
    SEL_MATCH = 1
    SEL_C1 = 2
    SEL_ORDER = 3
    SEL_GATE = 4
    SEL_C2 = 5
    SEL_WORD = 6
    SEL_NET = 7
    N_SELECTORS = 8

KINDS = {"order": K_ORDER, "word": K_WORD, "sparse": K_SPARSE, "record": K_RECORD,
         "indirect": K_INDIRECT, "column": K_COLUMN, "text": K_TEXT, "aligned": K_ALIGNED}
SELECTORS = {"node": SEL_NODE, "match": SEL_MATCH, "c1": SEL_C1, "order": SEL_ORDER,
             "gate": SEL_GATE, "c2": SEL_C2, "word": SEL_WORD, "net": SEL_NET}
OPTIMIZERS = {"qdh": OPT_QDH, "sgd": OPT_SGD, "adam": OPT_ADAM}
LIMITS = dict(contexts=MAX_CONTEXTS, sets=MAX_SETS, matches=MAX_MATCH,
              symbol_experts=MAX_SYMBOL_EXPERTS, apm=MAX_APM, inputs=MAX_INPUTS)


def bit_history_states():
    """The bit-history state table: ``(n0, n1, last, next_on_0, next_on_1)`` per state (last:
    0 not kept, 1 the last bit was 0, 2 it was 1)."""
    return [(STATE_N0[s], STATE_N1[s], STATE_LAST[s], STATE_NEXT[s][0], STATE_NEXT[s][1])
            for s in range(N_STATES)]


def py_squash(double x):
    return squash(x)


def py_stretch(double p):
    return stretch_p(p)


@cython.final
cdef class CMKernel(Kernel):
    """The context-mixing model (see the module docstring).

    Args:
        spec: the parsed config (``CMConfig.spec()``): ``contexts`` ((kind, j) pairs of
            ``KINDS``, in input order), ``matches`` (minimum lengths of the match models),
            ``table_bits`` (2^table_bits slots of 16 bytes), ``history_bits``, ``selectors``
            (ids of ``SELECTORS``, one per weight set), ``layer2``, ``optimizer`` (an id of
            ``OPTIMIZERS``), ``rate``, ``rate2``, ``decay``, ``eps``, ``apm`` (stages),
            ``apm_rate``, ``gate_units``, ``gate_rate``, ``periods`` (score repeat distances
            for the record length: record=2).  Only the bounds that keep memory
            safe are checked here.
        alphabet: the byte values of the symbols, in order (symbol i is alphabet[i]).
        experts: symbol-mode kernels whose distributions become inputs.
        network: a symbol-mode kernel with features (an online network): an input, and its
            state gates one weight set.  None for no network.
    """
    # alphabet
    cdef int A, B, n_groups
    cdef int group_bits[8]
    cdef uint8_t to_byte[256]
    # the shared context state
    cdef Context ctx
    # the symbol being coded
    cdef int node                          # 1, then 2 node + bit ...: the bits so far
    cdef int depth                         # bits coded in this symbol
    cdef int gnode                         # node inside the current group (1..15)
    cdef int group, group_left
    cdef int forced                        # the current bit is forced (0 or 1), or -1
    # hashed contexts (kinds.pxd) in the slot table, and the direct order-0/1 tables
    cdef int n_hashed
    cdef int kinds[MAX_CONTEXTS]
    cdef int params[MAX_CONTEXTS]
    cdef kind_hash hashers[MAX_CONTEXTS]
    cdef uint64_t ctx_hash[MAX_CONTEXTS]
    cdef uint64_t group_hash[MAX_CONTEXTS]
    cdef uint8_t* slot[MAX_CONTEXTS]
    cdef SlotTable slots
    cdef uint8_t* o0                       # (2^B,) order-0 bit histories by node
    cdef uint8_t* o1                       # (A, 2^B) order-1 bit histories
    cdef StateMap maps[MAX_CONTEXTS + 2]   # hashed contexts, then order 0, order 1
    cdef int map_state[MAX_CONTEXTS + 2]   # the state each map read for the current bit
    cdef int n_known                       # hashed contexts with a non-empty history
    # match models
    cdef MatchModel match[MAX_MATCH]
    cdef int n_match
    # symbol experts (and the network, last)
    cdef list owned
    cdef SymbolExperts experts
    cdef bint has_network
    # mixer
    cdef int n_inputs
    cdef double inputs[MAX_INPUTS]
    cdef int n_sets
    cdef int selector[MAX_SETS]
    cdef Mixer sets[MAX_SETS]
    cdef Optimiser opt
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
    cdef double rate, rate2, gate_rate
    # secondary estimation
    cdef Apm apm
    cdef double p_mix, p_final
    cdef readonly long symbols_seen

    def __dealloc__(self):
        cdef int i
        free(self.ctx.history)
        free(self.slots.table)
        free(self.o0)
        free(self.o1)
        free(self.experts.probs)
        free(self.experts.trees)
        free(self.gate_U)
        free(self.gate_hd)
        free(self.gate_hc)
        free(self.gate_features)
        free(self.gate_z)
        for i in range(MAX_CONTEXTS + 2):
            free(self.maps[i].p)
            free(self.maps[i].n)
        for i in range(MAX_MATCH):
            free(self.match[i].table)
            free(self.match[i].sm.p)
            free(self.match[i].sm.n)
        for i in range(MAX_SETS):
            free(self.sets[i].w)
            free(self.sets[i].hd)
            free(self.sets[i].hc)
        free(self.final.w)
        free(self.final.hd)
        free(self.final.hc)
        for i in range(MAX_APM):
            free(self.apm.table[i])

    def __init__(self, spec, bytes alphabet, list experts=None, Kernel network=None):
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
        # the bounds that keep memory safe (seqzip.models.cm checks the config itself)
        contexts = list(spec.contexts)
        selectors = list(spec.selectors)
        if not 10 <= spec.history_bits <= 26 or not 10 <= spec.table_bits <= 26:
            raise ValueError("history_bits and table_bits must be in 10..26")
        if len(contexts) > MAX_CONTEXTS or len(spec.matches) > MAX_MATCH or \
                not 1 <= len(selectors) <= MAX_SETS or not 0 <= spec.apm <= MAX_APM:
            raise ValueError(f"at most {MAX_CONTEXTS} hashed contexts, {MAX_MATCH} match "
                             f"models, 1 to {MAX_SETS} weight sets and {MAX_APM} APM stages")
        if any(not 0 <= kind < N_KINDS or not 0 <= j < 64 for kind, j in contexts) or \
                any(not 0 <= s < N_SELECTORS for s in selectors) or \
                spec.optimizer not in OPTIMIZERS.values() or \
                any(not 1 <= m <= 64 for m in spec.matches) or not 1 <= spec.apm_rate <= 12:
            raise ValueError("unknown context kind, selector or optimizer, or a match length "
                             "or apm_rate out of range")
        self.owned = list(experts or []) + ([network] if network is not None else [])
        if len(self.owned) > MAX_SYMBOL_EXPERTS + 1:
            raise ValueError(f"at most {MAX_SYMBOL_EXPERTS} symbol experts and a network")
        self.has_network = network is not None
        if (SEL_NET in selectors or SEL_GATE in selectors) and not self.has_network or \
                selectors.count(SEL_GATE) > 1 or (SEL_GATE in selectors) != (spec.gate_units > 0):
            raise ValueError("the net and gate selectors need a network; one gated set, with "
                             "gate_units >= 1")
        # the shared context state
        if ctx_init(&self.ctx, spec.history_bits,
                    any(kind in (K_RECORD, K_COLUMN) for kind, j in contexts) or spec.periods,
                    spec.periods, any(kind == K_TEXT for kind, j in contexts)):
            raise MemoryError()
        # hashed contexts and the direct tables
        self.n_hashed = len(contexts)
        for i in range(self.n_hashed):
            self.kinds[i], self.params[i] = contexts[i]
            self.hashers[i] = kind_function(self.kinds[i])
        if st_init(&self.slots, spec.table_bits) < 0:
            raise MemoryError()
        self.o0 = <uint8_t*>calloc(1 << self.B, 1)
        self.o1 = <uint8_t*>calloc(A << self.B, 1)
        if self.o0 == NULL or self.o1 == NULL:
            raise MemoryError()
        for i in range(self.n_hashed + 2):
            if sm_init_states(&self.maps[i]) < 0:
                raise MemoryError()
        # match models
        self.n_match = len(spec.matches)
        for i in range(self.n_match):
            if mm_init(&self.match[i], spec.matches[i], min(spec.history_bits, 24)) < 0:
                raise MemoryError()
        # symbol experts and the network
        self.experts.n = len(self.owned)
        for i in range(self.experts.n):
            expert = self.owned[i]
            if expert.iface.mode != SYMBOL_MODE or expert.iface.alphabet_size != A:
                raise ValueError("symbol experts must be symbol-mode kernels over the alphabet")
            self.experts.iface[i] = expert.iface
        if se_init(&self.experts, A, self.B) < 0:
            raise MemoryError()
        # inputs: bias, hashed contexts, order 0 and 1, match models, symbol experts
        self.n_inputs = 1 + self.n_hashed + 2 + self.n_match + self.experts.n
        if self.n_inputs > MAX_INPUTS:
            raise ValueError("too many inputs")
        # mixer
        self.opt.kind = spec.optimizer
        self.opt.decay, self.opt.eps = spec.decay, spec.eps
        self.opt.b1t = self.opt.b2t = 1.0
        self.rate, self.rate2, self.gate_rate = spec.rate, spec.rate2, spec.gate_rate
        self.gate_set = -1
        self.gate_units = 0
        self.net_pattern = 0
        self.n_sets = len(selectors)
        for i in range(self.n_sets):
            self.selector[i] = selectors[i]
            if self.selector[i] == SEL_GATE:
                self.gate_set = i
                self._init_gate(spec.gate_units)
            if mixer_init(&self.sets[i], self._selector_size(self.selector[i]), self.n_inputs,
                          &self.opt) < 0:
                raise MemoryError()
        self.layer2 = spec.layer2 and self.n_sets > 1
        if self.layer2:
            if mixer_init(&self.final, 1 << self.B, self.n_sets + 1, &self.opt) < 0:
                raise MemoryError()
            for i in range(1 << self.B):
                for k in range(self.n_sets):
                    self.final.w[i * (self.n_sets + 1) + 1 + k] = 1.0 / self.n_sets
        # secondary estimation: order 0 (the node), order 1, hashed order 2, hashed order 3,
        # the match state
        self.apm.n = spec.apm
        self.apm.rate = spec.apm_rate
        for i in range(self.apm.n):
            if apm_init_stage(&self.apm, i, (1 << self.B, A << self.B, 1 << 14, 1 << 14,
                                             48 << self.B)[i]) < 0:
                raise MemoryError()
        self.symbols_seen = 0
        if self._begin_symbol() < 0:
            raise MemoryError()

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
        if self.opt.kind == OPT_QDH:
            for i in range(size):
                self.gate_hd[i] = PRIOR
        self.gate_features[0] = 1.0
        return 0

    # ------------------------------------------------------------ per symbol

    cdef int _begin_symbol(self) noexcept:
        """Contexts, slots of the first group and the symbol experts' distributions for the
        next symbol."""
        cdef int i, k, status
        cdef const double* f
        cdef Py_ssize_t nf
        self.node = 1
        self.depth = 0
        self.gnode = 1
        self.group = 0
        self.group_left = self.group_bits[0]
        for i in range(self.n_hashed):  # hashes first, so that the buckets load in parallel
            self.ctx_hash[i] = self.hashers[i](&self.ctx, kind_tag(self.kinds[i],
                                                                   self.params[i]),
                                               self.params[i])
            self.group_hash[i] = hash2(self.ctx_hash[i], 1)
            st_prefetch(&self.slots, self.group_hash[i])
        for i in range(self.n_hashed):
            self.slot[i] = st_lookup(&self.slots, self.group_hash[i])
        status = se_begin(&self.experts)
        if status < 0:
            return status
        if self.has_network:
            k = self.experts.n - 1
            f = self.experts.iface[k].features(self.experts.iface[k].state, &nf)
            self.net_pattern = 0
            for i in range(1, min(7, nf)):
                self.net_pattern = self.net_pattern * 2 + (f[i] > 0.0)
            for i in range(1, self.gate_units):
                self.gate_features[i] = f[i] if i < nf else 0.0
        return STATUS_OK

    cdef int _end_symbol(self, int x) noexcept:
        cdef int i, status
        ctx_update(&self.ctx, self.to_byte[x], x)
        self.symbols_seen += 1
        for i in range(self.n_match):
            mm_update(&self.match[i], &self.ctx, x, self.to_byte, self.A)
        status = se_update(&self.experts, x)
        if status < 0:
            return status
        return self._begin_symbol()

    # ------------------------------------------------------------ per bit

    cdef int _selected(self, int sel) noexcept:
        if sel == SEL_NODE:
            return self.node
        if sel == SEL_C1:
            return self.ctx.c1_index
        if sel == SEL_ORDER:
            return self.n_known * 8 + self.depth
        if sel == SEL_C2:
            return <int>((self.ctx.c8 >> 8) & 0xFF) * 8 + self.depth
        if sel == SEL_NET:
            return self.net_pattern * 8 + self.depth
        if sel == SEL_WORD:  # letters into the word, and the kind of the last byte
            return (min(self.ctx.word_len, 15) * 4 + byte_class(<int>(self.ctx.c8 & 0xFF))) \
                * 8 + self.depth
        if sel == SEL_MATCH:
            return self._match_state() * 8 + self.depth
        return 0

    cdef inline int _match_state(self) noexcept:
        if self.n_match == 0:
            return 0
        return mm_state(&self.match[0], self.B, self.depth)

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

    cdef int c_predict_bit(self) noexcept:
        cdef int i, k, n = self.n_inputs, s, first_one, at
        cdef double dot, p
        cdef double* x = self.inputs
        # a bit whose 1-branch holds no symbol of the alphabet is forced to 0
        first_one = ((self.node * 2 + 1) << (self.B - self.depth - 1)) - (1 << self.B)
        if first_one >= self.A:
            self.forced = 0
            return 0
        self.forced = -1
        if self.apm.n:  # the APM rows are known now: load them while the mixer works
            self.apm.ctx[0] = self.node
            self.apm.ctx[1] = (self.ctx.c1_index << self.B) | self.node
            self.apm.ctx[2] = <int>(hash2(self.ctx.c8 & 0xFFFF, <uint64_t>self.node) & 0x3FFF)
            self.apm.ctx[3] = <int>(hash2(self.ctx.c8 & 0xFFFFFF, <uint64_t>self.node) & 0x3FFF)
            apm_prefetch(&self.apm)
        # the experts' inputs: bias, hashed contexts, order 0 and 1, match models, symbol
        # experts
        x[0] = 1.0
        at = 1
        self.n_known = 0
        for i in range(self.n_hashed):
            s = self.slot[i][self.gnode]
            self.map_state[i] = s
            self.n_known += s != 0
            x[at] = sm_stretch(&self.maps[i], s) if s else 0.0
            at += 1
        s = self.o0[self.node]
        self.map_state[self.n_hashed] = s
        x[at] = sm_stretch(&self.maps[self.n_hashed], s)
        s = self.o1[(self.ctx.c1_index << self.B) | self.node]
        self.map_state[self.n_hashed + 1] = s
        x[at + 1] = sm_stretch(&self.maps[self.n_hashed + 1], s)
        at += 2
        for i in range(self.n_match):
            x[at] = mm_input(&self.match[i], self.B, self.depth)
            at += 1
        for i in range(self.experts.n):
            x[at] = se_input(&self.experts, i, self.node)
            at += 1
        # the mixer: each weight set, then the second layer
        if self.gate_set >= 0:
            self._gate_weights()
        for k in range(self.n_sets):
            mixer_predict(&self.sets[k], self._selected(self.selector[k]), x)
        if self.layer2:
            self.y2[0] = 1.0
            for k in range(self.n_sets):
                self.y2[k + 1] = self.sets[k].dot
            mixer_predict(&self.final, self.node, self.y2)
            dot = self.final.dot
        else:
            dot = 0.0
            for k in range(self.n_sets):
                dot = dot + self.sets[k].dot
            dot = dot / self.n_sets
        self.p_mix = squash(dot)
        # secondary estimation
        p = self.p_mix
        if self.apm.n:
            self.apm.ctx[4] = (self._match_state() << self.B) | self.node
            p = apm_refine(&self.apm, p, dot)
        self.p_final = p
        k = <int>(p * 65536.0 + 0.5)
        if k < 16:
            k = 16
        elif k > 65520:
            k = 65520
        return k

    cdef void _train_gate(self, int bit) noexcept:
        """The gates U[node] of the gated set: input i's weight is sum_j U[node, j, i] a_j,
        so its features are a_j x_i; one step of the mixer's optimiser per input."""
        cdef Mixer* mix = &self.sets[self.gate_set]
        cdef double err = bit - mix.p, var = mix.p * (1.0 - mix.p), g
        cdef int i, j, n = self.n_inputs, u = self.gate_units, at
        cdef int base = self.node * u * n
        for i in range(n):
            if self.opt.kind == OPT_QDH:
                for j in range(u):
                    self.gate_z[j] = self.gate_features[j] * self.inputs[i]
                qdh_step(self.gate_z, u, var, err, self.gate_hd + base + i,
                         self.gate_hc + base + i, n, self.opt.decay, self.opt.eps,
                         self.gate_rate, self.gate_U + base + i)
            else:
                for j in range(u):
                    at = base + j * n + i
                    g = err * self.gate_features[j] * self.inputs[i]
                    if self.opt.kind == OPT_SGD:
                        self.gate_U[at] = self.gate_U[at] + self.gate_rate * g
                    else:
                        adam_step(&self.gate_hd[at], &self.gate_hc[at], &self.gate_U[at], g,
                                  self.gate_rate, &self.opt)

    cdef int c_update_bit(self, int bit) noexcept:
        cdef int i, k, s
        if bit != 0 and bit != 1:
            return STATUS_SYMBOL
        if self.forced >= 0:
            if bit != self.forced:
                return STATUS_SYMBOL
        else:
            # the experts' statistics
            for i in range(self.n_hashed):
                s = self.map_state[i]
                sm_learn(&self.maps[i], s, bit)
                st_write(&self.slots, self.slot[i], self.gnode, STATE_NEXT[s][bit])
            s = self.map_state[self.n_hashed]
            sm_learn(&self.maps[self.n_hashed], s, bit)
            self.o0[self.node] = STATE_NEXT[s][bit]
            s = self.map_state[self.n_hashed + 1]
            sm_learn(&self.maps[self.n_hashed + 1], s, bit)
            self.o1[(self.ctx.c1_index << self.B) | self.node] = STATE_NEXT[s][bit]
            for i in range(self.n_match):
                mm_learn(&self.match[i], bit)
            # the mixer
            optimiser_tick(&self.opt)
            for k in range(self.n_sets):
                if k == self.gate_set:
                    self._train_gate(bit)
                else:
                    mixer_train(&self.sets[k], self.inputs, self.rate, bit, &self.opt)
            if self.layer2:
                mixer_train(&self.final, self.y2, self.rate2, bit, &self.opt)
            apm_learn(&self.apm, bit)
        for i in range(self.n_match):
            mm_after_bit(&self.match[i], self.B, self.depth, bit)
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
                st_prefetch(&self.slots, self.group_hash[i])
            for i in range(self.n_hashed):
                self.slot[i] = st_lookup(&self.slots, self.group_hash[i])
        else:
            self.gnode = self.gnode * 2 + bit
        return STATUS_OK

    # ------------------------------------------------------------ the full distribution

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
                self.slot[i] = st_find(&self.slots, hash2(self.ctx_hash[i], <uint64_t>node))
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
                        self.slot[i] = st_find(&self.slots,
                                               hash2(self.ctx_hash[i], <uint64_t>node))
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
        p1 = m.sm.p[m.sm_index] * (1.0 / 4294967296.0)
        return p1 if m.sm_index & 1 else 1.0 - p1

    def record_length(self):
        """The detected record length the record contexts use (0: none)."""
        return ctx_record_length(&self.ctx)

    def word_hashes(self):
        """(current word, previous word, the one before): 0 for none."""
        return self.ctx.word0 if self.ctx.word_len else 0, self.ctx.word1, self.ctx.word2

    def context_count(self):
        """Hashed contexts, in input order."""
        return self.n_hashed

    def table_slots_used(self):
        """Slots of the hash table holding a context (check byte set)."""
        cdef uint64_t i, used = 0
        for i in range((self.slots.bucket_mask + 1) * 4):
            used += self.slots.table[i * 16] != 0
        return used

    def memory_allocated(self):
        """Bytes of the tables this kernel allocated (experts and network excluded), the sum
        of its components' own accounts."""
        cdef int i
        cdef uint64_t total = (self.ctx.history_mask + 1) + st_bytes(&self.slots) + \
            (1 << self.B) + (self.A << self.B) + se_memory(&self.experts) + apm_memory(&self.apm)
        for i in range(self.n_hashed + 2):
            total += sm_memory(&self.maps[i])
        for i in range(self.n_match):
            total += mm_memory(&self.match[i])
        for i in range(self.n_sets):
            total += mixer_memory(&self.sets[i])
        if self.layer2:
            total += mixer_memory(&self.final)
        total += self.gate_units * (3 * (1 << self.B) * self.n_inputs + 2) * sizeof(double)
        return total

    # ------------------------------------------------------------ the full state

    def get_state(self):
        """The history, the hash table and direct tables, the state maps, the match models,
        the mixer's weights and curvature (or Adam moments), the gates, the APM tables, the
        symbol experts' and the network's states (under ``expertE.``), each component's named
        scalars (``ctx.pos``, ``match0.length`` ...) and the position inside the current
        symbol (see ``Kernel.get_state``)."""
        cdef int i
        state = Kernel.get_state(self)
        for name, value in self._scalars().items():
            state[name] = np.array(value, dtype=scalar_type(name))
        state["slots"] = self._slot_offsets()
        for name, size, address in self._buffers():
            state[name] = raw_get(<void*><size_t>address, size)
        for i in range(self.experts.n):
            for key, value in self.owned[i].get_state().items():
                state[f"expert{i}.{key}"] = value
        return state

    def set_state(self, dict state):
        """Take a state of a kernel built with the same arguments.  A model file is untrusted
        input: every index, count, position and float the kernel would use is checked first
        (``checks.check_state``), then the symbol experts' and the network's states (each
        kernel checks its own; on a failure those already taken are put back), and only then
        is anything written, so a bad state raises ``ValueError`` naming its field and leaves
        the kernel as it was.  A state written before the scalars were named (``ints``,
        ``words``, ``floats``: model files of seqzip 0cd69a4 and older) is read too."""
        cdef int i
        cdef const uint8_t[::1] v
        fallbacks = int(take(state, "fallbacks", np.int64, ()))
        if fallbacks < 0:
            raise ValueError("model state field 'fallbacks' is negative")
        if "ints" in state:
            scalars = legacy_scalars(state, self.n_match, self.n_sets)
        else:
            scalars = {name: take(state, name, scalar_type(name), ()).item()
                       for name in self._scalars()}
        buffers = self._buffers()
        raw = {name: np.ascontiguousarray(take(state, name, np.uint8, (size,)))
               for name, size, address in buffers}
        slots = check_state(self._layout(), scalars, raw,
                            take(state, "slots", np.int64, (self.n_hashed,)))
        self._set_experts(state)
        for name, size, address in buffers:
            if size:
                v = raw[name]
                memcpy(<void*><size_t>address, &v[0], size)
        self.fallbacks = fallbacks
        self._set_scalars(scalars, slots)
        self.slots.jlen = 0

    def _set_experts(self, dict state):
        """The symbol experts' and the network's states, all or none."""
        cdef int i
        before = []
        try:
            for i in range(self.experts.n):
                before.append(self.owned[i].get_state())
                self.owned[i].set_state(nested(state, f"expert{i}."))
        except Exception:
            for i in range(len(before)):  # the failing one too: it may have begun
                self.owned[i].set_state(before[i])
            raise

    def _layout(self):
        """The sizes and counts ``checks.check_state`` checks a state against."""
        cdef int i
        return {"A": self.A, "B": self.B,
                "group_bits": [self.group_bits[i] for i in range(self.n_groups)],
                "n_hashed": self.n_hashed, "n_match": self.n_match, "n_states": N_STATES,
                "table_bytes": st_bytes(&self.slots),
                "set_rows": [self.sets[i].n_sets for i in range(self.n_sets)],
                "final_rows": self.final.n_sets if self.layer2 else 0,
                "optimizer": {OPT_QDH: "qdh", OPT_SGD: "sgd", OPT_ADAM: "adam"}[self.opt.kind],
                "gate_units": self.gate_units if self.gate_set >= 0 else 0,
                "apm_contexts": [self.apm.contexts[i] for i in range(self.apm.n)]}

    # save points: what one bit's learning can change, short of the symbol's last bit (whose
    # update ends the symbol: history, match tables, experts and network move only then)

    def track_points(self, bint on):
        """Start (or stop) journalling the hash table's slots for :meth:`save_point`."""
        self.slots.tracking = on
        self.slots.jlen = 0

    def save_point(self):
        """A light copy of the state inside a symbol, for ``seqzip._core.bit_distribution``:
        valid while tracking and while no symbol ends (the kernel's last bit is never
        learnt below a save point)."""
        if not self.slots.tracking or self.slots.jlen > JOURNAL:
            raise RuntimeError("save points need track_points(True)")
        state = {"fallbacks": self.fallbacks, "scalars": self._scalars(),
                 "slots": self._slot_offsets()}
        for name, size, address in self._buffers(True):
            state[name] = raw_get(<void*><size_t>address, size)
        return self.slots.jlen, state

    def restore_point(self, point):
        """Return to a :meth:`save_point` taken since tracking started."""
        cdef int jlen = point[0]
        if not self.slots.tracking or self.slots.jlen > JOURNAL or \
                not 0 <= jlen <= self.slots.jlen:
            raise RuntimeError("not a save point of this tracking")
        st_rewind(&self.slots, jlen)
        state = point[1]
        for name, size, address in self._buffers(True):
            raw_set(<void*><size_t>address, size, state, name)
        self.fallbacks = state["fallbacks"]
        self._set_scalars(state["scalars"], self._check_slots(state["slots"]))

    def _scalars(self):
        """Every scalar of the state by name, component by component."""
        cdef int i
        out = {"symbol.node": self.node, "symbol.depth": self.depth, "symbol.gnode": self.gnode,
               "symbol.group": self.group, "symbol.group_left": self.group_left,
               "symbol.forced": self.forced, "symbol.n_known": self.n_known,
               "symbol.net_pattern": self.net_pattern, "symbol.seen": self.symbols_seen,
               "ctx.c1_index": self.ctx.c1_index, "ctx.word_len": self.ctx.word_len,
               "ctx.record_votes": self.ctx.record_votes,
               "ctx.candidate_votes": self.ctx.candidate_votes,
               "ctx.pos": self.ctx.pos, "ctx.c8": self.ctx.c8,
               "ctx.line_start": self.ctx.line_start,
               "ctx.prev_line_start": self.ctx.prev_line_start, "ctx.word0": self.ctx.word0,
               "ctx.word1": self.ctx.word1, "ctx.word2": self.ctx.word2,
               "ctx.separator": self.ctx.separator, "ctx.before_word": self.ctx.before_word,
               "ctx.sentence": self.ctx.sentence, "ctx.record_len": self.ctx.record_len,
               "ctx.record_candidate": self.ctx.record_candidate,
               "opt.b1t": self.opt.b1t, "opt.b2t": self.opt.b2t,
               "out.p_mix": self.p_mix, "out.p_final": self.p_final,
               "final.selected": self.final.selected, "final.dot": self.final.dot,
               "final.p": self.final.p}
        for i in range(self.n_match):
            out[f"match{i}.length"] = self.match[i].length
            out[f"match{i}.predicted"] = self.match[i].predicted
            out[f"match{i}.miss"] = self.match[i].miss
            out[f"match{i}.sm_index"] = self.match[i].sm_index
            out[f"match{i}.ptr"] = self.match[i].ptr
        for i in range(self.n_sets):
            out[f"set{i}.selected"] = self.sets[i].selected
            out[f"set{i}.dot"] = self.sets[i].dot
            out[f"set{i}.p"] = self.sets[i].p
        return out

    def _set_scalars(self, dict v, list slots):
        cdef int i
        self.node, self.depth, self.gnode = v["symbol.node"], v["symbol.depth"], v["symbol.gnode"]
        self.group, self.group_left = v["symbol.group"], v["symbol.group_left"]
        self.forced, self.n_known = v["symbol.forced"], v["symbol.n_known"]
        self.net_pattern, self.symbols_seen = v["symbol.net_pattern"], v["symbol.seen"]
        self.ctx.c1_index, self.ctx.word_len = v["ctx.c1_index"], v["ctx.word_len"]
        self.ctx.record_votes = v["ctx.record_votes"]
        self.ctx.candidate_votes = v["ctx.candidate_votes"]
        self.ctx.pos, self.ctx.c8 = v["ctx.pos"], v["ctx.c8"]
        self.ctx.line_start = v["ctx.line_start"]
        self.ctx.prev_line_start = v["ctx.prev_line_start"]
        self.ctx.word0, self.ctx.word1, self.ctx.word2 = v["ctx.word0"], v["ctx.word1"], \
            v["ctx.word2"]
        self.ctx.separator, self.ctx.before_word = v["ctx.separator"], v["ctx.before_word"]
        self.ctx.sentence, self.ctx.record_len = v["ctx.sentence"], v["ctx.record_len"]
        self.ctx.record_candidate = v["ctx.record_candidate"]
        self.opt.b1t, self.opt.b2t = v["opt.b1t"], v["opt.b2t"]
        self.p_mix, self.p_final = v["out.p_mix"], v["out.p_final"]
        self.final.selected, self.final.dot, self.final.p = v["final.selected"], \
            v["final.dot"], v["final.p"]
        for i in range(self.n_match):
            self.match[i].length = v[f"match{i}.length"]
            self.match[i].predicted = v[f"match{i}.predicted"]
            self.match[i].miss = v[f"match{i}.miss"]
            self.match[i].sm_index = v[f"match{i}.sm_index"]
            self.match[i].ptr = v[f"match{i}.ptr"]
        for i in range(self.n_sets):
            self.sets[i].selected = v[f"set{i}.selected"]
            self.sets[i].dot, self.sets[i].p = v[f"set{i}.dot"], v[f"set{i}.p"]
        for i in range(self.n_hashed):
            if slots[i] == -2:
                self.slot[i] = NULL
            elif slots[i] == -1:
                self.slot[i] = EMPTY_SLOT
            else:
                self.slot[i] = self.slots.table + <Py_ssize_t>slots[i]

    def _slot_offsets(self):
        """The current slot of each hashed context as an offset into the table (-1: the
        empty slot, -2: none)."""
        cdef int i
        cdef Py_ssize_t off
        out = np.empty(self.n_hashed, dtype=np.int64)
        for i in range(self.n_hashed):
            if self.slot[i] == NULL:
                off = -2
            elif self.slot[i] == EMPTY_SLOT:
                off = -1
            else:
                off = self.slot[i] - self.slots.table
            out[i] = off
        return out

    def _check_slots(self, slots):
        limit = (self.slots.bucket_mask + 1) * 64 - 16
        if (slots < -2).any() or (slots > limit).any() or \
                any(v >= 0 and v % 16 for v in slots):
            raise ValueError("model state holds slots outside the hash table")
        return [int(v) for v in slots]

    def _buffers(self, bint light=False):
        """(name, bytes, address) of every buffer the state holds; ``light``: of those one
        bit's learning can change, short of the symbol's last bit (the hash table is
        journalled instead)."""
        out = self._all_buffers()
        if light:
            heavy = {"history", "table", "last_pos", "last_dist", "follow1", "follow2",
                     "period_d", "period_s", "period_len", "text_state",
                     "match0.table", "match1.table"}
            out = [b for b in out if b[0] not in heavy]
        return out

    def _all_buffers(self):
        cdef int i, n
        cdef list out = []
        out.append(("history", self.ctx.history_mask + 1, <size_t>self.ctx.history))
        out.append(("table", (self.slots.bucket_mask + 1) * 64, <size_t>self.slots.table))
        out.append(("o0", 1 << self.B, <size_t>self.o0))
        out.append(("o1", self.A << self.B, <size_t>self.o1))
        for i in range(self.n_hashed + 2):
            out.append((f"map{i}.p", MAX_STATES * 4, <size_t>self.maps[i].p))
            out.append((f"map{i}.n", MAX_STATES * 2, <size_t>self.maps[i].n))
        for i in range(self.n_match):
            out.append((f"match{i}.table", (self.match[i].mask + 1) * 4,
                        <size_t>self.match[i].table))
            out.append((f"match{i}.sm", 128 * 4, <size_t>self.match[i].sm.p))
            out.append((f"match{i}.smn", 128 * 2, <size_t>self.match[i].sm.n))
        out.append(("expert_probs", self.A * 8, <size_t>self.experts.probs))
        out.append(("trees", max(self.experts.n, 1) * self.experts.tree_size * 8, <size_t>self.experts.trees))
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
        for i in range(self.apm.n):
            out.append((f"apm{i}", self.apm.contexts[i] * APM_BINS * 2, <size_t>self.apm.table[i]))
        out.append(("ctx_hash", sizeof(self.ctx_hash), <size_t>&self.ctx_hash[0]))
        out.append(("group_hash", sizeof(self.group_hash), <size_t>&self.group_hash[0]))
        out.append(("map_state", sizeof(self.map_state), <size_t>&self.map_state[0]))
        out.append(("last_pos", sizeof(self.ctx.last_pos), <size_t>&self.ctx.last_pos[0]))
        out.append(("last_dist", sizeof(self.ctx.last_dist), <size_t>&self.ctx.last_dist[0]))
        out.append(("follow1", sizeof(self.ctx.follow1), <size_t>&self.ctx.follow1[0]))
        out.append(("follow2", sizeof(self.ctx.follow2), <size_t>&self.ctx.follow2[0]))
        if self.ctx.periods:
            out.append(("period_d", sizeof(self.ctx.period_d), <size_t>&self.ctx.period_d[0]))
            out.append(("period_s", sizeof(self.ctx.period_s), <size_t>&self.ctx.period_s[0]))
            out.append(("period_len", sizeof(self.ctx.period_len),
                        <size_t>&self.ctx.period_len[0]))
        if self.ctx.text:
            out.append(("text_state", sizeof(self.ctx.text_state),
                        <size_t>&self.ctx.text_state[0]))
        out.append(("inputs", sizeof(self.inputs), <size_t>&self.inputs[0]))
        out.append(("y2", sizeof(self.y2), <size_t>&self.y2[0]))
        out.append(("apm_ctx", sizeof(self.apm.ctx), <size_t>&self.apm.ctx[0]))
        out.append(("apm_bin", sizeof(self.apm.bin), <size_t>&self.apm.bin[0]))
        out.append(("apm_frac", sizeof(self.apm.frac), <size_t>&self.apm.frac[0]))
        out.append(("apm_out", sizeof(self.apm.out), <size_t>&self.apm.out[0]))
        return out
