# cython: language_level=3
"""Ollivier's networks: GLNN, GNN and RNN over a sequence (000 Sect. 1.2 and 2), and the GLNN
trained online while coding.

The batch kernels are stateless functions on typed memoryviews, mirroring
:mod:`seqzip.reference.glnn` line by line in meaning (the tests hold them to it at 1e-12); the
offline trainer (:mod:`seqzip.research.glnn`) and the online model's window step use them.
Layout:

* ``incoming`` (N+1, K) int64: the units feeding unit j, ``incoming[j, 0] = 0`` (the bias);
* ``tau`` (N+1, K, C): C = A for glnn/gnn (gated), C = 1 for rnn (not gated);
* ``rho`` (N+1, A): RNN input weights (ignored by glnn/gnn);
* ``V``, ``a`` (T+1, N+1); ``pi`` (T, A); column 0 of ``a`` is the always-on unit.

Kinds: 0 = glnn, 1 = gnn, 2 = rnn.  Activations: 0 = tanh, 1 = logistic.  All transcendental
functions are the deterministic ones of ``detmath.pxd``.

:class:`OnlineGLNN` is the model of the coding loop: per symbol, the output layer and gates of
:mod:`seqzip._kernels.online`; every ``interval`` symbols the transition weights take one
Riemannian step on the last ``window`` symbols: truncated BPTT from the stored state at the
window's start (eq. 22, 25), the RUOP or RBPM modulus (eq. 23-24), the metric of eq. 26 added to
a running sum decayed by ``decay`` per window, and tau += rate M^-1 G (full d x d solve, eq.
27-28, or quasi-diagonal, eq. 34-35); the step is kept if it raises the window's
log-likelihood (rate x1.1, capped), otherwise undone (rate /2).

    >>> incoming, w, tau, V0 = initial_parameters(3, 2, 0.5, 2, seed=0)
    >>> x = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    >>> V, a, pi = np.zeros((6, 4)), np.zeros((6, 4)), np.zeros((5, 2))
    >>> loglik = forward(0, 0, incoming, w, tau, np.zeros((1, 1)), V0, x, np.ones(5), V, a, pi)
    >>> round(float(loglik / np.log(0.5)), 12)   # zero writing weights: one bit per symbol
    5.0
"""
cimport cython
import numpy as np
from libc.math cimport sqrt
from libc.stdint cimport int64_t, uint64_t

from seqzip._kernels.detmath cimport det_exp, det_log, det_logistic, det_softmax, det_tanh
from seqzip._kernels.online cimport OnlineNetwork

from seqzip._core import take
from seqzip._kernels.prng cimport splitmix64, splitmix_uniform
from seqzip._kernels.qd cimport cholesky_solve, qd_solve

cdef enum:
    GLNN = 0
    GNN = 1
    RNN = 2


cdef inline double _act(int logistic, double v) noexcept nogil:
    return det_logistic(v) if logistic else det_tanh(v)


cdef inline double _act_prime(int logistic, double a) noexcept nogil:
    """s'(V) written through a = s(V)."""
    return a * (1.0 - a) if logistic else 1.0 - a * a


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


# ---------------------------------------------------------------- the online GLNN

