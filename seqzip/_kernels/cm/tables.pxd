# cython: language_level=3
# The context mixer's shared tables and the StateMap learning rule, written once.
#
# Bit histories: a state stands for a pair of counts (n0, n1) and, while both are small, the
# last bit.  On bit y, n_y grows (to COUNT_LIMIT) and a count of the other bit above 2 drops to
# half plus one, so that a context that changes its mind is believed soon.  A StateMap turns a
# state (or any small index: the match models' length buckets) into P(1) << 32, learnt online
# with a rate 1 / (n + 1.5) that stops falling at SM_LIMIT.  The tables are static C arrays of
# the one extension that cimports this file (cm.kernel), built by ``build_tables`` at import.
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, malloc
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.detmath cimport det_exp, det_log

cdef enum:
    COUNT_LIMIT = 30      # the larger count of a bit history
    RECENT_LIMIT = 8      # histories this short also remember their last bit
    MAX_STATES = 256
    SM_LIMIT = 1023       # adaptation count cap of the state -> probability maps
    SQUASH_SIZE = 4097    # squash over [-16, 16] in steps of 1/128

cdef extern from *:
    """
    #include <stdint.h>
    #include <stdlib.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* calloc for the large tables (hashed slots, match index, history), in one of three ways
       (``how``).  BIG_HUGE: on Linux their 2 MiB-aligned interior is marked for transparent
       huge pages, since the coder reads them at random (fewer TLB misses and page faults; the
       bytes and so the streams are the same).  BIG_POPULATE (the tables read at random, which
       a few symbols touch all over): huge pages, written now (MADV_POPULATE_WRITE, Linux
       5.14; older kernels skip it): callers run this without the interpreter lock, whereas
       the first symbols' writes to fresh huge pages (2 MiB zeroed each) ran under it in the
       coding loop, 70-230 ms of CPU on a loaded machine at level 6.  BIG_PLAIN: neither, for
       an input known to be short (``Kernel``'s ``size_hint``): only the 4 KiB pages its symbols
       touch are zeroed (a slot per context per group of bits), whereas a fresh process's first
       huge pages may wait for the kernel to compact memory (transparent_hugepage/defrag
       ``madvise``): 100 bytes at level 6 took 0.31-1.2 s of CPU with them, 0.32-0.36 s
       without. */
    enum { SEQZIP_BIG_HUGE = 0, SEQZIP_BIG_POPULATE = 1, SEQZIP_BIG_PLAIN = 2 };
    static void* seqzip_big_calloc(size_t n, int how) {
        void* p = calloc(n, 1);
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        const uintptr_t huge = (uintptr_t)1 << 21;
        if (p != NULL && how != SEQZIP_BIG_PLAIN && n >= 2 * huge) {
            uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
            uintptr_t end = ((uintptr_t)p + n) & ~(huge - 1);
            if (end > start && madvise((void*)start, end - start, MADV_HUGEPAGE) == 0 &&
                    how == SEQZIP_BIG_POPULATE)
                madvise((void*)start, end - start, 23 /* MADV_POPULATE_WRITE */);
        }
    #endif
        return p;
    }
    """
    enum:
        BIG_HUGE "SEQZIP_BIG_HUGE"
        BIG_POPULATE "SEQZIP_BIG_POPULATE"
        BIG_PLAIN "SEQZIP_BIG_PLAIN"
    void* big_calloc "seqzip_big_calloc"(size_t n, int how) noexcept nogil

cdef extern from *:
    """
    static unsigned char seqzip_cm_next[256][2];
    static unsigned char seqzip_cm_n0[256];
    static unsigned char seqzip_cm_n1[256];
    static unsigned char seqzip_cm_last[256];
    static int seqzip_cm_n_states;
    static double seqzip_cm_stretch[4096];
    static double seqzip_cm_squash[4097];
    static unsigned int seqzip_cm_reciprocal[1024];
    """
    uint8_t STATE_NEXT "seqzip_cm_next"[256][2]
    uint8_t STATE_N0 "seqzip_cm_n0"[256]
    uint8_t STATE_N1 "seqzip_cm_n1"[256]
    uint8_t STATE_LAST "seqzip_cm_last"[256]   # 0: not kept, 1: the last bit was 0, 2: 1
    int N_STATES "seqzip_cm_n_states"
    double STRETCH "seqzip_cm_stretch"[4096]   # ln(p / (1 - p)) at p = (i + 1/2) / 4096
    double SQUASH "seqzip_cm_squash"[4097]     # 1 / (1 + e^-x) at x = i / 128 - 16
    uint32_t RECIPROCAL "seqzip_cm_reciprocal"[1024]  # 2^16 / (n + 1.5): the maps' rates


cdef inline void _build_states() noexcept nogil:
    """Breadth-first from (0, 0): state 0 is the empty history."""
    global N_STATES
    cdef int head = 0, s, y, t, n0, n1, last
    cdef int code[64][64][3]
    for n0 in range(64):
        for n1 in range(64):
            for last in range(3):
                code[n0][n1][last] = -1
    STATE_N0[0] = 0
    STATE_N1[0] = 0
    STATE_LAST[0] = 0
    code[0][0][0] = 0
    N_STATES = 1
    while head < N_STATES:
        s = head
        head += 1
        for y in range(2):
            n0 = STATE_N0[s]
            n1 = STATE_N1[s]
            if y:
                n1 = n1 + 1 if n1 < COUNT_LIMIT else n1
                if n0 > 2:
                    n0 = n0 // 2 + 1
            else:
                n0 = n0 + 1 if n0 < COUNT_LIMIT else n0
                if n1 > 2:
                    n1 = n1 // 2 + 1
            last = y + 1 if n0 > 0 and n1 > 0 and n0 + n1 <= RECENT_LIMIT else 0
            t = code[n0][n1][last]
            if t < 0:
                t = N_STATES
                code[n0][n1][last] = t
                STATE_N0[t] = n0
                STATE_N1[t] = n1
                STATE_LAST[t] = last
                N_STATES += 1
            STATE_NEXT[s][y] = t


