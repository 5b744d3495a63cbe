# cython: language_level=3
# The last mix (``post`` > 0): after the final stage, one row of weights over that stage's
# log-odds and every input of the mixer (the bias included), trained by plain gradient steps
# of a small rate (post / 100000), starting as the final stage alone (weight 1 on it, 0 on the
# inputs).  It lets the model lean on one input the mixer's sets under-trust: measured before
# building it, offline on the kernel's own inputs, 60 KB of kennedy.xls -2.1%, sum -1.2%, 60
# KB of alice29.txt -0.06% (rate 0.0002-0.001).
#
# ``post_mode`` (a bit mask, 0: the above) changes its structure:
#   (0) PM_STAGES: its inputs are the final stage's log-odds, a bias, the mixer's log-odds
#       (the final stage's input), each weight set's and each APM/SSE stage's output
#       (stretched; and the SSE mix's), not the mixer's inputs -- a handful, not dozens;
#   (1, 2) the row, as the weight sets choose theirs: 1 the bit's depth in the symbol (8
#       rows), 2 the match state (48), 3 the order-1 byte's top 3 bits (8);
#   (3) PM_QDH: the mixer's quasi-diagonal Newton step (its decay and eps) at rate
#       post / 1000, not plain gradient steps;
#   (4) PM_DECAY: the rate starts 16 times as high and decays to it (x 0.9999 per bit);
#   (5) PM_TWO: two such mixes, the second at 4 times the rate, averaged in the log-odds;
#   (6) PM_INPUTS: with PM_STAGES, the mixer's inputs too (after the stages').
# Measured (body bytes, against each preset's post_mode 0): 65 (the stages' outputs and the
# inputs) at level 6 alice29.txt -0.03%, fields.c -0.18%, a book in HTML -0.12%, dense XML
# -0.39%, wiki XML -0.08%; its binary variant (49) kennedy.xls -1.40%, sum -0.42%, ptt5
# -0.34%, x86 (52) an x86-64 object -0.58%; level 9 binary (50, no network) kennedy.xls
# -1.09%, sum -0.37%, text (47) 0 to -0.07%; level 1 binary (51) kennedy.xls -1.74%, sum
# -0.31%; CPU as mode 0's (+-3%).  1 alone (cheaper) loses on text, sum and ptt5 (+2.0%);
# rows (1-2) and QDH (3) lose everywhere measured; 97 (65 and two mixes): level 9 sum -0.79%
# but kennedy.xls -0.19%.
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.apm cimport Apm
from seqzip._kernels.cm.component cimport Cursor
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.mixer cimport (OPT_QDH, OPT_SGD, Mixer, Optimiser, mixer_fields,
                                       mixer_free, mixer_init, mixer_memory, mixer_predict,
                                       mixer_train)
from seqzip._kernels.cm.sse cimport SSE_MIX, Sse, stretch_fine
from seqzip._kernels.cm.tables cimport squash, stretch_p

cdef enum:
    PM_STAGES = 1
    PM_ROWS = 6          # the row's context: 0 one row, 2 depth, 4 match state, 6 order 1
    PM_QDH = 8
    PM_DECAY = 16
    PM_TWO = 32
    PM_INPUTS = 64
    PM_MASK = 127        # the bits defined
    PM_BOOST = 15        # PM_DECAY: the rate's extra at the start, in units of the rate
    PM_FAST = 4          # PM_TWO: the second mix's rate, in units of the first's


cdef extern from *:
    """
    static const double seqzip_post_decay = 0.9999;
    """
    const double PM_DECAY_PER_BIT "seqzip_post_decay"


cdef struct Post:
    double rate          # 0: off
    double boost         # PM_DECAY: the rate's extra, decaying to 0
    int mode             # post_mode
    int n                # inputs of the mix (the final stage's log-odds first)
    int n_x              # the mixer's inputs (mode 0) or weight sets (PM_STAGES)
    int n_in             # the mixer's inputs
    double* y            # (n,) the final stage's log-odds, then the inputs
    double dot           # the output's log-odds (PM_TWO: the two averaged)
    Optimiser opt
    Mixer m
    Mixer m2             # PM_TWO: the fast mix
    const Apm* a         # the final stage's stages (PM_STAGES reads their outputs)
    const Sse* e


cdef inline int post_rows(int mode) noexcept nogil:
    cdef int kind = mode & PM_ROWS
    return 1 if kind == 0 else 48 if kind == 4 else 8


cdef inline int post_inputs(int mode, int n_inputs, int n_sets, const Apm* a,
                            const Sse* s) noexcept nogil:
    """The mix's inputs (the final stage's log-odds included)."""
    if not mode & PM_STAGES:
        return n_inputs + 1
    return 3 + n_sets + a.n + (s.x.n + (1 if s.mask & SSE_MIX else 0) if s.mask else 0) + \
        (n_inputs if mode & PM_INPUTS else 0)


