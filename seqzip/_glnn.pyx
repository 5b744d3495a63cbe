# cython: language_level=3
"""Cython kernels of GLNN, GNN and RNN over a sequence (000 Sect. 1.2 and 2).

Stateless functions on typed memoryviews, mirroring :mod:`seqzip.glnn_reference` line by line
in meaning (the tests hold them to it at 1e-12).  Layout:

* ``incoming`` (N+1, K) int64: the units feeding unit j, ``incoming[j, 0] = 0`` (the bias);
* ``tau`` (N+1, K, C): C = A for glnn/gnn (gated), C = 1 for rnn (not gated);
* ``rho`` (N+1, A): RNN input weights (ignored by glnn/gnn);
* ``V``, ``a`` (T+1, N+1); ``pi`` (T, A); column 0 of ``a`` is the always-on unit.

Kinds: 0 = glnn, 1 = gnn, 2 = rnn.  Activations: 0 = tanh, 1 = logistic.  All transcendental
functions are the deterministic ones of ``_detmath``.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t

from seqzip._detmath cimport det_exp, det_log, det_logistic, det_softmax, det_tanh

cnp.import_array()

cdef enum:
    GLNN = 0
    GNN = 1
    RNN = 2


cdef inline double _act(int logistic, double v) noexcept nogil:
    return det_logistic(v) if logistic else det_tanh(v)


cdef inline double _act_prime(int logistic, double a) noexcept nogil:
    """s'(V) written through a = s(V)."""
    return a * (1.0 - a) if logistic else 1.0 - a * a


def py_exp(double x):
    return det_exp(x)


def py_log(double x):
    return det_log(x)


def py_tanh(double x):
    return det_tanh(x)


def forward(int kind, int logistic, const int64_t[:, ::1] incoming, const double[:, ::1] w,
            const double[:, :, ::1] tau, const double[:, ::1] rho, const double[::1] V0,
            const int64_t[::1] x, const double[::1] chi,
            double[:, ::1] V, double[:, ::1] a, double[:, ::1] pi,  # OUT: V, a, pi
            const double[:, ::1] offset=None):
    """Run the network over ``x``; return sum_t chi_t log pi_t(x_t) (natural log).

    ``offset`` (T, A), optional, is added to the logits at each step (the online model's
    expert log-probabilities); it does not depend on the parameters, so BPTT is unchanged.
    """
    cdef Py_ssize_t T = x.shape[0], N = incoming.shape[0] - 1, K = incoming.shape[1]
    cdef Py_ssize_t A = w.shape[1], t, j, k, c
    cdef double s, loglik = 0.0
    cdef bint shifted = offset is not None
    if shifted and (offset.shape[0] != T or offset.shape[1] != A):
        raise ValueError("offset must have shape (len(x), A)")
    with nogil:
        for j in range(N + 1):
            V[0, j] = V0[j]
        for t in range(T + 1):
            a[t, 0] = 1.0
            for j in range(1, N + 1):
                a[t, j] = _act(logistic, V[t, j])
            if t == T:
                break
            det_softmax(&a[t, 0], &w[0, 0], &pi[t, 0], N + 1, A,
                        &offset[t, 0] if shifted else NULL)
            if chi[t] != 0.0:
                loglik = loglik + chi[t] * det_log(pi[t, x[t]])
            c = x[t] if kind != RNN else 0
            V[t + 1, 0] = 0.0
            for j in range(1, N + 1):
                s = V[t, j] if kind == GLNN else 0.0
                if kind == RNN:
                    s = s + rho[j, x[t]]
                for k in range(K):
                    s = s + tau[j, k, c] * a[t, incoming[j, k]]
                V[t + 1, j] = s
    return loglik


