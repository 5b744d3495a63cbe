# cython: language_level=3
# The float-sample expert (floats=1..7), a component of the bank (component.pxd): the data read
# as 4-byte floats (aligned to the stream's start) of the formats the bit mask names: (0) IBM
# hexadecimal floats, big-endian (seismic traces: Calgary geo, SEG-Y), (1) IEEE 754 binary32
# big-endian, (2) IEEE binary32 little-endian.  Where samples.pxd reads integers, a float's
# integer bits are not linear in its value, so each format's samples are decoded to their
# values (exactly, as doubles), the next value is predicted there (the last value, 2 v1 - v2,
# a normalised LMS over FLOAT_TAPS values, the value a row back -- the row detector's length
# when a multiple of 4 (a trace with its header), else the record's -- and v1 plus that
# row's step) and the prediction is encoded back into the format (normalised).
# Sign-magnitude words order their magnitudes as their values' absolute values (IBM's
# normalised ones as IEEE's), so each bit of the magnitude is predicted from where the
# predicted magnitude lies in the interval of magnitudes the word's known bits leave open --
# the high bits (big-endian) or, little-endian, the low bytes known, where the nearest
# magnitude with those low bytes is the target -- in eighths of the interval, clamped, with
# the bit's place and the predictor's recent error (its bit length, in the order-preserving
# key: the sign bit flipped for positive words, every bit for negative ones), by a direct
# table of adaptive probabilities (the StateMap rule) per predictor; the sign bit from the
# predicted sign and the predicted magnitude's size against that error.  One more table per
# format: the sign and exponent byte by the previous sample's and the node, the fraction's
# lower bytes by the exponent's change (known big-endian, predicted little-endian), whether
# the previous sample's byte there was 0 and the node.  No libm: powers of two from their bits.
# Measured (body bytes, floats off -> the file's format; stand-ins, not the held-out file):
# IBM geo-like traces (102 KB) level 1 (51) -3.0%, level 6 (49) -0.63%, level 9 (50, with or
# without its mLSTM) -0.63%; smoother IBM traces -7.0%, -2.2%, -2.2%; SEG-Y-like with
# correlated traces -4.7%, -2.1%, -2.1%; an AR(2) float32 little-endian -3.8%, -3.4%, -3.4%;
# CPU +34% at level 1 (the mixer's 6 more inputs), +6-10% at level 6.  With it, the integer
# sample expert (samples=1) adds nothing on these (geo-like 29,154 without, 29,150 with).
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_bit)
from seqzip._kernels.cm.field cimport F_BYTES, F_INT
from seqzip._kernels.cm.context cimport Context, ctx_back, ctx_record_length, ctx_row_length
from seqzip._kernels.cm.tables cimport (StateMap, bit_length, sm_fields, sm_init_half, sm_learn,
                                        sm_stretch)
from seqzip._kernels.detmath cimport _pow2
from seqzip._kernels.cm.samples cimport (clamp_q, err_moved, interval_q,
                                         map_index)

cdef enum:
    FLOAT_FORMATS = 3        # IBM big-endian, IEEE big-endian, IEEE little-endian
    FLOAT_PREDS = 5          # per format: v1, 2 v1 - v2, the LMS, the row above, v1 + its step
    FLOAT_MAPS = 6           # per format: the predictors' tables and the byte table
    FLOAT_TAPS = 8           # the LMS's previous values
    FLOAT_SIZE = 32 * 32 * 32      # a predictor's table: bit place x offset x error size
    FLOAT_BYTE_SIZE = 1 << 17      # the byte table
    FLOAT_BYTES = 6 * ((FLOAT_MAPS - 1) * FLOAT_SIZE + FLOAT_BYTE_SIZE)  # a format's tables


cdef struct Floats:
    int formats                                  # the bit mask
    StateMap map[FLOAT_FORMATS][FLOAT_MAPS]
    int index[FLOAT_FORMATS][FLOAT_MAPS]         # this bit's index into each table
    int saved[FLOAT_FORMATS][FLOAT_MAPS]         # the indices a walk puts back
    int64_t pred[FLOAT_FORMATS][FLOAT_PREDS]     # this sample's predicted words (normalised)
    uint64_t err[FLOAT_FORMATS][FLOAT_PREDS]     # the recent key error x 16 (a running mean)
    double w[FLOAT_FORMATS][FLOAT_TAPS]          # the LMS weights