@cython.final
cdef class OnlineGLNN(OnlineNetwork):
    """Ollivier's GLNN trained online (see the module docstring).

    Args:
        config: the model's config (window, interval, metric, decay, eps, rate_tau,
            rate_tau_max and the output layer's fields of ``OnlineNetwork``).
        incoming (N+1, K), w (N+1, A), tau (N+1, K, A), V0 (N+1,): the graph and the initial
            parameters (``seqzip.models.glnn.initial_parameters``).
        experts: symbol-mode kernels whose log-probabilities join the logits.
    """
    cdef readonly Py_ssize_t n_units, n_incoming
    cdef readonly double rate_tau, rate_tau_max
    cdef double decay, eps
    cdef bint rbpm, full
    cdef int64_t[:, ::1] incoming          # (N+1, K)
    cdef double[:, ::1] w                  # (N+1, A) writing weights
    cdef double[:, :, ::1] tau, tau_saved  # (N+1, K, A) transition weights
    cdef double[:, :, :, ::1] M, Mw        # (N+1, A, K, K) running and window metrics
    cdef double[::1] V                     # (N+1,) leaky states
    cdef double[:, ::1] starts             # (window, N+1) the state before each symbol
    cdef readonly long steps_kept, steps_undone

    def __init__(self, config, incoming, w, tau, V0, list experts=None):
        self.incoming = np.ascontiguousarray(incoming, dtype=np.int64)
        self.w = np.array(w, dtype=np.float64, order="C")
        self.tau = np.array(tau, dtype=np.float64, order="C")
        self.tau_saved = np.array(self.tau)
        N = self.incoming.shape[0] - 1
        K = self.incoming.shape[1]
        A = self.w.shape[1]
        if self.w.shape[0] != N + 1 or self.tau.shape[0] != N + 1 or \
                self.tau.shape[1] != K or self.tau.shape[2] != A or len(V0) != N + 1:
            raise ValueError("incoming, w, tau and V0 disagree on their shapes")
        self.n_units, self.n_incoming = N, K
        self.setup_network(config, N + 1, A, experts or [], True)
        self.decay, self.eps = config.decay, config.eps
        self.rbpm = config.metric.endswith("rbpm")
        self.full = not config.metric.startswith("qd")
        self.rate_tau, self.rate_tau_max = config.rate_tau, config.rate_tau_max
        self.M = np.zeros((N + 1, A, K, K))
        self.Mw = np.zeros((N + 1, A, K, K))
        self.V = np.array(V0, dtype=np.float64)
        self.starts = np.zeros((self.window, N + 1))
        self.steps_kept = self.steps_undone = 0
        self._activate()

    cdef void _activate(self) noexcept nogil:
        cdef Py_ssize_t j
        self.feat[0] = 1.0
        for j in range(1, self.n_units + 1):
            self.feat[j] = det_tanh(self.V[j])

    cdef double* output_weights(self) noexcept nogil:
        return &self.w[0, 0]

    cdef void record_state(self, Py_ssize_t slot) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.n_units + 1):
            self.starts[slot, j] = self.V[j]

    cdef void transition(self, int x) noexcept nogil:
        cdef Py_ssize_t j, k
        cdef double s
        for j in range(1, self.n_units + 1):
            s = self.V[j]
            for k in range(self.n_incoming):
                s = s + self.tau[j, k, x] * self.feat[self.incoming[j, k]]
            self.V[j] = s
        self._activate()

    def _window(self):
        """(symbols, state before the first, experts' offsets) of the window in time order."""
        return (self.window_symbols(), np.asarray(self.starts[self.ring_index(0)]).copy(),
                self.window_offsets())

    def _window_loglik(self, x, start, offset, V, a, pi):
        return forward(0, 0, self.incoming, self.w, self.tau, np.zeros((1, 1)), start, x,
                       np.ones(len(x)), V, a, pi, offset)

    cdef int train_window(self) except -1:
        cdef Py_ssize_t L = self.window, N = self.n_units, K = self.n_incoming
        cdef Py_ssize_t A = self.A, j, y, k, l
        x, start, offset = self._window()
        V = np.zeros((L + 1, N + 1))
        a = np.zeros((L + 1, N + 1))
        pi = np.zeros((L, A))
        before = self._window_loglik(x, start, offset, V, a, pi)
        B = np.zeros((L + 1, N + 1))
        G = np.zeros((N + 1, K, A))
        backward(0, 0, self.incoming, self.w, self.tau, x, np.ones(L), a, pi, B,
                 np.zeros((N + 1, A)), G, np.zeros((N + 1, A)))
        if self.rbpm:
            m = np.zeros((L + 1, N + 1))
            modulus_rbpm(0, 0, self.incoming, self.w, self.tau, x, np.ones(L), a, pi, m)
        else:
            m = np.ascontiguousarray(B * B)
        transition_metrics(0, self.incoming, x, a, m, 0.0, self.Mw)
        cdef double[:, :, ::1] g = G
        cdef double[::1] grad = np.empty(K), diag = np.empty(K), cross = np.empty(K)
        cdef double[::1] step = np.empty(K), work = np.empty(K * K)
        cdef double decay = self.decay, eps = self.eps, rate = self.rate_tau
        for j in range(1, N + 1):
            for y in range(A):
                for k in range(K):
                    for l in range(K):
                        self.M[j, y, k, l] = decay * self.M[j, y, k, l] + self.Mw[j, y, k, l]
        self.tau_saved[:, :, :] = self.tau
        for j in range(1, N + 1):
            for y in range(A):
                for k in range(K):
                    grad[k] = g[j, k, y]
                    diag[k] = self.M[j, y, k, k] + eps
                    cross[k] = self.M[j, y, 0, k]
                if self.full:
                    for k in range(K):
                        step[k] = grad[k]
                        for l in range(K):
                            work[k * K + l] = self.M[j, y, k, l] + (eps if k == l else 0.0)
                    if cholesky_solve(&work[0], &step[0], K) != 0:
                        qd_solve(&grad[0], &diag[0], &cross[0], &step[0], K, 1)
                else:
                    qd_solve(&grad[0], &diag[0], &cross[0], &step[0], K, 1)
                for k in range(K):
                    self.tau[j, k, y] = self.tau[j, k, y] + rate * step[k]
        after = self._window_loglik(x, start, offset, V, a, pi)
        if after > before:
            self.rate_tau = min(self.rate_tau * 1.1, self.rate_tau_max)
            self.steps_kept += 1
        elif after == before:
            # a tie (a saturated network: no gradient) keeps the step but not the rate's
            # growth: halving on ties drove tiny rates to 0, growing on them drove rates (and
            # tau, and the leaky states) to overflow on plrabn12.txt
            self.steps_kept += 1
        else:
            self.tau[:, :, :] = self.tau_saved
            self.rate_tau = self.rate_tau * 0.5
            self.steps_undone += 1
        return 0

    # ------------------------------------------------------------ test hooks

    def py_window_objective(self, tau=None):
        """The current window's log-likelihood (natural log) under ``tau`` (default: the
        current transition weights), from the stored state at the window's start."""
        x, start, offset = self._window()
        L, N, A = self.window, self.n_units, self.A
        saved = self.tau
        if tau is not None:
            self.tau = np.ascontiguousarray(tau, dtype=np.float64)
        try:
            return self._window_loglik(x, start, offset, np.zeros((L + 1, N + 1)),
                                       np.zeros((L + 1, N + 1)), np.zeros((L, A)))
        finally:
            self.tau = saved

    def py_window_gradient(self):
        """d(window log-likelihood)/d tau by truncated BPTT over the window."""
        x, start, offset = self._window()
        L, N, A, K = self.window, self.n_units, self.A, self.n_incoming
        V, a, pi = np.zeros((L + 1, N + 1)), np.zeros((L + 1, N + 1)), np.zeros((L, A))
        self._window_loglik(x, start, offset, V, a, pi)
        G = np.zeros((N + 1, K, A))
        backward(0, 0, self.incoming, self.w, self.tau, x, np.ones(L), a, pi,
                 np.zeros((L + 1, N + 1)), np.zeros((N + 1, A)), G, np.zeros((N + 1, A)))
        return G

    def parameters(self):
        """Copies of (w, tau, V, (rate_w, rate_tau)) for inspection and tests."""
        return (np.array(self.w), np.array(self.tau), np.array(self.V),
                (self.rate_w, self.rate_tau))