def backward(int kind, int logistic, const int64_t[:, ::1] incoming, const double[:, ::1] w,
             const double[:, :, ::1] tau, const int64_t[::1] x, const double[::1] chi,
             const double[:, ::1] a, const double[:, ::1] pi,
             double[:, ::1] B, double[:, ::1] W, double[:, :, ::1] G_tau,
             double[:, ::1] G_rho):  # OUT: B, W, G_tau, G_rho (zeroed here)
    """BPTT: B (eq. 22 and its non-leaky forms), W (eq. 17), G (eq. 25), rho gradient."""
    cdef Py_ssize_t T = x.shape[0], N = incoming.shape[0] - 1, K = incoming.shape[1]
    cdef Py_ssize_t A = w.shape[1], t, i, j, k, y, c
    cdef double mean, err, b
    cdef double[::1] back = np.zeros(N + 1)
    B[:, :] = 0.0
    W[:, :] = 0.0
    G_tau[:, :, :] = 0.0
    G_rho[:, :] = 0.0
    with nogil:
        for t in range(T - 1, -1, -1):
            c = x[t] if kind != RNN else 0
            for i in range(N + 1):
                back[i] = 0.0
            for j in range(1, N + 1):
                b = B[t + 1, j]
                for k in range(K):
                    back[incoming[j, k]] = back[incoming[j, k]] + tau[j, k, c] * b
            for i in range(1, N + 1):
                err = 0.0
                if chi[t] != 0.0:
                    mean = 0.0
                    for y in range(A):
                        mean = mean + pi[t, y] * w[i, y]
                    err = chi[t] * (w[i, x[t]] - mean)
                B[t, i] = _act_prime(logistic, a[t, i]) * (err + back[i])
                if kind == GLNN:
                    B[t, i] = B[t, i] + B[t + 1, i]
        for t in range(T):
            if chi[t] != 0.0:
                for i in range(N + 1):
                    for y in range(A):
                        W[i, y] = W[i, y] - chi[t] * a[t, i] * pi[t, y]
                    W[i, x[t]] = W[i, x[t]] + chi[t] * a[t, i]
            c = x[t] if kind != RNN else 0
            for j in range(1, N + 1):
                b = B[t + 1, j]
                for k in range(K):
                    G_tau[j, k, c] = G_tau[j, k, c] + a[t, incoming[j, k]] * b
                if kind == RNN:
                    G_rho[j, x[t]] = G_rho[j, x[t]] + b


def modulus_rbpm(int kind, int logistic, const int64_t[:, ::1] incoming,
                 const double[:, ::1] w, const double[:, :, ::1] tau, const int64_t[::1] x,
                 const double[::1] chi, const double[:, ::1] a, const double[:, ::1] pi,
                 double[:, ::1] m):  # OUT
    """The recurrent backpropagated modulus m~ (eq. 24; non-leaky forms for gnn and rnn)."""
    cdef Py_ssize_t T = x.shape[0], N = incoming.shape[0] - 1, K = incoming.shape[1]
    cdef Py_ssize_t A = w.shape[1], t, i, j, k, y, c, src
    cdef double mean, second, sp, weight
    cdef double[::1] spread = np.zeros(N + 1), self_tau = np.zeros(N + 1)
    m[:, :] = 0.0
    with nogil:
        for t in range(T - 1, -1, -1):
            c = x[t] if kind != RNN else 0
            for i in range(N + 1):
                spread[i] = 0.0
                self_tau[i] = 0.0
            for j in range(1, N + 1):
                for k in range(K):
                    src = incoming[j, k]
                    weight = tau[j, k, c]
                    if src == j and kind == GLNN:
                        self_tau[src] = weight
                    else:
                        spread[src] = spread[src] + weight * weight * m[t + 1, j]
            for i in range(1, N + 1):
                sp = _act_prime(logistic, a[t, i])
                mean = 0.0
                second = 0.0
                for y in range(A):
                    mean = mean + pi[t, y] * w[i, y]
                    second = second + pi[t, y] * w[i, y] * w[i, y]
                m[t, i] = sp * sp * (chi[t] * (second - mean * mean) + spread[i])
                if kind == GLNN:
                    m[t, i] = m[t, i] + (1.0 + self_tau[i] * sp) * (1.0 + self_tau[i] * sp) \
                        * m[t + 1, i]


