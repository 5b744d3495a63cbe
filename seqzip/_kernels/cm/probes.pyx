# cython: language_level=3
"""The context mixer's components on their own, for the tests: the bit-history states,
squash and stretch, the StateMap rule, one mixer row's step, the context kinds' hashes (each
a ``py_`` wrapper of its .pxd); a kernel's interface run without the interpreter lock.

    >>> py_squash(0.0), round(py_stretch(py_squash(2.0)), 2)  # the 12-bit stretch table
    (0.5, 2.0)
"""
import numpy as np
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free

from seqzip._core cimport BIT_MODE, Kernel, ModelInterface

from seqzip._kernels.cm.component cimport Cursor
from seqzip._kernels.cm.context cimport (Context, ctx_bin2_init, ctx_free, ctx_init,
                                         ctx_markup_init, ctx_row_length, ctx_update,
                                         ctx_words2_init)
from seqzip._kernels.cm.kinds cimport (K_CODE, N_KINDS, kind_function, kind_hash, kind_tag,
                                       m68k_on, x86_trackers)
from seqzip._kernels.cm.m68k cimport MS_LAST
from seqzip._kernels.cm.xpred cimport ctx_m68k_init, ctx_x86_init
from seqzip._kernels.cm.mixer cimport (MIX_MAX_SETS, Mixer, Optimiser, mixer_predict,
                                       mixer_predict_sets, mixer_train, mixer_train_sets)
from seqzip._kernels.cm.experts cimport SymbolExperts, se_find_top, se_init, se_top_input
from seqzip._kernels.cm.netsel cimport NetSel, ns_bit, ns_rows
from seqzip._kernels.cm.selectors cimport SEL_NETP, SEL_NETTOP, selector_row
from seqzip._kernels.cm.x86 cimport X86_N
from seqzip._kernels.cm.floats cimport float_encode, float_key, float_value, ibm_normal
from seqzip._kernels.cm.tables cimport (MAX_STATES, N_STATES, STATE_LAST, STATE_N0, STATE_N1,
                                        STATE_NEXT, StateMap, build_tables, sm_init_states,
                                        sm_learn, squash, stretch_p)

from seqzip._kernels.cm.kernel import OPTIMIZERS

build_tables()


def bit_history_states():
    """The bit-history state table: ``(n0, n1, last, next_on_0, next_on_1)`` per state (last:
    0 not kept, 1 the last bit was 0, 2 it was 1)."""
    return [(STATE_N0[s], STATE_N1[s], STATE_LAST[s], STATE_NEXT[s][0], STATE_NEXT[s][1])
            for s in range(N_STATES)]


def py_squash(double x):
    return squash(x)


def py_stretch(double p):
    return stretch_p(p)


def py_state_map(list steps):
    """The StateMap rule on one fresh map: P(1) (in [0, 1]) after each (state, bit) step."""
    cdef StateMap m
    cdef int s, bit
    if sm_init_states(&m) < 0:
        free(m.p)
        free(m.n)
        raise MemoryError()
    out = []
    for s, bit in steps:
        if not 0 <= s < MAX_STATES:
            free(m.p)
            free(m.n)
            raise ValueError("no such state")
        sm_learn(&m, s, bit)
        out.append(m.p[s] * (1.0 / 4294967296.0))
    free(m.p)
    free(m.n)
    return out


def py_mixer_step(double[::1] w, double[::1] hd, double[::1] hc, double[::1] x, int bit,
                  str optimizer="qdh", double rate=1.0, double decay=0.9999, double eps=10.0,
                  double b1t=1.0, double b2t=1.0):
    """One mixer row (w, hd, hc updated in place) on inputs x: returns (dot, p) before its
    step on ``bit``; ``b1t``/``b2t``: Adam's beta powers *after* this bit's tick."""
    cdef Mixer m
    cdef Optimiser o
    cdef int n = x.shape[0]
    if w.shape[0] != n or hd.shape[0] != n or hc.shape[0] != n or n < 1:
        raise ValueError("w, hd, hc and x must have one length")
    o.kind = OPTIMIZERS[optimizer]
    o.decay, o.eps, o.b1t, o.b2t, o.quiet = decay, eps, b1t, b2t, 0.0
    m.n_sets, m.n, m.w, m.hd, m.hc = 1, n, &w[0], &hd[0], &hc[0]
    mixer_predict(&m, 0, &x[0])
    dot, p = m.dot, m.p
    mixer_train(&m, &x[0], rate, bit, &o)
    return dot, p