cdef inline int post_init(Post* s, spec, int n_inputs, int n_sets, const Apm* a,
                          const Sse* e) except -1:
    """The last mix of rate post / 100000 (0: none), after the final stage (built)."""
    cdef int post = getattr(spec, "post", 0), i, rows
    s.mode = getattr(spec, "post_mode", 0)
    s.rate = post / (1000.0 if s.mode & PM_QDH else 100000.0)
    s.boost = PM_BOOST * s.rate if s.mode & PM_DECAY else 0.0
    s.n_x = n_sets if s.mode & PM_STAGES else n_inputs
    s.n_in = n_inputs
    s.n = post_inputs(s.mode, n_inputs, n_sets, a, e)
    s.dot = 0.0
    s.a, s.e = a, e
    if not post:
        return 0
    s.opt.kind = OPT_QDH if s.mode & PM_QDH else OPT_SGD
    s.opt.decay, s.opt.eps, s.opt.init, s.opt.quiet = spec.decay, spec.eps, 0, 0.0
    rows = post_rows(s.mode)
    s.y = <double*>calloc(s.n, sizeof(double))
    if s.y == NULL or mixer_init(&s.m, rows, s.n, &s.opt) < 0 or \
            (s.mode & PM_TWO and mixer_init(&s.m2, rows, s.n, &s.opt) < 0):
        raise MemoryError()
    for i in range(rows):
        s.m.w[i * s.n] = 1.0
        if s.mode & PM_TWO:
            s.m2.w[i * s.n] = 1.0
    return 0


cdef inline double post_refine(Post* s, double p, const double* x, double dot,
                               const Mixer* sets, const Cursor* at,
                               int match_state) noexcept nogil:
    """p (the final stage's) mixed again: x the mixer's inputs, dot its log-odds, sets its
    weight sets."""
    cdef int i, k, row = 0, kind = s.mode & PM_ROWS
    cdef const Apm* a = s.a
    cdef const Sse* e = s.e
    if s.rate == 0.0:
        return p
    s.y[0] = stretch_p(p)
    if s.mode & PM_STAGES:
        s.y[1] = 1.0
        s.y[2] = dot
        k = 3
        for i in range(s.n_x):
            s.y[k + i] = sets[i].dot
        k += s.n_x
        for i in range(a.n):
            s.y[k + i] = stretch_fine(a.out[i])
        k += a.n
        if e.mask:
            for i in range(e.x.n):
                s.y[k + i] = stretch_fine(e.x.out[i])
            k += e.x.n
            if e.mask & SSE_MIX:
                s.y[k] = stretch_fine(e.p)
                k += 1
        if s.mode & PM_INPUTS:
            for i in range(s.n_in):
                s.y[k + i] = x[i]
    else:
        for i in range(s.n_x):
            s.y[i + 1] = x[i]
    if kind == 2:
        row = at.depth
    elif kind == 4:
        row = match_state if match_state < 48 else 47
    elif kind == 6:
        row = <int>((at.ctx.c8 & 0xFF) >> 5)
    mixer_predict(&s.m, row, s.y)
    if not s.mode & PM_TWO:
        s.dot = s.m.dot
        return s.m.p
    mixer_predict(&s.m2, row, s.y)
    s.dot = (s.m.dot + s.m2.dot) * 0.5
    return squash(s.dot)


cdef inline void post_learn(Post* s, int bit) noexcept nogil:
    cdef double rate = s.rate + s.boost
    if s.rate == 0.0:
        return
    mixer_train(&s.m, s.y, rate, bit, &s.opt)
    if s.mode & PM_TWO:
        mixer_train(&s.m2, s.y, rate * PM_FAST, bit, &s.opt)
    s.boost = s.boost * PM_DECAY_PER_BIT


cdef inline size_t post_memory(const Post* s) noexcept nogil:
    if s.rate == 0.0:
        return 0
    return mixer_memory(&s.m) + mixer_memory(&s.m2) + s.n * sizeof(double)


cdef inline void post_free(Post* s) noexcept nogil:
    free(s.y)
    mixer_free(&s.m)
    mixer_free(&s.m2)


cdef inline list post_fields(Post* s):
    if s.rate == 0.0:
        return []
    out = mixer_fields(&s.m, "post", True) + \
        [("post.y", F_BYTES, <size_t>s.y, s.n * sizeof(double), False)]
    if s.mode & PM_DECAY:
        out.append(("post.boost", F_BYTES, <size_t>&s.boost, 8, False))  # a float64
    if s.mode & PM_TWO:
        out += mixer_fields(&s.m2, "post2", True)
    return out
