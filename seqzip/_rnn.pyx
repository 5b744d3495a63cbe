# cython: language_level=3
"""Online LSTM, multiplicative LSTM and multiplicative RNN for the coding loop.

The model of :mod:`seqzip.rnn_reference` (read that first: layouts, the window, the cells),
trained while coding.  Per symbol: ``predict`` is the mixed softmax of :mod:`seqzip._mixing`
over (1, h) and the experts; ``update(x)`` steps the experts' gates (and, with the Riemannian
optimiser, the output weights by QDH), records the symbol, the state and the experts' offset,
and runs the cell.  Every ``interval`` symbols the parameters take one step on the last
``window`` symbols: a forward pass from the stored state at the window's start with the current
weights, truncated BPTT, then Adam (gradient-norm clipping, rate / sqrt(1 + k * lr_decay)) or
the Riemannian step (QD unitwise outer-product metric, 000 Sect. 2: for every pre-activation
unit the bias plus its incoming weights, metric sum_t B_t^2 a a^T reduced to its diagonal and
bias row, decayed across windows; the output layer by QDH per symbol).

Matrix-vector loops run along contiguous rows with one accumulator per output, so the compiler
can vectorise them without reassociating any sum (no fast-math): each output is still summed in
a fixed order.  The backward pass uses transposed copies refreshed at each training step for the
same reason.  Only + - * / and seqzip's deterministic exp/tanh/logistic and IEEE sqrt.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport sqrt
from libc.stdint cimport int64_t, uint64_t

from seqzip._detmath cimport det_log, det_logistic, det_softmax, det_tanh
from seqzip.rnn_reference import shapes
from seqzip._mixing cimport expert_logs, floor_mix, gate_step, mixed_softmax, writing_step

cnp.import_array()

cdef enum:
    LSTM = 0
    MLSTM = 1
    MRNN = 2

CELL_IDS = {"lstm": LSTM, "mlstm": MLSTM, "mrnn": MRNN}



# ---------------------------------------------------------------- deterministic initialisation

cdef inline uint64_t _splitmix(uint64_t* state) noexcept nogil:
    state[0] = state[0] + 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


def normal_stream(uint64_t seed, Py_ssize_t count):
    """``count`` approximately standard normal numbers (Irwin-Hall: 12 uniforms - 6) from a
    splitmix64 stream: the same bits on every platform, no libm."""
    out = np.empty(count)
    cdef double[::1] o = out
    cdef uint64_t state = seed
    cdef Py_ssize_t i, k
    cdef double s
    for i in range(count):
        s = 0.0
        for k in range(12):
            s = s + <double>(_splitmix(&state) >> 11) * (1.0 / 9007199254740992.0)
        o[i] = s - 6.0
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

cdef class OnlineRNN:
    """Online LSTM / mLSTM / mRNN; see the module docstring.

    Args:
        cell: "lstm", "mlstm" or "mrnn".
        theta: all parameters, flat, in the order E, b, R, [Wmh, Wmi,] Wo (see ``layout``).
        n, A: hidden units and alphabet size.
        window, interval: truncated-BPTT length and symbols between training steps.
        riemannian: 0 = Adam, 1 = the quasi-diagonal Riemannian step.
        hyper: dict of the optimiser's numbers (see ``seqzip.models.rnn.RNNConfig``).
        gates: initial expert gates on the constant feature, one per expert.
    """
    cdef readonly int cell
    cdef readonly Py_ssize_t n, A, P, window, interval, n_experts, size
    cdef readonly long steps
    cdef bint mult, riemannian
    cdef double lr, lr_decay, beta1, beta2, adam_eps, clip, b1t, b2t
    cdef double decay, eps, rate_w, writing_decay, writing_eps, rate_beta, beta_eps
    cdef Py_ssize_t oE, ob, oR, oWmh, oWmi, oWo
    cdef public cnp.ndarray theta
    cdef cnp.ndarray grad, mom, vel, diag, cross, RT, WmhT, WoT
    cdef cnp.ndarray h, c, feat, scratch, probs, raw
    cdef cnp.ndarray wd, wc  # QDH running Hessian of the output weights (Riemannian)
    cdef cnp.ndarray lexp, U, ud, uc, beta, offset
    cdef cnp.ndarray xs, hs0, cs0, offs  # ring buffers of the last ``window`` symbols
    cdef cnp.ndarray Wh, Wc, Wu, Wv, Wr, Wact, Wp  # window activations
    cdef cnp.ndarray dz, dr, du, dh, dh_next, dc, err
    cdef Py_ssize_t filled, pos, since
    cdef bint predicted

    def __init__(self, str cell, theta, Py_ssize_t n, Py_ssize_t A, Py_ssize_t window,
                 Py_ssize_t interval, bint riemannian, dict hyper, gates=()):
        self.cell = CELL_IDS[cell]
        self.mult = self.cell != LSTM
        self.n, self.A = n, A
        self.P = n if self.cell == MRNN else 4 * n
        self.window, self.interval = window, interval
        self.riemannian = riemannian
        layout = self.layout()
        self.size = sum(int(np.prod(s)) for s in layout.values())
        self.theta = np.ascontiguousarray(theta, dtype=np.float64).copy()
        if self.theta.shape[0] != self.size:
            raise ValueError(f"theta has {self.theta.shape[0]} numbers, expected {self.size}")
        offsets, at = {}, 0
        for name, shape in layout.items():
            offsets[name] = at
            at += int(np.prod(shape))
        self.oE, self.ob, self.oR, self.oWo = offsets["E"], offsets["b"], offsets["R"], offsets["Wo"]
        self.oWmh, self.oWmi = offsets.get("Wmh", 0), offsets.get("Wmi", 0)
        self.lr, self.lr_decay = hyper["lr"], hyper["lr_decay"]
        self.beta1, self.beta2 = hyper["beta1"], hyper["beta2"]
        self.adam_eps, self.clip = hyper["adam_eps"], hyper["clip"]
        self.decay, self.eps = hyper["decay"], hyper["eps"]
        self.rate_w, self.writing_eps = hyper["rate_w"], hyper["writing_eps"]
        self.writing_decay = 1.0 - 1.0 / hyper["writing_memory"]
        self.rate_beta, self.beta_eps = hyper["rate_beta"], hyper["beta_eps"]
        self.b1t = self.b2t = 1.0
        S, P = self.size, self.P
        self.grad, self.mom, self.vel = np.zeros(S), np.zeros(S), np.zeros(S)
        self.diag, self.cross = np.zeros(S), np.zeros(S)
        self.RT, self.WmhT, self.WoT = np.zeros((P, n)), np.zeros((n, n)), np.zeros((A, n + 1))
        self.h, self.c = np.zeros(n), np.zeros(n)
        self.feat = np.zeros(n + 1)
        self.feat[0] = 1.0
        self.scratch = np.zeros(3 * n + P + n)
        self.probs, self.raw = np.zeros(A), np.zeros(A)
        v0 = (1.0 / A) * (1.0 - 1.0 / A)  # QDH prior: 256 samples at the uniform distribution
        prior = hyper["writing_prior"]
        self.wd = np.full((n + 1, A), prior * v0 * 0.25)
        self.wd[0] = prior * v0
        self.wc = np.zeros((n + 1, A))
        gates = np.array(gates, dtype=np.float64).reshape(-1)
        E = self.n_experts = gates.shape[0]
        self.U = np.zeros((n + 1, max(E, 1)))
        self.U[0, :E] = gates
        self.ud = np.full((n + 1, max(E, 1)), hyper["beta_prior"] * 0.25)
        self.ud[0] = hyper["beta_prior"]
        self.uc = np.zeros((n + 1, max(E, 1)))
        self.lexp, self.beta, self.offset = np.zeros((max(E, 1), A)), np.zeros(max(E, 1)), np.zeros(A)
        L = window
        self.xs = np.zeros(L, dtype=np.int64)
        self.hs0, self.cs0 = np.zeros((L, n)), np.zeros((L, n))
        self.offs = np.zeros((L, A))
        self.Wh, self.Wc = np.zeros((L, n)), np.zeros((L, n))
        self.Wu, self.Wv, self.Wr = np.zeros((L, n)), np.zeros((L, n)), np.zeros((L, n))
        self.Wact, self.Wp = np.zeros((L, P)), np.zeros((L, A))
        self.dz, self.dr, self.du = np.zeros(P), np.zeros(n), np.zeros(n)
        self.dh, self.dh_next, self.dc, self.err = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(A)
        self.filled = self.pos = self.since = 0
        self.steps = 0
        self.predicted = False

    def layout(self):
        """Names and shapes of the parameters, in their order inside ``theta``."""
        return shapes(("lstm", "mlstm", "mrnn")[self.cell], self.n, self.A)

    def parameters(self):
        """Copies of the parameters by name."""
        out, at = {}, 0
        for name, shape in self.layout().items():
            size = int(np.prod(shape))
            out[name] = self.theta[at:at + size].reshape(shape).copy()
            at += size
        return out

    # ------------------------------------------------------------ the cell

    cdef void _cell(self, const double* h, const double* c, Py_ssize_t x, double* u, double* v,
                    double* r, double* act, double* h_out, double* c_out) noexcept nogil:
        """One transition on input x: act holds (Hin, i, f, o) or the mRNN's h."""
        cdef double* th = <double*>cnp.PyArray_DATA(self.theta)
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

    # ------------------------------------------------------------ coding path

    def set_expert(self, Py_ssize_t e, const double[::1] probs):
        """Give expert ``e``'s distribution of the next symbol (before ``predict``)."""
        cdef double[:, ::1] lexp = self.lexp
        if e < 0 or e >= self.n_experts or probs.shape[0] != self.A:
            raise ValueError("expert index or distribution size out of range")
        expert_logs(&probs[0], &lexp[e, 0], self.A)

    def predict(self):
        """Distribution of the next symbol: float64, C-contiguous, shape (A,)."""
        cdef double[::1] f = self.feat, h = self.h, p = self.raw, out = self.probs
        cdef double[::1] beta = self.beta, off = self.offset
        cdef double[:, ::1] lexp = self.lexp, U = self.U
        cdef double* th = <double*>cnp.PyArray_DATA(self.theta)
        cdef Py_ssize_t j, A = self.A
        for j in range(self.n):
            f[j + 1] = h[j]
        mixed_softmax(&f[0], th + self.oWo, self.n + 1, A, &lexp[0, 0], &U[0, 0],
                      self.n_experts, &beta[0], &off[0], &p[0])
        floor_mix(&p[0], &out[0], A)
        self.predicted = True
        return self.probs

    def update(self, Py_ssize_t symbol):
        """Learn ``symbol``: output-layer steps, record, transition, periodic training step."""
        if symbol < 0 or symbol >= self.A:
            raise ValueError(f"symbol {symbol} outside alphabet of size {self.A}")
        if not self.predicted:
            self.predict()
        self.predicted = False
        cdef double[::1] f = self.feat, p = self.raw, h = self.h, c = self.c, sc = self.scratch
        cdef double[::1] off = self.offset
        cdef double[:, ::1] lexp = self.lexp, U = self.U, ud = self.ud, uc = self.uc
        cdef double[:, ::1] wd = self.wd, wc = self.wc, hs0 = self.hs0, cs0 = self.cs0
        cdef double[:, ::1] offs = self.offs
        cdef int64_t[::1] xs = self.xs
        cdef double* th = <double*>cnp.PyArray_DATA(self.theta)
        cdef Py_ssize_t n = self.n, A = self.A, j, y
        if self.riemannian:
            writing_step(&f[0], n + 1, &p[0], symbol, A, &wd[0, 0], &wc[0, 0],
                         self.writing_decay, self.writing_eps, self.rate_w, th + self.oWo)
        gate_step(&f[0], n + 1, &p[0], symbol, A, &lexp[0, 0], self.n_experts, &ud[0, 0],
                  &uc[0, 0], self.writing_decay, self.beta_eps, self.rate_beta, &U[0, 0])
        xs[self.pos] = symbol
        for j in range(n):
            hs0[self.pos, j] = h[j]
            cs0[self.pos, j] = c[j]
        if self.n_experts:
            for y in range(A):
                offs[self.pos, y] = off[y]
        self.pos = (self.pos + 1) % self.window
        if self.filled < self.window:
            self.filled += 1
        # scratch: u (n), v (n), r (n), act (P), h_out (n); c is updated in place after
        self._cell(&h[0], &c[0], symbol, &sc[0], &sc[n], &sc[2 * n], &sc[3 * n],
                   &sc[3 * n + self.P], &c[0])
        for j in range(n):
            h[j] = sc[3 * n + self.P + j]
        self.since += 1
        if self.since >= self.interval and self.filled == self.window:
            self.since = 0
            self._train()

    # ------------------------------------------------------------ training on the window

    cdef double _window_forward(self) noexcept nogil:
        """Forward over the window from its stored start state; activations into W*."""
        cdef Py_ssize_t L = self.window, n = self.n, A = self.A, P = self.P, j, t, src, x
        cdef double* th = <double*>cnp.PyArray_DATA(self.theta)
        cdef double* Wh = <double*>cnp.PyArray_DATA(self.Wh)
        cdef double* Wc = <double*>cnp.PyArray_DATA(self.Wc)
        cdef double* Wu = <double*>cnp.PyArray_DATA(self.Wu)
        cdef double* Wv = <double*>cnp.PyArray_DATA(self.Wv)
        cdef double* Wr = <double*>cnp.PyArray_DATA(self.Wr)
        cdef double* Wact = <double*>cnp.PyArray_DATA(self.Wact)
        cdef double* Wp = <double*>cnp.PyArray_DATA(self.Wp)
        cdef double* feat = <double*>cnp.PyArray_DATA(self.feat)
        cdef const double* offs = <double*>cnp.PyArray_DATA(self.offs)
        cdef const double* hs0 = <double*>cnp.PyArray_DATA(self.hs0)
        cdef const double* cs0 = <double*>cnp.PyArray_DATA(self.cs0)
        cdef const int64_t* xs = <int64_t*>cnp.PyArray_DATA(self.xs)
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
        cdef double* th = <double*>cnp.PyArray_DATA(self.theta)
        cdef double* RT = <double*>cnp.PyArray_DATA(self.RT)
        cdef double* WmhT = <double*>cnp.PyArray_DATA(self.WmhT)
        cdef double* WoT = <double*>cnp.PyArray_DATA(self.WoT)
        cdef Py_ssize_t n = self.n, P = self.P, A = self.A, i, j
        for i in range(n):
            for j in range(P):
                RT[j * n + i] = th[self.oR + i * P + j]
        if self.mult:
            for i in range(n):
                for j in range(n):
                    WmhT[j * n + i] = th[self.oWmh + i * n + j]
        for i in range(n + 1):
            for j in range(A):
                WoT[j * (n + 1) + i] = th[self.oWo + i * A + j]

    cdef void _window_backward(self) noexcept nogil:
        """Gradient of the window log-likelihood into ``grad`` (and, for the Riemannian step,
        this window's squared backpropagated values into ``diag`` and ``cross``)."""
        cdef Py_ssize_t L = self.window, n = self.n, A = self.A, P = self.P
        cdef Py_ssize_t t, i, j, k, y, x, src
        cdef double* g = <double*>cnp.PyArray_DATA(self.grad)
        cdef double* D = <double*>cnp.PyArray_DATA(self.diag)
        cdef double* C = <double*>cnp.PyArray_DATA(self.cross)
        cdef const double* RT = <double*>cnp.PyArray_DATA(self.RT)
        cdef const double* WmhT = <double*>cnp.PyArray_DATA(self.WmhT)
        cdef const double* WoT = <double*>cnp.PyArray_DATA(self.WoT)
        cdef const double* Wh = <double*>cnp.PyArray_DATA(self.Wh)
        cdef const double* Wc = <double*>cnp.PyArray_DATA(self.Wc)
        cdef const double* Wu = <double*>cnp.PyArray_DATA(self.Wu)
        cdef const double* Wv = <double*>cnp.PyArray_DATA(self.Wv)
        cdef const double* Wr = <double*>cnp.PyArray_DATA(self.Wr)
        cdef const double* Wact = <double*>cnp.PyArray_DATA(self.Wact)
        cdef const double* Wp = <double*>cnp.PyArray_DATA(self.Wp)
        cdef const int64_t* xs = <int64_t*>cnp.PyArray_DATA(self.xs)
        cdef double* dz = <double*>cnp.PyArray_DATA(self.dz)
        cdef double* dr = <double*>cnp.PyArray_DATA(self.dr)
        cdef double* du = <double*>cnp.PyArray_DATA(self.du)
        cdef double* dh = <double*>cnp.PyArray_DATA(self.dh)
        cdef double* dh_next = <double*>cnp.PyArray_DATA(self.dh_next)
        cdef double* dc = <double*>cnp.PyArray_DATA(self.dc)
        cdef double* err = <double*>cnp.PyArray_DATA(self.err)
        cdef const double* act
        cdef const double* hprev
        cdef double e, ds, dct, o, ig, fg, hv, rk, b2, m
        cdef bint metric = self.riemannian
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
                g[self.oWo + y] = g[self.oWo + y] + err[y]
            for i in range(n):
                hv = Wh[t * n + i]
                for y in range(A):
                    g[self.oWo + (i + 1) * A + y] = g[self.oWo + (i + 1) * A + y] + hv * err[y]
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
                g[self.ob + j] = g[self.ob + j] + dz[j]
                g[self.oE + x * P + j] = g[self.oE + x * P + j] + dz[j]
            for k in range(n):
                rk = Wr[(t - 1) * n + k] if self.mult else Wh[(t - 1) * n + k]
                for j in range(P):
                    g[self.oR + k * P + j] = g[self.oR + k * P + j] + rk * dz[j]
            if metric:
                for j in range(P):
                    b2 = dz[j] * dz[j]
                    D[self.ob + j] = D[self.ob + j] + b2
                    D[self.oE + x * P + j] = D[self.oE + x * P + j] + b2
                    C[self.oE + x * P + j] = C[self.oE + x * P + j] + b2
                for k in range(n):
                    rk = Wr[(t - 1) * n + k] if self.mult else Wh[(t - 1) * n + k]
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
            if self.mult:
                hprev = Wh + (t - 1) * n
                for j in range(n):
                    du[j] = dr[j] * Wv[(t - 1) * n + j]
                    m = dr[j] * Wu[(t - 1) * n + j]
                    g[self.oWmi + x * n + j] = g[self.oWmi + x * n + j] + m
                    if metric:
                        D[self.oWmi + x * n + j] = D[self.oWmi + x * n + j] + m * m
                for k in range(n):
                    hv = hprev[k]
                    for j in range(n):
                        g[self.oWmh + k * n + j] = g[self.oWmh + k * n + j] + hv * du[j]
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
        cdef double* th = <double*>cnp.PyArray_DATA(self.theta)
        cdef double* g = <double*>cnp.PyArray_DATA(self.grad)
        cdef double* m = <double*>cnp.PyArray_DATA(self.mom)
        cdef double* v = <double*>cnp.PyArray_DATA(self.vel)
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
        for i in range(self.size):
            gi = g[i] * scale
            m[i] = self.beta1 * m[i] + (1.0 - self.beta1) * gi
            v[i] = self.beta2 * v[i] + (1.0 - self.beta2) * gi * gi
            th[i] = th[i] + rate * (m[i] / (1.0 - self.b1t)) / (
                sqrt(v[i] / (1.0 - self.b2t)) + self.adam_eps)

    cdef void _riemannian(self) noexcept nogil:
        """theta += rate M^-1 g with the quasi-diagonal unitwise metric: each pre-activation
        unit's bias and incoming weights (eq. 34-35 with the bias as index 0), the
        multiplicative factors' weights diagonally; the output layer is left to QDH."""
        cdef double* th = <double*>cnp.PyArray_DATA(self.theta)
        cdef double* g = <double*>cnp.PyArray_DATA(self.grad)
        cdef double* D = <double*>cnp.PyArray_DATA(self.diag)
        cdef double* C = <double*>cnp.PyArray_DATA(self.cross)
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
                    step = (g[w] * scale - g0 * c / m00) / (D[w] + eps - c * c / m00)
                    th[w] = th[w] + rate * step
                    bias = bias - c / m00 * step
            th[self.ob + j] = th[self.ob + j] + rate * bias
        if self.mult:
            for w in range(self.oWmh, self.oWmi + A * n):
                th[w] = th[w] + rate * g[w] * scale / (D[w] + eps)

    def _train(self):
        cdef double* D = <double*>cnp.PyArray_DATA(self.diag)
        cdef double* C = <double*>cnp.PyArray_DATA(self.cross)
        cdef Py_ssize_t i
        with nogil:
            self._window_forward()
            self._transpose()
            if self.riemannian:
                for i in range(self.size):
                    D[i] = self.decay * D[i]
                    C[i] = self.decay * C[i]
            self._window_backward()
            if self.riemannian:
                self._riemannian()
            else:
                self._adam()
        self.steps += 1

    # ------------------------------------------------------------ test hooks

    def py_window_objective(self, theta=None):
        """The current window's log-likelihood (natural log) under ``theta`` (default: the
        current parameters), from the stored state at the window's start."""
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
        self._transpose()
        self._window_backward()
        return self.grad.copy()

    def py_window(self):
        """(symbols, h0, c0, offsets) of the current window in time order."""
        order = (np.arange(self.window) + self.pos) % self.window
        return (self.xs[order].copy(), self.hs0[order[0]].copy(), self.cs0[order[0]].copy(),
                self.offs[order].copy() if self.n_experts else None)

    def py_step(self, const double[::1] h, const double[::1] c, Py_ssize_t x):
        """One transition of the cell from (h, c) on input x: returns (h', c')."""
        n = self.n
        sc = np.zeros(3 * n + self.P)
        cdef double[::1] s = sc
        h_out, c_out = np.zeros(n), np.zeros(n)
        cdef double[::1] ho = h_out, co = c_out
        self._cell(&h[0], &c[0], x, &s[0], &s[n], &s[2 * n], &s[3 * n], &ho[0], &co[0])
        return h_out, c_out

    def expert_weights(self):
        """The experts' weights beta at the last prediction, and their gates U."""
        return self.beta[:self.n_experts].copy(), self.U[:, :self.n_experts].copy()