# ---------------------------------------------------------------- initialisation


    def get_state(self):
        """The network's weights, leaky states, metrics and step counters on top of
        ``OnlineNetwork.get_state``."""
        state = OnlineNetwork.get_state(self)
        for name, mv in self._arrays():
            state[name] = np.array(mv)
        state["glnn_counters"] = np.array([self.steps_kept, self.steps_undone], dtype=np.int64)
        state["rate_tau"] = np.array(self.rate_tau)
        return state

    def set_state(self, dict state):
        """``OnlineNetwork.set_state`` plus the graph (every edge from a unit of the network),
        the arrays' types and shapes and the counters, all checked before anything changes."""
        counters = take(state, "glnn_counters", np.int64, (2,))
        incoming = take(state, "incoming", np.int64, np.asarray(self.incoming).shape)
        if incoming.min() < 0 or incoming.max() > self.n_units:
            raise ValueError("model state holds edges from units the network lacks")
        if counters.min() < 0:
            raise ValueError("model state holds impossible counters")
        arrays = [(mv, take(state, name, np.asarray(mv).dtype, np.asarray(mv).shape))
                  for name, mv in self._arrays()]
        rate_tau = float(take(state, "rate_tau", np.float64, ()))
        OnlineNetwork.set_state(self, state)
        for mv, value in arrays:
            np.asarray(mv)[...] = value
        self.steps_kept, self.steps_undone = counters[0], counters[1]
        self.rate_tau = rate_tau

    def _arrays(self):
        return [("incoming", self.incoming), ("w", self.w), ("tau", self.tau),
                ("tau_saved", self.tau_saved), ("M", self.M), ("Mw", self.Mw), ("V", self.V),
                ("starts", self.starts)]

