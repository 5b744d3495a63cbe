# cython: language_level=3
# The mixer: weight sets (each a table of rows selected by a small context), the dot product
# and its clamp, and the three optimisers -- each written once and used by the first layer's
# sets, the second layer and the gated set's gates.
#
# QDH is Ollivier's quasi-diagonal Newton step (qd.pxd's ``qd_row_step_reciprocal``, here along
# a strided axis so that the gates, whose rows run across the inputs, take the same step).
from libc.math cimport sqrt  # IEEE 754 rounds sqrt correctly: the same bits everywhere
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.field cimport F_BYTES, F_F64, F_INT
from seqzip._kernels.cm.slots cimport prefetch
from seqzip._kernels.cm.tables cimport squash

cdef enum:
    OPT_QDH = 0
    OPT_SGD = 1
    OPT_ADAM = 2

cdef extern from *:
    """
    #define SEQZIP_CM_PRIOR 4.0
    #define SEQZIP_CM_INIT_PRIOR 16.0
    #define SEQZIP_CM_INIT_SHARE 2.0
    #define SEQZIP_CM_ADAM_B1 0.9
    #define SEQZIP_CM_ADAM_B2 0.999
    """
    double PRIOR "SEQZIP_CM_PRIOR"     # QDH: prior curvature of each weight (unit samples)
    # mix_init=1 and 2: each row of the first layer starts with its inputs' weights summing
    # to INIT_SHARE (the bias at 0); with 1 every weight's prior curvature is INIT_PRIOR
    double INIT_PRIOR "SEQZIP_CM_INIT_PRIOR"
    double INIT_SHARE "SEQZIP_CM_INIT_SHARE"
    double ADAM_B1 "SEQZIP_CM_ADAM_B1"
    double ADAM_B2 "SEQZIP_CM_ADAM_B2"

cdef enum:
    MIX_MAX_SETS = 8     # sets ``mixer_predict_sets`` and ``mixer_train_sets`` take at once
    MAX_ROW = 256        # ... and inputs (wider rows: ``mixer_train`` one set after another)

cdef extern from *:
    """
    /* Several running sums at once, each in the order one sum alone would take (i ascending,
       from 0.0): acc[k] + w[k][i] * x[i] for the dot products, acc[k] - t[k][i] for the QDH
       steps' bias terms.  Interleaved, the sums' additions (3-4 cycles each, one after the
       other) overlap; the bits are those of one sum after the other.  K is a constant at each
       call, so the compiler keeps the K sums in registers. */
    static inline void seqzip_cm_dots_k(const double* const* w, const double* x, int n,
                                        double* out, const int K) {
        double acc[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        for (int i = 0; i < n; i++)
            for (int k = 0; k < K; k++)
                acc[k] = acc[k] + w[k][i] * x[i];
        for (int k = 0; k < K; k++)
            out[k] = acc[k];
    }
    static void seqzip_cm_dots(const double* const* w, int m, const double* x, int n,
                               double* out) {
        int k = 0;
        for (; m - k >= 6; k += 6) seqzip_cm_dots_k(w + k, x, n, out + k, 6);
        for (; m - k >= 4; k += 4) seqzip_cm_dots_k(w + k, x, n, out + k, 4);
        for (; m - k >= 2; k += 2) seqzip_cm_dots_k(w + k, x, n, out + k, 2);
        for (; k < m; k++) seqzip_cm_dots_k(w + k, x, n, out + k, 1);
    }
    static inline void seqzip_cm_less_k(double* acc, const double* const* t, int from, int n,
                                        const int K) {
        double a[6];
        for (int k = 0; k < K; k++) a[k] = acc[k];
        for (int i = from; i < n; i++)
            for (int k = 0; k < K; k++)
                a[k] = a[k] - t[k][i];
        for (int k = 0; k < K; k++) acc[k] = a[k];
    }
    static void seqzip_cm_less(double* acc, const double* const* t, int m, int from, int n) {
        int k = 0;
        for (; m - k >= 6; k += 6) seqzip_cm_less_k(acc + k, t + k, from, n, 6);
        for (; m - k >= 4; k += 4) seqzip_cm_less_k(acc + k, t + k, from, n, 4);
        for (; m - k >= 2; k += 2) seqzip_cm_less_k(acc + k, t + k, from, n, 2);
        for (; k < m; k++) seqzip_cm_less_k(acc + k, t + k, from, n, 1);
    }
    """
    void mix_dots "seqzip_cm_dots"(const double** w, int m, const double* x, int n,
                                   double* out) noexcept nogil
    void mix_less "seqzip_cm_less"(double* acc, const double** t, int m, int start,
                                   int n) noexcept nogil


