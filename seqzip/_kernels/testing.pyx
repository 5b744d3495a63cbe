# cython: language_level=3
"""Python wrappers of the kernels' inline helpers (``detmath.pxd``, ``qd.pxd``,
``mixing.pxd``), so that the tests can hold each one to its definition.  Not used by seqzip
itself.

    >>> py_exp(0.0), py_log(1.0), py_tanh(0.0)
    (1.0, 0.0, 0.0)
"""
import numpy as np

from seqzip._kernels.detmath cimport det_exp, det_log, det_logistic, det_softmax, det_tanh
from seqzip._kernels.mixing cimport expert_logs, floor_mix, mixed_softmax
from seqzip._kernels.qd cimport cholesky_solve, qd_coordinate, qd_row_step, qd_solve


def py_exp(double x):
    return det_exp(x)


def py_log(double x):
    return det_log(x)


def py_tanh(double x):
    return det_tanh(x)


def py_logistic(double x):
    return det_logistic(x)


def py_softmax(const double[::1] a, const double[:, ::1] w, offset=None):
    """softmax(a . w + offset) for a (n,), w (n, A)."""
    cdef Py_ssize_t n = a.shape[0], A = w.shape[1]
    cdef double[::1] off
    out = np.empty(A)
    cdef double[::1] o = out
    if w.shape[0] != n:
        raise ValueError("a and w disagree")
    if offset is None:
        det_softmax(&a[0], &w[0, 0], &o[0], n, A)
    else:
        off = np.ascontiguousarray(offset, dtype=np.float64)
        det_softmax(&a[0], &w[0, 0], &o[0], n, A, &off[0])
    return out


def py_mixed_softmax(const double[::1] a, const double[:, ::1] w, const double[:, ::1] lexp,
                     const double[:, ::1] U):
    """(softmax(a . w + sum_e beta_e lexp[e]), beta) with beta = a . U."""
    cdef Py_ssize_t n = a.shape[0], A = w.shape[1], E = lexp.shape[0]
    out, beta, offset = np.empty(A), np.empty(max(E, 1)), np.empty(A)
    cdef double[::1] o = out, b = beta, f = offset
    mixed_softmax(&a[0], &w[0, 0], n, A, &lexp[0, 0], &U[0, 0], E, &b[0], &f[0], &o[0])
    return out, beta[:E]


def py_expert_logs(const double[::1] probs):
    out = np.empty(probs.shape[0])
    cdef double[::1] o = out
    expert_logs(&probs[0], &o[0], probs.shape[0])
    return out


def py_floor_mix(const double[::1] p):
    out = np.empty(p.shape[0])
    cdef double[::1] o = out
    floor_mix(&p[0], &o[0], p.shape[0])
    return out


def py_qd_coordinate(double g, double d, double c, double g0, double m00):
    return qd_coordinate(g, d, c, g0, m00)


def py_qd_solve(const double[::1] grad, const double[::1] diag, const double[::1] cross):
    """M^-1 grad for the quasi-diagonal M with diagonal ``diag`` and bias row ``cross``."""
    out = np.empty(grad.shape[0])
    cdef double[::1] o = out
    qd_solve(&grad[0], &diag[0], &cross[0], &o[0], grad.shape[0], 1)
    return out


def py_qd_row_step(const double[::1] a, double var, double target, double[::1] hd,
                   double[::1] hc, double gamma, double eps, double rate, double[::1] w):
    """One QDH step in place on (hd, hc, w) (stride 1)."""
    qd_row_step(&a[0], a.shape[0], var, target, &hd[0], &hc[0], 1, gamma, eps, rate, &w[0])


def py_cholesky_solve(M, b):
    """x with M x = b, or None when M is not positive definite."""
    cdef double[::1] m = np.array(M, dtype=np.float64).reshape(-1)
    x = np.array(b, dtype=np.float64)
    cdef double[::1] v = x
    if cholesky_solve(&m[0], &v[0], v.shape[0]) != 0:
        return None
    return x


