# cython: language_level=3
"""Online ReLU RNN trained by path-SGD or SGD while coding (003 Sect. 4).

The model of :mod:`seqzip.reference.relu_rnn` (read that first: layout, window, the path
regulariser), on the base of :mod:`seqzip._kernels.online` (output layer over (1, h), experts
and gates, the window ring).  Every ``interval`` symbols the parameters take one step on the
last ``window`` symbols: a forward pass from the stored state at the window's start, truncated
BPTT, the gradient's norm clipped, then

* SGD: ``theta += rate * g``;
* path-SGD (eq. 8): ``theta += rate * g / kappa`` with kappa = kappa^(1) of Theorem 3: the
  gradient, with respect to the squared weights, of the sum of the outputs of the
  squared-weight network on the all-ones input, unrolled over the window (a forward and a
  backward pass of that linear network).  kappa^(2), which only concerns R, is left out as in
  all of 003's experiments (Sect. 5.1: negligible; the reference and the batch trainer
  compute it).

Options of every network with a dense recurrent matrix (002): OINIT pre-trains R towards
orthogonality before coding (``ortho.pxd``); OPEN adds the penalty lam ||R R^T - I||^2 to
every step.  Only + - * / and seqzip's deterministic log/softmax, in a fixed order.

    >>> from types import SimpleNamespace
    >>> config = SimpleNamespace(hidden=4, window=6, interval=3, optimizer="path-sgd", lr=0.01,
    ...     sgd_lr=0.01, lr_decay=0.0, clip=4.0, kappa_floor=1e-6, open_penalty=0.0, rate_w=0.1,
    ...     writing_memory=2048, writing_eps=3.0, writing_prior=256.0, rate_beta=1.0,
    ...     beta_eps=300.0)
    >>> theta = np.full(4 * 3 + 4 + 16 + 5 * 3, 0.1)
    >>> k = OnlineReLURNN(config, theta, 3)
    >>> for s in [0, 1, 2] * 40:
    ...     _ = k.predict(); k.update(s)
    >>> k.steps, round(float(k.predict().sum()), 12)
    (39, 1.0)
"""
cimport cython
import numpy as np
from libc.math cimport sqrt
from libc.stdint cimport int64_t

from seqzip._kernels.detmath cimport det_log, det_softmax
from seqzip._kernels.online cimport OnlineNetwork
from seqzip._kernels.ortho cimport ortho_penalty, ortho_pretrain, ortho_residual

from seqzip._core import take

OPTIMIZERS = ("path-sgd", "sgd")


def layout(Py_ssize_t n, Py_ssize_t A):
    """Names and shapes of the parameters in ``theta``: E (A, n), b (n,), R (n, n),
    Wo (n + 1, A) (the reference's layout)."""
    return {"E": (A, n), "b": (n,), "R": (n, n), "Wo": (n + 1, A)}


def oinit_matrix(double[:, ::1] M, double rate=0.1, double tol=1e-6, long max_steps=100000,
                 bint must_converge=True):
    """OINIT in place on a square matrix (002 eq. 17-18): gradient descent on
    ||M M^T - I||_F^2 until below ``tol``; returns the steps taken.  After ``max_steps``
    steps it raises ValueError, or with ``must_converge=False`` stops there and returns -1 (M
    as far as the descent got: a model's step budget, the same on both sides).

        >>> M = 0.1 * np.random.default_rng(0).standard_normal((8, 8))
        >>> steps = oinit_matrix(M)
        >>> bool(np.abs(M @ M.T - np.eye(8)).max() < 1e-3), steps > 0
        (True, True)
    """
    cdef Py_ssize_t n = M.shape[0]
    if M.shape[1] != n or n < 1:
        raise ValueError("OINIT needs a non-empty square matrix")
    D, G = np.zeros(n * n), np.zeros(n * n)
    cdef double[::1] d = D, g = G
    cdef long steps
    with nogil:
        steps = ortho_pretrain(&M[0, 0], n, n, rate, tol, max_steps, &d[0], &g[0])
    if steps < 0 and must_converge:
        raise ValueError(f"OINIT did not converge in {max_steps} steps")
    return steps