cdef extern from *:
    """
    /* The first layer's QDH loops (a row's running curvature; its weight step), written once
       (the _body functions) and compiled twice: for any x86-64 (SSE2, two doubles at a time)
       and, on GCC/clang for x86-64, for AVX2 (four).  Each element's arithmetic is the same
       sequence of IEEE 754 multiplications, additions and divisions in both, with nothing fused
       (-ffp-contract=off; the AVX2 copy does not enable FMA) and no sum reordered (no
       fast-math): the bits are the same on every CPU, only the number of instructions differs.
       The copy is chosen on the first call, per module: AVX2 when the CPU has it, unless the
       environment sets SEQZIP_SIMD=0 (the tests compare the two copies' streams). */
    #include <stdlib.h>
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #define SEQZIP_HAVE_AVX2_COPY 1
    #define SEQZIP_AVX2 __attribute__((target("avx2")))
    #else
    #define SEQZIP_HAVE_AVX2_COPY 0
    #define SEQZIP_AVX2
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #define SEQZIP_RESTRICT __restrict__
    #define SEQZIP_INLINE static inline __attribute__((always_inline))
    #else
    #define SEQZIP_RESTRICT
    #define SEQZIP_INLINE static inline
    #endif

    /* A QDH step's first half: the running curvature (its diagonal hd and the bias cross
       terms hc, strided by ``stride``) learns features a at output variance var.  The copies
       below call it at stride 1, which the compiler then vectorises; qdh_step (the gates'
       strided rows, rows wider than MAX_ROW) calls it as qdh_curvature. */
    SEQZIP_INLINE void seqzip_cm_curv_body(
            const double* SEQZIP_RESTRICT a, int n, double var, double* SEQZIP_RESTRICT hd,
            double* SEQZIP_RESTRICT hc, int stride, double decay) {
        for (int i = 0; i < n; i++) {
            hd[i * stride] = decay * hd[i * stride] + a[i] * a[i] * var;
            hc[i * stride] = decay * hc[i * stride] + a[i] * var;
        }
    }
    /* qdh_step at stride 1, the curvature (the body above's two lines, fused here) and the
       weight step in one pass (element i's step
       reads only hd[i], hc[i] and the bias's hd[0], learnt first, so the values are those of
       the curvature pass followed by the step pass); the bias's terms go to term[1..n-1] for
       the caller to subtract in order; returns the bias's first term, err / (hd[0] + eps). */
    SEQZIP_INLINE double seqzip_cm_qdh_body(
            const double* SEQZIP_RESTRICT a, int n, double var, double err, double rate,
            double decay, double eps, double* SEQZIP_RESTRICT w, double* SEQZIP_RESTRICT hd,
            double* SEQZIP_RESTRICT hc, double* SEQZIP_RESTRICT term) {
        double inv, h, ci, step, d;
        hd[0] = decay * hd[0] + a[0] * a[0] * var;
        hc[0] = decay * hc[0] + a[0] * var;
        inv = 1.0 / (hd[0] + eps);
        for (int i = 1; i < n; i++) {
            d = decay * hd[i] + a[i] * a[i] * var;
            h = decay * hc[i] + a[i] * var;
            hd[i] = d;
            hc[i] = h;
            ci = h * inv;
            step = (a[i] * err - err * ci) / (d + eps - h * ci);
            w[i] = w[i] + rate * step;
            term[i] = ci * step;
        }
        return err * inv;
    }

    static void seqzip_cm_curv_generic(const double* a, int n, double var, double* hd,
                                       double* hc, double decay) {
        seqzip_cm_curv_body(a, n, var, hd, hc, 1, decay);
    }
    static double seqzip_cm_qdh_generic(const double* a, int n, double var, double err,
                                        double rate, double decay, double eps, double* w,
                                        double* hd, double* hc, double* term) {
        return seqzip_cm_qdh_body(a, n, var, err, rate, decay, eps, w, hd, hc, term);
    }
    #if SEQZIP_HAVE_AVX2_COPY
    SEQZIP_AVX2 static void seqzip_cm_curv_avx2(const double* a, int n, double var, double* hd,
                                                double* hc, double decay) {
        seqzip_cm_curv_body(a, n, var, hd, hc, 1, decay);
    }
    SEQZIP_AVX2 static double seqzip_cm_qdh_avx2(const double* a, int n, double var, double err,
                                                 double rate, double decay, double eps,
                                                 double* w, double* hd, double* hc,
                                                 double* term) {
        return seqzip_cm_qdh_body(a, n, var, err, rate, decay, eps, w, hd, hc, term);
    }
    #endif

    typedef void (*seqzip_cm_curv_fn)(const double*, int, double, double*, double*, double);
    typedef double (*seqzip_cm_qdh_fn)(const double*, int, double, double, double, double,
                                       double, double*, double*, double*, double*);
    static void seqzip_cm_curv_first(const double*, int, double, double*, double*, double);
    static double seqzip_cm_qdh_first(const double*, int, double, double, double, double,
                                      double, double*, double*, double*, double*);
    static seqzip_cm_curv_fn seqzip_cm_curv = seqzip_cm_curv_first;
    static seqzip_cm_qdh_fn seqzip_cm_qdh = seqzip_cm_qdh_first;
    static int seqzip_cm_simd_level = -1;  /* -1 not chosen yet, 0 generic, 1 AVX2 */

    /* Which copy this module runs (choosing it if not yet): 1 AVX2, 0 generic.  Two threads
       choosing at once store the same values. */
    static int seqzip_cm_simd(void) {
        if (seqzip_cm_simd_level < 0) {
            int level = 0;
            const char* env = getenv("SEQZIP_SIMD");
    #if SEQZIP_HAVE_AVX2_COPY
            if (!(env != NULL && env[0] == '0' && env[1] == 0)) {
                __builtin_cpu_init();
                level = __builtin_cpu_supports("avx2") ? 1 : 0;
            }
            if (level) {
                seqzip_cm_curv = seqzip_cm_curv_avx2;
                seqzip_cm_qdh = seqzip_cm_qdh_avx2;
            } else
    #else
            (void)env;
    #endif
            {
                seqzip_cm_curv = seqzip_cm_curv_generic;
                seqzip_cm_qdh = seqzip_cm_qdh_generic;
            }
            seqzip_cm_simd_level = level;
        }
        return seqzip_cm_simd_level;
    }
    static void seqzip_cm_curv_first(const double* a, int n, double var, double* hd,
                                     double* hc, double decay) {
        seqzip_cm_simd();
        seqzip_cm_curv(a, n, var, hd, hc, decay);
    }
    static double seqzip_cm_qdh_first(const double* a, int n, double var, double err,
                                      double rate, double decay, double eps, double* w,
                                      double* hd, double* hc, double* term) {
        seqzip_cm_simd();
        return seqzip_cm_qdh(a, n, var, err, rate, decay, eps, w, hd, hc, term);
    }
    """
    void qdh_curvature_row "seqzip_cm_curv"(const double* a, int n, double var, double* hd,
                                            double* hc, double decay) noexcept nogil
    double qdh_step_row "seqzip_cm_qdh"(const double* a, int n, double var, double err,
                                        double rate, double decay, double eps, double* w,
                                        double* hd, double* hc, double* term) noexcept nogil
    int mixer_simd "seqzip_cm_simd"() noexcept nogil
    void qdh_curvature "seqzip_cm_curv_body"(const double* a, int n, double var, double* hd,
                                             double* hc, int stride, double decay) noexcept nogil