cdef inline void build_tables() noexcept nogil:
    cdef int i
    cdef double p, x
    _build_states()
    for i in range(4096):
        p = (i + 0.5) / 4096.0
        STRETCH[i] = det_log(p / (1.0 - p))
    for i in range(SQUASH_SIZE):
        x = i / 128.0 - 16.0
        SQUASH[i] = 1.0 / (1.0 + det_exp(-x))
    for i in range(SM_LIMIT + 1):
        RECIPROCAL[i] = <uint32_t>(65536.0 / (i + 1.5))


cdef inline double squash(double x) noexcept nogil:
    """1 / (1 + e^-x), linearly interpolated from the table (exact at multiples of 1/128);
    NaN (from weights a model file forced to overflow) reads the first entry, never outside."""
    cdef double pos
    cdef int i
    if x >= 16.0:
        return SQUASH[SQUASH_SIZE - 1]
    if not x > -16.0:
        return SQUASH[0]
    pos = (x + 16.0) * 128.0
    i = <int>pos
    return SQUASH[i] + (SQUASH[i + 1] - SQUASH[i]) * (pos - i)


cdef inline double stretch_p(double p) noexcept nogil:
    """ln(p / (1 - p)) of a probability, from the 12-bit table (clamped before the
    conversion to an index, NaN to the first entry)."""
    if not p > 0.0:
        return STRETCH[0]
    if p >= 4095.0 / 4096.0:
        return STRETCH[4095]
    return STRETCH[<int>(p * 4096.0)]


cdef inline uint64_t hash2(uint64_t a, uint64_t b) noexcept nogil:
    """A 64-bit mix of two words (splitmix64's finaliser on a + golden-ratio b)."""
    cdef uint64_t z = a + (b + 0x9E3779B97F4A7C15ULL) * 0xD6E8FEB86659FD93ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


# ---------------------------------------------------------------- StateMap

cdef extern from *:
    """
    static inline int seqzip_bit_length(unsigned long long v) {
        return v ? 64 - __builtin_clzll(v) : 0;
    }
    """
    int bit_length "seqzip_bit_length"(unsigned long long v) noexcept nogil  # v's bit length


cdef struct StateMap:
    uint32_t* p          # (size,) P(1) << 32 per index (a bit-history state, a bucket)
    uint16_t* n          # adaptation counts
    int size


cdef inline int sm_init_half(StateMap* m, int size) noexcept nogil:
    """A map over ``size`` direct indices (the image and sample experts' tables), each at
    P(1) = 1/2.  -1 when out of memory."""
    cdef int k
    m.size = size
    m.p = <uint32_t*>malloc(size * sizeof(uint32_t))
    m.n = <uint16_t*>calloc(size, sizeof(uint16_t))
    if m.p == NULL or m.n == NULL:
        return -1
    for k in range(size):
        m.p[k] = 2147483648u
    return 0


cdef inline int sm_init_states(StateMap* m) noexcept nogil:
    """A map over the bit-history states, each starting at its counts' own estimate
    (n1 + 1/2) / (n0 + n1 + 1).  -1 when out of memory."""
    cdef int s
    if sm_init_half(m, MAX_STATES) < 0:
        return -1
    for s in range(MAX_STATES):
        m.p[s] = <uint32_t>((STATE_N1[s] + 0.5) / (STATE_N0[s] + STATE_N1[s] + 1.0)
                            * 4294967295.0)
    return 0


cdef inline list sm_fields(str name, const StateMap* m):
    """A map's two arrays as state fields (``field.pxd``), named ``name.p`` and ``name.n``."""
    return [(f"{name}.p", F_BYTES, <size_t>m.p, <size_t>m.size * 4, False),
            (f"{name}.n", F_BYTES, <size_t>m.n, <size_t>m.size * 2, False)]


cdef inline double sm_stretch(const StateMap* m, int s) noexcept nogil:
    """The map's log-odds at index s."""
    return STRETCH[m.p[s] >> 20]


cdef inline void sm_learn_to(StateMap* m, int s, int bit, int limit) noexcept nogil:
    """The learning rule: p += (bit - p) / (n + 1.5), n counting to ``limit`` (<= SM_LIMIT)."""
    cdef int64_t target = 4294967295LL if bit else 0
    cdef int64_t p = m.p[s]
    m.p[s] = <uint32_t>(p + ((target - p) * RECIPROCAL[m.n[s]] >> 16))
    if m.n[s] < limit:
        m.n[s] += 1


cdef inline void sm_learn(StateMap* m, int s, int bit) noexcept nogil:
    """The learning rule, n counting to SM_LIMIT."""
    sm_learn_to(m, s, bit, SM_LIMIT)


cdef inline size_t sm_memory(const StateMap* m) noexcept nogil:
    return <size_t>m.size * 6