def py_mixer_sets_step(double[:, :, ::1] w, double[:, :, ::1] hd, double[:, :, ::1] hc,
                       int[::1] rows, double[::1] x, int bit, str optimizer="qdh",
                       double rate=0.5, double decay=0.999, double eps=10.0, double b1t=0.9,
                       double b2t=0.999, int skip=-1, double mix_skip=0.0):
    """``py_mixer_step`` of several sets at once, as the kernel runs them (``mixer_predict_sets``,
    ``mixer_train_sets``): set k's weights are w[k] (rows, inputs), its row rows[k]; set
    ``skip`` predicts but is not trained (the gated set's place); a QDH set whose error is
    below ``mix_skip`` learns its curvature only.  Returns (dots, ps)."""
    cdef Mixer sets[MIX_MAX_SETS]
    cdef Optimiser o
    cdef int k, m = w.shape[0], n = x.shape[0]
    if not 1 <= m <= MIX_MAX_SETS or n < 1:
        raise ValueError("1 to MIX_MAX_SETS sets of at least one input")
    if any(hd.shape[k] != w.shape[k] or hc.shape[k] != w.shape[k] for k in range(3)) or \
            w.shape[2] != n or rows.shape[0] != m:
        raise ValueError("w, hd, hc, rows and x must agree")
    for k in range(m):
        if not 0 <= rows[k] < w.shape[1]:
            raise ValueError("a row outside its set")
        sets[k].n_sets, sets[k].n = w.shape[1], n
        sets[k].w, sets[k].hd, sets[k].hc = &w[k, 0, 0], &hd[k, 0, 0], &hc[k, 0, 0]
    o.kind = OPTIMIZERS[optimizer]
    o.decay, o.eps, o.b1t, o.b2t, o.quiet = decay, eps, b1t, b2t, mix_skip * mix_skip
    mixer_predict_sets(sets, &rows[0], m, &x[0])
    out = [sets[k].dot for k in range(m)], [sets[k].p for k in range(m)]
    mixer_train_sets(sets, m, skip, &x[0], rate, bit, &o)
    return out


cdef Context* _fresh_context(bint records, bint periods, bint text,
                             bint rows=False) except NULL:
    """A context state as a stream starts it (16 bits of history); the caller frees it."""
    cdef Context* c = <Context*>calloc(1, sizeof(Context))
    if c == NULL or ctx_init(c, 16, records, periods, text, rows) < 0:
        if c != NULL:
            ctx_free(c)
        free(c)
        raise MemoryError()
    return c


def py_context_hashes(bytes data, list contexts, bint records=True, bint periods=False,
                      bint text=False, bint markup=False, bint rows=False,
                      bint words2=False, bint bin2=False):
    """The hashes of ``contexts`` ((kind, j) pairs) after ``data`` (as bytes of the alphabet
    0..255), from a fresh context state (``periods``: record=2's detector, ``text``: the
    text trackers, ``markup``: the markup trackers, ``rows``: the row detector, ``words2``:
    kind words2's trackers, ``bin2``: the indirect2 contexts' state): for tests of the kinds'
    stability."""
    cdef Context* c = _fresh_context(records, periods, text, rows)
    cdef kind_hash f
    ctx_markup_init(c, markup)
    x86 = x86_trackers(contexts)
    ctx_x86_init(c, x86[0], x86[1])
    ctx_words2_init(c, words2)
    if ctx_bin2_init(c, bin2) or ctx_m68k_init(c, m68k_on(contexts)):
        ctx_free(c)
        free(c)
        raise MemoryError()
    try:
        for b in data:
            ctx_update(c, b, b)
        out = []
        for kind, j in contexts:
            f = kind_function(kind) if 0 <= kind < N_KINDS else NULL
            if f == NULL:
                raise ValueError("no such context kind")
            out.append(f(c, kind_tag(kind, j), j))
        return out
    finally:
        ctx_free(c)
        free(c)


def py_row_length(bytes data, bint records=True, bint periods=True):
    """The row length the row detector finds in ``data`` (bytes of the alphabet 0..255),
    from a fresh context state with the record detectors given."""
    cdef Context* c = _fresh_context(records, periods, False, True)
    try:
        for b in data:
            ctx_update(c, b, b)
        return ctx_row_length(c)
    finally:
        ctx_free(c)
        free(c)


def py_float_codec(uint32_t w, double v, int f):
    """The float expert's word functions (floats.pxd) for format f (0 IBM, 1 and 2 IEEE):
    word ``w``'s value, its order-preserving key and its IBM normal form, and the word of
    value ``v``."""
    return float_value(w, f), float_key(w), ibm_normal(w), float_encode(v, f)


