# cython: language_level=3
# 68000 predicted words (code bit 23): the bytes the 68000 decoder (m68k.pxd) predicts, as
# mixer inputs in the way of a match model: (0) the word seen last at this place (after the
# same opcode at the same index; for an opcode, after the same two opcodes: ``m68k_last``),
# (1, 2) a branch's displacement from the last and second last targets (``m68k_pred``), (3)
# a branch's displacement or an abs.L's low word from the addresses seen (``m68k_seen``), (4)
# the word seen last after the same instruction so far (before an opcode, after the same
# last instruction: ``m68k_slot2``).  One
# confidence per (source, kind of word and byte of it, hits in a row, expected bit), learnt
# for every value; an input per source: the log-odds for the bit the predicted byte has
# while the symbol's bits agree with it (else 0).
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_begin)
from seqzip._kernels.cm.context cimport Context
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.m68k cimport (MS_KIND, MS_LAST2, MS_LEFT, MW_N, m68k_get, m68k_last,
                                      m68k_pred, m68k_seen, m68k_slot2)
from seqzip._kernels.cm.match cimport index_of
from seqzip._kernels.cm.tables cimport StateMap, sm_learn, sm_stretch

cdef enum:
    MP_SOURCES = 5
    MP_ROWS = MP_SOURCES * 32 * 4 * 2  # (source, kind and byte, hits in a row, bit)


cdef struct MPred:
    int predicted[MP_SOURCES]  # the predicted symbol (alphabet index) or -1
    int k[MP_SOURCES]          # the kind of the word and which byte of it (kind * 2 + lane)
    int hits[MP_SOURCES]       # its predictions that came true in a row (to 3)
    int miss[MP_SOURCES]       # the symbol's bits so far disagree with it
    int saved[MP_SOURCES]      # ``miss`` before a walk
    int row[MP_SOURCES]        # the map's row used for this bit (-1: none)
    StateMap sm


cdef inline int mp_byte(const Context* c, int source, int* k) noexcept nogil:
    """The byte ``source`` predicts next (-1: none) and (``k``) the kind of word and byte."""
    cdef const uint64_t* m = c.m68k
    cdef uint64_t v, lane = c.pos & 1
    k[0] = <int>((m[MS_KIND] % MW_N) * 2 + lane)
    if source == 0 or source == 4:
        v = m68k_last(m) if source == 0 else m68k_get(m, MS_LAST2, m68k_slot2(m))
        if lane == 0:
            return <int>(v >> 8)
        return <int>(v & 0xFF) if (v >> 8) == c.c8 & 0xFF else -1
    v = m68k_pred(m, c.c8, c.pos, source - 1) if source < 3 else m68k_seen(m, c.c8, c.pos)
    return <int>(v & 0xFF) if v else -1


cdef inline void mp_c_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef MPred* m = <MPred*>s
    cdef int i, bit
    for i in range(MP_SOURCES):
        m.row[i] = -1
        x[i] = 0.0
        if m.predicted[i] >= 0 and not m.miss[i]:
            bit = (m.predicted[i] >> (at.B - 1 - at.depth)) & 1
            m.row[i] = ((i * 32 + (m.k[i] & 31)) * 4 + (m.hits[i] & 3)) * 2 + bit
            x[i] = sm_stretch(&m.sm, m.row[i])


cdef inline void mp_c_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef MPred* m = <MPred*>s
    cdef int i
    for i in range(MP_SOURCES):
        if 0 <= m.row[i] < MP_ROWS:
            sm_learn(&m.sm, m.row[i], bit)


cdef inline void mp_c_next_bit(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef MPred* m = <MPred*>s
    cdef int i
    for i in range(MP_SOURCES):
        if m.predicted[i] >= 0 and (m.predicted[i] >> (at.B - at.depth)) & 1 != bit:
            m.miss[i] = 1


cdef inline int mp_c_update(void* s, const Cursor* at, int x) noexcept nogil:
    """Symbol x ended (the context holds it): each source's hits, its next prediction."""
    cdef MPred* m = <MPred*>s
    cdef int i, b
    for i in range(MP_SOURCES):
        if m.predicted[i] >= 0:
            m.hits[i] = min(m.hits[i] + 1, 3) if m.predicted[i] == x else 0
        b = mp_byte(at.ctx, i, &m.k[i]) if at.ctx.m68k != NULL else -1
        m.predicted[i] = index_of(at.to_byte, at.A, <uint8_t>b) if b >= 0 else -1
        m.miss[i] = 0
    return 0


cdef inline void mp_c_walk(void* s, const Cursor* at, int event) noexcept nogil:
    cdef MPred* m = <MPred*>s
    cdef int i
    for i in range(MP_SOURCES):
        if event == WALK_BEGIN:
            m.saved[i] = m.miss[i]
        elif event == WALK_END:
            m.miss[i] = m.saved[i]
        else:
            m.miss[i] = m.predicted[i] >= 0 and \
                (m.predicted[i] >> (at.B - at.depth)) != (at.node - (1 << at.depth))


cdef inline size_t mp_c_memory(const void* s) noexcept nogil:
    return sizeof(MPred) + MP_ROWS * 6


cdef inline void mp_c_free(void* s) noexcept nogil:
    cdef MPred* m = <MPred*>s
    free(m.sm.p)
    free(m.sm.n)
    free(m)


cdef inline list mp_c_fields(void* s):
    cdef MPred* m = <MPred*>s
    return [("mpred.sm", F_BYTES, <size_t>m.sm.p, MP_ROWS * 4, False),
            ("mpred.smn", F_BYTES, <size_t>m.sm.n, MP_ROWS * 2, False),
            ("mpred.state", F_BYTES, <size_t>&m.predicted[0], 6 * MP_SOURCES * sizeof(int),
             False)]


cdef inline int mp_build(Component* c, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """The 68000 predicted words' inputs (code bit 23, ``CMSpec.m68k_pred``)."""
    cdef MPred* m = <MPred*>calloc(1, sizeof(MPred))
    cdef int i
    if m == NULL:
        raise MemoryError()
    c.state, c.free, c.n_inputs = m, mp_c_free, MP_SOURCES
    c.predict, c.learn, c.next_bit = mp_c_predict, mp_c_learn, mp_c_next_bit
    c.update, c.begin, c.walk = mp_c_update, nothing_begin, mp_c_walk
    c.memory, c.fields = mp_c_memory, mp_c_fields
    m.sm.size = MP_ROWS
    m.sm.p = <uint32_t*>malloc(MP_ROWS * sizeof(uint32_t))
    m.sm.n = <uint16_t*>calloc(MP_ROWS, sizeof(uint16_t))
    if m.sm.p == NULL or m.sm.n == NULL:
        raise MemoryError()
    for i in range(MP_ROWS):  # a weak belief in the expected bit at first
        m.sm.p[i] = 1073741824U if i & 1 == 0 else 3221225472U
    for i in range(MP_SOURCES):
        m.predicted[i] = -1
    return 0
