"""Context mixing: a bank of experts predicting each bit of a symbol, mixed by a learned
network and refined by adaptive secondary estimation.

A bit-mode kernel (``seqzip._core``): a symbol of an alphabet of A values is coded as
B = ceil(log2 A) binary decisions, most significant first.  A decision whose other branch holds
no symbol of the alphabet is forced and costs nothing.  For every decision:

1. *Experts* each give a probability that the bit is 1: the *bank* of components behind one
   C-level interface (``component.pxd``), each owning its state, memory account and named
   state; this kernel runs the bank, the mixer and the APMs:
   - context models (``hashed.pxd``): orders 0 and 1 from direct tables, orders 2 and up and
     the other kinds (``kinds.pxd``: word, sparse, record, markup, numeric ...) from one hash
     table of 16-byte slots (``slots.pxd``), a *bit history* per node mapped to a probability
     by an adaptive table per context (``tables.pxd``);
   - match models (``match.pxd``); 1-bit image and numeric-sample experts (``image.pxd``,
     ``samples.pxd``); symbol experts (``experts.pxd``): CTW, order2, an online network;
   all read one context state (``context.pxd``), updated once per symbol.
2. A *mixer* (``mixer.pxd``) combines the experts' stretched probabilities (log-odds): several
   weight sets, each chosen by a small context (``selectors.pxd``), and one weight set
   *gated* by the online network's state (weights = U . a); a second layer mixes their
   outputs.  Trained per bit by Ollivier's quasi-diagonal Newton step (QDH), SGD or Adam.
3. *Secondary estimation* (``apm.pxd``, ``sse.pxd``): the mixed probability refined by
   interpolated tables indexed by short contexts; then the last mix (``post.pxd``).  The
   result, P(1) in units of 2^-16 in [16, 65520] (sse bit 9: [1, 65535]), goes to the coder.

Determinism: tables and counts are integers; the mixer and APMs use float64 with + - * / in
fixed orders and table-driven stretch/squash computed at import from seqzip's det_log/det_exp;
every table is allocated once, at its configured size (``memory_allocated``).

The kernel takes its config already parsed and checked (``seqzip.models.cm.CMConfig.spec``):

    >>> from seqzip.models.cm import CMConfig
    >>> spec = CMConfig(orders="2,3", match=4, word=0, experts="", sets="node", layer2=False,
    ...                 table_bits=14, history_bits=16, apm=2, apm_rate=7).spec
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
from libc.string cimport memset

from seqzip._core import nested, take
from seqzip._kernels.cm.checks import check_spec, check_state
from seqzip._kernels.cm.names import legacy_scalars, scalar_type

from seqzip._core cimport BIT_MODE, PROB_ONE, STATUS_OK, STATUS_SYMBOL, Kernel, ModelInterface
from seqzip._kernels.cm.apm cimport APM_BINS, MAX_APM, Apm, apm_fields, apm_free, apm_memory
from seqzip._kernels.cm.component cimport (MAX_COMPONENTS, WALK_BEGIN, WALK_END, WALK_NODE,
                                           Component, Cursor, build_fn)
from seqzip._kernels.cm.bin2 cimport B2_WORDS
from seqzip._kernels.cm.context cimport (RECORD_MAX, ROW_WORDS, Context, ctx_bin2_init,
                                         ctx_fields, ctx_free, ctx_init, ctx_markup_init,
                                         ctx_record_length, ctx_update, ctx_words2_init)
from seqzip._kernels.cm.experts cimport MAX_SYMBOL_EXPERTS, SymbolExperts, se_build
from seqzip._kernels.cm.netsel cimport (ns_bit, ns_fields, ns_free, ns_init, ns_learn, ns_memory,
                                        ns_refine, ns_rows)
from seqzip._kernels.cm.field cimport F_BYTES, F_F64, F_INT, F_LONG, field_read, field_write
from seqzip._kernels.cm.gate cimport (Gate, gate_fields, gate_free, gate_init, gate_memory,
                                      gate_train, gate_weights)
from seqzip._kernels.cm.hashed cimport Contexts, cx_build, cx_set_slots, cx_slot_offsets
from seqzip._kernels.cm.cxinputs cimport ci_build, ci_init_weights
from seqzip._kernels.cm.mpred cimport mp_build
from seqzip._kernels.cm.xpred cimport xp_build, xp_context_init
from seqzip._kernels.cm.image cimport IMAGE_MAPS, image_build, image_bytes, image_layout
from seqzip._kernels.cm.kinds cimport (K_ALIGNED, K_ALIGNED16, K_CODE, K_COLUMN, K_INDIRECT,
                                       K_MARKUP, K_NUMERIC, K_ORDER, K_RECORD, K_ROWS, K_SPARSE,
                                       K_TEXT, K_WORD, K_WORDS2, MK_DEPTH_MAX, MM_MODES, N_KINDS)
from seqzip._kernels.cm.samples cimport SAMPLE_MAPS, SAMPLE_SIZE, samples_build
from seqzip._kernels.cm.floats cimport FLOAT_BYTES, FLOAT_MAPS, floats_build
from seqzip._kernels.cm.rows cimport rows_build
from seqzip._kernels.cm.match cimport MATCH_BUCKETS, MATCH_MAX, MatchModel, mm_build, mm_state
from seqzip._kernels.cm.runs cimport runs_build, runs_layout
from seqzip._kernels.cm.mixer cimport (OPT_ADAM, OPT_QDH, OPT_SGD, Mixer, Optimiser, mixer_fields,
                                       mixer_fetch, mixer_free, mixer_init, mixer_memory,
                                       mixer_predict, mixer_predict_sets, mixer_simd,
                                       mixer_train, mixer_train_sets, optimiser_tick)
from seqzip._kernels.cm.selectors cimport (NET_PATTERNS, N_SELECTORS, SEL_GATE, SEL_NET,
                                           SEL_WORDS2, SEL_NETP, SEL_NETTOP, selector_ids,
                                           selector_rows, selector_rows_of)
from seqzip._kernels.cm.post cimport (Post, post_fields, post_free, post_init, post_learn,
                                      post_memory, post_refine)
from seqzip._kernels.cm.sse cimport (SSE_FINE, Sse, final_init, final_rows, sse_fields, sse_free,
                                     sse_learn, sse_memory, sse_refine, sse_rows)
from seqzip._kernels.cm.slots cimport JOURNAL, MAX_CONTEXTS, st_bytes, st_rewind
from seqzip._kernels.cm.tables cimport (BIG_PLAIN, BIG_POPULATE, N_STATES, SM_LIMIT, build_tables,
                                        squash)

build_tables()

KINDS = {"order": K_ORDER, "word": K_WORD, "sparse": K_SPARSE, "record": K_RECORD, "rows": K_ROWS,
         "indirect": K_INDIRECT, "column": K_COLUMN, "text": K_TEXT, "aligned": K_ALIGNED,
         "aligned16": K_ALIGNED16, "numeric": K_NUMERIC, "markup": K_MARKUP, "code": K_CODE,
         "words2": K_WORDS2}
SELECTORS = selector_ids()  # name -> id
OPTIMIZERS = {"qdh": OPT_QDH, "sgd": OPT_SGD, "adam": OPT_ADAM}


def simd_path():
    """Which copy of the mixer's QDH loops this module runs: ``"avx2"`` on a CPU with AVX2,
    else (or with SEQZIP_SIMD=0 in the environment) ``"generic"``.  Both give the same bits."""
    return "avx2" if mixer_simd() else "generic"
# symbols up to which a kernel built for them takes plain pages (``size_hint``).  Measured at
# level 6 (session 12): a fresh process, whose first huge pages may need memory compacted, spent
# 0.31-1.39 s of CPU on 100-1,000 bytes with huge pages, 0.32-0.66 s with plain ones; after huge
# pages were freed, plain ones cost as much at 100 bytes, +25% at 200, 2.7x at 1,000 (0.52 s, 0.18)
SMALL_INPUT = 256
LIMITS = dict(contexts=MAX_CONTEXTS, sets=MAX_SETS, matches=MAX_MATCH, row_bytes=4 * ROW_WORDS,
              bin2_bytes=4 * B2_WORDS,
              symbol_experts=MAX_SYMBOL_EXPERTS, apm=MAX_APM, inputs=MAX_INPUTS,
              image_maps=IMAGE_MAPS, sample_maps=SAMPLE_MAPS, sample_size=SAMPLE_SIZE,
              image_bytes=(0, image_bytes(IMAGE_MAPS), image_bytes(2 * IMAGE_MAPS)),
              float_maps=FLOAT_MAPS, float_bytes=FLOAT_BYTES)
# what ``checks.check_spec`` checks a spec against besides the config's bounds
SPEC_LIMITS = dict(LIMITS, kinds=N_KINDS, params=64, selectors=N_SELECTORS, net=SEL_NET,
                   gate=SEL_GATE, net_sets=(SEL_NETP, SEL_NETTOP),
                   optimizers=tuple(OPTIMIZERS.values()))


# the interface's functions (``seqzip._core``): the kernel's step is plain C, so they need not
# take the interpreter lock as the default ones do
cdef int _cm_predict(void* s, double* probs) noexcept nogil:
    return (<CMKernel>s)._predict(probs)


cdef int _cm_predict_bit(void* s) noexcept nogil:
    return (<CMKernel>s)._predict_bit()


cdef int _cm_update_bit(void* s, int bit) noexcept nogil:
    return (<CMKernel>s)._update_bit(bit)


@cython.final
cdef class CMKernel(Kernel):
    """The context-mixing model (see the module docstring).

    Args:
        spec: the parsed config (``models.cm.CMSpec``, whose fields say what each is:
            ``contexts`` are (kind, j) pairs of ``KINDS``, ``selectors`` ids of
            ``SELECTORS``, ``optimizer`` an id of ``OPTIMIZERS``).  Only the bounds that
            keep memory safe are checked here.
        alphabet: the byte values of the symbols, in order (symbol i is alphabet[i]).
        experts: symbol-mode kernels whose distributions become inputs.
        network: a symbol-mode kernel with features (an online network): an input, and its
            state gates one weight set.  None for no network.
        size_hint: the symbols to be coded, when known (0: not known).  Up to
            ``SMALL_INPUT`` the large tables take plain pages, zeroed as touched, in place of
            huge pages written in advance (``tables.pxd``'s ``big_calloc``); what is coded is
            the same.
    """
    def __dealloc__(self):
        cdef int i
        with nogil:  # returning hundreds of MB of touched pages takes milliseconds
            ctx_free(&self.ctx)
            for i in range(self.n_bank):
                if self.bank[i].state != NULL:
                    self.bank[i].free(self.bank[i].state)
            gate_free(&self.gate)
            for i in range(MAX_SETS):
                mixer_free(&self.sets[i])
            mixer_free(&self.final)
            apm_free(&self.apm)
            sse_free(&self.sse)
            post_free(&self.post)
            ns_free(&self.ns)

    @property
    def plain_pages(self):
        """The large tables are on plain pages (``size_hint`` said the input is short)."""
        return self.at.big == BIG_PLAIN

    def __init__(self, spec, bytes alphabet, list experts=None, Kernel network=None,
                 size_hint=0):
        cdef int i, k, A = len(alphabet)
        if A < 1 or A > 256:
            raise ValueError("the alphabet must hold 1 to 256 byte values")
        self.A = A
        self.B = 1
        while (1 << self.B) < A:
            self.B += 1
        for i in range(A):
            self.to_byte[i] = alphabet[i]
        self.iface.alphabet_size, self.iface.mode, self.iface.bits = A, BIT_MODE, self.B
        self.iface.predict, self.iface.predict_bit = _cm_predict, _cm_predict_bit
        self.iface.update_bit = _cm_update_bit  # plain C: no lock taken (``_core.pxd``)
        # groups of at most 4 bits, the short one first (B = 7: 3 + 4)
        k = self.B - 4 * ((self.B - 1) // 4)
        self.group_bits[0], self.n_groups = k, 1
        while k < self.B:
            self.group_bits[self.n_groups] = 4
            self.n_groups += 1
            k += 4
        check_spec(spec, SPEC_LIMITS, len(experts or []), network is not None)
        self.owned = list(experts or []) + ([network] if network is not None else [])
        self.has_network = network is not None
        if self.has_network:
            self.network = network.iface
        kinds = {kind for kind, j in spec.contexts}
        if ctx_init(&self.ctx, spec.history_bits, bool(kinds & {K_RECORD, K_COLUMN}) or
                    spec.periods, spec.periods, K_TEXT in kinds, K_ROWS in kinds):
            raise MemoryError()
        if ctx_bin2_init(&self.ctx, any(k == K_INDIRECT and j >= 3 for k, j in spec.contexts)):
            raise MemoryError()
        ctx_markup_init(&self.ctx, sum({1 + (j > 9) for k, j in spec.contexts if k == K_MARKUP}))
        xp_context_init(&self.ctx, spec)  # the x86 decoder, its history (xpred.pxd)
        ctx_words2_init(&self.ctx, K_WORDS2 in kinds or SEL_WORDS2 in spec.selectors)
        self.at.A, self.at.B, self.at.to_byte, self.at.ctx = A, self.B, self.to_byte, &self.ctx
        self.at.big = BIG_PLAIN if 0 < size_hint <= SMALL_INPUT else BIG_POPULATE
        self._build_bank(spec)
        self.n_inputs = 1 + sum([self.bank[i].n_inputs for i in range(self.n_bank)])
        if self.n_inputs > MAX_INPUTS:
            raise ValueError("too many inputs")
        self._init_mixer(spec)
        ns_init(&self.ns, spec, <SymbolExperts*>self.bank[self.n_bank - 1].state,
                self.has_network, self.B, bool({SEL_NETP, SEL_NETTOP} & set(spec.selectors)))
        cdef int apm = spec.apm, apm_rate = spec.apm_rate, sse = getattr(spec, "sse", 0), status
        self.p_floor, sse = (1, sse & ~SSE_FINE) if sse & SSE_FINE else (16, sse)
        with nogil:  # the APMs' and sse's tables (millions of cells), the first page touches
            status = final_init(&self.sse, &self.apm, apm, apm_rate, sse, A, self.B)
            status = status if status < 0 else self._begin_symbol()
        if status < 0:
            raise MemoryError()
        post_init(&self.post, spec, self.n_inputs, self.n_sets, &self.apm, &self.sse)
        self.symbols_seen = 0
        self.fields = self._all_fields()
        self.light = [f for f in self.fields if not f[4]]

    cdef int _add(self, build_fn build, spec, arg=None, int index=0) except -1:
        """One component of the bank (its inputs follow the previous one's)."""
        if self.n_bank >= MAX_COMPONENTS:
            raise ValueError("too many components")
        memset(&self.bank[self.n_bank], 0, sizeof(Component))
        self.n_bank += 1  # counted before it is built: a failure frees what it allocated
        return build(&self.bank[self.n_bank - 1], &self.at, spec, arg, index)

    cdef int _build_bank(self, spec) except -1:
        """The bank, in input order: the context models, the image expert (image=1), the match
        models, the run information (runs > 0), the symbol experts (the network last)."""
        cdef int i
        self._add(cx_build, spec)
        self.cx = <Contexts*>self.bank[0].state
        self.image = spec.image
        if self.image:
            self._add(image_build, spec)
        self.samples = getattr(spec, "samples", False)
        if self.samples:
            self._add(samples_build, spec)
        if getattr(spec, "floats", 0):  # the float-sample expert (floats.pxd)
            self._add(floats_build, spec)
        if getattr(spec, "row_maps", 0):
            self._add(rows_build, spec)
        self.n_match = len(spec.matches)
        for i in range(self.n_match):
            self._add(mm_build, spec, None, i)
            self.match[i] = <MatchModel*>self.bank[self.n_bank - 1].state
        self.runs = self.n_bank if getattr(spec, "runs", 0) else -1  # run information
        if self.runs >= 0:
            self._add(runs_build, spec, <size_t>self.cx)
        if getattr(spec, "cx_inputs", 0):  # more inputs per hashed context (cxinputs.pxd)
            self._add(ci_build, spec, <size_t>self.cx)
        if getattr(spec, "x86_pred", 0):  # predicted bytes: x86 (code bit 17, xpred.pxd) ...
            self._add(xp_build, spec)
        if getattr(spec, "m68k_pred", 0):  # ... and 68000 words (code bit 23, mpred.pxd)
            self._add(mp_build, spec)
        self._add(se_build, spec, self.owned)
        return 0

    cdef int _init_mixer(self, spec) except -1:
        cdef int i, k, rows
        selectors = list(spec.selectors)
        self.opt.kind = spec.optimizer
        self.opt.decay, self.opt.eps, self.opt.init = spec.decay, spec.eps, spec.mix_init
        self.opt.b1t = self.opt.b2t = 1.0
        self.opt.quiet = spec.mix_skip * spec.mix_skip
        self.rate, self.rate2, self.gate_rate = spec.rate, spec.rate2, spec.gate_rate
        self.gate_set, self.net_pattern = -1, 0
        self.n_sets = len(selectors)
        for i in range(self.n_sets):
            self.selector[i] = selectors[i]
            if self.selector[i] == SEL_GATE:
                self.gate_set = i
                if gate_init(&self.gate, spec.gate_units, self.n_inputs, 1 << self.B,
                             &self.opt) < 0:
                    raise MemoryError()
            rows = selector_rows(self.selector[i], self.A, self.B, self.cx.n_hashed)
            if mixer_init(&self.sets[i], rows, self.n_inputs, &self.opt) < 0:
                raise MemoryError()
        ci_init_weights(self.bank, self.n_bank, self.sets, self.n_sets)  # cx_inputs' start
        self.layer2 = spec.layer2 and self.n_sets > 1
        if self.layer2:
            if mixer_init(&self.final, 1 << self.B, self.n_sets + 1, &self.opt) < 0:
                raise MemoryError()
            for i in range(1 << self.B):
                for k in range(self.n_sets):
                    self.final.w[i * (self.n_sets + 1) + 1 + k] = 1.0 / self.n_sets
        return 0

    # ------------------------------------------------------------ per symbol

    cdef int _begin_symbol(self) noexcept nogil:
        """Each component's start of the next symbol, and the network's features."""
        cdef int i, status
        cdef const double* f
        cdef Py_ssize_t nf
        self.at.node = 1
        self.at.depth = 0
        self.at.gnode = 1
        self.group = 0
        self.group_left = self.group_bits[0]
        for i in range(self.n_bank):
            status = self.bank[i].begin(self.bank[i].state, &self.at)
            if status < 0:
                return status
        if self.has_network:
            f = self.network.features(self.network.state, &nf)
            self.net_pattern = 0
            for i in range(1, min(7, nf)):
                self.net_pattern = self.net_pattern * 2 + (f[i] > 0.0)
            for i in range(1, self.gate.units):
                self.gate.features[i] = f[i] if i < nf else 0.0
        return STATUS_OK

    cdef int _end_symbol(self, int x) noexcept nogil:
        cdef int i, status
        ctx_update(&self.ctx, self.to_byte[x], x)
        self.symbols_seen += 1
        for i in range(self.n_bank):
            status = self.bank[i].update(self.bank[i].state, &self.at, x)
            if status < 0:
                return status
        return self._begin_symbol()

    # ------------------------------------------------------------ per bit

    cdef int _match_state(self) noexcept nogil:
        return mm_state(self.match[0], self.B, self.at.depth) if self.n_match else 0

    cdef int c_predict_bit(self) noexcept:
        return self._predict_bit()

    cdef int c_update_bit(self, int bit) noexcept:
        return self._update_bit(bit)

    cdef int c_predict(self, double* probs) noexcept:
        return self._predict(probs)

    cdef int _predict_bit(self) noexcept nogil:
        cdef int i, k, first_one, node = self.at.node, match_state, rows[MAX_SETS]
        cdef double dot, p
        cdef double* x = self.inputs
        # a bit whose 1-branch holds no symbol of the alphabet is forced to 0
        first_one = ((node * 2 + 1) << (self.B - self.at.depth - 1)) - (1 << self.B)
        if first_one >= self.A:
            self.forced = 0
            return 0
        self.forced = -1
        ns_bit(&self.ns, &self.at)  # the network's prediction as context (net_sel, its sets)
        if self.apm.n:  # the APM rows are known now: load them while the mixer works
            final_rows(&self.sse, &self.apm, &self.at, self.image)
        # the inputs: the bias, then each component's, in bank order (bank[0], the context
        # models, first: with n_known the sets' rows are known and fetched while the others
        # predict; no component's prediction moves the match state)
        x[0] = 1.0
        k = 1
        for i in range(self.n_bank):
            self.bank[i].predict(self.bank[i].state, &self.at, x + k)
            k += self.bank[i].n_inputs
            if i == 0:
                match_state = self._match_state()
                selector_rows_of(rows, self.selector, self.n_sets, &self.at, self.cx.n_known,
                                 self.net_pattern, match_state)
                ns_rows(rows, self.selector, self.n_sets, &self.ns, self.at.depth, SEL_NETP,
                        SEL_NETTOP)
                mixer_fetch(self.sets, rows, self.n_sets)
        # the mixer: each weight set, then the second layer
        if self.gate_set >= 0:
            gate_weights(&self.gate, node, self.sets[self.gate_set].w)
        if self.sse.mask:  # the extra stages' rows, loaded while the sets mix
            sse_rows(&self.sse, &self.ctx, node, match_state)
        mixer_predict_sets(self.sets, rows, self.n_sets, x)
        if self.layer2:
            self.y2[0] = 1.0
            for k in range(self.n_sets):
                self.y2[k + 1] = self.sets[k].dot
            mixer_predict(&self.final, node, self.y2)
            dot = self.final.dot
        else:
            dot = 0.0
            for k in range(self.n_sets):
                dot = dot + self.sets[k].dot
            dot = dot / self.n_sets
        self.p_mix = squash(dot)
        # secondary estimation
        p = self.p_mix
        if self.apm.n or self.sse.mask:
            self.apm.ctx[4] = (match_state << self.B) | node
            p = sse_refine(&self.sse, &self.apm, p, dot)
        p = ns_refine(&self.ns, p)
        self.p_final = p = post_refine(&self.post, p, x, dot, self.sets, &self.at, match_state)
        k = <int>(p * 65536.0 + 0.5)
        if k < self.p_floor:
            k = self.p_floor
        elif k > 65536 - self.p_floor:
            k = 65536 - self.p_floor
        return k

    cdef int _update_bit(self, int bit) noexcept nogil:
        cdef int i, k
        if bit != 0 and bit != 1:
            return STATUS_SYMBOL
        if self.forced >= 0:
            if bit != self.forced:
                return STATUS_SYMBOL
        else:
            for i in range(self.n_bank):  # the experts' statistics
                self.bank[i].learn(self.bank[i].state, &self.at, bit)
            optimiser_tick(&self.opt)  # the mixer
            mixer_train_sets(self.sets, self.n_sets, self.gate_set, self.inputs, self.rate, bit,
                             &self.opt)
            if self.gate_set >= 0:
                gate_train(&self.gate, &self.sets[self.gate_set], self.at.node, self.inputs, bit,
                           self.gate_rate, &self.opt)
            if self.layer2:
                mixer_train(&self.final, self.y2, self.rate2, bit, &self.opt)
            sse_learn(&self.sse, &self.apm, bit)
            post_learn(&self.post, bit)
            ns_learn(&self.ns, bit)
        self.at.node = self.at.node * 2 + bit
        self.at.depth += 1
        if self.at.depth == self.B:
            return self._end_symbol(self.at.node - (1 << self.B))
        self.group_left -= 1
        if self.group_left == 0:
            self.group += 1
            self.group_left = self.group_bits[self.group]
            self.at.gnode = 1
        else:
            self.at.gnode = self.at.gnode * 2 + bit
        for i in range(self.n_bank):
            self.bank[i].next_bit(self.bank[i].state, &self.at, bit)
        return STATUS_OK

    # ------------------------------------------------------------ the full distribution

    cdef void _walk(self, int event) noexcept nogil:
        cdef int i
        for i in range(self.n_bank):
            self.bank[i].walk(self.bank[i].state, &self.at, event)

    cdef void _descend(self, int node, int depth, double mass, double* probs) noexcept nogil:
        """Evaluate ``node`` (its bits so far are ``node``'s, ``depth`` of them) and recurse,
        writing mass x P(path) to the leaves; the components find a new group's state
        read-only (WALK_NODE)."""
        cdef int i, q, bit, group = 0, left = depth, gnode
        cdef double p1
        if depth == self.B:
            if node - (1 << self.B) < self.A:
                probs[node - (1 << self.B)] = mass
            return
        while left >= self.group_bits[group]:  # the group of this bit
            left -= self.group_bits[group]
            group += 1
        gnode = 1
        for i in range(left):  # the bits of this group so far
            gnode = gnode * 2 + ((node >> (left - 1 - i)) & 1)
        self.at.node, self.at.depth, self.at.gnode = node, depth, gnode
        self._walk(WALK_NODE)
        q = self._predict_bit()
        p1 = q * (1.0 / PROB_ONE)
        for bit in range(2):
            if (p1 if bit else 1.0 - p1) > 0.0:
                self._descend(node * 2 + bit, depth + 1, mass * (p1 if bit else 1.0 - p1), probs)
                if left == 0 and depth > 0 and bit == 0:  # back to this group's state
                    self.at.node, self.at.depth, self.at.gnode = node, depth, gnode
                    self._walk(WALK_NODE)

    cdef int _predict(self, double* probs) noexcept nogil:
        """The distribution over the alphabet implied by the bit predictions made before the
        symbol: each of the A - 1 decisions evaluated as ``predict_bit`` would, learning
        nothing (about A times its cost; for ``Predictor.probs``).  The coder's own charge
        differs a little: the model learns after each bit, so the later bits are predicted
        having seen the first (``seqzip._core.run`` with SCORE gives that exact charge)."""
        cdef int x
        if self.at.depth != 0:
            return STATUS_SYMBOL  # only between symbols
        self._walk(WALK_BEGIN)
        for x in range(self.A):
            probs[x] = 0.0
        self._descend(1, 0, 1.0, probs)
        self.at.node, self.at.depth, self.at.gnode = 1, 0, 1
        self._walk(WALK_END)
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
        m = self.match[i]
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
        return self.cx.n_hashed

    def table_slots_used(self):
        """Slots of the hash table holding a context (check byte set)."""
        cdef uint64_t i, used = 0
        for i in range((self.cx.slots.bucket_mask + 1) * 4):
            used += self.cx.slots.table[i * 16] != 0
        return used

    def memory_allocated(self):
        """Bytes of the tables it allocated (not the experts' nor the network's): the sum."""
        cdef int i
        cdef uint64_t total = (self.ctx.history_mask + 1) * (1 + (self.ctx.x86sites != NULL)) + \
            apm_memory(&self.apm) + gate_memory(&self.gate) + sse_memory(&self.sse) + \
            post_memory(&self.post) + (4 * B2_WORDS if self.ctx.bin2 != NULL else 0) + \
            ns_memory(&self.ns)  # the history (and the x86 relocation sites: a byte each)
        for i in range(self.n_bank):
            total += self.bank[i].memory(self.bank[i].state)
        for i in range(self.n_sets):
            total += mixer_memory(&self.sets[i])
        if self.layer2:
            total += mixer_memory(&self.final)
        return total

    # ------------------------------------------------------------ the full state

    def _all_fields(self):
        """Every field of the state (``field.pxd``): the kernel's own (the symbol, the
        context state, the mixer, the APMs) and each component's."""
        cdef int i
        out = [("symbol." + name, F_INT, address, sizeof(int), False) for name, address in (
            ("node", <size_t>&self.at.node), ("depth", <size_t>&self.at.depth),
            ("gnode", <size_t>&self.at.gnode), ("group", <size_t>&self.group),
            ("group_left", <size_t>&self.group_left), ("forced", <size_t>&self.forced),
            ("net_pattern", <size_t>&self.net_pattern))]
        out.append(("symbol.seen", F_LONG, <size_t>&self.symbols_seen, sizeof(long), False))
        out += ctx_fields(&self.ctx)
        out += [("opt.b1t", F_F64, <size_t>&self.opt.b1t, 8, False),
                ("opt.b2t", F_F64, <size_t>&self.opt.b2t, 8, False),
                ("out.p_mix", F_F64, <size_t>&self.p_mix, 8, False),
                ("out.p_final", F_F64, <size_t>&self.p_final, 8, False),
                ("inputs", F_BYTES, <size_t>&self.inputs[0], 8 * max(STATE_INPUTS, self.n_inputs),
                 False),
                ("y2", F_BYTES, <size_t>&self.y2[0], sizeof(self.y2), False)]
        for i in range(self.n_sets):
            out += mixer_fields(&self.sets[i], f"set{i}", True)
        out += mixer_fields(&self.final, "final", self.layer2)
        if self.gate_set >= 0:
            out += gate_fields(&self.gate)
        out += apm_fields(&self.apm)
        out += sse_fields(&self.sse) + post_fields(&self.post) + ns_fields(&self.ns)
        for i in range(self.n_bank):
            out += self.bank[i].fields(self.bank[i].state)
        return out

    def get_state(self):
        """The history, the hash table and direct tables, the state maps, the match models,
        the mixer's weights and curvature (or Adam moments), the gates, the APM tables, the
        symbol experts' and the network's states (under ``expertE.``), each component's named
        scalars (``ctx.pos``, ``match0.length`` ...) and the position inside the current
        symbol (see ``Kernel.get_state``)."""
        cdef int i
        state = Kernel.get_state(self)
        for name, kind, address, size, heavy in self.fields:
            if kind == F_BYTES:
                state[name] = field_read(kind, address, size)
            else:
                state[name] = np.array(field_read(kind, address, size), dtype=scalar_type(name))
        state["slots"] = np.array(cx_slot_offsets(self.cx), dtype=np.int64)
        for i in range(len(self.owned)):
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
        fallbacks = int(take(state, "fallbacks", np.int64, ()))
        if fallbacks < 0:
            raise ValueError("model state field 'fallbacks' is negative")
        if "ints" in state:
            scalars = legacy_scalars(state, self.n_match, self.n_sets)
        else:
            scalars = {f[0]: take(state, f[0], scalar_type(f[0]), ()).item()
                       for f in self.fields if f[1] != F_BYTES}
        buffers = [f for f in self.fields if f[1] == F_BYTES]
        raw = {name: np.ascontiguousarray(take(state, name, np.uint8, (size,)))
               for name, kind, address, size, heavy in buffers}
        slots = check_state(self._layout(), scalars, raw,
                            take(state, "slots", np.int64, (self.cx.n_hashed,)))
        self._set_experts(state)
        for name, kind, address, size, heavy in buffers:
            field_write(kind, address, raw[name])
        self.fallbacks = fallbacks
        self._set_scalars(scalars, slots)
        self.cx.slots.jlen = 0

    def _set_experts(self, dict state):
        """The symbol experts' and the network's states, all or none."""
        before = []
        try:
            for i in range(len(self.owned)):
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
                "n_hashed": self.cx.n_hashed, "n_match": self.n_match, "n_states": N_STATES,
                "table_bytes": st_bytes(&self.cx.slots),
                "set_rows": [self.sets[i].n_sets for i in range(self.n_sets)],
                "final_rows": self.final.n_sets if self.layer2 else 0,
                "optimizer": {OPT_QDH: "qdh", OPT_SGD: "sgd", OPT_ADAM: "adam"}[self.opt.kind],
                "gate_units": self.gate.units if self.gate_set >= 0 else 0,
                "apm_contexts": [self.apm.contexts[i] for i in range(self.apm.n)],
                "sm_limit": SM_LIMIT, "match_sm": 2 * MATCH_BUCKETS, "match_max": MATCH_MAX,
                "apm_bins": APM_BINS, "max_record": RECORD_MAX, "net_patterns": NET_PATTERNS,
                "sse": [self.sse.x.contexts[i] for i in range(self.sse.x.n)],
                "sse_mix": self.sse.w != NULL, "post_mode": self.post.mode,
                "markup": (MM_MODES, MK_DEPTH_MAX),
                "image_maps": image_layout(self.bank[1].state) if self.image else [],
                "sample_maps": SAMPLE_MAPS if self.samples else 0, "sample_size": SAMPLE_SIZE,
                "runs": runs_layout(self.bank[self.runs].state) if self.runs >= 0 else None}

    # save points: what one bit's learning can change, short of the symbol's last bit (whose
    # update ends the symbol: history, match tables, experts and network move only then)

    def track_points(self, bint on):
        """Start (or stop) journalling the hash table's slots for :meth:`save_point`."""
        self.cx.slots.tracking = on
        self.cx.slots.jlen = 0

    def save_point(self):
        """A light copy of the state inside a symbol, for ``seqzip._core.bit_distribution``:
        valid while tracking and while no symbol ends (the kernel's last bit is never
        learnt below a save point)."""
        if not self.cx.slots.tracking or self.cx.slots.jlen > JOURNAL:
            raise RuntimeError("save points need track_points(True)")
        return self.cx.slots.jlen, [field_read(kind, address, size)
                                    for name, kind, address, size, heavy in self.light], \
            cx_slot_offsets(self.cx), self.fallbacks

    def restore_point(self, point):
        """Return to a :meth:`save_point` taken since tracking started."""
        cdef int jlen = point[0]
        if not self.cx.slots.tracking or self.cx.slots.jlen > JOURNAL or \
                not 0 <= jlen <= self.cx.slots.jlen:
            raise RuntimeError("not a save point of this tracking")
        st_rewind(&self.cx.slots, jlen)
        for (name, kind, address, size, heavy), value in zip(self.light, point[1]):
            field_write(kind, address, value)
        cx_set_slots(self.cx, self._check_slots(point[2]))
        self.fallbacks = point[3]

    def _set_scalars(self, dict v, list slots):
        for name, kind, address, size, heavy in self.fields:
            if kind != F_BYTES:
                field_write(kind, address, v[name])
        cx_set_slots(self.cx, slots)

    def _check_slots(self, slots):
        limit = (self.cx.slots.bucket_mask + 1) * 64 - 16
        if any(s < -2 or s > limit or (s >= 0 and s % 16) for s in slots):
            raise ValueError("model state holds slots outside the hash table")
        return list(slots)
