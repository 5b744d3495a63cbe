# cython: language_level=3
# x86 predicted bytes (code bit 17): the bytes the instruction history (x86.pxd's XH_*,
# ``kinds.x86_reloc`` and ``x86_target``) predicts, as mixer inputs in the way of a match
# model: (0) a relocation entry's r_offset from the relocation sites, (1, 2) a relative
# jump's offset from the last and second last jump targets.  A hashed context keyed by the
# predicted byte learns each value apart; these learn one confidence per (source, byte of the
# field, hits in a row, expected bit) for every value.  One component (``component.pxd``),
# an input per source: the log-odds for the bit the predicted byte has while the symbol's
# bits agree with it (else 0).
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_begin)
from seqzip._kernels.cm.context cimport Context, ctx_back
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.kinds cimport m68k_on, x86_target, x86_trackers
from seqzip._kernels.cm.m68k cimport M68_N
from seqzip._kernels.cm.mpred cimport mp_build
from seqzip._kernels.cm.selectors cimport SEL_M68K, SEL_X86
from seqzip._kernels.cm.match cimport index_of
from seqzip._kernels.cm.tables cimport StateMap, sm_learn, sm_stretch
from seqzip._kernels.cm.x86 cimport (XG_DATA, XG_N, XH_RPRED, XH_RSTART, XH_T0, XS_LEFT, XS_OP,
                                     XS_STAGE, x86_rel_jump)

cdef enum:
    XP_SOURCES = 5
    XP_ROWS = XP_SOURCES * 8 * 4 * 2  # (source, byte of the field, hits in a row, bit)


cdef struct XPred:
    int predicted[XP_SOURCES]  # the predicted symbol (alphabet index) or -1
    int k[XP_SOURCES]          # which byte of its field (0-7)
    int hits[XP_SOURCES]       # its predictions that came true in a row (to 3)
    int miss[XP_SOURCES]       # the symbol's bits so far disagree with it
    int saved[XP_SOURCES]      # ``miss`` before a walk
    int row[XP_SOURCES]        # the map's row used for this bit (-1: none)
    StateMap sm


cdef inline int xp_byte(const Context* c, int source, int* k) noexcept nogil:
    """The byte ``source`` predicts next (-1: none) and (``k``) which of its field."""
    cdef const uint64_t* x = c.x86h
    cdef const uint64_t* s = c.x86s
    cdef uint64_t pred, sofar = 0, op = s[XS_OP] & 0xFFF, i, j, left = s[XS_LEFT] & 15
    cdef int n
    if source == 0:
        j = c.pos - x[XH_RSTART]
        pred = x[XH_RPRED]
        if x[XH_RSTART] == 0 or j >= 8 or pred == <uint64_t>-1:
            return -1
        for i in range(j):
            sofar |= ctx_back(c, j - i) << (8 * i)
        k[0] = <int>j
        return <int>((pred >> (8 * j)) & 0xFF) if sofar == pred & (
            (<uint64_t>1 << (8 * j)) - 1) else -1
    if s[XS_STAGE] % XG_N != XG_DATA or not x86_rel_jump(op) or not 1 <= left <= 4:
        return -1
    n = 1 if op == 0xEB or op < 0x80 else 4
    if n < <int>left:
        return -1
    k[0] = n - <int>left
    pred = x86_target(c, x[XH_T0 + source - 1], k[0], n)
    return <int>(pred & 0xFF) if pred else -1


cdef inline void xp_c_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef XPred* m = <XPred*>s
    cdef int i, bit
    for i in range(XP_SOURCES):
        m.row[i] = -1
        x[i] = 0.0
        if m.predicted[i] >= 0 and not m.miss[i]:
            bit = (m.predicted[i] >> (at.B - 1 - at.depth)) & 1
            m.row[i] = ((i * 8 + (m.k[i] & 7)) * 4 + (m.hits[i] & 3)) * 2 + bit  # (any state)
            x[i] = sm_stretch(&m.sm, m.row[i])


cdef inline void xp_c_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef XPred* m = <XPred*>s
    cdef int i
    for i in range(XP_SOURCES):
        if 0 <= m.row[i] < XP_ROWS:
            sm_learn(&m.sm, m.row[i], bit)


