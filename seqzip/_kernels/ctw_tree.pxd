# cython: language_level=3
"""The CTW kernel's storage (seqzip/_kernels/ctw.pyx): its two record types, the arrays of a
tree being loaded, the child map's probe, and the check that a loaded tree is one the kernel
could have built (a model file is untrusted input)."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t

cdef enum:
    MAX_DEPTH = 32
    N_CLASSES = 9            # block capacities 1, 2, 4, ..., 256 entries

cdef extern from *:
    """
    #define SEQZIP_CTW_EMPTY 0xFFFFFFFFu
    #define SEQZIP_CTW_BETA_MAX 0x1p600
    #define SEQZIP_CTW_BETA_MIN 0x1p-600
    """
    const uint32_t EMPTY "SEQZIP_CTW_EMPTY"          # a context node without a block
    const double BETA_MAX "SEQZIP_CTW_BETA_MAX"      # 2^600: beta's clamp
    const double BETA_MIN "SEQZIP_CTW_BETA_MIN"      # 2^-600


cdef packed struct ChildSlot:  # one slot of the child map: 12 bytes, key and value together
    uint64_t key             # parent * 256 + symbol + 1 (0: empty)
    uint32_t node            # the child context node


cdef struct Entry:
    double beta              # Pe(s) / (Pw of the children), the weighting ratio
    uint16_t count0          # zeros seen by this decision node in this context
    uint16_t count1          # ones seen
    uint8_t node             # decision node id, 1 .. 2^B - 1


cdef class _Tree:
    cdef Entry* entries
    cdef uint32_t* node_block
    cdef uint16_t* node_count
    cdef uint8_t* node_class
    cdef ChildSlot* children
    cdef uint32_t* free_lists[N_CLASSES]
    cdef uint32_t free_count[N_CLASSES]
    cdef uint32_t path[MAX_DEPTH + 1]
    cdef uint32_t where[MAX_DEPTH + 1][256]
    cdef uint64_t stamp[MAX_DEPTH + 1][256]


cdef inline uint64_t slot_of(uint64_t key, uint64_t mask) noexcept nogil:
    """The home slot of a child link's key in a map of ``mask + 1`` slots (linear probing)."""
    return ((key * 0x9E3779B97F4A7C15ULL) >> 20) & mask


cdef int check_tree(_Tree t, int code_bits, uint32_t count_limit, Py_ssize_t A,
                    uint64_t entries_used, uint64_t nodes_used, uint64_t child_mask,
                    uint64_t path_len, uint64_t tick, uint64_t predicted,
                    history) except -1