def transition_metrics(int kind, const int64_t[:, ::1] incoming, const int64_t[::1] x,
                       const double[:, ::1] a, const double[:, ::1] m, double eps,
                       double[:, :, :, ::1] M):  # OUT (N+1, C, K, K)
    """M~^{(jy)} (eq. 26) for every unit j and symbol y (C = A; for rnn C = 1: one block over
    tau only), damped by eps on the diagonal."""
    cdef Py_ssize_t T = x.shape[0], N = incoming.shape[0] - 1, K = incoming.shape[1]
    cdef Py_ssize_t t, j, k, l, c
    cdef double weight, ak
    M[:, :, :, :] = 0.0
    with nogil:
        for t in range(T):
            c = x[t] if kind != RNN else 0
            for j in range(1, N + 1):
                weight = m[t + 1, j]
                for k in range(K):
                    ak = a[t, incoming[j, k]] * weight
                    for l in range(K):
                        M[j, c, k, l] = M[j, c, k, l] + ak * a[t, incoming[j, l]]
        for j in range(1, N + 1):
            for c in range(M.shape[1]):
                for k in range(K):
                    M[j, c, k, k] = M[j, c, k, k] + eps


def rnn_quasi_diagonal_metric(const int64_t[:, ::1] incoming, const int64_t[::1] x,
                              const double[:, ::1] a, const double[:, ::1] m, double eps,
                              double[:, ::1] diag, double[:, ::1] cross):  # OUT (N+1, K+A)
    """Quasi-diagonal metric of an RNN unit over its inputs: K incoming activities (tau), then
    one indicator per symbol (rho); ``cross`` is against the bias (input 0)."""
    cdef Py_ssize_t T = x.shape[0], N = incoming.shape[0] - 1, K = incoming.shape[1]
    cdef Py_ssize_t t, j, k
    cdef double weight, ak
    diag[:, :] = 0.0
    cross[:, :] = 0.0
    with nogil:
        for t in range(T):
            for j in range(1, N + 1):
                weight = m[t + 1, j]
                for k in range(K):
                    ak = a[t, incoming[j, k]]
                    diag[j, k] = diag[j, k] + ak * ak * weight
                    cross[j, k] = cross[j, k] + ak * weight
                diag[j, K + x[t]] = diag[j, K + x[t]] + weight
                cross[j, K + x[t]] = cross[j, K + x[t]] + weight
        for j in range(1, N + 1):
            for k in range(diag.shape[1]):
                diag[j, k] = diag[j, k] + eps


def writing_hessian(const double[:, ::1] a, const double[:, ::1] pi, const double[::1] chi,
                    const double[::1] eps, double[:, ::1] h_diag,
                    double[:, ::1] h_cross):  # OUT (N+1, A) each
    """h_ii^y + eps_y (eq. 18; row 0 is h_00^y) and h_0i^y (eq. 19)."""
    cdef Py_ssize_t T = pi.shape[0], A = pi.shape[1], N = a.shape[1] - 1, t, i, y
    cdef double weight
    h_diag[:, :] = 0.0
    h_cross[:, :] = 0.0
    with nogil:
        for t in range(T):
            if chi[t] == 0.0:
                continue
            for y in range(A):
                weight = chi[t] * pi[t, y] * (1.0 - pi[t, y])
                for i in range(N + 1):
                    h_diag[i, y] = h_diag[i, y] + a[t, i] * a[t, i] * weight
                    h_cross[i, y] = h_cross[i, y] + a[t, i] * weight
        for i in range(N + 1):
            for y in range(A):
                h_diag[i, y] = h_diag[i, y] + eps[y]
