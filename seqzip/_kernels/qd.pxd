# cython: language_level=3
# Ollivier's quasi-diagonal reduction (000 Sect. 2, eq. 17-21 and 34-35), written once.
#
# For one unit whose inputs include a bias (index 0), the quasi-diagonal metric keeps the
# diagonal M_ii and the bias row M_0i.  The step of each coordinate solves the 2x2 system of that
# coordinate and the bias; the bias step is what is left.  Every online and offline kernel that
# takes a quasi-diagonal step (writing weights, gates, transition weights, the LSTM family's
# Riemannian step, the context mixer) calls these, so they compute the same bits.
from libc.math cimport sqrt  # IEEE 754 rounds sqrt correctly: the same bits everywhere


cdef inline double qd_coordinate(double g, double d, double c, double g0,
                                 double m00) noexcept nogil:
    """Step of one coordinate: g its gradient, d its (damped) diagonal, c its cross term with
    the bias, g0 the bias gradient, m00 the (damped) bias diagonal."""
    return (g - g0 * c / m00) / (d - c * c / m00)


cdef inline void qd_solve(const double* grad, const double* diag, const double* cross,
                          double* out, Py_ssize_t n, Py_ssize_t stride) noexcept nogil:
    """out = M^-1 grad for the quasi-diagonal M along a strided axis (diag already damped)."""
    cdef Py_ssize_t i
    cdef double m00 = diag[0], g0 = grad[0], bias = g0 / m00, c, step
    for i in range(1, n):
        c = cross[i * stride]
        step = qd_coordinate(grad[i * stride], diag[i * stride], c, g0, m00)
        out[i * stride] = step
        bias = bias - c / m00 * step
    out[0] = bias


cdef inline void qd_row_step(const double* a, Py_ssize_t n, double var, double target,
                             double* hd, double* hc, Py_ssize_t stride, double gamma,
                             double eps, double rate, double* w) noexcept nogil:
    """One output's quasi-diagonal Newton step on one sample (000 eq. 17-21).

    The output's log-likelihood gradient is a_i * target and its curvature a_i a_j var; the
    running diagonal hd and bias cross terms hc (decay gamma) and the weights w are strided by
    ``stride`` along the features; index 0 is the bias (a[0] = 1).
    """
    cdef Py_ssize_t i
    cdef double m00, bias, c, step
    for i in range(n):
        hd[i * stride] = gamma * hd[i * stride] + a[i] * a[i] * var
        hc[i * stride] = gamma * hc[i * stride] + a[i] * var
    m00 = hd[0] + eps
    bias = target / m00
    for i in range(1, n):
        c = hc[i * stride]
        step = qd_coordinate(a[i] * target, hd[i * stride] + eps, c, target, m00)
        w[i * stride] = w[i * stride] + rate * step
        bias = bias - c / m00 * step
    w[0] = w[0] + rate * bias


cdef inline int cholesky_solve(double* M, double* b, Py_ssize_t n) noexcept nogil:
    """Solve M x = b in place (b <- x) for symmetric positive-definite M (overwritten);
    -1 when M is not positive definite (the caller falls back to the quasi-diagonal step)."""
    cdef Py_ssize_t i, j, k
    cdef double s
    for j in range(n):
        s = M[j * n + j]
        for k in range(j):
            s = s - M[j * n + k] * M[j * n + k]
        if s <= 0.0:
            return -1
        M[j * n + j] = sqrt(s)
        for i in range(j + 1, n):
            s = M[i * n + j]
            for k in range(j):
                s = s - M[i * n + k] * M[j * n + k]
            M[i * n + j] = s / M[j * n + j]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s = s - M[i * n + k] * b[k]
        b[i] = s / M[i * n + i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s = s - M[k * n + i] * b[k]
        b[i] = s / M[i * n + i]
    return 0


cdef inline void qd_row_step_reciprocal(const double* a, Py_ssize_t n, double var,
                                        double target, double* hd, double* hc, double gamma,
                                        double eps, double rate, double* w) noexcept nogil:
    """``qd_row_step`` (stride 1) with the bias curvature inverted once: the same step up to
    rounding, one division per coordinate instead of four.  The context mixer's per-bit steps
    use it (its streams are defined by it); the older kernels keep ``qd_row_step``."""
    cdef Py_ssize_t i
    cdef double inv, bias, c, ci, step
    for i in range(n):
        hd[i] = gamma * hd[i] + a[i] * a[i] * var
        hc[i] = gamma * hc[i] + a[i] * var
    inv = 1.0 / (hd[0] + eps)
    bias = target * inv
    for i in range(1, n):
        c = hc[i]
        ci = c * inv
        step = (a[i] * target - target * ci) / (hd[i] + eps - c * ci)
        w[i] = w[i] + rate * step
        bias = bias - ci * step
    w[0] = w[0] + rate * bias
