# cython: language_level=3
# The 1-bit image expert (image=1), a component of the bank (component.pxd): for a bitmap of
# one bit per pixel, eight pixels a byte, the most significant first, rows of r bytes (r: the
# detected record length), each bit is a pixel, predicted from its neighbourhood in the four rows
# above and the pixels before it in its row.  Five direct tables of 2^20 adaptive probabilities
# (the StateMap rule), each indexed by its own neighbourhood, give the mixer their log-odds.
# The coding alphabet must be the byte values 0..top (format 8 codes cm so) for the bits to be
# pixels; on other data the neighbourhoods are still exact functions of the history, only less
# telling (record-structured binaries gain a little: kennedy.xls -1.6%, sum -1.5% at level 6).
# image=2 adds five tables (ptt5 at level 6 in its bitmap variant: 23,013 -> 22,929 bytes; APM
# stages 3 and 2 keyed by the pixels and the runs, ``image_apm_rows``: -164, -88): a 16-pixel
# neighbourhood in a 2^16 table (learns sooner than the large ones), the runs (the one ending
# left of the pixel, how far the run above goes on each side), and three neighbourhoods
# through bit histories (the hashed contexts' states, ``tables.pxd``: they forget, the direct
# tables average); ``image_pixel_row`` is the ``pixel`` weight-set selector's row.
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_begin, nothing_bit, nothing_symbol)
from seqzip._kernels.cm.field cimport F_BYTES, F_INT
from seqzip._kernels.cm.context cimport Context, ctx_back, ctx_record_length
from seqzip._kernels.cm.tables cimport (MAX_STATES, STATE_NEXT, StateMap, sm_fields,
                                        sm_init_half, sm_init_states, sm_learn, sm_stretch)

cdef enum:
    IMAGE_MAPS = 5        # image=1's tables (image=2: twice as many inputs)
    IMAGE_BITS = 20       # each large table's index
    IMAGE_MAPS_MAX = 10
    IMAGE_MID_BITS = 16   # image=2's table 5 (a 16-pixel neighbourhood: learns sooner)
    IMAGE_RUN_BITS = 12   # image=2's table 8 (runs)
    IMAGE_HISTORIES = 3   # image=2's bit-history tables (maps 6, 7 and 9)


cdef struct Image:
    int n_maps             # 5 (image=1) or 10 (image=2)
    StateMap map[IMAGE_MAPS_MAX]
    int index[IMAGE_MAPS_MAX]  # this bit's index into each map (a history map: the state)
    int saved[IMAGE_MAPS_MAX]  # the indices a walk of the bit tree puts back
    uint8_t* history[IMAGE_HISTORIES]  # image=2: a bit-history state per neighbourhood
    int slot[IMAGE_HISTORIES]          # this bit's neighbourhood in each
    int saved_slot[IMAGE_HISTORIES]


cdef inline uint64_t _row(const Context* c, uint64_t k) noexcept nogil:
    """The byte k back with its neighbours: (left << 16) | (byte << 8) | right."""
    return (ctx_back(c, k + 1) << 16) | (ctx_back(c, k) << 8) | (ctx_back(c, k - 1) if k > 1
                                                                 else 0)


cdef inline uint64_t _left(const Cursor* at) noexcept nogil:
    """The 24 pixels before this one in the data (the last in bit 0): its row's to the left."""
    cdef const Context* c = at.ctx
    cdef int depth = at.depth
    return ((ctx_back(c, 3) << (16 + depth)) | (ctx_back(c, 2) << (8 + depth)) |
            (ctx_back(c, 1) << depth) | <uint64_t>(at.node & ((1 << depth) - 1))) & 0xFFFFFF


cdef inline int _run(uint64_t bits, int start, int step, int limit) noexcept nogil:
    """How many pixels from bit ``start`` on (moving by ``step``) equal it, up to ``limit``."""
    cdef int n = 1, b = (bits >> start) & 1
    while n < limit and ((bits >> (start + n * step)) & 1) == b:
        n += 1
    return n


cdef inline int _history_map(int j) noexcept nogil:
    """The map of bit-history table j (image=2: maps 6, 7 and 9)."""
    return 6 + j + (j == 2)


