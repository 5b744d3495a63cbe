# cython: language_level=3
# The online network's prediction put to more uses than one mixer input (``net_sel``, a bit
# mask; 0: none), after paq8px's LSTM, whose top predicted byte selects weight sets and SSE
# contexts.  Per bit, from the network's distribution over the symbol (its tree of masses,
# ``experts.pxd``; the network is the last symbol expert):
#   p1      its probability that the bit is 1 (the masses below the node's children);
#   the top byte (its most probable symbol, the lowest on a tie), whether the bits so far
#   are that byte's, the bit it expects next and its share of the mass below the node;
#   class   (agree * 2 + expected bit) * 4 + confidence (4 levels of that share; when the
#           bits disagree, of max(p1, 1 - p1) and the bit p1 favours), 0..15;
#   bucket  p1's log-odds in 16 buckets of width 1 over [-8, 8].
# Uses (bits of net_sel):
#   (0) NS_INPUT: one more mixer input (experts.pxd): +-the top byte's share's log-odds,
#       signed by its expected bit, while the bits agree with it (else 0);
#   (1) NS_SSE_TOP: an SSE stage keyed by the class and the node (16 << B rows);
#   (2) NS_SSE_P: an SSE stage keyed by the bucket, the previous byte and the depth
#       (16 x 256 x 8 rows); the stages' outputs averaged with the final stage's (weight 3
#       on it, 1 on each stage);
#   (3) NS_LINEAR: one more mixer input (experts.pxd): p1 in the linear domain, (p1 - 1/2)
#       * LIN_SCALE (after net_sel bit 0's when both are on).
# The weight sets' selectors "netp" (bucket x depth) and "nettop" (class x depth) read the
# same (``ns_rows``).
from libc.stdint cimport uint16_t
from libc.stdlib cimport free
from seqzip._kernels.cm.apm cimport APM_BINS, Apm, apm_init_stage, apm_memory, apm_refine
from seqzip._kernels.cm.component cimport Cursor
from seqzip._kernels.cm.experts cimport SymbolExperts, se_top_share
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.tables cimport stretch_p

cdef enum:
    NS_INPUT = 1
    NS_SSE_TOP = 2
    NS_SSE_P = 4
    NS_LINEAR = 8
    NS_MASK = 15
    NS_CLASSES = 16
    NS_BUCKETS = 16


cdef struct NetSel:
    int mode             # net_sel
    const SymbolExperts* e  # the symbol experts (the network last); NULL: no network
    double p1            # the network's P(1) for this bit
    int cls, bucket      # the bit's class and bucket (above)
    Apm a                # NS_SSE_TOP's and NS_SSE_P's stages, in that order


cdef inline int ns_class(double p1, int agree, int expect, double share) noexcept nogil:
    """The class of a bit (0..15): agree with the top byte, the bit expected, confidence."""
    cdef double c = share if agree else (p1 if p1 >= 0.5 else 1.0 - p1)
    if not agree:
        expect = p1 >= 0.5
    return (agree * 2 + expect) * 4 + (c >= 0.4) + (c >= 0.7) + (c >= 0.9)


cdef inline int ns_bucket(double p1) noexcept nogil:
    cdef int b = <int>(stretch_p(p1) + 8.0)
    return 0 if b < 0 else NS_BUCKETS - 1 if b >= NS_BUCKETS else b


cdef inline void ns_bit(NetSel* s, const Cursor* at) noexcept nogil:
    """The bit's p1, class and bucket (the network's tree for this symbol is built)."""
    cdef int agree, expect
    cdef double share
    if s.e == NULL:
        return
    share = se_top_share(s.e, at.node, at.depth, &s.p1, &agree, &expect)
    s.cls = ns_class(s.p1, agree, expect, share)
    s.bucket = ns_bucket(s.p1)
    if s.a.n:
        s.a.ctx[0] = (s.cls << at.B | at.node) if s.mode & NS_SSE_TOP else \
            (s.bucket * 256 + <int>(at.ctx.c8 & 0xFF)) * 8 + at.depth
        if s.a.n > 1:
            s.a.ctx[1] = (s.bucket * 256 + <int>(at.ctx.c8 & 0xFF)) * 8 + at.depth