cdef inline uint32_t float_word(const Context* c, uint64_t back, int f) noexcept nogil:
    """The 32-bit word of format f whose last byte is ``back`` bytes back."""
    cdef uint32_t v = 0
    cdef int i
    for i in range(4):
        v |= <uint32_t>ctx_back(c, back + <uint64_t>i) << (8 * (3 - i) if f == 2 else 8 * i)
    return v


cdef inline uint32_t ibm_normal(uint32_t w) noexcept nogil:
    """An IBM word with its fraction shifted left by hex digits until its first digit is not
    0 (the exponent down as far as 0); a zero fraction is +0."""
    cdef uint32_t f = w & 0xFFFFFF, e = (w >> 24) & 0x7F
    if f == 0:
        return 0
    while f < 0x100000 and e > 0:
        f <<= 4
        e -= 1
    return (w & 0x80000000u) | (e << 24) | f


cdef inline double float_value(uint32_t w, int f) noexcept nogil:
    """The word's value (exact); IEEE infinities and NaNs read as 0."""
    cdef float x
    cdef double v
    if f == 0:
        v = <double>(w & 0xFFFFFF) * _pow2(4 * <int64_t>((w >> 24) & 0x7F) - 280)
    else:
        if (w >> 23) & 0xFF == 0xFF:
            return 0.0
        memcpy(&x, &w, 4)
        return <double>x
    return -v if w >> 31 else v


cdef inline uint32_t float_encode(double v, int f) noexcept nogil:
    """The word of format f nearest below |v| in magnitude (IEEE: rounded as C rounds a
    double to a float), normalised, saturating at the largest finite magnitude."""
    cdef uint64_t bits
    cdef uint32_t sign = 0, w
    cdef int64_t E, ex
    cdef float x
    if not v == v:
        return 0
    if v < 0:
        sign, v = 0x80000000u, -v
    if f != 0:
        if v > 3.4028234663852886e38:
            return sign | 0x7F7FFFFFu
        x = <float>v
        memcpy(&w, &x, 4)
        return sign | w
    if v < 5.397605346934028e-79:  # 16^-65: below the smallest normal IBM magnitude
        return 0
    memcpy(&bits, &v, 8)
    E = <int64_t>((bits >> 52) & 0x7FF) - 1023   # 2^E <= v < 2^(E + 1)
    ex = (E + 260) // 4 - 64                      # 16^(ex - 1) <= v < 16^ex (E >= -260)
    if ex > 63:
        return sign | 0x7FFFFFFFu
    w = <uint32_t>(v * _pow2(24 - 4 * ex))
    if w > 0xFFFFFF:
        w = 0xFFFFFF
    return sign | (<uint32_t>(ex + 64) << 24) | w


cdef inline uint64_t float_key(uint32_t w) noexcept nogil:
    """The order-preserving key of a sign-magnitude word (IBM's normalised)."""
    return <uint64_t>(~w if w >> 31 else w | 0x80000000u)


cdef inline double _lms(const Floats* m, const Context* c, uint64_t back, int f,
                       double* v) noexcept nogil:
    """Format f's LMS prediction (the previous values in ``v``)."""
    cdef int i
    cdef double p = 0.0
    for i in range(FLOAT_TAPS):
        v[i] = float_value(float_word(c, back + <uint64_t>(4 * i), f), f)
        p = p + m.w[f][i] * v[i]
    return p


