# cython: language_level=3
# Match models: the last earlier occurrence of the current context (a hash of the last
# ``min_len`` bytes, verified backwards) predicts the symbol that followed it; its confidence
# is a StateMap by (length bucket, expected bit).  One component (``component.pxd``) per match
# model: one input, its log-odds for the bit the predicted symbol has.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_begin)
from seqzip._kernels.cm.field cimport F_BYTES, F_INT, F_U64
from seqzip._kernels.cm.context cimport Context
from seqzip._kernels.cm.tables cimport StateMap, big_calloc, hash2, sm_learn, sm_stretch

cdef enum:
    MATCH_BUCKETS = 32   # length buckets of the confidence map (times 2 expected bits)
    MATCH_MAX = 65535    # the longest match length counted


cdef struct MatchModel:
    int min_len          # bytes hashed to find a candidate (0: off)
    uint32_t* table      # (2^bits,) last position + 1 of each hash
    uint64_t mask
    uint64_t ptr         # position of the predicted byte
    int length           # current match length (0: none)
    int predicted        # predicted symbol (alphabet index) or -1
    int miss             # the symbol's coded bits already disagree with the prediction
    StateMap sm          # (64 * 2,) P(1) by (length bucket, expected bit)
    int sm_index         # the entry used for the current bit (-1: none)
    int index            # which match model (for the state's names)
    int saved_miss       # ``miss`` before a walk


cdef inline int mm_init(MatchModel* m, int min_len, int bits, int how) noexcept nogil:
    cdef int i
    m.min_len = min_len
    m.mask = (<uint64_t>1 << bits) - 1
    m.table = <uint32_t*>big_calloc((m.mask + 1) * sizeof(uint32_t), how)
    m.sm.size = 128
    m.sm.p = <uint32_t*>malloc(128 * sizeof(uint32_t))
    m.sm.n = <uint16_t*>calloc(128, sizeof(uint16_t))
    if m.table == NULL or m.sm.p == NULL or m.sm.n == NULL:
        return -1
    for i in range(128):  # by (length bucket, expected bit): a weak belief at first
        m.sm.p[i] = 1073741824U if i & 1 == 0 else 3221225472U
    m.length = 0
    m.ptr = 0
    m.predicted = -1
    m.miss = 0
    m.sm_index = -1
    return 0


cdef inline uint64_t mm_memory(const MatchModel* m) noexcept nogil:
    return (m.mask + 1) * 4 + 128 * 6


cdef inline int match_bucket(int length) noexcept nogil:
    """Length buckets 0..31: exact to 15, then logarithmic."""
    cdef int b = 16
    if length < 16:
        return length
    length >>= 4
    while length > 1 and b < 31:
        length >>= 1
        b += 1
    return b


cdef inline int index_of(const uint8_t* to_byte, int A, uint8_t b) noexcept nogil:
    """The alphabet index of byte b (the alphabet is sorted), or -1."""
    cdef int lo = 0, hi = A - 1, mid
    while lo <= hi:
        mid = (lo + hi) >> 1
        if to_byte[mid] == b:
            return mid
        if to_byte[mid] < b:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


cdef inline void mm_update(MatchModel* m, const Context* c, int x, const uint8_t* to_byte,
                           int A) noexcept nogil:
    """After symbol x (the context already holds it): extend the current match or drop it,
    then (re)find one by the hash of the last ``min_len`` bytes, verified backwards; remember
    this position."""
    cdef uint64_t h = 0, cand, k, limit
    cdef int j
    if m.length > 0:
        if m.predicted == x:
            if m.length < MATCH_MAX:
                m.length += 1
            m.ptr += 1
        else:
            m.length = 0
    if c.pos >= <uint64_t>m.min_len:
        for j in range(1, m.min_len + 1):
            h = hash2(h, c.history[(c.pos - j) & c.history_mask])
        h = h & m.mask
        if m.length == 0:
            cand = m.table[h]
            if cand > 0 and c.pos - cand < c.history_mask:
                limit = min(cand, <uint64_t>64)
                k = 0
                while k < limit and c.history[(cand - 1 - k) & c.history_mask] == \
                        c.history[(c.pos - 1 - k) & c.history_mask]:
                    k += 1
                if k >= <uint64_t>m.min_len:
                    m.length = <int>k
                    m.ptr = cand
        m.table[h] = <uint32_t>c.pos
    if m.length > 0 and m.ptr < c.pos:
        m.predicted = index_of(to_byte, A, c.history[m.ptr & c.history_mask])
    else:
        m.length = 0
        m.predicted = -1
    m.miss = 0


