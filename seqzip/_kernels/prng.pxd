# cython: language_level=3
# splitmix64: the one pseudo-random stream of seqzip (part of the file format: the header's
# seed fixes every random choice of a model through it).  Python reaches it through
# seqzip._kernels.prng.SplitMix64; kernels cimport these inline functions.
from libc.stdint cimport uint64_t


cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    state[0] = state[0] + 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline double splitmix_uniform(uint64_t* state) noexcept nogil:
    """Uniform in [0, 1) with 53 random bits."""
    return <double>(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0)


cdef inline double splitmix_normal(uint64_t* state) noexcept nogil:
    """Approximately standard normal (Irwin-Hall: the sum of 12 uniforms minus 6): no libm."""
    cdef double s = 0.0
    cdef int k
    for k in range(12):
        s = s + splitmix_uniform(state)
    return s - 6.0