cdef struct Optimiser:
    int kind             # OPT_QDH, OPT_SGD, OPT_ADAM
    double decay, eps    # QDH: the curvature's decay per bit and its damping
    double b1t, b2t      # Adam: beta1^t and beta2^t
    int init             # the mixer's start (``mix_init``): 0 zero weights, 1 and 2 a share
    double quiet         # QDH: a first-layer set whose |error| is below ``mix_skip`` learns
    # its curvature only, not its weights (``quiet`` is mix_skip squared; 0: every step)


cdef struct Mixer:
    int n_sets           # rows (weight sets) in this table
    int n                # inputs per row
    double* w            # (n_sets, n)
    double* hd           # QDH running diagonal / Adam first moment
    double* hc           # QDH bias cross terms / Adam second moment
    int selected         # the row used for the current bit
    double dot           # its output (log-odds) and probability
    double p


cdef inline int mixer_init(Mixer* m, int n_sets, int n, const Optimiser* o) noexcept nogil:
    cdef int i
    m.n_sets = n_sets
    m.n = n
    m.w = <double*>calloc(n_sets * n, sizeof(double))
    m.hd = <double*>calloc(n_sets * n, sizeof(double))
    m.hc = <double*>calloc(n_sets * n, sizeof(double))
    if m.w == NULL or m.hd == NULL or m.hc == NULL:
        return -1
    if o.kind == OPT_QDH:  # a prior curvature of a few samples
        for i in range(n_sets * n):
            m.hd[i] = INIT_PRIOR if o.init == 1 else PRIOR
    if o.init and n > 1:  # every row starts as a mean of the inputs, not at 0
        for i in range(n_sets * n):
            if i % n:
                m.w[i] = INIT_SHARE / (n - 1)
    m.selected = 0
    m.dot = 0.0
    m.p = 0.5
    return 0