def orthogonality_loss(double[:, ::1] M):
    """||M M^T - I||_F^2 by the kernels' loops."""
    cdef Py_ssize_t n = M.shape[0]
    D = np.zeros(n * n)
    cdef double[::1] d = D
    return ortho_residual(&M[0, 0], n, n, &d[0])


def orthogonality_penalty_gradient(double[:, ::1] M):
    """d ||M M^T - I||_F^2 / dM by the kernels' loops (OPEN's term with lam = 1, sign as a
    loss gradient)."""
    cdef Py_ssize_t n = M.shape[0]
    out = np.zeros((n, n))
    D, G = np.zeros(n * n), np.zeros(n * n)
    cdef double[:, ::1] o = out
    cdef double[::1] d = D, g = G
    ortho_penalty(&M[0, 0], n, n, -1.0, &o[0, 0], &d[0], &g[0])
    return out


@cython.final
cdef class OnlineReLURNN(OnlineNetwork):
    """Online ReLU RNN; see the module docstring.

    Args:
        config: hidden, window, interval, optimizer, lr (path-SGD's) or sgd_lr, lr_decay,
            clip, kappa_floor,
            open_penalty and the output layer's fields.
        theta: all parameters, flat, in the order of :func:`layout` (OINIT, if wanted, is
            applied to R by the caller through :func:`oinit_matrix` before).
        A: alphabet size.
        experts: symbol-mode kernels whose log-probabilities join the logits.
    """
    cdef readonly Py_ssize_t n, size
    cdef readonly long steps
    cdef bint path
    cdef double lr, lr_decay, clip, kappa_floor, open_penalty
    cdef Py_ssize_t oE, ob, oR, oWo
    cdef double[::1] theta, grad, kap
    cdef double[::1] h, act
    cdef double[::1] hs0                          # (window * n) the state before each symbol
    cdef double[::1] Wh, Wz, Wp                   # window states, pre-activations, predictions
    cdef double[::1] dh, dh_next, dz, err
    cdef double[::1] sq_h, sq_d, sq_next, drive, out_grad  # the squared-weight network
    cdef double[::1] oD, oG                       # (n * n) OPEN's scratch

    def __init__(self, config, theta, Py_ssize_t A, list experts=None):
        n = self.n = config.hidden
        if config.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}")
        self.path = config.optimizer == "path-sgd"
        self.setup_network(config, n + 1, A, experts or [], False)
        self.size = A * n + n + n * n + (n + 1) * A
        self.theta = np.array(theta, dtype=np.float64)
        if self.theta.shape[0] != self.size:
            raise ValueError(f"theta has {self.theta.shape[0]} numbers, expected {self.size}")
        self.oE, self.ob, self.oR, self.oWo = 0, A * n, A * n + n, A * n + n + n * n
        self.lr = config.lr if self.path else config.sgd_lr
        self.lr_decay, self.clip = config.lr_decay, config.clip
        self.kappa_floor, self.open_penalty = config.kappa_floor, config.open_penalty
        S, L = self.size, self.window
        self.grad, self.kap = np.zeros(S), np.zeros(S)
        self.h, self.act = np.zeros(n), np.zeros(n)
        self.hs0 = np.zeros(L * n)
        self.Wh, self.Wz, self.Wp = np.zeros(L * n), np.zeros(L * n), np.zeros(L * A)
        self.dh, self.dh_next, self.dz, self.err = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(A)
        self.sq_h, self.sq_d, self.sq_next = np.zeros(L * n), np.zeros(n), np.zeros(n)
        self.drive, self.out_grad = np.zeros(n), np.zeros(n)
        self.oD, self.oG = np.zeros(n * n), np.zeros(n * n)
        self.steps = 0

    def layout(self):
        return layout(self.n, self.A)

    def flat_parameters(self):
        """A copy of ``theta``."""
        return np.array(self.theta)

    # ------------------------------------------------------------ the cell

    cdef void _cell(self, const double* h, Py_ssize_t x, double* z, double* h_out) noexcept nogil:
        cdef const double* th = &self.theta[0]
        cdef const double* E = th + self.oE + x * self.n
        cdef const double* b = th + self.ob
        cdef const double* R = th + self.oR
        cdef Py_ssize_t n = self.n, j, k
        cdef double hk
        for j in range(n):
            z[j] = b[j] + E[j]
        for k in range(n):
            hk = h[k]
            for j in range(n):
                z[j] = z[j] + hk * R[k * n + j]
        for j in range(n):
            h_out[j] = z[j] if z[j] > 0.0 else 0.0

    # ------------------------------------------------------------ the base's hooks

    cdef double* output_weights(self) noexcept nogil:
        return &self.theta[self.oWo]

    cdef void load_features(self) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.n):
            self.feat[j + 1] = self.h[j]

    cdef void record_state(self, Py_ssize_t slot) noexcept nogil:
        cdef Py_ssize_t j, n = self.n
        for j in range(n):
            self.hs0[slot * n + j] = self.h[j]

    cdef void transition(self, int x) noexcept nogil:
        self._cell(&self.h[0], x, &self.act[0], &self.h[0])

    cdef int train_window(self) except -1:
        with nogil:  # most of the network's time: other threads run meanwhile
            self._train()
        return 0

    # ------------------------------------------------------------ training on the window

    cdef double _window_forward(self) noexcept nogil:
        cdef Py_ssize_t L = self.window, n = self.n, A = self.A, j, t, src, x
        cdef double* th = &self.theta[0]
        cdef double* Wh = &self.Wh[0]
        cdef double* Wz = &self.Wz[0]
        cdef double* Wp = &self.Wp[0]
        cdef double* feat = &self.feat[0]
        cdef const double* offs = &self.ring_offsets[0, 0]
        cdef const double* hs0 = &self.hs0[0]
        cdef const int64_t* xs = &self.ring_symbols[0]
        cdef double loglik = 0.0
        src = self.pos
        for j in range(n):
            Wh[j] = hs0[src * n + j]
        for t in range(L):
            src = (self.pos + t) % L
            x = xs[src]
            feat[0] = 1.0
            for j in range(n):
                feat[j + 1] = Wh[t * n + j]
            det_softmax(feat, th + self.oWo, Wp + t * A, n + 1, A,
                        offs + src * A if self.n_experts else NULL)
            loglik = loglik + det_log(Wp[t * A + x])
            if t + 1 < L:
                self._cell(Wh + t * n, x, Wz + t * n, Wh + (t + 1) * n)
        return loglik

    cdef void _window_backward(self) noexcept nogil:
        """Gradient of the window log-likelihood into ``grad``."""
        cdef Py_ssize_t L = self.window, n = self.n, A = self.A, t, i, j, k, y, x
        cdef double* g = &self.grad[0]
        cdef const double* th = &self.theta[0]
        cdef const double* R = th + self.oR
        cdef const double* Wo = th + self.oWo
        cdef const double* Wh = &self.Wh[0]
        cdef const double* Wz = &self.Wz[0]
        cdef const double* Wp = &self.Wp[0]
        cdef const int64_t* xs = &self.ring_symbols[0]
        cdef double* dh = &self.dh[0]
        cdef double* dh_next = &self.dh_next[0]
        cdef double* dz = &self.dz[0]
        cdef double* err = &self.err[0]
        cdef double s, hv
        # the blocks of the gradient through local pointers (a store through ``g`` could be
        # one to the offsets in the kernel's fields, which gcc would then read at every element)
        cdef double* gWo = g + self.oWo
        cdef double* gb = g + self.ob
        cdef double* gE = g + self.oE
        cdef double* gR = g + self.oR
        cdef double* row
        for i in range(self.size):
            g[i] = 0.0
        for j in range(n):
            dh_next[j] = 0.0
        for t in range(L - 1, -1, -1):
            x = xs[(self.pos + t) % L]
            for y in range(A):
                err[y] = -Wp[t * A + y]
            err[x] = err[x] + 1.0
            for y in range(A):
                gWo[y] = gWo[y] + err[y]
            for i in range(n):
                hv = Wh[t * n + i]
                s = dh_next[i]
                row = gWo + (i + 1) * A
                for y in range(A):
                    row[y] = row[y] + hv * err[y]
                    s = s + Wo[(i + 1) * A + y] * err[y]
                dh[i] = s
            if t == 0:
                break
            x = xs[(self.pos + t - 1) % L]
            row = gE + x * n
            for j in range(n):
                dz[j] = dh[j] if Wz[(t - 1) * n + j] > 0.0 else 0.0
                gb[j] = gb[j] + dz[j]
                row[j] = row[j] + dz[j]
            for k in range(n):
                hv = Wh[(t - 1) * n + k]
                s = 0.0
                row = gR + k * n
                for j in range(n):
                    row[j] = row[j] + hv * dz[j]
                    s = s + R[k * n + j] * dz[j]
                dh_next[k] = s

    cdef void _kappa(self) noexcept nogil:
        """kappa^(1) (Theorem 3) into ``kap``: the squared-weight network on the all-ones
        input, h~_0 = 0, unrolled over the window, forward then backward."""
        cdef Py_ssize_t L = self.window, n = self.n, A = self.A, t, i, j, k, y
        cdef const double* th = &self.theta[0]
        cdef const double* R = th + self.oR
        cdef double* kap = &self.kap[0]
        cdef double* H = &self.sq_h[0]
        cdef double* d = &self.sq_d[0]
        cdef double* nxt = &self.sq_next[0]
        cdef double* drive = &self.drive[0]
        cdef double* og = &self.out_grad[0]
        cdef double s, w
        # offsets in locals (see _window_backward): the same arithmetic, vectorisable
        cdef const double* thb = th + self.ob
        cdef const double* thE = th + self.oE
        cdef const double* thWo = th + self.oWo
        cdef double* kb = kap + self.ob
        cdef double* kE = kap + self.oE
        cdef double* kR = kap + self.oR
        cdef double* kWo = kap + self.oWo
        for j in range(n):
            s = thb[j] * thb[j]
            for k in range(A):
                s = s + thE[k * n + j] * thE[k * n + j]
            drive[j] = s
            H[j] = 0.0
        for i in range(n):
            s = 0.0
            for y in range(A):
                w = thWo[(i + 1) * A + y]
                s = s + w * w
            og[i] = s
        for t in range(1, L):
            for j in range(n):
                H[t * n + j] = drive[j]
            for k in range(n):
                s = H[(t - 1) * n + k]
                for j in range(n):
                    H[t * n + j] = H[t * n + j] + s * R[k * n + j] * R[k * n + j]
        for i in range(self.size):
            kap[i] = 0.0
        for y in range(A):
            kWo[y] = <double>L
        for i in range(n):  # Wo[i + 1, y]: sum_t h~_t[i], the same for every y
            s = 0.0
            for t in range(L):
                s = s + H[t * n + i]
            for y in range(A):
                kWo[(i + 1) * A + y] = s
        for j in range(n):
            d[j] = 0.0
        for t in range(L - 1, 0, -1):
            for j in range(n):
                d[j] = og[j] + d[j]  # dg/dh~_t: its outputs and, through R~, the later states
                kb[j] = kb[j] + d[j]
            for k in range(n):
                s = H[(t - 1) * n + k]
                w = 0.0
                for j in range(n):
                    kR[k * n + j] = kR[k * n + j] + s * d[j]
                    w = w + R[k * n + j] * R[k * n + j] * d[j]
                nxt[k] = w
            for j in range(n):
                d[j] = nxt[j]
        for k in range(A):
            for j in range(n):
                kE[k * n + j] = kb[j]

    cdef void _train(self) noexcept nogil:
        cdef double* th = &self.theta[0]
        cdef double* g = &self.grad[0]
        cdef double* kap = &self.kap[0]
        cdef Py_ssize_t i
        cdef double norm = 0.0, scale = 1.0, rate, k
        self._window_forward()
        self._window_backward()
        for i in range(self.size):
            norm = norm + g[i] * g[i]
        norm = sqrt(norm)
        if norm > self.clip:
            scale = self.clip / norm
        for i in range(self.size):
            g[i] = g[i] * scale
        if self.open_penalty > 0.0:
            ortho_penalty(th + self.oR, self.n, self.n, self.open_penalty, g + self.oR,
                          &self.oD[0], &self.oG[0])
        rate = self.lr / sqrt(1.0 + self.steps * self.lr_decay)
        cdef double floor = self.kappa_floor  # a local: see _window_backward
        if self.path:
            self._kappa()
            for i in range(self.size):
                k = kap[i] if kap[i] > floor else floor
                th[i] = th[i] + rate * g[i] / k
        else:
            for i in range(self.size):
                th[i] = th[i] + rate * g[i]
        self.steps += 1

    # ------------------------------------------------------------ the full state

    def get_state(self):
        """Parameters, the recurrent state, the window's saved states and the step count, on
        top of ``OnlineNetwork.get_state`` (path-SGD keeps no optimiser state: kappa is
        recomputed at every step)."""
        state = OnlineNetwork.get_state(self)
        for name, mv in self._arrays():
            state[name] = np.array(mv)
        state["relu_steps"] = np.array(self.steps, dtype=np.int64)
        return state

    def set_state(self, dict state):
        """``OnlineNetwork.set_state`` plus the step count and the arrays' types and shapes,
        checked before anything changes."""
        steps = int(take(state, "relu_steps", np.int64, ()))
        if steps < 0:
            raise ValueError("model state holds a negative step count")
        arrays = [(mv, take(state, name, np.float64, np.asarray(mv).shape))
                  for name, mv in self._arrays()]
        OnlineNetwork.set_state(self, state)
        for mv, value in arrays:
            np.asarray(mv)[...] = value
        self.steps = steps

    def _arrays(self):
        return [("theta", self.theta), ("grad", self.grad), ("kap", self.kap), ("h", self.h),
                ("act", self.act), ("hs0", self.hs0), ("Wh", self.Wh), ("Wz", self.Wz),
                ("Wp", self.Wp), ("dh", self.dh), ("dh_next", self.dh_next), ("dz", self.dz),
                ("err", self.err), ("sq_h", self.sq_h), ("sq_d", self.sq_d),
                ("sq_next", self.sq_next), ("drive", self.drive), ("out_grad", self.out_grad)]

    # ------------------------------------------------------------ test hooks

    def py_window_objective(self, theta=None):
        """The current window's log-likelihood under ``theta`` (default: the current one)."""
        saved = self.theta
        if theta is not None:
            self.theta = np.ascontiguousarray(theta, dtype=np.float64).copy()
        try:
            return self._window_forward()
        finally:
            self.theta = saved

    def py_window_gradient(self):
        """d(window log-likelihood)/d theta by truncated BPTT, flat like ``theta``."""
        self._window_forward()
        self._window_backward()
        return np.array(self.grad)

    def py_kappa(self):
        """kappa^(1) over the window, flat like ``theta``."""
        self._kappa()
        return np.array(self.kap)

    def py_train(self):
        """One training step on the current window."""
        self._train()

    def py_window(self):
        """(symbols, h0, offsets) of the current window in time order."""
        n, first = self.n, self.ring_index(0)
        return (self.window_symbols(), np.array(self.hs0[first * n:(first + 1) * n]),
                self.window_offsets())
