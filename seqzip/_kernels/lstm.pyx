# cython: language_level=3
"""Online LSTM, multiplicative LSTM and multiplicative RNN for the coding loop.

The model of :mod:`seqzip.reference.lstm` (read that first: layouts, the window, the cells),
trained while coding, on the base of :mod:`seqzip._kernels.online` (output layer over (1, h),
experts and gates, the window ring; with the Riemannian optimiser the output weights take the
base's QDH step per symbol).  This module adds the cells and their training.  Every ``interval`` symbols the parameters take one step on the last
``window`` symbols: a forward pass from the stored state at the window's start with the current
weights, truncated BPTT, then Adam (gradient-norm clipping, rate / sqrt(1 + k * lr_decay)) or
the Riemannian step (QD unitwise outer-product metric, 000 Sect. 2: for every pre-activation
unit the bias plus its incoming weights, metric sum_t B_t^2 a a^T reduced to its diagonal and
bias row, decayed across windows; the output layer by QDH per symbol).

Matrix-vector loops run along contiguous rows with one accumulator per output, so the compiler
can vectorise them without reassociating any sum (no fast-math): each output is still summed in
a fixed order.  The backward pass uses transposed copies refreshed at each training step for the
same reason.  Only + - * / and seqzip's deterministic exp/tanh/logistic and IEEE sqrt.

    >>> from types import SimpleNamespace
    >>> config = SimpleNamespace(hidden=4, window=6, interval=3, optimizer="adam", lr=0.01,
    ...     lr_decay=0.0, beta1=0.9, beta2=0.999, adam_eps=1e-6, clip=4.0, decay=0.999,
    ...     eps=1.0, rate_w=0.1, writing_memory=2048, writing_eps=3.0, writing_prior=256.0,
    ...     rate_beta=1.0, beta_eps=300.0)
    >>> shapes = layout("mlstm", 4, 3)
    >>> theta = np.zeros(sum(int(np.prod(s)) for s in shapes.values()))
    >>> k = OnlineRNN(config, "mlstm", theta, 3)
    >>> for s in [0, 1, 2] * 40:
    ...     _ = k.predict(); k.update(s)
    >>> k.steps, round(float(k.predict().sum()), 12)
    (39, 1.0)
"""
cimport cython
import numpy as np
from libc.math cimport sqrt
from libc.stdint cimport int64_t

from seqzip._kernels.detmath cimport det_log, det_logistic, det_softmax, det_tanh
from seqzip._kernels.online cimport OnlineNetwork

from seqzip._core import take
from seqzip._kernels.ortho cimport ortho_penalty
from seqzip._kernels.qd cimport qd_coordinate

cdef enum:
    LSTM = 0
    MLSTM = 1
    MRNN = 2

CELL_IDS = {"lstm": LSTM, "mlstm": MLSTM, "mrnn": MRNN}



# ---------------------------------------------------------------- layout and initialisation

def layout(str cell, Py_ssize_t n, Py_ssize_t A):
    """Names and shapes of the parameters, in their order inside the flat vector ``theta``:
    E (A, P), b (P,), R (n, P), [Wmh (n, n), Wmi (A, n),] Wo (n + 1, A); P = 4n for the LSTM
    cells, n for the mRNN (the reference's layout; a test ties the two)."""
    if cell not in CELL_IDS:
        raise ValueError(f"unknown cell {cell!r}")
    P = n if cell == "mrnn" else 4 * n
    out = {"E": (A, P), "b": (P,), "R": (n, P)}
    if cell != "lstm":
        out.update(Wmh=(n, n), Wmi=(A, n))
    out["Wo"] = (n + 1, A)
    return out


def orthonormal_rows(double[:, ::1] M):
    """Modified Gram-Schmidt on the rows of a square matrix, in place (IEEE sqrt only)."""
    cdef Py_ssize_t n = M.shape[0], i, j, k
    cdef double dot, norm
    if M.shape[1] != n:
        raise ValueError("orthonormal_rows needs a square matrix")
    for i in range(n):
        for j in range(i):
            dot = 0.0
            for k in range(n):
                dot = dot + M[i, k] * M[j, k]
            for k in range(n):
                M[i, k] = M[i, k] - dot * M[j, k]
        norm = 0.0
        for k in range(n):
            norm = norm + M[i, k] * M[i, k]
        norm = sqrt(norm)
        if norm == 0.0:
            raise ValueError("rank-deficient matrix")
        for k in range(n):
            M[i, k] = M[i, k] / norm


