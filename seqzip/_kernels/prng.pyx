# cython: language_level=3
"""splitmix64 for Python code that draws a model's initial parameters (``prng.pxd``).

    >>> rng = SplitMix64(0)
    >>> hex(rng.next())
    '0xe220a8397b1dcdaf'
    >>> 0.0 <= rng.uniform() < 1.0 and rng.below(10) in range(10)
    True
"""
import numpy as np
from libc.stdint cimport uint64_t

from seqzip._kernels.prng cimport splitmix64, splitmix_normal, splitmix_uniform


cdef class SplitMix64:
    """The stream of ``seed``: ``next()`` 64-bit words, ``uniform()`` in [0, 1),
    ``below(n)`` in [0, n) (modulo bias < n / 2**64)."""
    cdef uint64_t state

    def __init__(self, uint64_t seed):
        self.state = seed

    def next(self):
        return splitmix64(&self.state)

    def uniform(self):
        return splitmix_uniform(&self.state)

    def below(self, uint64_t n):
        if n == 0:
            raise ValueError("below(0)")
        return splitmix64(&self.state) % n


def normal_stream(uint64_t seed, Py_ssize_t count):
    """``count`` approximately standard normal numbers from the stream of ``seed``."""
    out = np.empty(count)
    cdef double[::1] o = out
    cdef uint64_t state = seed
    cdef Py_ssize_t i
    for i in range(count):
        o[i] = splitmix_normal(&state)
    return out
