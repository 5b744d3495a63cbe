# cython: language_level=3
# The final stage's newer behaviours (``CMConfig.sse``, a bit mask; 0 leaves ``apm.pxd`` as it
# was): per-cell counts, so a table cell moves 1/(n + 1.5) of the way to each bit until that
# reaches 2^-apm_rate (small files learn their APMs sooner); a learned mix of the stages'
# stretched outputs with the mixer's log-odds in place of the fixed weights 1, 2, 3 ...; and
# more stages keyed by other small contexts (order 2 with the match state, the word so far,
# order 1 with the class of the byte before it, hashed order 6, the word so far with the
# previous word), each 2^16 rows of 33 bins.
cimport cython
from libc.stdint cimport uint8_t, uint16_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset
from seqzip._kernels.cm.apm cimport (APM_BINS, MAX_APM, Apm, apm_init_stage, apm_learn,
                                     apm_position, apm_prefetch, apm_refine)
from seqzip._kernels.cm.component cimport Cursor
from seqzip._kernels.cm.context cimport Context, byte_class
from seqzip._kernels.cm.field cimport F_BYTES, F_F64
from seqzip._kernels.cm.image cimport image_apm_rows
from seqzip._kernels.cm.slots cimport prefetch
from seqzip._kernels.cm.tables cimport STRETCH, hash2, squash

cdef enum:
    SSE_COUNT = 1        # per-cell counts (every stage)
    SSE_MIX = 2          # the learned mix of the stages
    SSE_O2M = 4          # stage: order 2 with the match state
    SSE_WORD = 8         # stage: the word so far and the last byte
    SSE_O1C = 16         # stage: order 1 with the classes of the two bytes before it
    SSE_O6 = 32          # stage: hashed order 6
    SSE_CHAIN = 64       # each stage refines the one before's output (else the mixer's)
    SSE_WIDE = 128       # the APM's hashed stages (orders 2 and 3) take 2^16 rows, not 2^14
    SSE_WORDS = 256      # stage: the word so far with the word before it (between words the
                         # last byte with the last word)
    SSE_FINE = 512       # not a stage: the result may come within 2^-16 of 0 or 1, not
                         # 2^-12 (the kernel's clamp; kennedy.xls -2.8% at level 6)
    SSE_KINDS = 316      # the stages' bits (4, 8, 16, 32, 256)
    SSE_MASK = 1023      # the bits defined
    SSE_STAGES = 4       # extra stages at most
    SSE_ROW_BITS = 16    # rows of an extra stage: 2^16
    SSE_ALL = MAX_APM + SSE_STAGES
    SSE_INPUTS = SSE_ALL + 2     # the bias, the mixer's log-odds, each stage's
    SSE_COUNT_LIMIT = 255
    SSE_COUNT_START = 12 # a cell's count at the start: its first rate 1/13.5 (0: 1/1.5
                         # forgets the identity the tables start as; alice29.txt, cp.html at
                         # level 6: 0 +0.87%, 4 -0.11%, 6 -0.02%, 12 -0.11%, 24 -0.08%)


cdef extern from *:
    """
    static const double seqzip_sse_rate = 0.0005;
    """
    const double SSE_RATE "seqzip_sse_rate"  # the mix's learning rate (0.0002-0.001 alike)


cdef struct Sse:
    int mask
    int n_base           # the APM's stages (apm.pxd), read through the Apm
    int kind[SSE_STAGES] # each extra stage's context (SSE_O2M ...)
    Apm x                # the extra stages: tables, rows, bins, outputs
    uint8_t* count[SSE_ALL]   # per-cell counts (SSE_COUNT): the base stages', then the extra
    int cells[SSE_ALL]        # ... and their sizes
    int n_in             # the mix's inputs (SSE_MIX)
    double* w            # its weights (one row: by the node measured worse)
    double inp[SSE_INPUTS]
    double p             # its output
    double rate_of[SSE_COUNT_LIMIT + 1]  # a cell's rate by its count: 1/(n + 1.5), 2^-rate
    int hashed           # the row mask of the APM's hashed stages (2^14 rows, SSE_WIDE 2^16)