# ---------------------------------------------------------------- kernels for the loop's tests

from seqzip._core cimport (BIT_MODE, PROB_ONE, STATUS_MEMORY, STATUS_OK, STATUS_SYMBOL,
                           SYMBOL_MODE, Kernel, keep_exception)


cdef class BitFrequencies(Kernel):
    """A bit-mode kernel: adaptive counts per node of the binary decomposition of A symbols
    (order 0), P(1) = (n1 + 1/2) / (n0 + n1 + 1) in units of 2^-16; a bit whose other branch
    holds no symbol of the alphabet is forced (0 or 65536).

        >>> k = BitFrequencies(5)
        >>> k.bits, k.predict_bit()
        (3, 32768)
    """
    cdef int A, B, node
    cdef long[::1] n0, n1

    def __cinit__(self, int alphabet_size):
        if alphabet_size < 2 or alphabet_size > 256:
            raise ValueError("alphabet_size must be in 2..256")
        self.A = alphabet_size
        self.B = 1
        while (1 << self.B) < alphabet_size:
            self.B += 1
        self.iface.alphabet_size = alphabet_size
        self.iface.mode = BIT_MODE
        self.iface.bits = self.B
        self.n0 = np.zeros(1 << self.B, dtype=np.int_)
        self.n1 = np.zeros(1 << self.B, dtype=np.int_)
        self.node = 1

    cdef int c_predict_bit(self) noexcept:
        cdef int depth = 0, n = self.node, first_one
        while n > 1:
            n >>= 1
            depth += 1
        # smallest symbol under the 1-branch of this node
        first_one = ((self.node * 2 + 1) << (self.B - depth - 1)) - (1 << self.B)
        if first_one >= self.A:
            return 0
        cdef double p = (self.n1[self.node] + 0.5) / (self.n0[self.node] + self.n1[self.node] + 1.0)
        cdef int q = <int>(p * PROB_ONE)
        return 1 if q < 1 else (PROB_ONE - 1 if q > PROB_ONE - 1 else q)

    cdef int c_update_bit(self, int bit) noexcept:
        if bit:
            self.n1[self.node] += 1
        else:
            self.n0[self.node] += 1
        self.node = self.node * 2 + bit
        if self.node >= (1 << self.B):
            self.node = 1
        return STATUS_OK


cdef class Misbehaving(Kernel):
    """A symbol-mode kernel that predicts uniformly, except: from symbol ``nan_at`` on its
    predictions hold a NaN (or, with ``negative``, a negative entry), at symbol ``oom_at``
    its update reports STATUS_MEMORY, and at symbol ``raise_at`` Python code inside its update
    raises KeyboardInterrupt (as a signal inside numpy would)."""
    cdef int A
    cdef long seen, nan_at, oom_at, raise_at
    cdef bint negative

    def __cinit__(self, int alphabet_size, long nan_at=-1, long oom_at=-1, bint negative=False,
                  long raise_at=-1):
        self.A = alphabet_size
        self.iface.alphabet_size = alphabet_size
        self.iface.mode = SYMBOL_MODE
        self.nan_at, self.oom_at, self.negative = nan_at, oom_at, negative
        self.raise_at = raise_at
        self.seen = 0

    cdef int c_predict(self, double* probs) noexcept:
        cdef int x
        for x in range(self.A):
            probs[x] = 1.0 / self.A
        if 0 <= self.nan_at <= self.seen:
            probs[self.seen % self.A] = -1.0 if self.negative else float("nan")
        return STATUS_OK

    cdef int c_update(self, int symbol) noexcept:
        if symbol < 0 or symbol >= self.A:
            return STATUS_SYMBOL
        if self.seen == self.oom_at:
            return STATUS_MEMORY
        if self.seen == self.raise_at:
            try:
                raise KeyboardInterrupt()
            except BaseException as exc:
                return keep_exception(exc)
        self.seen += 1
        return STATUS_OK
