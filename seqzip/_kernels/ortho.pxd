# cython: language_level=3
# Orthogonality of recurrent matrices (Manchev & Spratling, 002 Sect. II): OINIT, the
# pre-training of W by gradient descent on ||W W^T - I||_F^2 (eq. 16-18), and OPEN, the penalty
# gradient of eq. 31.  Plain C loops in a fixed order (the result fixes a coding model's
# initial weights: part of the file format); only + - * /.  A matrix is n x n with row stride
# ``ld`` (an n x n block of a wider row-major matrix, as the LSTM's R = [R_Hin R_i R_f R_o]).
# ``D`` and ``G`` are n * n scratch arrays.  The NumPy reference is seqzip.reference.relu_rnn.


cdef inline double ortho_residual(const double* M, Py_ssize_t n, Py_ssize_t ld,
                                  double* D) noexcept nogil:
    """D = M M^T - I; returns ||D||_F^2."""
    cdef Py_ssize_t i, j, k
    cdef double s, total = 0.0
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(n):
                s = s + M[i * ld + k] * M[j * ld + k]
            if i == j:
                s = s - 1.0
            D[i * n + j] = s
            total = total + s * s
    return total


cdef inline void ortho_gradient(const double* M, Py_ssize_t n, Py_ssize_t ld, const double* D,
                                double* G) noexcept nogil:
    """G = 4 D M = d ||M M^T - I||_F^2 / dM (D from ortho_residual), G contiguous n x n."""
    cdef Py_ssize_t i, j, k
    cdef double d
    for i in range(n * n):
        G[i] = 0.0
    for i in range(n):
        for k in range(n):
            d = 4.0 * D[i * n + k]
            for j in range(n):
                G[i * n + j] = G[i * n + j] + d * M[k * ld + j]


cdef inline long ortho_pretrain(double* M, Py_ssize_t n, Py_ssize_t ld, double rate, double tol,
                                long max_steps, double* D, double* G) noexcept nogil:
    """OINIT: M -= rate * G until ||M M^T - I||_F^2 < tol (eq. 17-18).  A step that raises
    the loss is undone and the rate halved (plain descent at the paper's rate 0.1 diverges
    on matrices with singular values above about 1.8).  Returns the steps taken, -1 when
    ``max_steps`` did not suffice."""
    cdef long steps = 0
    cdef Py_ssize_t i, j
    cdef double loss = ortho_residual(M, n, ld, D), new
    while loss >= tol:
        if steps >= max_steps:
            return -1
        ortho_gradient(M, n, ld, D, G)
        for i in range(n):
            for j in range(n):
                M[i * ld + j] = M[i * ld + j] - rate * G[i * n + j]
        steps += 1
        new = ortho_residual(M, n, ld, D)
        if not (new <= loss):  # also catches NaN
            for i in range(n):
                for j in range(n):
                    M[i * ld + j] = M[i * ld + j] + rate * G[i * n + j]
            rate = 0.5 * rate
            loss = ortho_residual(M, n, ld, D)
        else:
            loss = new
    return steps


cdef inline void ortho_penalty(const double* M, Py_ssize_t n, Py_ssize_t ld, double lam,
                               double* grad, double* D, double* G) noexcept nogil:
    """OPEN: grad -= lam * 4 (M M^T - I) M on the matching entries of ``grad`` (same layout as
    M): the penalty lam ||M M^T - I||_F^2 of eq. 29-31 on a gradient of the log-likelihood
    (which the kernels ascend)."""
    cdef Py_ssize_t i, j
    ortho_residual(M, n, ld, D)
    ortho_gradient(M, n, ld, D, G)
    for i in range(n):
        for j in range(n):
            grad[i * ld + j] = grad[i * ld + j] - lam * G[i * n + j]