cdef inline int final_init(Sse* s, Apm* a, int apm, int apm_rate, int mask, int A,
                           int B) noexcept nogil:
    """The APM's stages (the node, order 1, hashed orders 2 and 3, the match state), then
    sse's (mask 0: none).  Plain C (the kernel builds them without the interpreter lock);
    -1 when out of memory (``sse_free`` and ``apm_free`` free what was allocated)."""
    cdef int i
    cdef int rows[5]
    a.n, a.rate = apm, apm_rate
    s.hashed = 0xFFFF if mask & SSE_WIDE else 0x3FFF
    rows[0], rows[1], rows[4] = 1 << B, A << B, 48 << B
    rows[2] = rows[3] = s.hashed + 1
    for i in range(apm):
        if apm_init_stage(a, i, rows[i]) < 0:
            return -1
    if mask and sse_init(s, a, mask) < 0:
        return -1
    return 0


cdef inline void final_rows(Sse* s, Apm* a, const Cursor* at, int image) noexcept nogil:
    """The APM's rows but the match state's (image=2: stages 2 and 3 keyed by the pixels,
    image.pxd), and their prefetch."""
    cdef const Context* c = at.ctx
    cdef int node = at.node
    a.ctx[0] = node
    a.ctx[1] = (c.c1_index << at.B) | node
    a.ctx[2] = <int>(hash2(c.c8 & 0xFFFF, <uint64_t>node) & s.hashed)
    a.ctx[3] = <int>(hash2(c.c8 & 0xFFFFFF, <uint64_t>node) & s.hashed)
    if image == 2:
        image_apm_rows(at, a.ctx)
    apm_prefetch(a)
    _prefetch_counts(s, 0, a)


cdef inline void _prefetch_counts(const Sse* s, int base, const Apm* a) noexcept nogil:
    """The count rows (SSE_COUNT) of stages 1.. of ``a`` (the APM's, base 0, or the extra
    stages, base n_base), read when the bit is learnt."""
    cdef int i
    if s.mask & SSE_COUNT:
        for i in range(1 if base == 0 else 0, a.n):
            prefetch(s.count[base + i] + a.ctx[i] * APM_BINS)
            prefetch(s.count[base + i] + a.ctx[i] * APM_BINS + 32)


cdef inline int sse_init(Sse* s, Apm* a, int mask) noexcept nogil:
    """After the APM's own stages are built.  -1 when out of memory."""
    cdef int i, j, k, n_all
    s.mask = mask
    s.n_base = a.n
    s.x.n = 0
    s.x.rate = a.rate
    for i in range(SSE_COUNT_LIMIT + 1):
        s.rate_of[i] = 1.0 / (i + 1.5)
        if s.rate_of[i] < 1.0 / (1 << a.rate):
            s.rate_of[i] = 1.0 / (1 << a.rate)
    for j in range(5):
        k = SSE_O2M << j if j < 4 else SSE_WORDS
        if mask & k and s.x.n < SSE_STAGES:
            s.kind[s.x.n] = k
            if apm_init_stage(&s.x, s.x.n, 1 << SSE_ROW_BITS) < 0:
                s.x.n += 1
                return -1
            s.x.n += 1
    n_all = s.n_base + s.x.n
    if mask & SSE_COUNT:
        for i in range(n_all):
            k = (a.contexts[i] if i < s.n_base else s.x.contexts[i - s.n_base]) * APM_BINS
            s.cells[i] = k
            s.count[i] = <uint8_t*>malloc(k)
            if s.count[i] == NULL:
                return -1
            memset(s.count[i], SSE_COUNT_START, k)
    s.n_in = 2 + n_all
    s.p = 0.5
    if mask & SSE_MIX:
        s.w = <double*>calloc(s.n_in, sizeof(double))
        if s.w == NULL:
            return -1
        k = 1 + n_all * (n_all + 1) // 2  # the fixed weights' sum: the mix starts as they do
        s.w[1] = 1.0 / k
        for j in range(n_all):
            s.w[2 + j] = (j + 1.0) / k
    return 0