cdef inline size_t mixer_memory(const Mixer* m) noexcept nogil:
    return 3 * <size_t>m.n_sets * m.n * sizeof(double)


cdef inline double dot_clamp(const double* w, const double* x, int n) noexcept nogil:
    """w . x, clamped to [-16, 16]."""
    cdef double dot = 0.0
    cdef int i
    for i in range(n):
        dot = dot + w[i] * x[i]
    if dot > 16.0:
        dot = 16.0
    elif dot < -16.0:
        dot = -16.0
    return dot


cdef inline void mixer_predict(Mixer* m, int selected, const double* x) noexcept nogil:
    m.selected = selected
    m.dot = dot_clamp(m.w + selected * m.n, x, m.n)
    m.p = squash(m.dot)


cdef inline void mixer_fetch(const Mixer* sets, const int* rows, int m) noexcept nogil:
    """Start loading the weights of sets[k]'s row rows[k] (k < m): a hint, nothing read."""
    cdef int k, j, n = sets[0].n
    cdef const double* w
    for k in range(m):
        w = sets[k].w + <size_t>rows[k] * n
        j = 0
        while j < n:
            prefetch(w + j)
            j += 8
        prefetch(w + n - 1)


cdef inline void mixer_predict_sets(Mixer* sets, const int* rows, int m,
                                    const double* x) noexcept nogil:
    """``mixer_predict`` of sets[k] at row rows[k] for each k < m (m <= MIX_MAX_SETS, every
    set of x's width), the dot products interleaved: the same bits as one after the other.
    The rows' optimiser state (read when the bit is learnt) is fetched meanwhile."""
    cdef const double* w[MIX_MAX_SETS]
    cdef double dot[MIX_MAX_SETS]
    cdef int k, j, n = sets[0].n
    cdef size_t at
    if m == 1:  # nothing to interleave (level 1: the extra work measured 10% slower)
        mixer_predict(&sets[0], rows[0], x)
        return
    for k in range(m):
        sets[k].selected = rows[k]
        at = <size_t>rows[k] * n
        w[k] = sets[k].w + at
        j = 0
        while j < n:
            prefetch(sets[k].hd + at + j)
            prefetch(sets[k].hc + at + j)
            j += 8
        prefetch(sets[k].hd + at + n - 1)
        prefetch(sets[k].hc + at + n - 1)
    mix_dots(w, m, x, n, dot)
    for k in range(m):
        if dot[k] > 16.0:  # dot_clamp's clamp
            dot[k] = 16.0
        elif dot[k] < -16.0:
            dot[k] = -16.0
        sets[k].dot = dot[k]
        sets[k].p = squash(dot[k])