def initial_parameters(Py_ssize_t n_units, Py_ssize_t connectivity, double alpha,
                       Py_ssize_t A, uint64_t seed):
    """Graph and parameters of 000 Sect. 2 (eq. 30-33) with uniform symbol frequencies (the
    only ones both sides know at the start): ``(incoming, w, tau, V0)``.

    Each unit j has ``d = min(connectivity, N)`` incoming edges: itself and d - 1 others drawn
    by a partial Fisher-Yates shuffle from splitmix64(seed); tau[j, 0, y] = beta_j + mu_j / 4
    (u_y - mean u) with mu_j = 1 / (j + 1), beta_j = -sqrt(alpha (alpha - mu_j)), the self-loop
    -alpha, and V0 = atanh(beta_j / alpha) (seqzip's own log): the same bits everywhere.

        >>> incoming, w, tau, V0 = initial_parameters(4, 3, 0.5, 3, seed=1)
        >>> incoming.shape, w.shape, tau.shape, bool(abs(V0[1]) < 1)
        ((5, 4), (5, 3), (5, 4, 3), True)
    """
    cdef Py_ssize_t N = n_units, d = min(connectivity, n_units), j, k, i, pick, m
    cdef uint64_t state = seed
    cdef double mu, beta, mean, z
    if N < 1 or d < 1 or A < 1:
        raise ValueError("n_units, connectivity and A must be positive")
    incoming_arr = np.zeros((N + 1, d + 1), dtype=np.int64)
    cdef int64_t[:, ::1] incoming = incoming_arr
    cdef int64_t[::1] others = np.zeros(max(N - 1, 1), dtype=np.int64)
    cdef int64_t swap
    for j in range(1, N + 1):
        m = 0
        for i in range(1, N + 1):
            if i != j:
                others[m] = i
                m += 1
        for k in range(d - 1):  # partial Fisher-Yates
            pick = k + <Py_ssize_t>(splitmix64(&state) % <uint64_t>(m - k))
            swap = others[k]
            others[k] = others[pick]
            others[pick] = swap
        for k in range(1, d - 1):  # sort the d - 1 picks (insertion sort)
            swap = others[k]
            i = k - 1
            while i >= 0 and others[i] > swap:
                others[i + 1] = others[i]
                i -= 1
            others[i + 1] = swap
        incoming[j, 1] = j
        for k in range(d - 1):
            incoming[j, 2 + k] = others[k]
    tau_arr = np.zeros((N + 1, d + 1, A))
    V0_arr = np.zeros(N + 1)
    cdef double[:, :, ::1] tau = tau_arr
    cdef double[::1] V0 = V0_arr
    cdef double[::1] u = np.zeros(A)
    for j in range(1, N + 1):
        mu = 1.0 / (j + 1)
        beta = -sqrt(alpha * (alpha - mu)) if alpha > mu else 0.0
        mean = 0.0
        for i in range(A):
            u[i] = splitmix_uniform(&state)
            mean = mean + u[i]
        mean = mean / A
        for i in range(A):
            tau[j, 0, i] = beta + mu / 4 * (u[i] - mean)
            tau[j, 1, i] = -alpha
        z = beta / alpha
        V0[j] = 0.5 * det_log((1.0 + z) / (1.0 - z))  # atanh, with seqzip's own log
    return incoming_arr, np.zeros((N + 1, A)), tau_arr, V0_arr