# ---------------------------------------------------------------- the kernel

@cython.final
cdef class OnlineRNN(OnlineNetwork):
    """Online LSTM / mLSTM / mRNN; see the module docstring.

    Args:
        config: the model's config (hidden, window, interval, optimizer, lr, lr_decay, beta1,
            beta2, adam_eps, clip, decay, eps and the output layer's fields).
        cell: "lstm", "mlstm" or "mrnn".
        theta: all parameters, flat, in the order of :func:`layout`.
        A: alphabet size.
        experts: symbol-mode kernels whose log-probabilities join the logits.
    """
    cdef readonly int cell
    cdef readonly Py_ssize_t n, P, size
    cdef readonly long steps
    cdef bint mult, riemannian
    cdef public bint reuse  # the window's forward pass is the coding pass's (window ==
    # interval, Adam; a test turns it off to compare)
    cdef bint stale  # py_train moved the weights inside a window: its next step recomputes
    cdef double lr, lr_decay, beta1, beta2, adam_eps, clip, b1t, b2t, decay, eps
    cdef Py_ssize_t oE, ob, oR, oWmh, oWmi, oWo
    cdef double[::1] theta                       # (size,) all parameters
    cdef double[::1] grad, mom, vel, diag, cross  # (size,) gradient, Adam, Riemannian metric
    cdef double[::1] RT, WmhT, WoT               # transposed copies for the backward pass
    cdef double[::1] h, c, cell_scratch          # state and the cell's work space
    cdef double[::1] hs0, cs0                    # (window * n,) the state before each symbol
    cdef double[::1] Wh, Wc, Wu, Wv, Wr, Wact, Wp  # window activations
    cdef double[::1] dz, dr, du, dh, dh_next, dc, err
    cdef double open_penalty                     # OPEN's lambda (002 eq. 31), 0: off
    cdef double[::1] oD, oG                      # (n * n) its scratch

    def __init__(self, config, str cell, theta, Py_ssize_t A, list experts=None):
        self.cell = CELL_IDS[cell]
        self.mult = self.cell != LSTM
        n = self.n = config.hidden
        P = self.P = n if self.cell == MRNN else 4 * n
        self.riemannian = config.optimizer == "riemannian"
        # With window == interval and Adam the window is the symbols since the last step and the
        # weights have not moved since: the coding pass computed its forward pass already (the
        # same arithmetic, so the same numbers), and ``transition`` keeps it (about a fifth of
        # the network's time).  The Riemannian step moves the output weights per symbol.
        self.reuse = config.window == config.interval and not self.riemannian
        self.setup_network(config, n + 1, A, experts or [], self.riemannian)
        shapes = layout(cell, n, A)
        self.size = sum(int(np.prod(s)) for s in shapes.values())
        self.theta = np.array(theta, dtype=np.float64)
        if self.theta.shape[0] != self.size:
            raise ValueError(f"theta has {self.theta.shape[0]} numbers, expected {self.size}")
        offsets, at = {}, 0
        for name, shape in shapes.items():
            offsets[name] = at
            at += int(np.prod(shape))
        self.oE, self.ob, self.oR, self.oWo = offsets["E"], offsets["b"], offsets["R"], offsets["Wo"]
        self.oWmh, self.oWmi = offsets.get("Wmh", 0), offsets.get("Wmi", 0)
        self.lr, self.lr_decay = config.lr, config.lr_decay
        self.beta1, self.beta2 = config.beta1, config.beta2
        self.adam_eps, self.clip = config.adam_eps, config.clip
        self.decay, self.eps = config.decay, config.eps
        self.b1t = self.b2t = 1.0
        S, L = self.size, self.window
        self.grad, self.mom, self.vel = np.zeros(S), np.zeros(S), np.zeros(S)
        self.diag, self.cross = np.zeros(S), np.zeros(S)
        self.RT, self.WmhT, self.WoT = np.zeros(P * n), np.zeros(n * n), np.zeros(A * (n + 1))
        self.h, self.c = np.zeros(n), np.zeros(n)
        self.cell_scratch = np.zeros(3 * n + P + n)
        self.hs0, self.cs0 = np.zeros(L * n), np.zeros(L * n)
        self.Wh, self.Wc = np.zeros(L * n), np.zeros(L * n)
        self.Wu, self.Wv, self.Wr = np.zeros(L * n), np.zeros(L * n), np.zeros(L * n)
        self.Wact, self.Wp = np.zeros(L * P), np.zeros(L * A)
        self.dz, self.dr, self.du = np.zeros(P), np.zeros(n), np.zeros(n)
        self.dh, self.dh_next, self.dc, self.err = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(A)
        self.open_penalty = getattr(config, "open_penalty", 0.0)
        self.oD, self.oG = np.zeros(n * n), np.zeros(n * n)
        self.steps = 0

    def layout(self):
        """Names and shapes of the parameters, in their order inside ``theta``."""
        return layout(("lstm", "mlstm", "mrnn")[self.cell], self.n, self.A)

    def flat_parameters(self):
        """A copy of ``theta``."""
        return np.array(self.theta)

    # ------------------------------------------------------------ the cell

    cdef void _cell(self, const double* h, const double* c, Py_ssize_t x, double* u, double* v,
                    double* r, double* act, double* h_out, double* c_out) noexcept nogil:
        """One transition on input x: act holds (Hin, i, f, o) or the mRNN's h."""
        cdef const double* th = &self.theta[0]
        cdef const double* E = th + self.oE + x * self.P
        cdef const double* b = th + self.ob
        cdef const double* R = th + self.oR
        cdef const double* Wmh = th + self.oWmh
        cdef const double* Wmi = th + self.oWmi + x * self.n
        cdef Py_ssize_t n = self.n, P = self.P, j, k
        cdef double hk, s
        if self.mult:
            for j in range(n):
                u[j] = 0.0
            for k in range(n):
                hk = h[k]
                for j in range(n):
                    u[j] = u[j] + hk * Wmh[k * n + j]
            for j in range(n):
                v[j] = Wmi[j]
                r[j] = u[j] * v[j]
        else:
            for j in range(n):
                r[j] = h[j]
        for j in range(P):
            act[j] = b[j] + E[j]
        for k in range(n):
            hk = r[k]
            for j in range(P):
                act[j] = act[j] + hk * R[k * P + j]
        if self.cell == MRNN:
            for j in range(n):
                act[j] = det_tanh(act[j])
                h_out[j] = act[j]
                c_out[j] = 0.0
            return
        for j in range(n, 4 * n):
            act[j] = det_logistic(act[j])
        for j in range(n):
            s = act[2 * n + j] * c[j] + act[n + j] * act[j]
            c_out[j] = s
            h_out[j] = det_tanh(s * act[3 * n + j])

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
            self.cs0[slot * n + j] = self.c[j]

    cdef void transition(self, int x) noexcept nogil:
        cdef Py_ssize_t j, n = self.n, t = self.since, A = self.A
        cdef double* sc = &self.cell_scratch[0]
        # the cell's u (n), v (n), r (n), act (P) into the scratch, or with ``reuse`` into the
        # window's activations at its t-th symbol; h_out (n) into the scratch; c in place
        cdef double* u = sc
        cdef double* v = sc + n
        cdef double* r = sc + 2 * n
        cdef double* act = sc + 3 * n
        if self.reuse and t < self.window:
            for j in range(n):
                self.Wh[t * n + j] = self.h[j]
                self.Wc[t * n + j] = self.c[j]
            for j in range(A):
                self.Wp[t * A + j] = self.raw[j]
            u, v, r = &self.Wu[t * n], &self.Wv[t * n], &self.Wr[t * n]
            act = &self.Wact[t * self.P]
        self._cell(&self.h[0], &self.c[0], x, u, v, r, act, sc + 3 * n + self.P, &self.c[0])
        for j in range(n):
            self.h[j] = sc[3 * n + self.P + j]

    cdef int train_window(self) except -1:
        cdef bint forward = not self.reuse or self.stale
        with nogil:  # most of a network's time: other threads run meanwhile
            self._train(forward)
        self.stale = False
        return 0

    # ------------------------------------------------------------ training on the window

    cdef double _window_forward(self) noexcept nogil:
        """Forward over the window from its stored start state; activations into W*."""
        cdef Py_ssize_t L = self.window, n = self.n, A = self.A, P = self.P, j, t, src, x
        cdef double* th = &self.theta[0]
        cdef double* Wh = &self.Wh[0]
        cdef double* Wc = &self.Wc[0]
        cdef double* Wu = &self.Wu[0]
        cdef double* Wv = &self.Wv[0]
        cdef double* Wr = &self.Wr[0]
        cdef double* Wact = &self.Wact[0]
        cdef double* Wp = &self.Wp[0]
        cdef double* feat = &self.feat[0]
        cdef const double* offs = &self.ring_offsets[0, 0]
        cdef const double* hs0 = &self.hs0[0]
        cdef const double* cs0 = &self.cs0[0]
        cdef const int64_t* xs = &self.ring_symbols[0]
        cdef double loglik = 0.0
        src = self.pos  # the oldest entry of the ring
        for j in range(n):
            Wh[j] = hs0[src * n + j]
            Wc[j] = cs0[src * n + j]
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
                self._cell(Wh + t * n, Wc + t * n, x, Wu + t * n, Wv + t * n, Wr + t * n,
                           Wact + t * P, Wh + (t + 1) * n, Wc + (t + 1) * n)
        return loglik

    cdef void _transpose(self) noexcept nogil:
        cdef double* th = &self.theta[0]
        cdef double* RT = &self.RT[0]
        cdef double* WmhT = &self.WmhT[0]
        cdef double* WoT = &self.WoT[0]
        cdef const double* R = th + self.oR
        cdef const double* Wmh = th + self.oWmh
        cdef const double* Wo = th + self.oWo
        cdef Py_ssize_t n = self.n, P = self.P, A = self.A, i, j
        for i in range(n):
            for j in range(P):
                RT[j * n + i] = R[i * P + j]
        if self.mult:
            for i in range(n):
                for j in range(n):
                    WmhT[j * n + i] = Wmh[i * n + j]
        for i in range(n + 1):
            for j in range(A):
                WoT[j * (n + 1) + i] = Wo[i * A + j]

    cdef void _window_backward(self) noexcept nogil:
        """Gradient of the window log-likelihood into ``grad`` (and, for the Riemannian step,
        this window's squared backpropagated values into ``diag`` and ``cross``)."""
        cdef Py_ssize_t L = self.window, n = self.n, A = self.A, P = self.P
        cdef Py_ssize_t t, i, j, k, y, x, src
        cdef double* g = &self.grad[0]
        cdef double* D = &self.diag[0]
        cdef double* C = &self.cross[0]
        cdef const double* RT = &self.RT[0]
        cdef const double* WmhT = &self.WmhT[0]
        cdef const double* WoT = &self.WoT[0]
        cdef const double* Wh = &self.Wh[0]
        cdef const double* Wc = &self.Wc[0]
        cdef const double* Wu = &self.Wu[0]
        cdef const double* Wv = &self.Wv[0]
        cdef const double* Wr = &self.Wr[0]
        cdef const double* Wact = &self.Wact[0]
        cdef const double* Wp = &self.Wp[0]
        cdef const int64_t* xs = &self.ring_symbols[0]
        cdef double* dz = &self.dz[0]
        cdef double* dr = &self.dr[0]
        cdef double* du = &self.du[0]
        cdef double* dh = &self.dh[0]
        cdef double* dh_next = &self.dh_next[0]
        cdef double* dc = &self.dc[0]
        cdef double* err = &self.err[0]
        cdef const double* act
        cdef const double* hprev
        cdef double* row
        cdef double e, ds, dct, o, ig, fg, hv, rk, b2, m
        cdef bint metric = self.riemannian, mult = self.mult
        # each block's gradient (and metric) through a local pointer: a store through ``g``
        # could be one to the kernel's fields, so offsets read from them in a loop would be
        # read again at every element, and the loop would not be vectorised
        cdef double* gWo = g + self.oWo
        cdef double* gb = g + self.ob
        cdef double* gE = g + self.oE
        cdef double* gR = g + self.oR
        cdef double* gWmi = g + self.oWmi
        cdef double* gWmh = g + self.oWmh
        for i in range(self.size):
            g[i] = 0.0
        for j in range(n):
            dh_next[j] = 0.0
            dc[j] = 0.0
        for t in range(L - 1, -1, -1):
            x = xs[(self.pos + t) % L]
            for y in range(A):
                err[y] = -Wp[t * A + y]
            err[x] = err[x] + 1.0
            # output layer (its Riemannian step is QDH per symbol, not here)
            for y in range(A):
                gWo[y] = gWo[y] + err[y]
            for i in range(n):
                hv = Wh[t * n + i]
                row = gWo + (i + 1) * A
                for y in range(A):
                    row[y] = row[y] + hv * err[y]
            for i in range(n):
                dh[i] = dh_next[i]
            for y in range(A):
                e = err[y]
                for i in range(n):
                    dh[i] = dh[i] + WoT[y * (n + 1) + 1 + i] * e
            if t == 0:
                break
            # the transition that made state t from state t-1 on input x_{t-1}
            x = xs[(self.pos + t - 1) % L]
            act = Wact + (t - 1) * P
            if self.cell == MRNN:
                for j in range(n):
                    dz[j] = dh[j] * (1.0 - act[j] * act[j])
            else:
                for j in range(n):
                    hv = Wh[t * n + j]
                    o = act[3 * n + j]
                    ig = act[n + j]
                    fg = act[2 * n + j]
                    ds = dh[j] * (1.0 - hv * hv)
                    dct = dc[j] + ds * o
                    dz[j] = dct * ig
                    dz[n + j] = dct * act[j] * ig * (1.0 - ig)
                    dz[2 * n + j] = dct * Wc[(t - 1) * n + j] * fg * (1.0 - fg)
                    dz[3 * n + j] = ds * Wc[t * n + j] * o * (1.0 - o)
                    dc[j] = dct * fg
            for j in range(P):
                gb[j] = gb[j] + dz[j]
            row = gE + x * P
            for j in range(P):
                row[j] = row[j] + dz[j]
            for k in range(n):
                rk = Wr[(t - 1) * n + k] if mult else Wh[(t - 1) * n + k]
                row = gR + k * P
                for j in range(P):
                    row[j] = row[j] + rk * dz[j]
            if metric:
                for j in range(P):
                    b2 = dz[j] * dz[j]
                    D[self.ob + j] = D[self.ob + j] + b2
                    D[self.oE + x * P + j] = D[self.oE + x * P + j] + b2
                    C[self.oE + x * P + j] = C[self.oE + x * P + j] + b2
                for k in range(n):
                    rk = Wr[(t - 1) * n + k] if mult else Wh[(t - 1) * n + k]
                    for j in range(P):
                        b2 = dz[j] * dz[j]
                        D[self.oR + k * P + j] = D[self.oR + k * P + j] + b2 * rk * rk
                        C[self.oR + k * P + j] = C[self.oR + k * P + j] + b2 * rk
            for k in range(n):
                dr[k] = 0.0
            for j in range(P):
                e = dz[j]
                for k in range(n):
                    dr[k] = dr[k] + RT[j * n + k] * e
            if mult:
                hprev = Wh + (t - 1) * n
                row = gWmi + x * n
                for j in range(n):
                    du[j] = dr[j] * Wv[(t - 1) * n + j]
                    m = dr[j] * Wu[(t - 1) * n + j]
                    row[j] = row[j] + m
                    if metric:
                        D[self.oWmi + x * n + j] = D[self.oWmi + x * n + j] + m * m
                for k in range(n):
                    hv = hprev[k]
                    row = gWmh + k * n
                    for j in range(n):
                        row[j] = row[j] + hv * du[j]
                    if metric:
                        for j in range(n):
                            D[self.oWmh + k * n + j] = (D[self.oWmh + k * n + j]
                                                        + hv * hv * du[j] * du[j])
                for k in range(n):
                    dh_next[k] = 0.0
                for j in range(n):
                    e = du[j]
                    for k in range(n):
                        dh_next[k] = dh_next[k] + WmhT[j * n + k] * e
            else:
                for k in range(n):
                    dh_next[k] = dr[k]

    cdef void _adam(self) noexcept nogil:
        cdef double* th = &self.theta[0]
        cdef double* g = &self.grad[0]
        cdef double* m = &self.mom[0]
        cdef double* v = &self.vel[0]
        cdef Py_ssize_t i
        cdef double norm = 0.0, scale = 1.0, gi, rate
        for i in range(self.size):
            norm = norm + g[i] * g[i]
        norm = sqrt(norm)
        if norm > self.clip:
            scale = self.clip / norm
        self.b1t = self.b1t * self.beta1
        self.b2t = self.b2t * self.beta2
        rate = self.lr / sqrt(1.0 + self.steps * self.lr_decay)
        # the constants in locals (the stores below could be to the fields, which would
        # then be read at every element): the same operations, vectorised
        cdef double beta1 = self.beta1, beta2 = self.beta2, eps = self.adam_eps
        cdef double rest1 = 1.0 - beta1, rest2 = 1.0 - beta2
        cdef double bc1 = 1.0 - self.b1t, bc2 = 1.0 - self.b2t
        for i in range(self.size):
            gi = g[i] * scale
            m[i] = beta1 * m[i] + rest1 * gi
            v[i] = beta2 * v[i] + rest2 * gi * gi
            th[i] = th[i] + rate * (m[i] / bc1) / (sqrt(v[i] / bc2) + eps)

    cdef void _riemannian(self) noexcept nogil:
        """theta += rate M^-1 g with the quasi-diagonal unitwise metric: each pre-activation
        unit's bias and incoming weights (eq. 34-35 with the bias as index 0), the
        multiplicative factors' weights diagonally; the output layer is left to QDH."""
        cdef double* th = &self.theta[0]
        cdef double* g = &self.grad[0]
        cdef double* D = &self.diag[0]
        cdef double* C = &self.cross[0]
        cdef Py_ssize_t n = self.n, A = self.A, P = self.P, j, k, w, rows, stop
        cdef double rate = self.lr / sqrt(1.0 + self.steps * self.lr_decay)
        cdef double eps = self.eps, m00, g0, bias, c, step, norm = 0.0, scale = 1.0
        for w in range(self.oWo):
            norm = norm + g[w] * g[w]
        norm = sqrt(norm)
        if norm > self.clip:
            scale = self.clip / norm
        for j in range(P):
            m00 = D[self.ob + j] + eps
            g0 = g[self.ob + j] * scale
            bias = g0 / m00
            for rows in range(2):  # the one-hot input weights E[:, j], then R[:, j]
                stop = A if rows == 0 else n
                for k in range(stop):
                    w = (self.oE if rows == 0 else self.oR) + k * P + j
                    c = C[w]
                    step = qd_coordinate(g[w] * scale, D[w] + eps, c, g0, m00)
                    th[w] = th[w] + rate * step
                    bias = bias - c / m00 * step
            th[self.ob + j] = th[self.ob + j] + rate * bias
        if self.mult:
            for w in range(self.oWmh, self.oWmi + A * n):
                th[w] = th[w] + rate * g[w] * scale / (D[w] + eps)

    cdef void _open(self) noexcept nogil:
        """OPEN: the penalty lam ||W W^T - I||^2 of every recurrent n x n block (R's groups,
        Wmh) joins the gradient (before the optimiser's clipping)."""
        cdef double* th = &self.theta[0]
        cdef double* g = &self.grad[0]
        cdef Py_ssize_t n = self.n, P = self.P, k
        for k in range(P // n):
            ortho_penalty(th + self.oR + k * n, n, P, self.open_penalty, g + self.oR + k * n,
                          &self.oD[0], &self.oG[0])
        if self.mult:
            ortho_penalty(th + self.oWmh, n, n, self.open_penalty, g + self.oWmh,
                          &self.oD[0], &self.oG[0])

    cdef void _train(self, bint forward) noexcept nogil:
        cdef double* D = &self.diag[0]
        cdef double* C = &self.cross[0]
        cdef Py_ssize_t i
        if forward:
            self._window_forward()
        self._transpose()
        if self.riemannian:
            for i in range(self.size):
                D[i] = self.decay * D[i]
                C[i] = self.decay * C[i]
        self._window_backward()
        if self.open_penalty > 0.0:
            self._open()
        if self.riemannian:
            self._riemannian()
        else:
            self._adam()
        self.steps += 1

    # ------------------------------------------------------------ test hooks

    def _activations(self):
        return [self.Wh, self.Wc, self.Wu, self.Wv, self.Wr, self.Wact, self.Wp]

    def py_window_objective(self, theta=None):
        """The current window's log-likelihood (natural log) under ``theta`` (default: the
        current parameters), from the stored state at the window's start.  (The test hooks
        leave the window's activations as they were: ``transition`` may be filling them.)"""
        saved, kept = self.theta, [np.array(a) for a in self._activations()]
        if theta is not None:
            self.theta = np.ascontiguousarray(theta, dtype=np.float64).copy()
        try:
            return self._window_forward()
        finally:
            self.theta = saved
            for a, k in zip(self._activations(), kept):
                np.asarray(a)[...] = k

    def py_window_gradient(self, penalty=False):
        """d(window log-likelihood)/d theta by truncated BPTT, flat like ``theta`` (with
        ``penalty``, OPEN's too)."""
        kept = [np.array(a) for a in self._activations()]
        self._window_forward()
        self._transpose()
        self._window_backward()
        if penalty and self.open_penalty > 0.0:
            self._open()
        for a, k in zip(self._activations(), kept):
            np.asarray(a)[...] = k
        return np.array(self.grad)

    def py_penalised_gradient(self):
        """The window gradient with OPEN's penalty (as the optimiser receives it)."""
        return self.py_window_gradient(penalty=True)

    def py_train(self):
        """One training step on the current window (as every ``interval`` symbols, but with its
        forward pass computed here)."""
        self._train(True)
        self.stale = True

    def py_window(self):
        """(symbols, h0, c0, offsets) of the current window in time order."""
        n, first = self.n, self.ring_index(0)
        return (self.window_symbols(), np.array(self.hs0[first * n:(first + 1) * n]),
                np.array(self.cs0[first * n:(first + 1) * n]), self.window_offsets())

    def py_step(self, const double[::1] h, const double[::1] c, Py_ssize_t x):
        """One transition of the cell from (h, c) on input x: returns (h', c')."""
        n = self.n
        sc = np.zeros(3 * n + self.P)
        cdef double[::1] s = sc
        h_out, c_out = np.zeros(n), np.zeros(n)
        cdef double[::1] ho = h_out, co = c_out
        self._cell(&h[0], &c[0], x, &s[0], &s[n], &s[2 * n], &s[3 * n], &ho[0], &co[0])
        return h_out, c_out

    # ------------------------------------------------------------ the full state

    def get_state(self):
        """Parameters, optimiser state (Adam moments and their bias corrections, or the
        Riemannian metric), the recurrent state and the window's saved states, on top of
        ``OnlineNetwork.get_state``."""
        state = OnlineNetwork.get_state(self)
        for name, mv in self._arrays():
            state[name] = np.array(mv)
        state["rnn_steps"] = np.array(self.steps, dtype=np.int64)
        state["rnn_bias_corrections"] = np.array([self.b1t, self.b2t])
        return state

    def set_state(self, dict state):
        """``OnlineNetwork.set_state`` plus the step count and Adam's bias corrections
        (beta^t, in [0, 1]) and the arrays' types and shapes, checked before anything
        changes."""
        steps = int(take(state, "rnn_steps", np.int64, ()))
        b1t, b2t = take(state, "rnn_bias_corrections", np.float64, (2,))
        if steps < 0 or not (0.0 <= b1t <= 1.0 and 0.0 <= b2t <= 1.0):
            raise ValueError("model state holds impossible step counters")
        arrays = [(mv, take(state, name, np.float64, np.asarray(mv).shape))
                  for name, mv in self._arrays()]
        OnlineNetwork.set_state(self, state)
        for mv, value in arrays:
            np.asarray(mv)[...] = value
        self.steps, self.b1t, self.b2t = steps, b1t, b2t

    def _arrays(self):
        return [("theta", self.theta), ("grad", self.grad), ("mom", self.mom),
                ("vel", self.vel), ("diag", self.diag), ("cross", self.cross), ("RT", self.RT),
                ("WmhT", self.WmhT), ("WoT", self.WoT), ("h", self.h), ("c", self.c),
                ("cell_scratch", self.cell_scratch), ("hs0", self.hs0), ("cs0", self.cs0),
                ("Wh", self.Wh), ("Wc", self.Wc), ("Wu", self.Wu), ("Wv", self.Wv),
                ("Wr", self.Wr), ("Wact", self.Wact), ("Wp", self.Wp), ("dz", self.dz),
                ("dr", self.dr), ("du", self.du), ("dh", self.dh), ("dh_next", self.dh_next),
                ("dc", self.dc), ("err", self.err)]
