# cython: language_level=3
# Predicted bytes as mixer inputs in the way of a match model, written once for the decoders
# that predict them (xpred.pxd: x86 code, code bit 17; mpred.pxd: 68000 code, code bit 23).
# Each of PB_SOURCES sources names the byte it expects next (or none) and a class of it (which
# byte of its field, the kind of word); the inputs learn one confidence per (source, class,
# hits in a row, expected bit) for every value.  An input per source: the log-odds for the bit
# the predicted byte has while the symbol's bits agree with it (else 0).  A component of the
# bank (``component.pxd``).
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.stdlib cimport calloc, free, malloc
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_begin)
from seqzip._kernels.cm.context cimport Context
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.match cimport index_of
from seqzip._kernels.cm.tables cimport StateMap, sm_learn, sm_stretch

cdef enum:
    PB_SOURCES = 5

# the byte ``source`` predicts next (-1: none) with its class in ``k``
ctypedef int (*pb_byte_fn)(const Context* c, int source, int* k) noexcept nogil


cdef struct PredBytes:
    int predicted[PB_SOURCES]  # the predicted symbol (alphabet index) or -1
    int k[PB_SOURCES]          # its class (below ``classes``)
    int hits[PB_SOURCES]       # its predictions that came true in a row (to 3)
    int miss[PB_SOURCES]       # the symbol's bits so far disagree with it
    int saved[PB_SOURCES]      # ``miss`` before a walk
    int row[PB_SOURCES]        # the map's row used for this bit (-1: none)
    StateMap sm                # (PB_SOURCES * classes * 4 * 2,) confidences
    int classes                # a power of two
    int named                  # 0: the x86 inputs' field names, 1: the 68000 ones'
    pb_byte_fn byte


cdef inline int pb_rows(const PredBytes* m) noexcept nogil:
    return PB_SOURCES * m.classes * 4 * 2


cdef inline void pb_c_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef PredBytes* m = <PredBytes*>s
    cdef int i, bit
    for i in range(PB_SOURCES):
        m.row[i] = -1
        x[i] = 0.0
        if m.predicted[i] >= 0 and not m.miss[i]:
            bit = (m.predicted[i] >> (at.B - 1 - at.depth)) & 1
            m.row[i] = ((i * m.classes + (m.k[i] & (m.classes - 1))) * 4 +
                        (m.hits[i] & 3)) * 2 + bit
            x[i] = sm_stretch(&m.sm, m.row[i])


cdef inline void pb_c_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef PredBytes* m = <PredBytes*>s
    cdef int i
    for i in range(PB_SOURCES):
        if 0 <= m.row[i] < pb_rows(m):
            sm_learn(&m.sm, m.row[i], bit)


cdef inline void pb_c_next_bit(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef PredBytes* m = <PredBytes*>s
    cdef int i
    for i in range(PB_SOURCES):
        if m.predicted[i] >= 0 and (m.predicted[i] >> (at.B - at.depth)) & 1 != bit:
            m.miss[i] = 1


cdef inline int pb_c_update(void* s, const Cursor* at, int x) noexcept nogil:
    """Symbol x ended (the context holds it): each source's hits, its next prediction."""
    cdef PredBytes* m = <PredBytes*>s
    cdef int i, b
    for i in range(PB_SOURCES):
        if m.predicted[i] >= 0:
            m.hits[i] = min(m.hits[i] + 1, 3) if m.predicted[i] == x else 0
        b = m.byte(at.ctx, i, &m.k[i])
        m.predicted[i] = index_of(at.to_byte, at.A, <uint8_t>b) if b >= 0 else -1
        m.miss[i] = 0
    return 0


cdef inline void pb_c_walk(void* s, const Cursor* at, int event) noexcept nogil:
    cdef PredBytes* m = <PredBytes*>s
    cdef int i
    for i in range(PB_SOURCES):
        if event == WALK_BEGIN:
            m.saved[i] = m.miss[i]
        elif event == WALK_END:
            m.miss[i] = m.saved[i]
        else:
            m.miss[i] = m.predicted[i] >= 0 and \
                (m.predicted[i] >> (at.B - at.depth)) != (at.node - (1 << at.depth))


cdef inline size_t pb_c_memory(const void* s) noexcept nogil:
    return sizeof(PredBytes) + pb_rows(<const PredBytes*>s) * 6


cdef inline void pb_c_free(void* s) noexcept nogil:
    cdef PredBytes* m = <PredBytes*>s
    free(m.sm.p)
    free(m.sm.n)
    free(m)


cdef inline list pb_c_fields(void* s):
    cdef PredBytes* m = <PredBytes*>s
    cdef str name = ("xpred", "mpred")[m.named]
    return [(name + ".sm", F_BYTES, <size_t>m.sm.p, pb_rows(m) * 4, False),
            (name + ".smn", F_BYTES, <size_t>m.sm.n, pb_rows(m) * 2, False),
            (name + ".state", F_BYTES, <size_t>&m.predicted[0], 6 * PB_SOURCES * sizeof(int),
             False)]


cdef inline int pb_build(Component* c, pb_byte_fn byte, int classes, int named) except -1:
    """The component of ``byte``'s predictions, classes of them and field names ``named``."""
    cdef PredBytes* m = <PredBytes*>calloc(1, sizeof(PredBytes))
    cdef int i, rows
    if m == NULL:
        raise MemoryError()
    c.state, c.free, c.n_inputs = m, pb_c_free, PB_SOURCES
    c.predict, c.learn, c.next_bit = pb_c_predict, pb_c_learn, pb_c_next_bit
    c.update, c.begin, c.walk = pb_c_update, nothing_begin, pb_c_walk
    c.memory, c.fields = pb_c_memory, pb_c_fields
    m.classes, m.named, m.byte = classes, named, byte
    rows = pb_rows(m)
    m.sm.size = rows
    m.sm.p = <uint32_t*>malloc(rows * sizeof(uint32_t))
    m.sm.n = <uint16_t*>calloc(rows, sizeof(uint16_t))
    if m.sm.p == NULL or m.sm.n == NULL:
        raise MemoryError()
    for i in range(rows):  # a weak belief in the expected bit at first
        m.sm.p[i] = 1073741824U if i & 1 == 0 else 3221225472U
    for i in range(PB_SOURCES):
        m.predicted[i] = -1
    return 0
