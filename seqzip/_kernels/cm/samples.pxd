# cython: language_level=3
# The numeric-sample expert (samples=1), a component of the bank (component.pxd): the data read
# as big-endian signed samples of 2 and of 4 bytes (aligned to the stream's start), the next
# sample predicted from the previous two (linear: 2 v1 - v2; and v1), and each bit predicted
# from where the prediction lies in the interval of values the sample's bits so far leave
# open (in quarters of the current bit's weight, clamped), the bit's place in the sample and
# the predictor's recent error (its bit length), by a direct table of adaptive probabilities
# (the StateMap rule) per predictor.  The coding alphabet must be the byte values 0..top (cm
# codes bytes so) for the bits to be the sample's; on other data the contexts are still exact
# functions of the history, only less telling.
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_bit)
from seqzip._kernels.cm.field cimport F_BYTES, F_INT
from seqzip._kernels.cm.context cimport Context, ctx_back
from seqzip._kernels.cm.tables cimport (StateMap, bit_length, sm_fields, sm_init_half,
                                        sm_learn, sm_stretch)

cdef enum:
    SAMPLE_MAPS = 6       # predictors: (2 bytes, linear), (2, v1), (4, linear), (4, v1),
                          # (2, adaptive), (4, adaptive)
    SAMPLE_TAPS = 4       # the adaptive predictors' previous samples
    SAMPLE_SIZE = 32 * 32 * 32  # each table: bit place x offset x error size




cdef struct Samples:
    StateMap map[SAMPLE_MAPS]
    int64_t pred[SAMPLE_MAPS]   # this sample's prediction, offset binary
    uint64_t err[SAMPLE_MAPS]   # the recent absolute error x 16 (a running mean)
    double w[2][SAMPLE_TAPS]    # the adaptive predictors' weights (normalised LMS)
    int index[SAMPLE_MAPS]      # this bit's index into each table
    int saved[SAMPLE_MAPS]      # the indices a walk of the bit tree puts back


cdef inline int64_t _sample(const Context* c, uint64_t back, int s) noexcept nogil:
    """The signed big-endian s-byte sample whose last byte is ``back`` bytes back."""
    cdef uint64_t v = 0
    cdef int i
    for i in range(s):
        v |= ctx_back(c, back + i) << (8 * i)
    if v >> (8 * s - 1):
        return <int64_t>v - (<int64_t>1 << (8 * s))
    return <int64_t>v


cdef inline double _lms(const Samples* m, const Context* c, uint64_t back, int a,
                       double* v) noexcept nogil:
    """Adaptive predictor a's value (the previous samples in ``v``)."""
    cdef int s = 2 if a == 0 else 4, i
    cdef double p = 0.0
    for i in range(SAMPLE_TAPS):
        v[i] = <double>_sample(c, back + <uint64_t>(i * s), s)
        p = p + m.w[a][i] * v[i]
    return p


cdef inline int64_t _predict(const Samples* ms, const Context* c, uint64_t back,
                             int m) noexcept nogil:
    """Predictor m's value for the sample after the one whose last byte is ``back`` bytes
    back, offset binary (0 .. 2^(8s) - 1, clamped)."""
    cdef int s = 2 if m < 2 or m == 4 else 4
    cdef int64_t v1 = _sample(c, back, s), p, top = <int64_t>1 << (8 * s - 1)
    cdef double f, v[SAMPLE_TAPS]
    if m >= 4:
        f = _lms(ms, c, back, m - 4, v)
        if not f > -<double>top:  # NaN too
            return 0
        if not f < <double>top:
            return 2 * top - 1
        p = <int64_t>f
    elif m & 1:
        p = v1
    else:
        p = 2 * v1 - _sample(c, back + s, s)
    p += top
    if p < 0:
        return 0
    if p > 2 * top - 1:
        return 2 * top - 1
    return p


# What this expert and the float-sample one (floats.pxd) share: where a prediction lies in
# the interval the known bits leave open, as a table index, and the predictors' errors.

cdef inline int clamp_q(int64_t d) noexcept nogil:
    """The offset d (in eighths of the interval) clamped to -8..23, as 0..31."""
    return <int>(-8 if d < -8 else (23 if d > 23 else d)) + 8


cdef inline int interval_q(int64_t d, int rem) noexcept nogil:
    """``clamp_q`` of d, the prediction less the interval's start when ``rem`` bits are
    left open (this one included), in eighths of the interval."""
    return clamp_q(d >> (rem - 3) if rem >= 3 else d << (3 - rem))


cdef inline int map_index(int place, int q, uint64_t err) noexcept nogil:
    """A predictor's table index: the bit's place, where the prediction lies, the bit length
    of its recent error."""
    return (place << 10) | (q << 5) | min(bit_length(err >> 4), 31)


cdef inline uint64_t err_moved(uint64_t err, int64_t e) noexcept nogil:
    """The running mean (x 16) of the absolute error, moved by error e."""
    if e < 0:
        e = -e
    return (err * 15 + (<uint64_t>e << 4)) >> 4


