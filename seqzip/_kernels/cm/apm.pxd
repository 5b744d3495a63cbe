# cython: language_level=3
# Secondary estimation (APM): the mixed probability refined by interpolated tables over the
# mixed log-odds (33 bins on [-8, 8]), one table row per small context, averaged in with
# weights 1, 2, 3 ... after the mixer's own probability.
cimport cython
from libc.stdint cimport uint16_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.slots cimport prefetch
from seqzip._kernels.cm.tables cimport squash

cdef enum:
    APM_BINS = 33
    MAX_APM = 5


cdef struct Apm:
    int n                # stages
    int rate             # tables move 2^-rate of the way to each bit
    uint16_t* table[MAX_APM]   # (contexts, APM_BINS) P(1) x 65535
    int contexts[MAX_APM]
    int ctx[MAX_APM]     # the row of each stage for the current bit
    int bin[MAX_APM]
    double frac[MAX_APM]
    double out[MAX_APM]


cdef inline int apm_init_stage(Apm* a, int i, int contexts) noexcept nogil:
    """Stage i with ``contexts`` rows, each the identity (bin j holds squash((j - 16) / 2)):
    one row computed, then copied to the others (2^16 rows take a copy of 4 MB, not 2 million
    squashes).  -1 when out of memory."""
    cdef int c, j
    cdef uint16_t* row
    a.contexts[i] = contexts
    a.table[i] = row = <uint16_t*>malloc(contexts * APM_BINS * sizeof(uint16_t))
    if row == NULL:
        return -1
    for j in range(APM_BINS):
        row[j] = <uint16_t>(squash((j - 16) * 0.5) * 65535.0)
    for c in range(1, contexts):
        memcpy(row + c * APM_BINS, row, APM_BINS * sizeof(uint16_t))
    return 0


cdef inline size_t apm_memory(const Apm* a) noexcept nogil:
    cdef size_t total = 0
    cdef int i
    for i in range(a.n):
        total += <size_t>a.contexts[i] * APM_BINS * 2
    return total


cdef inline void apm_prefetch(const Apm* a) noexcept nogil:
    """Load the rows of stages 1.. (their contexts set) while the mixer works."""
    cdef int i
    for i in range(1, a.n):
        prefetch(a.table[i] + a.ctx[i] * APM_BINS)
        prefetch(a.table[i] + a.ctx[i] * APM_BINS + 32)


cdef inline double apm_position(double dot) noexcept nogil:
    """Where log-odds ``dot`` falls in a row of 33 bins over [-8, 8] (clamped; NaN too: the
    bin is always inside the row)."""
    if dot > 7.999:
        dot = 7.999
    elif not dot > -7.999:
        dot = -7.999
    return (dot + 8.0) * 2.0


cdef inline double apm_refine(Apm* a, double p, double dot) noexcept nogil:
    """p (the mixer's probability, of log-odds dot) refined by the stages (contexts set)."""
    cdef double pos = apm_position(dot)
    cdef int i, at
    for i in range(a.n):
        a.bin[i] = <int>pos
        a.frac[i] = pos - a.bin[i]
        at = a.ctx[i] * APM_BINS + a.bin[i]
        a.out[i] = (a.table[i][at] * (1.0 - a.frac[i]) +
                    a.table[i][at + 1] * a.frac[i]) * (1.0 / 65535.0)
        p = p + a.out[i] * (i + 1)
    return p / (1 + a.n * (a.n + 1) // 2)


@cython.cdivision(True)
cdef inline void apm_learn(Apm* a, int bit) noexcept nogil:
    """Both neighbouring bins move toward the bit."""
    cdef int target = 65535 if bit else 0, i, at
    cdef double frac
    cdef uint16_t* cell
    for i in range(a.n):
        at = a.ctx[i] * APM_BINS + a.bin[i]
        frac = a.frac[i]
        cell = &a.table[i][at]
        cell[0] = <uint16_t>(cell[0] + <int>((target - cell[0]) * (1.0 - frac)) //
                             (1 << a.rate))
        cell[1] = <uint16_t>(cell[1] + <int>((target - cell[1]) * frac) // (1 << a.rate))


cdef inline void apm_free(Apm* a) noexcept nogil:
    cdef int i
    for i in range(MAX_APM):
        free(a.table[i])


cdef inline list apm_fields(Apm* a):
    cdef int i
    out = [(f"apm{i}", F_BYTES, <size_t>a.table[i], a.contexts[i] * APM_BINS * 2, False)
           for i in range(a.n)]
    return out + [("apm_ctx", F_BYTES, <size_t>&a.ctx[0], sizeof(a.ctx), False),
                  ("apm_bin", F_BYTES, <size_t>&a.bin[0], sizeof(a.bin), False),
                  ("apm_frac", F_BYTES, <size_t>&a.frac[0], sizeof(a.frac), False),
                  ("apm_out", F_BYTES, <size_t>&a.out[0], sizeof(a.out), False)]
