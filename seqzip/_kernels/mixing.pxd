# cython: language_level=3
# The output layer shared by the online models (GLNN, LSTM, mLSTM, mRNN): a softmax over
# features a = (1, activities...) plus experts' log-probabilities with gated weights, and the
# per-symbol quasi-diagonal steps of Ollivier's QDH (000 eq. 17-21, ``qd.pxd``) that train it.
#
# Layouts (row-major): w (n, A) writing weights, row 0 the bias (a[0] = 1); U (n, E) gates of
# the E experts' weights, beta_e = a . U[:, e]; lexp (E, A) experts' log-probabilities.
# Only + - * / in fixed loop orders, plus seqzip's deterministic exp (via det_softmax).

from seqzip._kernels.detmath cimport det_log, det_softmax
from seqzip._kernels.qd cimport qd_row_step


cdef inline void mixed_softmax(const double* a, const double* w, Py_ssize_t n, Py_ssize_t A,
                               const double* lexp, const double* U, Py_ssize_t E,
                               double* beta, double* offset, double* out) noexcept nogil:
    """out = softmax(a . w + sum_e beta_e lexp[e]) with beta = a . U; E = 0: no experts."""
    cdef Py_ssize_t i, e, y
    if E == 0:
        det_softmax(a, w, out, n, A)
        return
    for y in range(A):
        offset[y] = 0.0
    for e in range(E):
        beta[e] = 0.0
        for i in range(n):
            beta[e] = beta[e] + a[i] * U[i * E + e]
        for y in range(A):
            offset[y] = offset[y] + beta[e] * lexp[e * A + y]
    det_softmax(a, w, out, n, A, offset)


cdef inline void writing_step(const double* a, Py_ssize_t n, const double* p, Py_ssize_t x,
                              Py_ssize_t A, double* hd, double* hc, double gamma, double eps,
                              double rate, double* w) noexcept nogil:
    """QDH step on every symbol's writing weights w[:, y] after symbol x (000 eq. 17-21)."""
    cdef Py_ssize_t y
    for y in range(A):
        qd_row_step(a, n, p[y] * (1.0 - p[y]), (1.0 if y == x else 0.0) - p[y],
                    &hd[y], &hc[y], A, gamma, eps, rate, &w[y])


cdef inline void gate_step(const double* a, Py_ssize_t n, const double* p, Py_ssize_t x,
                           Py_ssize_t A, const double* lexp, Py_ssize_t E, double* hd,
                           double* hc, double gamma, double eps, double rate,
                           double* U) noexcept nogil:
    """QDH step on each expert's gates U[:, e]: the expert's log-probability is its output, so
    the gradient is a_i (l_e(x) - E_p l_e) and the curvature a_i a_j Var_p l_e."""
    cdef Py_ssize_t e, y
    cdef double mean, var, d
    for e in range(E):
        mean = 0.0
        for y in range(A):
            mean = mean + p[y] * lexp[e * A + y]
        var = 0.0
        for y in range(A):
            d = lexp[e * A + y] - mean
            var = var + p[y] * d * d
        qd_row_step(a, n, var, lexp[e * A + x] - mean, &hd[e], &hc[e], E, gamma, eps, rate,
                    &U[e])


cdef inline void expert_logs(const double* probs, double* out, Py_ssize_t A) noexcept nogil:
    """out = log of an expert's distribution, each probability floored at 1e-300."""
    cdef Py_ssize_t y
    cdef double q
    for y in range(A):
        q = probs[y]
        out[y] = det_log(q if q > 1e-300 else 1e-300)


cdef inline void floor_mix(const double* p, double* out, Py_ssize_t A) noexcept nogil:
    """out = p mixed with a uniform floor of total mass 2^-16: no symbol ever costs more than
    log2(A) + 16 bits, whatever the network predicts."""
    cdef Py_ssize_t y
    cdef double floor = 1.0 / 65536
    for y in range(A):
        out[y] = (1.0 - floor) * p[y] + floor / A
