# cython: language_level=3
# Deterministic exp, log and tanh for the coding path (SPEC section 2).
#
# libm and numpy pick different code paths per CPU and version, so the coding loop never calls
# them.  These use range reduction and fixed polynomials in plain + - * / on float64, plus
# exact bit manipulation for powers of two, so every build computes the same bits (the core is
# compiled with -ffp-contract=off, so no FMA contraction either).  Accuracy: a few ulp.

from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy

# Constants are written as literals inside the functions (a .pxd holds no variables):
# ln 2 split in a high part with trailing zero bits (6.93147180369123816490e-01) and a low part
# (1.90821492927058770002e-10), so that k * ln2_hi is exact for |k| < 2**11 (Cody-Waite).


cdef inline double _pow2(int64_t k) noexcept nogil:
    """2**k for -1022 <= k <= 1023, built from its bits."""
    cdef uint64_t bits = <uint64_t>(k + 1023) << 52
    cdef double out
    memcpy(&out, &bits, 8)
    return out


cdef inline double det_exp(double x) noexcept nogil:
    cdef double r, p, kd
    cdef int64_t k
    if x != x:
        return x
    if x > 709.0:
        x = 709.0
    elif x < -708.0:
        return 0.0
    kd = x * 1.44269504088896338700e+00
    k = <int64_t>(kd + 0.5) if kd >= 0 else -<int64_t>(0.5 - kd)
    r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10          # |r| <= ln2 / 2
    # Taylor series to degree 13, Horner form: error < 1e-17 on |r| <= 0.35.
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _pow2(k)


cdef inline double det_log(double x) noexcept nogil:
    """Natural log for x > 0 (returns -745 for x <= 0: a floor, not an error, on this path)."""
    cdef uint64_t bits
    cdef int64_t e
    cdef double m, s, s2, p
    if x <= 0.0:
        return -745.0
    memcpy(&bits, &x, 8)
    e = <int64_t>((bits >> 52) & 0x7FF)
    if e == 0:                                   # subnormal: scale up first
        x = x * 18014398509481984.0  # 2**54
        memcpy(&bits, &x, 8)
        e = <int64_t>((bits >> 52) & 0x7FF) - 54
    e = e - 1023
    bits = (bits & (<uint64_t>0xFFFFFFFFFFFFFULL)) | (<uint64_t>1023 << 52)
    memcpy(&m, &bits, 8)                          # m in [1, 2)
    if m > 1.41421356237309504880:
        m = m * 0.5
        e = e + 1
    s = (m - 1.0) / (m + 1.0)                     # |s| <= 0.1716
    s2 = s * s
    # log m = 2 atanh(s) = 2 (s + s^3/3 + ... + s^21/21): error < 1e-18.
    p = 1.0 / 21.0
    p = p * s2 + 1.0 / 19.0
    p = p * s2 + 1.0 / 17.0
    p = p * s2 + 1.0 / 15.0
    p = p * s2 + 1.0 / 13.0
    p = p * s2 + 1.0 / 11.0
    p = p * s2 + 1.0 / 9.0
    p = p * s2 + 1.0 / 7.0
    p = p * s2 + 1.0 / 5.0
    p = p * s2 + 1.0 / 3.0
    p = p * s2 + 1.0
    return 2.0 * s * p + e * 1.90821492927058770002e-10 + e * 6.93147180369123816490e-01


cdef inline double det_tanh(double x) noexcept nogil:
    cdef double e, r, p
    cdef int n
    if x > 20.0:
        return 1.0
    if x < -20.0:
        return -1.0
    if -0.35 < x < 0.35:
        # tanh x = em1 / (em1 + 2) with em1 = exp(2x) - 1 summed directly (no cancellation):
        # em1 = r (1 + r/2 (1 + r/3 (1 + ... (1 + r/18)))), r = 2x, |r| < 0.7.
        r = 2.0 * x
        p = 1.0
        for n in range(18, 1, -1):
            p = 1.0 + p * r / n
        e = r * p
        return e / (e + 2.0)
    e = det_exp(2.0 * x)
    return (e - 1.0) / (e + 1.0)


cdef inline double det_logistic(double x) noexcept nogil:
    return 1.0 / (1.0 + det_exp(-x))


cdef inline void det_softmax(const double* a, const double* w, double* out, Py_ssize_t n,
                             Py_ssize_t A, const double* offset=NULL) noexcept nogil:
    """out = softmax(a . w + offset) for a (n,), w (n, A) row-major and an optional offset (A,).

    Each logit is summed over i = 0..n-1 in order (then the offset is added), whatever the loop
    nesting: the inner loop runs along the contiguous rows of w so that the compiler can
    vectorise it across y without reassociating any sum.
    """
    cdef Py_ssize_t i, y
    cdef double top, total = 0.0, ai
    for y in range(A):
        out[y] = 0.0
    for i in range(n):
        ai = a[i]
        for y in range(A):
            out[y] = out[y] + ai * w[i * A + y]
    if offset != NULL:
        for y in range(A):
            out[y] = out[y] + offset[y]
    top = out[0]
    for y in range(1, A):
        if out[y] > top:
            top = out[y]
    for y in range(A):
        out[y] = det_exp(out[y] - top)
        total = total + out[y]
    for y in range(A):
        out[y] = out[y] / total