cdef inline int image_pixel_row(const Cursor* at) noexcept nogil:
    """The ``pixel`` selector's row (512): the pixels x-2..x+2 above, x two rows up, the two
    to the left and whether a row length is known."""
    cdef const Context* c = at.ctx
    cdef uint64_t r = ctx_record_length(c), up1, up2
    cdef int shift = 8 + 7 - at.depth, left = <int>(_left(at) & 3)
    if r < 2:
        return left
    up1 = _row(c, r)
    up2 = _row(c, 2 * r)
    return <int>(256 | (((up1 >> (shift - 2)) & 0x1F) << 3) | (((up2 >> shift) & 1) << 2)) | left


cdef inline void image_apm_rows(const Cursor* at, int* rows) noexcept nogil:
    """image=2's rows of APM stages 2 and 3 (2^14 each): the runs (as table 8) and the pixels
    x-2..x+2 above, x-1..x+1 two rows up and the five to the left, each with whether a row
    length is known."""
    cdef const Context* c = at.ctx
    cdef uint64_t r = ctx_record_length(c), up1, up2, left24 = _left(at)
    cdef int shift = 8 + 7 - at.depth, left = <int>(left24 & 0x1F)
    if r < 2:
        rows[2] = <int>(left24 & 0xFF)
        rows[3] = left
        return
    up1 = _row(c, r)
    up2 = _row(c, 2 * r)
    rows[2] = <int>(0x1000 | (_run(left24, 0, 1, 15) << 8) | ((left24 & 1) << 7) |
                    (((up1 >> shift) & 1) << 6) | ((_run(up1, shift, -1, 7) - 1) << 3) |
                    (_run(up1, shift, 1, 7) - 1))
    rows[3] = <int>(0x2000 | (((up1 >> (shift - 2)) & 0x1F) << 8) |
                    (((up2 >> (shift - 1)) & 7) << 5)) | left


cdef inline void image_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    """The tables' log-odds for the pixel at bit ``at.depth`` of the current byte."""
    cdef Image* m = <Image*>s
    cdef const Context* c = at.ctx
    cdef uint64_t r = ctx_record_length(c), up1 = 0, up2 = 0, up3 = 0, up4 = 0, left, left24
    cdef int depth = at.depth, shift = 8 + 7 - at.depth  # the pixel's bit in a row window
    cdef int i, j
    if r >= 2:
        up1 = _row(c, r)
        up2 = _row(c, 2 * r)
        up3 = _row(c, 3 * r)
        up4 = _row(c, 4 * r)
    left24 = _left(at)
    left = left24 & 0xFFF
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
    if m.n_maps > IMAGE_MAPS:
        # x-3..x+3 above (7), x-2..x+2 two rows up (5), 4 to the left (a 2^16 table)
        m.index[5] = <int>((((up1 >> (shift - 3)) & 0x7F) << 9) |
                           (((up2 >> (shift - 2)) & 0x1F) << 4) | (left & 0xF))
        # runs: the run to the left (to 15) and its pixel, the pixel above and how far its
        # run goes on to the right (to 7) and to the left (to 7), x two rows up
        m.index[8] = <int>((_run(left24, 0, 1, 15) << 8) | ((left & 1) << 7) |
                           (((up1 >> shift) & 1) << 6) |
                           ((_run(up1, shift, -1, 7) - 1) << 3) | (_run(up1, shift, 1, 7) - 1))
        # bit histories: as table 0; as table 1; x-8..x+8 above (17) and 3 to the left
        m.slot[0] = m.index[0]
        m.slot[1] = m.index[1]
        m.slot[2] = <int>((((up1 >> (shift - 8)) & 0x1FFFF) << 3) | (left & 7))
        for j in range(IMAGE_HISTORIES):
            m.index[_history_map(j)] = m.history[j][m.slot[j]]
    for i in range(m.n_maps):
        x[i] = sm_stretch(&m.map[i], m.index[i])


cdef inline void image_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef Image* m = <Image*>s
    cdef int i, j
    for i in range(m.n_maps):
        sm_learn(&m.map[i], m.index[i], bit)
    if m.n_maps > IMAGE_MAPS:
        for j in range(IMAGE_HISTORIES):
            m.history[j][m.slot[j]] = STATE_NEXT[m.index[_history_map(j)]][bit]