cdef inline size_t sse_memory(const Sse* s) noexcept nogil:
    cdef size_t total = 0
    cdef int i
    for i in range(s.x.n):
        total += <size_t>s.x.contexts[i] * APM_BINS * 2
    for i in range(SSE_ALL):
        if s.count[i] != NULL:
            total += <size_t>s.cells[i]
    if s.w != NULL:
        total += <size_t>s.n_in * 8
    return total


cdef inline void sse_free(Sse* s) noexcept nogil:
    cdef int i
    for i in range(MAX_APM):
        free(s.x.table[i])
        s.x.table[i] = NULL
    for i in range(SSE_ALL):
        free(s.count[i])
        s.count[i] = NULL
    free(s.w)
    s.w = NULL


cdef inline void sse_rows(Sse* s, const Context* c, int node, int match_state) noexcept nogil:
    """The extra stages' rows for the current bit (and their prefetch)."""
    cdef int i
    cdef uint64_t key, c8 = c.c8
    for i in range(s.x.n):
        if s.kind[i] == SSE_O2M:
            key = (c8 & 0xFFFF) | (<uint64_t>match_state << 16) | (<uint64_t>1 << 32)
        elif s.kind[i] == SSE_WORD:
            key = hash2(c.word0 if c.word_len != 0 else <uint64_t>0,
                        (c8 & 0xFF) | (<uint64_t>2 << 32))
        elif s.kind[i] == SSE_WORDS:
            key = hash2(hash2(c.word0 if c.word_len != 0 else c8 & 0xFF, c.word1),
                        <uint64_t>5 << 32)
        elif s.kind[i] == SSE_O1C:
            key = (c8 & 0xFF) | (<uint64_t>byte_class((c8 >> 8) & 0xFF) << 8) | \
                (<uint64_t>byte_class((c8 >> 16) & 0xFF) << 10) | (<uint64_t>3 << 32)
        else:
            key = (c8 & 0xFFFFFFFFFFFFULL) | (<uint64_t>4 << 56)
        s.x.ctx[i] = <int>(hash2(key, <uint64_t>node) >> (64 - SSE_ROW_BITS))
        prefetch(s.x.table[i] + s.x.ctx[i] * APM_BINS)
        prefetch(s.x.table[i] + s.x.ctx[i] * APM_BINS + 32)
    _prefetch_counts(s, s.n_base, &s.x)


cdef inline double stretch_fine(double p) noexcept nogil:
    """ln(p / (1 - p)) interpolated between the 12-bit table's entries."""
    cdef double pos = p * 4096.0 - 0.5
    cdef int i
    if not pos > 0.0:
        return STRETCH[0]
    if pos >= 4095.0:
        return STRETCH[4095]
    i = <int>pos
    return STRETCH[i] + (STRETCH[i + 1] - STRETCH[i]) * (pos - i)


cdef inline double _stage(Apm* a, int i, int bin, double frac) noexcept nogil:
    cdef int at = a.ctx[i] * APM_BINS + bin
    a.bin[i] = bin
    a.frac[i] = frac
    a.out[i] = (a.table[i][at] * (1.0 - frac) + a.table[i][at + 1] * frac) * (1.0 / 65535.0)
    return a.out[i]


