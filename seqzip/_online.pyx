# cython: language_level=3
"""Online GLNN for the coding loop: Ollivier's model and metrics applied while coding.

Per symbol: ``predict`` is the softmax of a.w (eq. 14); ``update(x)`` updates the writing
weights with the quasi-diagonal inverse of a decayed running Hessian (eq. 17-21, one sample per
symbol), records the step in the window, and moves the state (Def. 5).  Every ``interval``
symbols the transition weights take one Riemannian step on the last ``window`` symbols: truncated
BPTT from the stored state at the window's start (eq. 22, 25), the RUOP or RBPM modulus (eq.
23-24), the metric of eq. 26 added to a running sum decayed by ``decay`` per window, and
tau += rate M^-1 G (full d x d solve, eq. 27-28, or quasi-diagonal, eq. 34-35); the step is kept
if it raises the window's log-likelihood (rate x1.1), otherwise undone (rate /2).

Everything runs in fixed-order loops with seqzip's deterministic exp/log/tanh: the encoder and
the decoder, whatever their build, compute the same bits.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport sqrt  # IEEE 754 rounds sqrt correctly: the same bits everywhere
from libc.stdint cimport int64_t

from seqzip._detmath cimport det_tanh
from seqzip._mixing cimport expert_logs, floor_mix, gate_step, mixed_softmax, writing_step
from seqzip import _glnn

cnp.import_array()


cdef void _qd_solve(const double* grad, const double* diag, const double* cross, double* out,
                    Py_ssize_t n, Py_ssize_t stride) noexcept nogil:
    """Quasi-diagonal inverse (eq. 34-35) along a strided axis; index 0 is the bias."""
    cdef Py_ssize_t i
    cdef double m00 = diag[0], g0 = grad[0], bias = g0 / m00, c, step
    for i in range(1, n):
        c = cross[i * stride]
        step = (grad[i * stride] - g0 * c / m00) / (diag[i * stride] - c * c / m00)
        out[i * stride] = step
        bias = bias - c / m00 * step
    out[0] = bias


cdef int _cholesky_solve(double* M, double* b, Py_ssize_t n) noexcept nogil:
    """Solve M x = b in place (b <- x) for symmetric positive-definite M (overwritten)."""
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




cdef class OnlineGLNN:
    cdef readonly Py_ssize_t n_units, n_incoming, alphabet_size, window, interval
    cdef readonly double rate_w, rate_tau, rate_tau_max
    cdef double decay, eps, writing_decay, writing_eps
    cdef int rbpm, full
    cdef cnp.ndarray incoming, w, tau, tau_saved, h_diag, h_cross, M, Mw
    cdef cnp.ndarray V, a, probs, raw, xs, starts, V0
    # experts: log-probabilities of other models added to the logits with weights beta
    cdef readonly Py_ssize_t n_experts
    cdef cnp.ndarray lexp, U, u_diag, u_cross, beta, offset, ring_off
    cdef double beta_eps, rate_beta
    cdef Py_ssize_t filled, pos, since_update
    cdef readonly long steps_kept, steps_undone
    cdef bint predicted

    def __init__(self, incoming, w, tau, V0, Py_ssize_t window, Py_ssize_t interval,
                 double decay, double eps, double writing_decay, double writing_eps,
                 bint rbpm, bint full, double rate_w, double rate_tau,
                 double writing_prior=256.0, beta=(), double beta_eps=1.0,
                 double rate_beta=1.0, double beta_prior=64.0,
                 double rate_tau_max=1.0):
        self.incoming = np.ascontiguousarray(incoming, dtype=np.int64)
        self.w = np.ascontiguousarray(w, dtype=np.float64).copy()
        self.tau = np.ascontiguousarray(tau, dtype=np.float64).copy()
        self.tau_saved = self.tau.copy()
        self.V0 = np.ascontiguousarray(V0, dtype=np.float64).copy()
        N = self.incoming.shape[0] - 1
        K = self.incoming.shape[1]
        A = self.w.shape[1]
        self.n_units, self.n_incoming, self.alphabet_size = N, K, A
        self.window, self.interval = window, interval
        self.decay, self.eps = decay, eps
        self.writing_decay, self.writing_eps = writing_decay, writing_eps
        self.rbpm, self.full = rbpm, full
        self.rate_w, self.rate_tau, self.rate_tau_max = rate_w, rate_tau, rate_tau_max
        # Prior curvature worth ``writing_prior`` samples at the uniform distribution, with
        # activities of variance 1/4 uncorrelated with the bias: without it the first steps
        # are Newton steps on single samples and saturate the softmax.
        v0 = (1.0 / A) * (1.0 - 1.0 / A)
        self.h_diag = np.full((N + 1, A), writing_prior * v0 * 0.25)
        self.h_diag[0] = writing_prior * v0
        self.h_cross = np.zeros((N + 1, A))
        self.M = np.zeros((N + 1, A, K, K))
        self.Mw = np.zeros((N + 1, A, K, K))
        self.V = self.V0.copy()
        self.a = np.empty(N + 1)
        self._activate()
        self.probs = np.empty(A)
        self.raw = np.empty(A)  # the softmax itself, for the gradients
        self.xs = np.zeros(window, dtype=np.int64)
        self.starts = np.zeros((window, N + 1))
        self.filled = 0
        self.pos = 0
        self.since_update = 0
        self.steps_kept = 0
        self.steps_undone = 0
        self.predicted = False
        beta = np.array(beta, dtype=np.float64).reshape(-1)
        E = self.n_experts = beta.shape[0]
        self.beta_eps, self.rate_beta = beta_eps, rate_beta
        # expert e's weight is beta_e = U[:, e] . a, gated by the network's state; U starts
        # with the given constant weights on the always-on unit
        self.U = np.zeros((N + 1, max(E, 1)))
        self.U[0, :E] = beta
        self.beta = np.zeros(max(E, 1))
        # curvature prior: ``beta_prior`` samples of unit variance, activities of variance 1/4
        self.u_diag = np.full((N + 1, max(E, 1)), beta_prior * 0.25)
        self.u_diag[0] = beta_prior
        self.u_cross = np.zeros((N + 1, max(E, 1)))
        self.lexp = np.zeros((max(E, 1), A))
        self.offset = np.zeros(A)
        self.ring_off = np.zeros((window, A))

    def set_expert(self, Py_ssize_t e, const double[::1] probs):
        """Give expert ``e``'s distribution of the next symbol (before ``predict``)."""
        cdef double[:, ::1] lexp = self.lexp
        if e < 0 or e >= self.n_experts or probs.shape[0] != self.alphabet_size:
            raise ValueError("expert index or distribution size out of range")
        expert_logs(&probs[0], &lexp[e, 0], self.alphabet_size)

    cdef void _activate(self):
        cdef double[::1] V = self.V, a = self.a
        cdef Py_ssize_t j
        a[0] = 1.0
        for j in range(1, V.shape[0]):
            a[j] = det_tanh(V[j])

    def predict(self):
        """Distribution of the next symbol: float64, C-contiguous, shape (A,).

        The softmax of a.w (eq. 14) plus the experts' gated log-probabilities, mixed with a
        uniform floor of total mass 2^-16 (``_mixing.floor_mix``).
        """
        cdef double[:, ::1] w = self.w, lexp = self.lexp, U = self.U
        cdef double[::1] a = self.a, p = self.raw, out = self.probs, off = self.offset
        cdef double[::1] beta = self.beta
        cdef Py_ssize_t A = self.alphabet_size
        mixed_softmax(&a[0], &w[0, 0], self.n_units + 1, A, &lexp[0, 0], &U[0, 0],
                      self.n_experts, &beta[0], &off[0], &p[0])
        floor_mix(&p[0], &out[0], A)
        self.predicted = True
        return self.probs

    def update(self, Py_ssize_t symbol):
        """Learn ``symbol``: writing step, record, state transition, periodic tau step."""
        if symbol < 0 or symbol >= self.alphabet_size:
            raise ValueError(f"symbol {symbol} outside alphabet of size {self.alphabet_size}")
        if not self.predicted:
            self.predict()
        self.predicted = False
        self._writing_step(symbol)
        self._expert_step(symbol)
        self._record(symbol)
        self._transition(symbol)
        self.since_update += 1
        if self.since_update >= self.interval and self.filled == self.window:
            self.since_update = 0
            self._transition_step()

    cdef void _writing_step(self, Py_ssize_t x):
        cdef double[:, ::1] w = self.w, hd = self.h_diag, hc = self.h_cross
        cdef double[::1] a = self.a, p = self.raw
        writing_step(&a[0], self.n_units + 1, &p[0], x, self.alphabet_size, &hd[0, 0],
                     &hc[0, 0], self.writing_decay, self.writing_eps, self.rate_w, &w[0, 0])

    cdef void _expert_step(self, Py_ssize_t x):
        """Quasi-diagonal step on the gates U[:, e] of each expert's weight."""
        cdef double[:, ::1] lexp = self.lexp, U = self.U, hd = self.u_diag, hc = self.u_cross
        cdef double[::1] p = self.raw, a = self.a
        gate_step(&a[0], self.n_units + 1, &p[0], x, self.alphabet_size, &lexp[0, 0],
                  self.n_experts, &hd[0, 0], &hc[0, 0], self.writing_decay, self.beta_eps,
                  self.rate_beta, &U[0, 0])

    cdef void _record(self, Py_ssize_t x):
        cdef double[:, ::1] starts = self.starts, ring = self.ring_off
        cdef double[::1] V = self.V, off = self.offset
        cdef int64_t[::1] xs = self.xs
        cdef Py_ssize_t j, e, y
        xs[self.pos] = x
        for j in range(self.n_units + 1):
            starts[self.pos, j] = V[j]
        if self.n_experts:
            for y in range(self.alphabet_size):
                ring[self.pos, y] = off[y]
        self.pos = (self.pos + 1) % self.window
        if self.filled < self.window:
            self.filled += 1

    cdef void _transition(self, Py_ssize_t x):
        cdef double[:, :, ::1] tau = self.tau
        cdef int64_t[:, ::1] inc = self.incoming
        cdef double[::1] V = self.V, a = self.a
        cdef Py_ssize_t j, k
        cdef double s
        for j in range(1, self.n_units + 1):
            s = V[j]
            for k in range(self.n_incoming):
                s = s + tau[j, k, x] * a[inc[j, k]]
            V[j] = s
        self._activate()

    def _window(self):
        """The last ``window`` symbols in time order, the state before the first, and the
        experts' logit offsets as they were when each symbol was coded (None without experts).

        The window objective holds those offsets fixed: the transition step improves what the
        network adds to the experts, not the gates (those have their own step).
        """
        order = (np.arange(self.window) + self.pos) % self.window
        offset = None
        if self.n_experts:
            offset = np.ascontiguousarray(self.ring_off[order])
        return (np.ascontiguousarray(self.xs[order]),
                np.ascontiguousarray(self.starts[order[0]]), offset)

    cdef double _window_loglik(self, x, start, offset, V, a, pi):
        return _glnn.forward(0, 0, self.incoming, self.w, self.tau, np.zeros((1, 1)), start,
                             x, np.ones(len(x)), V, a, pi, offset)

    def _transition_step(self):
        cdef Py_ssize_t L = self.window, N = self.n_units, K = self.n_incoming
        cdef Py_ssize_t A = self.alphabet_size, j, y, k, l
        x, start, offset = self._window()
        V = np.zeros((L + 1, N + 1))
        a = np.zeros((L + 1, N + 1))
        pi = np.zeros((L, A))
        before = self._window_loglik(x, start, offset, V, a, pi)
        B = np.zeros((L + 1, N + 1))
        W = np.zeros((N + 1, A))
        G = np.zeros((N + 1, K, A))
        _glnn.backward(0, 0, self.incoming, self.w, self.tau, x, np.ones(L), a, pi, B, W, G,
                       np.zeros((N + 1, A)))
        if self.rbpm:
            m = np.zeros((L + 1, N + 1))
            _glnn.modulus_rbpm(0, 0, self.incoming, self.w, self.tau, x, np.ones(L), a, pi, m)
        else:
            m = np.ascontiguousarray(B * B)
        _glnn.transition_metrics(0, self.incoming, x, a, m, 0.0, self.Mw)
        cdef double[:, :, :, ::1] M = self.M, Mw = self.Mw
        cdef double[:, :, ::1] g = G, tau = self.tau, saved = self.tau_saved
        cdef double[::1] grad = np.empty(K), diag = np.empty(K), cross = np.empty(K)
        cdef double[::1] step = np.empty(K), work = np.empty(K * K)
        cdef double decay = self.decay, eps = self.eps, rate = self.rate_tau
        for j in range(1, N + 1):
            for y in range(A):
                for k in range(K):
                    for l in range(K):
                        M[j, y, k, l] = decay * M[j, y, k, l] + Mw[j, y, k, l]
        saved[:, :, :] = tau
        for j in range(1, N + 1):
            for y in range(A):
                for k in range(K):
                    grad[k] = g[j, k, y]
                    diag[k] = M[j, y, k, k] + eps
                    cross[k] = M[j, y, 0, k]
                if self.full:
                    for k in range(K):
                        step[k] = grad[k]
                        for l in range(K):
                            work[k * K + l] = M[j, y, k, l] + (eps if k == l else 0.0)
                    if _cholesky_solve(&work[0], &step[0], K) != 0:
                        _qd_solve(&grad[0], &diag[0], &cross[0], &step[0], K, 1)
                else:
                    _qd_solve(&grad[0], &diag[0], &cross[0], &step[0], K, 1)
                for k in range(K):
                    tau[j, k, y] = tau[j, k, y] + rate * step[k]
        after = self._window_loglik(x, start, offset, V, a, pi)
        if after > before:
            self.rate_tau = min(self.rate_tau * 1.1, self.rate_tau_max)
            self.steps_kept += 1
        elif after == before:
            # a tie (a saturated network: no gradient) keeps the step but not the rate's growth:
            # halving on ties drove tiny rates to 0, growing on them drove rates (and tau, and
            # the leaky states) to overflow on plrabn12.txt
            self.steps_kept += 1
        else:
            tau[:, :, :] = saved
            self.rate_tau = self.rate_tau * 0.5
            self.steps_undone += 1

    def py_window_objective(self, tau=None):
        """Test hook: the current window's log-likelihood (natural log) under ``tau`` (default:
        the current transition weights), from the stored state at the window's start."""
        x, start, offset = self._window()
        L, N, A = self.window, self.n_units, self.alphabet_size
        saved = self.tau
        if tau is not None:
            self.tau = np.ascontiguousarray(tau, dtype=np.float64)
        try:
            return self._window_loglik(x, start, offset, np.zeros((L + 1, N + 1)),
                                       np.zeros((L + 1, N + 1)), np.zeros((L, A)))
        finally:
            self.tau = saved

    def py_window_gradient(self):
        """Test hook: d(window log-likelihood)/d tau by truncated BPTT over the window."""
        x, start, offset = self._window()
        L, N, A, K = self.window, self.n_units, self.alphabet_size, self.n_incoming
        V, a, pi = np.zeros((L + 1, N + 1)), np.zeros((L + 1, N + 1)), np.zeros((L, A))
        self._window_loglik(x, start, offset, V, a, pi)
        G = np.zeros((N + 1, K, A))
        _glnn.backward(0, 0, self.incoming, self.w, self.tau, x, np.ones(L), a, pi,
                       np.zeros((L + 1, N + 1)), np.zeros((N + 1, A)), G, np.zeros((N + 1, A)))
        return G

    def parameters(self):
        """Copies of (w, tau, V, rates) for inspection and tests."""
        return self.w.copy(), self.tau.copy(), self.V.copy(), (self.rate_w, self.rate_tau)

    def expert_weights(self):
        """The experts' weights beta at the last prediction, and their gates U."""
        return self.beta[:self.n_experts].copy(), self.U[:, :self.n_experts].copy()