cdef inline void image_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """A walk predicts at nodes it did not code: the coded bit's indices are put back."""
    cdef Image* m = <Image*>s
    cdef int i
    for i in range(m.n_maps):
        if event == WALK_BEGIN:
            m.saved[i] = m.index[i]
        elif event == WALK_END:
            m.index[i] = m.saved[i]
    for i in range(IMAGE_HISTORIES):
        if event == WALK_BEGIN:
            m.saved_slot[i] = m.slot[i]
        elif event == WALK_END:
            m.slot[i] = m.saved_slot[i]


cdef inline int image_map_size(int n_maps, int i) noexcept nogil:
    """Entries of map i of an expert of ``n_maps`` maps."""
    if i < IMAGE_MAPS:
        return 1 << IMAGE_BITS
    if i == 5:
        return 1 << IMAGE_MID_BITS
    if i == 8:
        return 1 << IMAGE_RUN_BITS
    return MAX_STATES


cdef inline size_t image_bytes(int n_maps) noexcept nogil:
    """Bytes an expert of ``n_maps`` maps allocates (its tables and bit histories)."""
    cdef size_t total = 0
    cdef int i
    for i in range(n_maps):
        total += <size_t>image_map_size(n_maps, i) * 6
    if n_maps > IMAGE_MAPS:
        total += <size_t>IMAGE_HISTORIES << IMAGE_BITS
    return total


cdef inline size_t image_memory(const void* s) noexcept nogil:
    return image_bytes((<const Image*>s).n_maps)


cdef inline void image_free(void* s) noexcept nogil:
    cdef Image* m = <Image*>s
    cdef int i
    for i in range(IMAGE_MAPS_MAX):
        free(m.map[i].p)
        free(m.map[i].n)
    for i in range(IMAGE_HISTORIES):
        free(m.history[i])
    free(m)


cdef inline list image_fields(void* s):
    """The tables and bit histories (they learn every bit: light, so save points keep them)
    and the indices."""
    cdef Image* m = <Image*>s
    cdef int i
    cdef list out = []
    for i in range(m.n_maps):
        out += sm_fields(f"image{i}", &m.map[i])
        out.append((f"image{i}.index", F_INT, <size_t>&m.index[i], sizeof(int), False))
    if m.n_maps > IMAGE_MAPS:
        for i in range(IMAGE_HISTORIES):
            out.append((f"image.history{i}", F_BYTES, <size_t>m.history[i],
                        <size_t>1 << IMAGE_BITS, False))
            out.append((f"image.slot{i}", F_INT, <size_t>&m.slot[i], sizeof(int), False))
    return out


cdef inline list image_layout(const void* s):
    """Each map's size, for the checks of a state (``checks.check_image``)."""
    cdef const Image* m = <const Image*>s
    return [image_map_size(m.n_maps, i) for i in range(m.n_maps)]


cdef inline int image_build(Component* c, const Cursor* at, object spec, object arg,
                            int index) except -1:
    """The image expert: its tables at P(1) = 1/2 (image=2: the bit-history maps at their
    states' counts, the histories empty)."""
    cdef Image* m = <Image*>calloc(1, sizeof(Image))
    cdef int i
    if m == NULL:
        raise MemoryError()
    m.n_maps = IMAGE_MAPS * int(spec.image)
    c.state, c.free, c.n_inputs = m, image_free, m.n_maps
    c.predict, c.learn, c.next_bit = image_predict, image_learn, nothing_bit
    c.update, c.begin, c.walk = nothing_symbol, nothing_begin, image_walk
    c.memory, c.fields = image_memory, image_fields
    for i in range(m.n_maps):
        if image_map_size(m.n_maps, i) == MAX_STATES:
            if sm_init_states(&m.map[i]) < 0:
                raise MemoryError()
        elif sm_init_half(&m.map[i], image_map_size(m.n_maps, i)) < 0:
            raise MemoryError()
    if m.n_maps > IMAGE_MAPS:
        for i in range(IMAGE_HISTORIES):
            m.history[i] = <uint8_t*>calloc(<size_t>1 << IMAGE_BITS, 1)
            if m.history[i] == NULL:
                raise MemoryError()
    return 0