cdef inline void _format_predict(Floats* m, const Cursor* at, int f, double* x) noexcept nogil:
    cdef const Context* c = at.ctx
    cdef int k = <int>(c.pos & 3), sig = k if f == 2 else 3 - k, i, q, nb, rem, e, e1, ed
    cdef int bp = at.node - (1 << at.depth)       # the byte's bits so far (top bits 0)
    cdef int b, place
    cdef uint64_t known = 0, prev = float_word(c, <uint64_t>(k + 1), f), P, M
    cdef int64_t d
    nb = 8 - at.B + at.depth                       # the byte's known bits
    b = 8 * sig + 7 - nb                           # this bit's place in the word
    for place in range(k):                         # the sample's known bytes, in place
        known |= ctx_back(c, <uint64_t>(k - place)) << (8 * (place if f == 2 else 3 - place))
    known |= <uint64_t>bp << (b + 1)
    for i in range(FLOAT_PREDS):
        P = <uint64_t>m.pred[f][i]
        if b == 31:  # the sign: the predicted one, the magnitude's size against the error
            q = (<int>(P >> 31) << 4) | \
                min(max(bit_length(P & 0x7FFFFFFF) - bit_length(m.err[f][i] >> 4) + 8, 0), 15)
        else:
            M = P & 0x7FFFFFFF
            if (f != 2 or sig == 3) and (known ^ P) >> 31:
                M = 0  # the other sign: the nearest magnitude is the least
            if f != 2 or sig == 3:  # the bits above known: an interval of magnitudes
                rem = b + 1
                d = <int64_t>M - <int64_t>((known & 0x7FFFFFFF) >> rem << rem)
                q = interval_q(d, rem)
            else:  # little-endian: the low bytes known, the bytes above not
                d = <int64_t>M - <int64_t>(known & ((<uint64_t>1 << (8 * sig)) - 1))
                d = d >> (8 * sig - 3) if sig else d << 3   # the byte's value x 8
                d = d - (<int64_t>bp << (8 - nb + 3))
                d = ((d + 1024) & 2047) - 1024               # the nearest, modulo the byte
                q = clamp_q(d >> (8 - nb))
        m.index[f][i] = map_index(b, q, m.err[f][i])
        # an exact predictor says nothing the order contexts do not (as samples.pxd)
        x[i] = sm_stretch(&m.map[f][i], m.index[f][i]) if m.err[f][i] >= 16 else 0.0
    place = (1 << nb) | bp                         # the node in the byte, 1..255
    if sig == 3:
        m.index[f][FLOAT_PREDS] = <int>((prev >> 24) << 8) | place
    else:
        e1 = <int>(prev >> 24) & 0x7F
        e = <int>(known >> 24) & 0x7F if f != 2 else <int>(m.pred[f][1] >> 24) & 0x7F
        ed = min(max(e - e1, -3), 3) + 3
        m.index[f][FLOAT_PREDS] = (1 << 16) | (sig << 14) | (ed << 11) | \
            (<int>((prev >> (8 * sig)) & 0xFF == 0) << 10) | place
    x[FLOAT_PREDS] = sm_stretch(&m.map[f][FLOAT_PREDS], m.index[f][FLOAT_PREDS])


cdef inline void floats_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef Floats* m = <Floats*>s
    cdef int f, n = 0
    for f in range(FLOAT_FORMATS):
        if m.formats >> f & 1:
            _format_predict(m, at, f, x + n)
            n += FLOAT_MAPS


cdef inline void floats_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef Floats* m = <Floats*>s
    cdef int f, i
    for f in range(FLOAT_FORMATS):
        if m.formats >> f & 1:
            for i in range(FLOAT_MAPS):
                sm_learn(&m.map[f][i], m.index[f][i], bit)


cdef inline int floats_begin(void* s, const Cursor* at) noexcept nogil:
    """A sample begins: each predictor's word for it (normalised)."""
    cdef Floats* m = <Floats*>s
    cdef const Context* c = at.ctx
    cdef int f
    cdef double v1, a, v[FLOAT_TAPS]
    cdef uint64_t row = ctx_row_length(c)
    if c.pos & 3:
        return 0
    if row & 3 or row < 8:  # the row (a trace with its header) or else the record
        row = ctx_record_length(c)
        if row & 3 or row < 8:
            row = 4
    for f in range(FLOAT_FORMATS):
        if m.formats >> f & 1:
            v1 = float_value(float_word(c, 1, f), f)
            m.pred[f][0] = float_encode(v1, f)
            m.pred[f][1] = float_encode(2.0 * v1 - float_value(float_word(c, 5, f), f), f)
            m.pred[f][2] = float_encode(_lms(m, c, 1, f, v), f)
            a = float_value(float_word(c, row - 3, f), f)
            m.pred[f][3] = float_encode(a, f)
            m.pred[f][4] = float_encode(v1 + a - float_value(float_word(c, row + 1, f), f), f)
    return 0