cdef inline void xp_c_next_bit(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef XPred* m = <XPred*>s
    cdef int i
    for i in range(XP_SOURCES):
        if m.predicted[i] >= 0 and (m.predicted[i] >> (at.B - at.depth)) & 1 != bit:
            m.miss[i] = 1


cdef inline int xp_c_update(void* s, const Cursor* at, int x) noexcept nogil:
    """Symbol x ended (the context holds it): each source's hits, its next prediction."""
    cdef XPred* m = <XPred*>s
    cdef int i, b
    for i in range(XP_SOURCES):
        if m.predicted[i] >= 0:
            m.hits[i] = min(m.hits[i] + 1, 3) if m.predicted[i] == x else 0
        b = xp_byte(at.ctx, i, &m.k[i]) if at.ctx.x86hist else -1
        m.predicted[i] = index_of(at.to_byte, at.A, <uint8_t>b) if b >= 0 else -1
        m.miss[i] = 0
    return 0


cdef inline void xp_c_walk(void* s, const Cursor* at, int event) noexcept nogil:
    cdef XPred* m = <XPred*>s
    cdef int i
    for i in range(XP_SOURCES):
        if event == WALK_BEGIN:
            m.saved[i] = m.miss[i]
        elif event == WALK_END:
            m.miss[i] = m.saved[i]
        else:
            m.miss[i] = m.predicted[i] >= 0 and \
                (m.predicted[i] >> (at.B - at.depth)) != (at.node - (1 << at.depth))


cdef inline size_t xp_c_memory(const void* s) noexcept nogil:
    return sizeof(XPred) + XP_ROWS * 6


cdef inline void xp_c_free(void* s) noexcept nogil:
    cdef XPred* m = <XPred*>s
    free(m.sm.p)
    free(m.sm.n)
    free(m)


cdef inline list xp_c_fields(void* s):
    cdef XPred* m = <XPred*>s
    return [("xpred.sm", F_BYTES, <size_t>m.sm.p, XP_ROWS * 4, False),
            ("xpred.smn", F_BYTES, <size_t>m.sm.n, XP_ROWS * 2, False),
            ("xpred.state", F_BYTES, <size_t>&m.predicted[0], 6 * XP_SOURCES * sizeof(int),
             False)]


cdef inline int xp_build(Component* c, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """The x86 predicted bytes' inputs (code bit 17, ``CMSpec.x86_pred``); with ``arg`` 1 the
    68000 predicted words' (code bit 23, ``CMSpec.m68k_pred``: mpred.pxd)."""
    cdef XPred* m
    cdef int i
    if arg == 1:
        return mp_build(c, at, spec, arg, index)
    m = <XPred*>calloc(1, sizeof(XPred))
    if m == NULL:
        raise MemoryError()
    c.state, c.free, c.n_inputs = m, xp_c_free, XP_SOURCES
    c.predict, c.learn, c.next_bit = xp_c_predict, xp_c_learn, xp_c_next_bit
    c.update, c.begin, c.walk = xp_c_update, nothing_begin, xp_c_walk
    c.memory, c.fields = xp_c_memory, xp_c_fields
    m.sm.size = XP_ROWS
    m.sm.p = <uint32_t*>malloc(XP_ROWS * sizeof(uint32_t))
    m.sm.n = <uint16_t*>calloc(XP_ROWS, sizeof(uint16_t))
    if m.sm.p == NULL or m.sm.n == NULL:
        raise MemoryError()
    for i in range(XP_ROWS):  # a weak belief in the expected bit at first
        m.sm.p[i] = 1073741824U if i & 1 == 0 else 3221225472U
    for i in range(XP_SOURCES):
        m.predicted[i] = -1
    return 0


cdef inline int ctx_x86_init(Context* c, bint x86, bint hist=False) noexcept nogil:
    """With x86 code contexts (after ``ctx_init``): the decoder on, before an opcode (and with
    ``hist`` its instruction history and relocation sites, x86.pxd's XH_*); -1 when out of
    memory."""
    c.x86 = x86
    c.x86hist = hist and x86
    memset(c.x86s, 0, sizeof(c.x86s))
    memset(c.x86h, 0, sizeof(c.x86h))
    if c.x86hist:
        c.x86sites = <uint8_t*>calloc(c.history_mask + 1, 1)
        if c.x86sites == NULL:
            return -1
    return 0


cdef inline int xp_context_init(Context* c, spec) except -1:
    """The x86 decoder on the context state when ``spec``'s contexts (code bits 6-9, 13-16),
    its weight sets (x86) or the predicted bytes (``x86_pred``) read it, and its instruction
    history and relocation sites when bits 13-17 do; the 68000 decoder (m68k.pxd) when code
    bits 18-23 do."""
    x86 = x86_trackers(spec.contexts, getattr(spec, "x86_pred", False))
    if ctx_x86_init(c, x86[0] or SEL_X86 in spec.selectors, x86[1]):
        raise MemoryError()
    if m68k_on(spec.contexts) or getattr(spec, "m68k_pred", False) or \
            SEL_M68K in spec.selectors:
        c.m68k = <uint64_t*>calloc(M68_N, sizeof(uint64_t))
        if c.m68k == NULL:
            raise MemoryError()
    return 0