cdef inline int ns_init(NetSel* s, spec, SymbolExperts* e, bint network, int B,
                        bint sets) except -1:
    """``net_sel``'s stages; e the symbol experts (the network last), ``sets``: a weight set
    selected by "netp" or "nettop" (without either nor net_sel nothing is computed per bit)."""
    s.mode = getattr(spec, "net_sel", 0)
    s.e = e if network and (s.mode & (NS_INPUT | NS_SSE_TOP | NS_SSE_P) or sets) else NULL
    s.a.n = 0
    s.a.rate = spec.apm_rate
    if s.e == NULL:
        return 0
    if s.mode & NS_SSE_TOP:
        if apm_init_stage(&s.a, s.a.n, NS_CLASSES << B) < 0:
            raise MemoryError()
        s.a.n += 1
    if s.mode & NS_SSE_P:
        if apm_init_stage(&s.a, s.a.n, NS_BUCKETS * 256 * 8) < 0:
            raise MemoryError()
        s.a.n += 1
    return 0


cdef inline double ns_refine(NetSel* s, double p) noexcept nogil:
    """p and the stages' outputs averaged, p with weight 3 (each stage's 1: equal weights
    cost alice29.txt 0.1% at level 9)."""
    cdef double q
    cdef int i
    if s.a.n == 0:
        return p
    apm_refine(&s.a, p, stretch_p(p))  # sets the bins, the fractions and the outputs
    q = p * 3.0
    for i in range(s.a.n):
        q = q + s.a.out[i]
    return q / (3 + s.a.n)


cdef inline void ns_learn(NetSel* s, int bit) noexcept nogil:
    """The stages' two bins move toward the bit (rows and bins kept inside their tables: a
    restored state's may be anything).  Not ``apm.apm_learn``: its steps divide as C does
    (toward zero), these as Python does (down), and the streams are what they are."""
    cdef int target = 65535 if bit else 0, i, at
    cdef double frac
    cdef uint16_t* cell
    for i in range(s.a.n):
        if not 0 <= s.a.ctx[i] < s.a.contexts[i]:
            s.a.ctx[i] = 0
        if not 0 <= s.a.bin[i] < APM_BINS - 1:
            s.a.bin[i] = 0
        frac = s.a.frac[i]
        if not 0.0 <= frac <= 1.0:
            frac = 0.0
        cell = &s.a.table[i][s.a.ctx[i] * APM_BINS + s.a.bin[i]]
        cell[0] = <uint16_t>(cell[0] + <int>((target - cell[0]) * (1.0 - frac)) //
                             (1 << s.a.rate))
        cell[1] = <uint16_t>(cell[1] + <int>((target - cell[1]) * frac) // (1 << s.a.rate))


cdef inline size_t ns_memory(const NetSel* s) noexcept nogil:
    return apm_memory(&s.a)


cdef inline void ns_free(NetSel* s) noexcept nogil:
    cdef int i
    for i in range(s.a.n):
        free(s.a.table[i])
        s.a.table[i] = NULL
    s.a.n = 0


cdef inline list ns_fields(NetSel* s):
    cdef int i
    if s.a.n == 0:
        return []
    out = [(f"net.sse{i}", F_BYTES, <size_t>s.a.table[i], s.a.contexts[i] * APM_BINS * 2, False)
           for i in range(s.a.n)]
    return out + [("net.ctx", F_BYTES, <size_t>&s.a.ctx[0], sizeof(s.a.ctx), False),
                  ("net.bin", F_BYTES, <size_t>&s.a.bin[0], sizeof(s.a.bin), False),
                  ("net.frac", F_BYTES, <size_t>&s.a.frac[0], sizeof(s.a.frac), False),
                  ("net.out", F_BYTES, <size_t>&s.a.out[0], sizeof(s.a.out), False)]


cdef inline void ns_rows(int* rows, const int* sel, int m, const NetSel* s, int depth,
                         int sel_p, int sel_top) noexcept nogil:
    """The rows of the sets selected by "netp" (id sel_p) and "nettop" (sel_top)."""
    cdef int k
    for k in range(m):
        if sel[k] == sel_p:
            rows[k] = s.bucket * 8 + depth
        elif sel[k] == sel_top:
            rows[k] = s.cls * 8 + depth