cdef inline void optimiser_tick(Optimiser* o) noexcept nogil:
    """Once per learnt bit, before the steps."""
    if o.kind == OPT_ADAM:
        o.b1t = o.b1t * ADAM_B1
        o.b2t = o.b2t * ADAM_B2


cdef inline void qdh_step(const double* a, int n, double var, double err, double* hd,
                          double* hc, int stride, double decay, double eps, double rate,
                          double* w) noexcept nogil:
    """One quasi-diagonal Newton step of one output over features a (a[0] the bias); hd, hc
    and w strided by ``stride``; the bias curvature inverted once."""
    cdef int i
    cdef double inv, bias, c, ci, step
    qdh_curvature(a, n, var, hd, hc, stride, decay)
    inv = 1.0 / (hd[0] + eps)
    bias = err * inv
    for i in range(1, n):
        c = hc[i * stride]
        ci = c * inv
        step = (a[i] * err - err * ci) / (hd[i * stride] + eps - c * ci)
        w[i * stride] = w[i * stride] + rate * step
        bias = bias - ci * step
    w[0] = w[0] + rate * bias


cdef inline void adam_step(double* m1, double* m2, double* w, double g, double rate,
                           const Optimiser* o) noexcept nogil:
    """One Adam step of one weight on gradient g."""
    cdef double bc1 = 1.0 - o.b1t, bc2 = 1.0 - o.b2t
    m1[0] = ADAM_B1 * m1[0] + (1.0 - ADAM_B1) * g
    m2[0] = ADAM_B2 * m2[0] + (1.0 - ADAM_B2) * g * g
    w[0] = w[0] + rate * (m1[0] / bc1) / (sqrt(m2[0] / bc2) + 1e-8)


cdef inline void mixer_train(Mixer* m, const double* x, double rate, int bit,
                             const Optimiser* o) noexcept nogil:
    """One step of the selected row on its own error (all its inputs)."""
    cdef int n = m.n, i
    cdef double err = bit - m.p, var = m.p * (1.0 - m.p), bias
    cdef double* w = m.w + m.selected * n
    cdef double* hd = m.hd + m.selected * n
    cdef double* hc = m.hc + m.selected * n
    cdef double term[MAX_ROW]
    if o.kind == OPT_QDH and n <= MAX_ROW:  # qdh_step at stride 1, the bias summed in order
        bias = qdh_step_row(x, n, var, err, rate, o.decay, o.eps, w, hd, hc, term)
        for i in range(1, n):  # mix_less's sum for one set; calling it here took 0.6% more
            bias = bias - term[i]  # instructions at level 6 (it stopped being inlined)
        w[0] = w[0] + rate * bias
    elif o.kind == OPT_QDH:
        qdh_step(x, n, var, err, hd, hc, 1, o.decay, o.eps, rate, w)
    elif o.kind == OPT_SGD:
        for i in range(n):
            w[i] = w[i] + rate * err * x[i]
    else:
        for i in range(n):
            adam_step(&hd[i], &hc[i], &w[i], err * x[i], rate, o)