cdef inline double sse_refine(Sse* s, Apm* a, double p, double dot) noexcept nogil:
    """p (the mixer's probability, of log-odds dot) refined by the APM's stages and the extra
    ones (rows set): their outputs averaged with weights 1, 2, 3 ... after p, or mixed."""
    cdef double pos, frac, fixed = p, d = 0.0, o
    cdef int i, bin, n_all = s.n_base + s.x.n
    cdef bint chain = s.mask & SSE_CHAIN
    cdef double* w
    if not s.mask:
        return apm_refine(a, p, dot)
    if dot > 7.999:  # the mix's input below is the clamped log-odds
        dot = 7.999
    elif not dot > -7.999:
        dot = -7.999
    pos = apm_position(dot)
    bin = <int>pos
    frac = pos - bin
    for i in range(n_all):
        if i < s.n_base:
            o = _stage(a, i, bin, frac)
        else:
            o = _stage(&s.x, i - s.n_base, bin, frac)
        fixed = fixed + o * (i + 1)
        if chain:
            pos = apm_position(stretch_fine(o))
            bin = <int>pos
            frac = pos - bin
    d = 0.0
    fixed = fixed / (1 + n_all * (n_all + 1) // 2)
    if not s.mask & SSE_MIX:
        return fixed
    s.inp[0] = 0.25
    s.inp[1] = dot
    for i in range(s.n_base):
        s.inp[2 + i] = stretch_fine(a.out[i])
    for i in range(s.x.n):
        s.inp[2 + s.n_base + i] = stretch_fine(s.x.out[i])
    w = s.w
    for i in range(s.n_in):
        d = d + w[i] * s.inp[i]
    s.p = squash(d)
    return (s.p + fixed) * 0.5  # measured better than the mix alone (-0.26%, -0.21%)


@cython.cdivision(True)
cdef inline void _learn(Apm* a, uint8_t** count, int base, int bit, bint counted,
                        const double* rate_of) noexcept nogil:
    cdef int target = 65535 if bit else 0, i, at
    cdef double frac, r0, r1
    cdef uint16_t* cell
    cdef uint8_t* n
    if not counted:  # the APM's own rule
        apm_learn(a, bit)
        return
    for i in range(a.n):
        at = a.ctx[i] * APM_BINS + a.bin[i]
        frac = a.frac[i]
        cell = &a.table[i][at]
        n = count[base + i] + at
        r0 = rate_of[n[0]]
        r1 = rate_of[n[1]]
        cell[0] = <uint16_t>(cell[0] + <int>((target - cell[0]) * (1.0 - frac) * r0))
        cell[1] = <uint16_t>(cell[1] + <int>((target - cell[1]) * frac * r1))
        if frac < 0.5:
            if n[0] < SSE_COUNT_LIMIT:
                n[0] += 1
        elif n[1] < SSE_COUNT_LIMIT:
            n[1] += 1


cdef inline void sse_learn(Sse* s, Apm* a, int bit) noexcept nogil:
    cdef int i
    cdef double err, g
    cdef double* w
    if not s.mask:
        apm_learn(a, bit)
        return
    _learn(a, s.count, 0, bit, s.mask & SSE_COUNT, s.rate_of)
    _learn(&s.x, s.count, s.n_base, bit, s.mask & SSE_COUNT, s.rate_of)
    if s.mask & SSE_MIX:
        err = bit - s.p
        g = err * SSE_RATE
        w = s.w
        for i in range(s.n_in):
            w[i] = w[i] + g * s.inp[i]


cdef inline list sse_fields(Sse* s):
    cdef int i, n_all = s.n_base + s.x.n
    out = [(f"sse.apm{i}", F_BYTES, <size_t>s.x.table[i], s.x.contexts[i] * APM_BINS * 2, False)
           for i in range(s.x.n)]
    for i in range(n_all):
        if s.count[i] != NULL:
            out.append((f"sse.count{i}", F_BYTES, <size_t>s.count[i], s.cells[i], False))
    if s.x.n:
        out += [("sse.ctx", F_BYTES, <size_t>&s.x.ctx[0], sizeof(s.x.ctx), False),
                ("sse.bin", F_BYTES, <size_t>&s.x.bin[0], sizeof(s.x.bin), False),
                ("sse.frac", F_BYTES, <size_t>&s.x.frac[0], sizeof(s.x.frac), False),
                ("sse.out", F_BYTES, <size_t>&s.x.out[0], sizeof(s.x.out), False)]
    if s.w != NULL:
        out += [("sse.w", F_BYTES, <size_t>s.w, s.n_in * 8, False),
                ("sse.inp", F_BYTES, <size_t>&s.inp[0], sizeof(s.inp), False),
                ("sse.p", F_F64, <size_t>&s.p, 8, False)]
    return out
