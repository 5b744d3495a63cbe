# cython: language_level=3
# The last mix (``post`` > 0): after the final stage, one row of weights over that stage's
# log-odds and every input of the mixer (the bias included), trained by plain gradient steps
# of a small rate (post / 100000), starting as the final stage alone (weight 1 on it, 0 on the
# inputs).  It lets the model lean on one input the mixer's sets under-trust: measured before
# building it, offline on the kernel's own inputs, 60 KB of kennedy.xls -2.1%, sum -1.2%, 60
# KB of alice29.txt -0.06% (rate 0.0002-0.001).
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.mixer cimport (OPT_SGD, Mixer, Optimiser, mixer_fields, mixer_free,
                                       mixer_init, mixer_memory, mixer_predict, mixer_train)
from seqzip._kernels.cm.tables cimport stretch_p


cdef struct Post:
    double rate          # 0: off
    int n                # the mixer's inputs
    double* y            # (n + 1,) the final stage's log-odds, then the inputs
    Optimiser opt
    Mixer m


cdef inline int post_init(Post* s, int post, int n) except -1:
    """The last mix of rate post / 100000 over n inputs (0: none)."""
    s.rate = post / 100000.0
    s.n = n
    if not post:
        return 0
    s.opt.kind = OPT_SGD
    s.y = <double*>calloc(n + 1, sizeof(double))
    if s.y == NULL or mixer_init(&s.m, 1, n + 1, &s.opt) < 0:
        raise MemoryError()
    s.m.w[0] = 1.0
    return 0


cdef inline double post_refine(Post* s, double p, const double* x) noexcept nogil:
    cdef int i
    if s.rate == 0.0:
        return p
    s.y[0] = stretch_p(p)
    for i in range(s.n):
        s.y[i + 1] = x[i]
    mixer_predict(&s.m, 0, s.y)
    return s.m.p


cdef inline void post_learn(Post* s, int bit) noexcept nogil:
    if s.rate != 0.0:
        mixer_train(&s.m, s.y, s.rate, bit, &s.opt)


cdef inline size_t post_memory(const Post* s) noexcept nogil:
    return mixer_memory(&s.m) + (s.n + 1) * sizeof(double) if s.rate != 0.0 else 0


cdef inline void post_free(Post* s) noexcept nogil:
    free(s.y)
    mixer_free(&s.m)


cdef inline list post_fields(Post* s):
    if s.rate == 0.0:
        return []
    return mixer_fields(&s.m, "post", True) + \
        [("post.y", F_BYTES, <size_t>s.y, (s.n + 1) * sizeof(double), False)]
