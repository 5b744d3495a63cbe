# cython: language_level=3
# The row maps (rows bits 8-11), a component of the bank (component.pxd): direct tables of
# adaptive probabilities (the StateMap rule: p moves 1/(n + 1.5) of the way to each bit, n
# counting to SM_LIMIT) indexed by a context hash and the node of the symbol, without bit
# histories.  A field of a table (a cell's value in the same column of every row) keeps one
# distribution for the whole file; a bit history forgets it (the count of the other bit is
# halved), a direct table estimates it as counts do.  Map k's context: (0) the last 5 bytes,
# (1) the last 6, (2) the last 4, (3) the bytes one and two rows above and the last two
# (``ctx_row_above``).  An index never seen gives the input 0.
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_bit, nothing_symbol)
from seqzip._kernels.cm.context cimport Context, ctx_back, ctx_row_above, ctx_row_length
from seqzip._kernels.cm.field cimport F_BYTES, F_INT
from seqzip._kernels.cm.tables cimport (StateMap, hash2, sm_fields, sm_init_half, sm_learn,
                                        sm_stretch)

cdef enum:
    ROW_MAPS = 4           # the maps the mask can choose
    ROW_MAP_BITS = 20      # each map: 2^20 probabilities (6 MiB)


cdef struct RowMaps:
    int n                       # maps in use
    int which[ROW_MAPS]         # their contexts (k above)
    StateMap map[ROW_MAPS]
    uint64_t h[ROW_MAPS]        # each map's context hash for this symbol
    int index[ROW_MAPS]         # this bit's index into each map
    int saved[ROW_MAPS]         # the indices a walk of the bit tree puts back


cdef inline uint64_t row_map_hash(const Context* c, int k) noexcept nogil:
    cdef uint64_t tag = <uint64_t>(k + 1) << 56, p
    if k == 0:
        return hash2(tag, c.c8 & 0xFFFFFFFFFFULL)
    if k == 1:
        return hash2(tag, c.c8 & 0xFFFFFFFFFFFFULL)
    if k == 2:
        return hash2(tag, c.c8 & 0xFFFFFFFFULL)
    p = ctx_row_above(c)
    if p == 0:
        return hash2(tag, 0)
    return hash2(tag, (ctx_back(c, p) << 24) | (ctx_back(c, p + ctx_row_length(c)) << 16) |
                 (c.c8 & 0xFFFF))


cdef inline void rows_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef RowMaps* m = <RowMaps*>s
    cdef int i
    for i in range(m.n):
        m.index[i] = <int>((m.h[i] + <uint64_t>at.node * 0x9E3779B97F4A7C15ULL) >>
                           (64 - ROW_MAP_BITS))
        x[i] = sm_stretch(&m.map[i], m.index[i]) if m.map[i].n[m.index[i]] else 0.0


cdef inline void rows_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef RowMaps* m = <RowMaps*>s
    cdef int i
    for i in range(m.n):
        sm_learn(&m.map[i], m.index[i], bit)


cdef inline int rows_begin(void* s, const Cursor* at) noexcept nogil:
    cdef RowMaps* m = <RowMaps*>s
    cdef int i
    for i in range(m.n):
        m.h[i] = row_map_hash(at.ctx, m.which[i])
    return 0


cdef inline void rows_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """A walk predicts at nodes it did not code: the coded bit's indices are put back."""
    cdef RowMaps* m = <RowMaps*>s
    cdef int i
    for i in range(m.n):
        if event == WALK_BEGIN:
            m.saved[i] = m.index[i]
        elif event == WALK_END:
            m.index[i] = m.saved[i]


cdef inline size_t rows_memory(const void* s) noexcept nogil:
    return <size_t>(<const RowMaps*>s).n * (6 << ROW_MAP_BITS)


cdef inline void rows_free(void* s) noexcept nogil:
    cdef RowMaps* m = <RowMaps*>s
    cdef int i
    for i in range(ROW_MAPS):
        free(m.map[i].p)
        free(m.map[i].n)
    free(m)


cdef inline list rows_fields(void* s):
    """The maps and the indices (they move every bit: light), the hashes (heavy)."""
    cdef RowMaps* m = <RowMaps*>s
    cdef int i
    cdef list out = []
    for i in range(m.n):
        out += sm_fields(f"rowmap{i}", &m.map[i])
        out.append((f"rowmap{i}.index", F_INT, <size_t>&m.index[i], sizeof(int), False))
    out.append(("rowmap.h", F_BYTES, <size_t>&m.h[0], sizeof(m.h), True))
    return out


cdef inline int rows_build(Component* c, const Cursor* at, object spec, object arg,
                           int index) except -1:
    """The maps of ``spec.row_maps`` (a mask of k), each at P(1) = 1/2."""
    cdef RowMaps* m = <RowMaps*>calloc(1, sizeof(RowMaps))
    cdef int k
    if m == NULL:
        raise MemoryError()
    c.state, c.free = m, rows_free
    c.predict, c.learn, c.next_bit = rows_predict, rows_learn, nothing_bit
    c.update, c.begin, c.walk = nothing_symbol, rows_begin, rows_walk
    c.memory, c.fields = rows_memory, rows_fields
    for k in range(ROW_MAPS):
        if spec.row_maps >> k & 1:
            m.which[m.n] = k
            if sm_init_half(&m.map[m.n], 1 << ROW_MAP_BITS) < 0:
                raise MemoryError()
            m.n += 1
    c.n_inputs = m.n
    return 0