cdef inline int mm_expected(const MatchModel* m, int B, int depth) noexcept nogil:
    """The bit at ``depth`` of the predicted symbol."""
    return (m.predicted >> (B - 1 - depth)) & 1


cdef inline double mm_input(MatchModel* m, int B, int depth) noexcept nogil:
    """The model's log-odds for the current bit (0 when it predicts nothing)."""
    if m.predicted >= 0 and not m.miss:
        m.sm_index = 2 * match_bucket(m.length) + mm_expected(m, B, depth)
        return sm_stretch(&m.sm, m.sm_index)
    m.sm_index = -1
    return 0.0


cdef inline void mm_learn(MatchModel* m, int bit) noexcept nogil:
    if m.sm_index >= 0:
        sm_learn(&m.sm, m.sm_index, bit)


cdef inline void mm_after_bit(MatchModel* m, int B, int depth, int bit) noexcept nogil:
    """Does the symbol's prediction still hold after this bit?"""
    if m.predicted >= 0 and mm_expected(m, B, depth) != bit:
        m.miss = 1


cdef inline int mm_state(const MatchModel* m, int B, int depth) noexcept nogil:
    """0 no prediction, 1 missed, else 2 + 2 x length bucket (to 22) + the expected bit: a
    selector and APM context."""
    if m.predicted < 0:
        return 0
    if m.miss:
        return 1
    return 2 + 2 * min(match_bucket(m.length), 22) + mm_expected(m, B, depth)


# ---------------------------------------------------------------- the component

cdef inline void mm_c_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    x[0] = mm_input(<MatchModel*>s, at.B, at.depth)


cdef inline void mm_c_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    mm_learn(<MatchModel*>s, bit)


cdef inline void mm_c_next_bit(void* s, const Cursor* at, int bit) noexcept nogil:
    mm_after_bit(<MatchModel*>s, at.B, at.depth - 1, bit)


cdef inline int mm_c_update(void* s, const Cursor* at, int x) noexcept nogil:
    mm_update(<MatchModel*>s, at.ctx, x, at.to_byte, at.A)
    return 0


cdef inline void mm_c_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """Does the match's symbol still agree with the path the walk took?"""
    cdef MatchModel* m = <MatchModel*>s
    if event == WALK_BEGIN:
        m.saved_miss = m.miss
    elif event == WALK_END:
        m.miss = m.saved_miss
    else:
        m.miss = m.predicted >= 0 and \
            (m.predicted >> (at.B - at.depth)) != (at.node - (1 << at.depth))


cdef inline size_t mm_c_memory(const void* s) noexcept nogil:
    return mm_memory(<const MatchModel*>s)


cdef inline void mm_c_free(void* s) noexcept nogil:
    cdef MatchModel* m = <MatchModel*>s
    free(m.table)
    free(m.sm.p)
    free(m.sm.n)
    free(m)


cdef inline list mm_c_fields(void* s):
    cdef MatchModel* m = <MatchModel*>s
    cdef str k = f"match{m.index}."
    return [(k + "table", F_BYTES, <size_t>m.table, (m.mask + 1) * 4, True),
            (k + "sm", F_BYTES, <size_t>m.sm.p, 128 * 4, False),
            (k + "smn", F_BYTES, <size_t>m.sm.n, 128 * 2, False),
            (k + "length", F_INT, <size_t>&m.length, sizeof(int), False),
            (k + "predicted", F_INT, <size_t>&m.predicted, sizeof(int), False),
            (k + "miss", F_INT, <size_t>&m.miss, sizeof(int), False),
            (k + "sm_index", F_INT, <size_t>&m.sm_index, sizeof(int), False),
            (k + "ptr", F_U64, <size_t>&m.ptr, sizeof(uint64_t), False)]


cdef inline int mm_build(Component* c, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """Match model ``index`` of ``spec.matches`` (its minimum length)."""
    cdef MatchModel* m = <MatchModel*>calloc(1, sizeof(MatchModel))
    if m == NULL:
        raise MemoryError()
    c.state, c.free, c.n_inputs = m, mm_c_free, 1
    c.predict, c.learn, c.next_bit = mm_c_predict, mm_c_learn, mm_c_next_bit
    c.update, c.begin, c.walk = mm_c_update, nothing_begin, mm_c_walk
    c.memory, c.fields = mm_c_memory, mm_c_fields
    m.index = index
    cdef int min_len = spec.matches[index], bits = min(spec.history_bits, 24), status
    with nogil:
        status = mm_init(m, min_len, bits, at.big)
    if status < 0:
        raise MemoryError()
    return 0