cdef inline int floats_update(void* s, const Cursor* at, int x) noexcept nogil:
    """A symbol ended: where it ended a sample, the errors and the LMS weights move."""
    cdef Floats* m = <Floats*>s
    cdef const Context* c = at.ctx
    cdef int f, i
    cdef uint32_t w
    cdef int64_t e
    cdef double y, norm, v[FLOAT_TAPS]
    if c.pos & 3 or c.pos < 4:
        return 0
    for f in range(FLOAT_FORMATS):
        if m.formats >> f & 1:
            w = float_word(c, 1, f)
            for i in range(FLOAT_PREDS):
                e = <int64_t>float_key(ibm_normal(w) if f == 0 else w) - \
                    <int64_t>float_key(<uint32_t>m.pred[f][i])
                m.err[f][i] = err_moved(m.err[f][i], e)
            # normalised LMS: w += mu e v / |v|^2
            y = float_value(w, f) - _lms(m, c, 5, f, v)
            norm = 0.0
            for i in range(FLOAT_TAPS):
                norm = norm + v[i] * v[i]
            if norm > 1e-60 and y == y and norm < 1e300:
                y = y * 0.004 / norm
                for i in range(FLOAT_TAPS):
                    m.w[f][i] = m.w[f][i] + y * v[i]
    return 0


cdef inline void floats_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """A walk predicts at nodes it did not code: the coded bit's indices are put back."""
    cdef Floats* m = <Floats*>s
    if event == WALK_BEGIN:
        memcpy(m.saved, m.index, sizeof(m.index))
    elif event == WALK_END:
        memcpy(m.index, m.saved, sizeof(m.index))


cdef inline size_t floats_memory(const void* s) noexcept nogil:
    cdef const Floats* m = <const Floats*>s
    cdef int f, n = 0
    for f in range(FLOAT_FORMATS):
        n += m.formats >> f & 1
    return <size_t>n * FLOAT_BYTES


cdef inline void floats_free(void* s) noexcept nogil:
    cdef Floats* m = <Floats*>s
    cdef int f, i
    for f in range(FLOAT_FORMATS):
        for i in range(FLOAT_MAPS):
            free(m.map[f][i].p)
            free(m.map[f][i].n)
    free(m)


cdef inline list floats_fields(void* s):
    """The tables and the indices (they move every bit: light), the predictions, errors and
    weights (they move when a symbol ends: heavy); the formats' own only."""
    cdef Floats* m = <Floats*>s
    cdef int f, i
    cdef list out = []
    for f in range(FLOAT_FORMATS):
        if m.formats >> f & 1:
            for i in range(FLOAT_MAPS):
                out += sm_fields(f"floats{f}.{i}", &m.map[f][i])
                out.append((f"floats{f}.{i}.index", F_INT, <size_t>&m.index[f][i],
                            sizeof(int), False))
            out.append((f"floats{f}.pred", F_BYTES, <size_t>&m.pred[f][0],
                        sizeof(m.pred[f]), True))
            out.append((f"floats{f}.err", F_BYTES, <size_t>&m.err[f][0], sizeof(m.err[f]),
                        True))
            out.append((f"floats{f}.w", F_BYTES, <size_t>&m.w[f][0], sizeof(m.w[f]), True))
    return out


cdef inline int floats_build(Component* c, const Cursor* at, object spec, object arg,
                             int index) except -1:
    """The float expert of the formats ``spec.floats`` names: its tables at P(1) = 1/2, the
    LMS at 2 v1 - v2."""
    cdef Floats* m = <Floats*>calloc(1, sizeof(Floats))
    cdef int f, i
    if m == NULL:
        raise MemoryError()
    m.formats = spec.floats & 7
    c.state, c.free, c.n_inputs = m, floats_free, 0
    c.predict, c.learn, c.next_bit = floats_predict, floats_learn, nothing_bit
    c.update, c.begin, c.walk = floats_update, floats_begin, floats_walk
    c.memory, c.fields = floats_memory, floats_fields
    for f in range(FLOAT_FORMATS):
        if m.formats >> f & 1:
            c.n_inputs += FLOAT_MAPS
            m.w[f][0], m.w[f][1] = 2.0, -1.0
            for i in range(FLOAT_MAPS):
                if sm_init_half(&m.map[f][i],
                                FLOAT_BYTE_SIZE if i == FLOAT_PREDS else FLOAT_SIZE) < 0:
                    raise MemoryError()
    return 0