cdef list _states_after(Context* c, bytes data, const uint64_t* words, int n):
    """The ``n`` decoder words at ``words`` after each byte of ``data`` fed to ``c`` (a fresh
    context state with that decoder on), which it frees."""
    out = []
    try:
        for b in data:
            ctx_update(c, b, b)
            out.append(tuple(words[i] for i in range(n)))
        return out
    finally:
        ctx_free(c)
        free(c)


def py_x86_states(bytes data):
    """The x86 decoder's state (x86.pxd: its ``X86_N`` words) after each byte of ``data``,
    from a fresh context state."""
    cdef Context* c = _fresh_context(False, False, False)
    ctx_x86_init(c, True)
    return _states_after(c, data, c.x86s, X86_N)


def py_m68k_states(bytes data):
    """The 68000 decoder's state (m68k.pxd: its first ``MS_LAST`` words) after each byte of
    ``data``, from a fresh context state."""
    cdef Context* c = _fresh_context(False, False, False)
    if ctx_m68k_init(c, True):
        ctx_free(c)
        free(c)
        raise MemoryError()
    return _states_after(c, data, c.m68k, MS_LAST)


def py_selector_row(bytes data, int selector, int node=1):
    """The row a weight set with ``selector`` (an id of ``SELECTORS``; one that reads only
    the context state) takes after ``data`` (bytes of the alphabet 0..255) at ``node`` of the
    next byte (its depth: node's bit length - 1), from a fresh context state (kind
    words2's trackers on)."""
    cdef Context* c = _fresh_context(False, False, False)
    cdef Cursor at
    ctx_x86_init(c, True)
    ctx_words2_init(c, True)
    if ctx_m68k_init(c, True):  # (the m68k set's decoder)
        ctx_free(c)
        free(c)
        raise MemoryError()
    try:
        for b in data:
            ctx_update(c, b, b)
        at.A, at.B, at.node, at.depth, at.gnode = 256, 8, node, node.bit_length() - 1, 1
        at.to_byte, at.ctx = NULL, c
        return selector_row(selector, &at, 0, 0, 0)
    finally:
        ctx_free(c)
        free(c)


def py_net_context(list probs, int node):
    """The network's prediction as context (netsel.pxd) at ``node`` of a symbol over
    len(probs) values (a power of 2) when the network's distribution is ``probs``: (the top
    symbol, p1, the bit's class, its bucket, the rows of sets "netp" and "nettop", net_sel
    bit 0's input)."""
    cdef SymbolExperts e
    cdef NetSel s
    cdef Cursor at
    cdef int x, n = len(probs), B = n.bit_length() - 1, rows[2]
    cdef int sel[2]
    e.n, e.keep_top, e.top_input = 1, True, True
    if n < 2 or n & (n - 1) or not 1 <= node < n or se_init(&e, n, B) < 0:
        raise ValueError("probs: a power of 2 of them; node inside the tree")
    try:
        for x in range(n):
            e.trees[n + x] = probs[x]
        for x in range(n - 1, 0, -1):
            e.trees[x] = e.trees[2 * x] + e.trees[2 * x + 1]
        se_find_top(&e)
        at.A, at.B, at.node, at.depth, at.gnode = n, B, node, node.bit_length() - 1, 1
        at.to_byte, at.ctx = NULL, NULL
        s.mode, s.e, s.a.n = 0, &e, 0
        ns_bit(&s, &at)
        sel[0], sel[1] = SEL_NETP, SEL_NETTOP
        ns_rows(rows, sel, 2, &s, at.depth, SEL_NETP, SEL_NETTOP)
        return e.top - n, s.p1, s.cls, s.bucket, rows[0], rows[1], se_top_input(&e, &at)
    finally:
        free(e.probs)
        free(e.trees)


def py_run_nogil(Kernel kernel, const uint8_t[::1] symbols):
    """Each bit's prediction (units of 2^-16) while a bit-mode kernel learns ``symbols``
    through its ``ModelInterface``, called with the interpreter lock released."""
    cdef ModelInterface f = kernel.iface
    cdef Py_ssize_t i, n = symbols.shape[0]
    cdef int j, k = 0, bit, status = 0
    if f.mode != BIT_MODE:
        raise TypeError("not a bit-mode kernel")
    out = np.zeros(n * f.bits, dtype=np.int32)
    cdef int[::1] p = out
    with nogil:
        for i in range(n):
            for j in range(f.bits - 1, -1, -1):
                bit = (symbols[i] >> j) & 1
                p[k] = f.predict_bit(f.state)
                k += 1
                status = f.update_bit(f.state, bit)
                if status < 0:
                    break
            if status < 0:
                break
    if status < 0:
        raise ValueError(f"status {status}")
    return out