cdef inline void mixer_curvature(Mixer* m, const double* x, const Optimiser* o) noexcept nogil:
    """A QDH set's quiet step (``Optimiser.quiet``): the selected row's running curvature
    learns this bit as ``qdh_step`` would, its weights stay.  The steps skipped are the ones
    with the divisions; the curvature is what the skipped bits still teach (skipping it too
    cost 200 KB of XML +0.085% at level 6 with a threshold of 0.003; learning it, the XML
    codes 0.024% smaller than with every step at 0.005)."""
    cdef size_t at = <size_t>m.selected * m.n
    qdh_curvature_row(x, m.n, m.p * (1.0 - m.p), m.hd + at, m.hc + at, o.decay)


cdef inline void mixer_train_sets(Mixer* sets, int m, int skip, const double* x, double rate,
                                   int bit, const Optimiser* o) noexcept nogil:
    """``mixer_train`` of each set k < m but ``skip`` (m <= MIX_MAX_SETS, every set of x's
    width): with QDH, each ``qdh_step``'s bias term summed in the same order, but the sets'
    sums interleaved (the same bits as one set after the other); a set whose error is below
    ``mix_skip`` takes ``mixer_curvature`` instead."""
    cdef double term[MIX_MAX_SETS][MAX_ROW]
    cdef const double* t[MIX_MAX_SETS]
    cdef double bias[MIX_MAX_SETS]
    cdef Mixer* own[MIX_MAX_SETS]
    cdef int k, c = 0, n = sets[0].n
    cdef double err, decay = o.decay, eps = o.eps
    cdef double* w
    cdef size_t at
    if o.kind != OPT_QDH or n > MAX_ROW or m - (0 <= skip < m) <= 1:
        for k in range(m):
            if k == skip:
                continue
            err = bit - sets[k].p
            if o.kind == OPT_QDH and err * err < o.quiet:
                mixer_curvature(&sets[k], x, o)
            else:
                mixer_train(&sets[k], x, rate, bit, o)
        return
    for k in range(m):
        if k == skip:
            continue
        err = bit - sets[k].p
        if err * err < o.quiet:
            mixer_curvature(&sets[k], x, o)
            continue
        at = <size_t>sets[k].selected * n
        # qdh_step at stride 1, its bias sum apart
        bias[c] = qdh_step_row(x, n, sets[k].p * (1.0 - sets[k].p), err, rate, decay, eps,
                               sets[k].w + at, sets[k].hd + at, sets[k].hc + at, &term[c][0])
        t[c] = &term[c][0]
        own[c] = &sets[k]
        c += 1
    mix_less(bias, t, c, 1, n)
    for k in range(c):
        w = own[k].w + own[k].selected * n
        w[0] = w[0] + rate * bias[k]


cdef inline void mixer_free(Mixer* m) noexcept nogil:
    free(m.w)
    free(m.hd)
    free(m.hc)


cdef inline list mixer_fields(Mixer* m, str name, bint tables):
    """Its state for get/set (``component.pxd``'s fields): the selected row and output, and
    with ``tables`` the weights and the optimiser's state."""
    cdef size_t n = <size_t>m.n_sets * m.n * 8
    out = [(name + ".selected", F_INT, <size_t>&m.selected, sizeof(int), False),
           (name + ".dot", F_F64, <size_t>&m.dot, 8, False),
           (name + ".p", F_F64, <size_t>&m.p, 8, False)]
    if tables:
        out += [(name + ".w", F_BYTES, <size_t>m.w, n, False),
                (name + ".hd", F_BYTES, <size_t>m.hd, n, False),
                (name + ".hc", F_BYTES, <size_t>m.hc, n, False)]
    return out
