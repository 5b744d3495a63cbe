# cython: language_level=3
# Symbol experts: symbol-mode kernels (CTW, order2, an online network) advanced through their
# ModelInterface; each one's distribution over the alphabet becomes a binary tree of masses,
# and a bit's input is the log-odds of the masses below the node's two children.
from libc.stdlib cimport calloc
from seqzip._core cimport STATUS_OK, ModelInterface
from seqzip._kernels.cm.tables cimport stretch_p

cdef enum:
    MAX_SYMBOL_EXPERTS = 4


cdef struct SymbolExperts:
    int n                # experts (the network, when there is one, last)
    int A, B
    ModelInterface iface[MAX_SYMBOL_EXPERTS + 1]
    double* probs        # (A,)
    double* trees        # (max(n, 1), 2^(B+1)) masses below each node
    int tree_size


cdef inline int se_init(SymbolExperts* e, int A, int B) noexcept nogil:
    e.A = A
    e.B = B
    e.tree_size = 2 << B
    e.probs = <double*>calloc(A, sizeof(double))
    e.trees = <double*>calloc(max(e.n, 1) * e.tree_size, sizeof(double))
    return -1 if e.probs == NULL or e.trees == NULL else 0


cdef inline size_t se_memory(const SymbolExperts* e) noexcept nogil:
    return e.A * sizeof(double) + max(e.n, 1) * e.tree_size * sizeof(double)


cdef inline int se_begin(SymbolExperts* e) noexcept:
    """Each expert's distribution for the next symbol, as its tree."""
    cdef int k, x, status, n = 1 << e.B
    cdef double* tree
    for k in range(e.n):
        status = e.iface[k].predict(e.iface[k].state, e.probs)
        if status < 0:
            return status
        tree = e.trees + k * e.tree_size
        for x in range(n):
            tree[n + x] = e.probs[x] if x < e.A else 0.0
        for x in range(n - 1, 0, -1):
            tree[x] = tree[2 * x] + tree[2 * x + 1]
    return STATUS_OK


cdef inline double se_input(const SymbolExperts* e, int k, int node) noexcept nogil:
    """Expert k's log-odds that the bit at ``node`` is 1."""
    cdef const double* tree = e.trees + k * e.tree_size
    cdef double t = tree[node]
    return stretch_p(tree[2 * node + 1] / t) if t > 0.0 else 0.0


cdef inline int se_update(SymbolExperts* e, int x) noexcept:
    cdef int k, status
    for k in range(e.n):
        status = e.iface[k].update(e.iface[k].state, x)
        if status < 0:
            return status
    return STATUS_OK
