# cython: language_level=3
# The 1-bit image expert (image=1), a component of the bank (component.pxd): for a bitmap of
# one bit per pixel, eight pixels a byte, the most significant first, rows of r bytes (r: the
# detected record length), each bit is a pixel, predicted from its neighbourhood in the four rows
# above and the pixels before it in its row.  Five direct tables of 2^20 adaptive probabilities
# (the StateMap rule), each indexed by its own neighbourhood, give the mixer their log-odds.
# The coding alphabet must be the byte values 0..top (format 8 codes cm so) for the bits to be
# pixels; on other data the neighbourhoods are still exact functions of the history, only less
# telling (record-structured binaries gain a little: kennedy.xls -1.6%, sum -1.5% at level 6).
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_begin, nothing_bit, nothing_symbol)
from seqzip._kernels.cm.field cimport F_INT
from seqzip._kernels.cm.context cimport Context, ctx_back, ctx_record_length
from seqzip._kernels.cm.tables cimport (StateMap, sm_fields, sm_init_half, sm_learn,
                                        sm_stretch)

cdef enum:
    IMAGE_MAPS = 5
    IMAGE_BITS = 20       # each table's index


cdef struct Image:
    StateMap map[IMAGE_MAPS]
    int index[IMAGE_MAPS]  # this bit's index into each table
    int saved[IMAGE_MAPS]  # the indices a walk of the bit tree puts back


cdef inline uint64_t _row(const Context* c, uint64_t k) noexcept nogil:
    """The byte k back with its neighbours: (left << 16) | (byte << 8) | right."""
    return (ctx_back(c, k + 1) << 16) | (ctx_back(c, k) << 8) | (ctx_back(c, k - 1) if k > 1
                                                                 else 0)


cdef inline void image_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    """The tables' log-odds for the pixel at bit ``at.depth`` of the current byte."""
    cdef Image* m = <Image*>s
    cdef const Context* c = at.ctx
    cdef uint64_t r = ctx_record_length(c), up1 = 0, up2 = 0, up3 = 0, up4 = 0, left
    cdef int depth = at.depth, shift = 8 + 7 - at.depth  # the pixel's bit in a row window
    cdef int i
    if r >= 2:
        up1 = _row(c, r)
        up2 = _row(c, 2 * r)
        up3 = _row(c, 3 * r)
        up4 = _row(c, 4 * r)
    left = ((ctx_back(c, 2) << (8 + depth)) | (ctx_back(c, 1) << depth) |
            <uint64_t>(at.node & ((1 << depth) - 1))) & 0xFFF
    # x-4..x+4 above (9), x-2..x+2 two rows up (5), 6 to the left
    m.index[0] = <int>((((up1 >> (shift - 4)) & 0x1FF) << 11) |
                       (((up2 >> (shift - 2)) & 0x1F) << 6) | (left & 0x3F))
    # x-2..x+2 above (5), 12 to the left, x-1..x+1 two rows up (3)
    m.index[1] = <int>((((up1 >> (shift - 2)) & 0x1F) << 15) | (left << 3) |
                       ((up2 >> (shift - 1)) & 7))
    # x-3..x+3 above (7), x-3..x+3 two rows up (7), x-1..x+1 three rows up (3), 3 to the left
    m.index[2] = <int>((((up1 >> (shift - 3)) & 0x7F) << 13) |
                       (((up2 >> (shift - 3)) & 0x7F) << 6) | (((up3 >> (shift - 1)) & 7) << 3)
                       | (left & 7))
    # wide: x-6..x+6 above (13), 7 to the left
    m.index[3] = <int>((((up1 >> (shift - 6)) & 0x1FFF) << 7) | (left & 0x7F))
    # tall: x-2..x+2 in each of the four rows above
    m.index[4] = <int>((((up1 >> (shift - 2)) & 0x1F) << 15) | (((up2 >> (shift - 2)) & 0x1F) << 10)
                       | (((up3 >> (shift - 2)) & 0x1F) << 5) | ((up4 >> (shift - 2)) & 0x1F))
    for i in range(IMAGE_MAPS):
        x[i] = sm_stretch(&m.map[i], m.index[i])


cdef inline void image_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef Image* m = <Image*>s
    cdef int i
    for i in range(IMAGE_MAPS):
        sm_learn(&m.map[i], m.index[i], bit)


cdef inline void image_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """A walk predicts at nodes it did not code: the coded bit's indices are put back."""
    cdef Image* m = <Image*>s
    cdef int i
    for i in range(IMAGE_MAPS):
        if event == WALK_BEGIN:
            m.saved[i] = m.index[i]
        elif event == WALK_END:
            m.index[i] = m.saved[i]


cdef inline size_t image_memory(const void* s) noexcept nogil:
    return <size_t>IMAGE_MAPS * (1 << IMAGE_BITS) * 6


cdef inline void image_free(void* s) noexcept nogil:
    cdef Image* m = <Image*>s
    cdef int i
    for i in range(IMAGE_MAPS):
        free(m.map[i].p)
        free(m.map[i].n)
    free(m)


cdef inline list image_fields(void* s):
    """The tables (they learn every bit: light, so save points keep them) and the indices."""
    cdef Image* m = <Image*>s
    cdef int i
    cdef list out = []
    for i in range(IMAGE_MAPS):
        out += sm_fields(f"image{i}", &m.map[i])
        out.append((f"image{i}.index", F_INT, <size_t>&m.index[i], sizeof(int), False))
    return out


cdef inline int image_build(Component* c, const Cursor* at, object spec, object arg,
                            int index) except -1:
    """The image expert: its tables at P(1) = 1/2."""
    cdef Image* m = <Image*>calloc(1, sizeof(Image))
    cdef int i
    if m == NULL:
        raise MemoryError()
    c.state, c.free, c.n_inputs = m, image_free, IMAGE_MAPS
    c.predict, c.learn, c.next_bit = image_predict, image_learn, nothing_bit
    c.update, c.begin, c.walk = nothing_symbol, nothing_begin, image_walk
    c.memory, c.fields = image_memory, image_fields
    for i in range(IMAGE_MAPS):
        if sm_init_half(&m.map[i], 1 << IMAGE_BITS) < 0:
            raise MemoryError()
    return 0