cdef inline void samples_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef Samples* m = <Samples*>s
    cdef const Context* c = at.ctx
    cdef int i, n, k, known, rem, q, place
    cdef uint64_t prefix
    for i in range(SAMPLE_MAPS):
        n = 2 if i < 2 or i == 4 else 4
        k = <int>(c.pos % <uint64_t>n)
        prefix = 0
        for place in range(k):
            prefix = (prefix << 8) | ctx_back(c, k - place)
        # the byte's bits so far (the B-bit code of a byte below 2^B: its top bits are 0)
        known = 8 * k + 8 - at.B + at.depth
        prefix = (prefix << (8 - at.B + at.depth)) | <uint64_t>(at.node - (1 << at.depth))
        rem = 8 * n - known  # bits left, this one included
        if known:
            prefix ^= <uint64_t>1 << (known - 1)  # offset binary: the sign bit flipped
        q = interval_q(m.pred[i] - <int64_t>(prefix << rem), rem)
        m.index[i] = map_index(known & 31, q, m.err[i])
        # a predictor exact of late (runs of zeros) says nothing the order contexts do not:
        # its input stays 0 (ptt5 at level 6: +423 bytes without this, +99 with it)
        x[i] = sm_stretch(&m.map[i], m.index[i]) if m.err[i] >= 16 else 0.0


cdef inline void samples_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef Samples* m = <Samples*>s
    cdef int i
    for i in range(SAMPLE_MAPS):
        sm_learn(&m.map[i], m.index[i], bit)


cdef inline int samples_begin(void* s, const Cursor* at) noexcept nogil:
    """A symbol begins: each predictor's value for the sample it is in."""
    cdef Samples* m = <Samples*>s
    cdef const Context* c = at.ctx
    cdef int i, n
    for i in range(SAMPLE_MAPS):
        n = 2 if i < 2 or i == 4 else 4
        m.pred[i] = _predict(m, c, c.pos % <uint64_t>n + 1, i)
    return 0


cdef inline int samples_update(void* s, const Cursor* at, int x) noexcept nogil:
    """A symbol ended: where it ended a sample, each such predictor's error moves."""
    cdef Samples* m = <Samples*>s
    cdef const Context* c = at.ctx
    cdef int i, n, t
    cdef int64_t e
    cdef double f, norm, v[SAMPLE_TAPS]
    for i in range(SAMPLE_MAPS):
        n = 2 if i < 2 or i == 4 else 4
        if c.pos % <uint64_t>n == 0 and c.pos >= <uint64_t>n:
            e = _sample(c, 1, n) + (<int64_t>1 << (8 * n - 1)) - m.pred[i]
            m.err[i] = err_moved(m.err[i], e)
            if i >= 4:  # normalised LMS: w += mu e v / (|v|^2 + 1)
                f = <double>_sample(c, 1, n) - _lms(m, c, <uint64_t>(n + 1), i - 4, v)
                norm = 1.0
                for t in range(SAMPLE_TAPS):
                    norm = norm + v[t] * v[t]
                f = f * 0.002 / norm  # the step
                for t in range(SAMPLE_TAPS):
                    m.w[i - 4][t] = m.w[i - 4][t] + f * v[t]
    return 0


cdef inline void samples_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """A walk predicts at nodes it did not code: the coded bit's indices are put back."""
    cdef Samples* m = <Samples*>s
    cdef int i
    for i in range(SAMPLE_MAPS):
        if event == WALK_BEGIN:
            m.saved[i] = m.index[i]
        elif event == WALK_END:
            m.index[i] = m.saved[i]


cdef inline size_t samples_memory(const void* s) noexcept nogil:
    return <size_t>SAMPLE_MAPS * SAMPLE_SIZE * 6


cdef inline void samples_free(void* s) noexcept nogil:
    cdef Samples* m = <Samples*>s
    cdef int i
    for i in range(SAMPLE_MAPS):
        free(m.map[i].p)
        free(m.map[i].n)
    free(m)


cdef inline list samples_fields(void* s):
    """The tables and the indices (they move every bit: light), the predictions and the
    errors (they move when a symbol ends: heavy)."""
    cdef Samples* m = <Samples*>s
    cdef int i
    cdef list out = []
    for i in range(SAMPLE_MAPS):
        out += sm_fields(f"samples{i}", &m.map[i])
        out.append((f"samples{i}.index", F_INT, <size_t>&m.index[i], sizeof(int), False))
    out.append(("samples.pred", F_BYTES, <size_t>&m.pred[0], sizeof(m.pred), True))
    out.append(("samples.err", F_BYTES, <size_t>&m.err[0], sizeof(m.err), True))
    out.append(("samples.w", F_BYTES, <size_t>&m.w[0][0], sizeof(m.w), True))
    return out


cdef inline int samples_build(Component* c, const Cursor* at, object spec, object arg,
                              int index) except -1:
    """The sample expert: its tables at P(1) = 1/2."""
    cdef Samples* m = <Samples*>calloc(1, sizeof(Samples))
    cdef int i
    if m == NULL:
        raise MemoryError()
    c.state, c.free, c.n_inputs = m, samples_free, SAMPLE_MAPS
    c.predict, c.learn, c.next_bit = samples_predict, samples_learn, nothing_bit
    c.update, c.begin, c.walk = samples_update, samples_begin, samples_walk
    c.memory, c.fields = samples_memory, samples_fields
    for i in range(2):
        m.w[i][0], m.w[i][1] = 2.0, -1.0
    for i in range(SAMPLE_MAPS):
        if sm_init_half(&m.map[i], SAMPLE_SIZE) < 0:
            raise MemoryError()
    return 0
