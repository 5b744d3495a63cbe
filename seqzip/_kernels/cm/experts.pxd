# cython: language_level=3
# Symbol experts: symbol-mode kernels (CTW, order2, an online network) advanced through their
# ModelInterface; each one's distribution over the alphabet becomes a binary tree of masses,
# and a bit's input is the log-odds of the masses below the node's two children.  One
# component (``component.pxd``) for them all: one input per expert.
from libc.stdlib cimport calloc, free
from seqzip._core cimport STATUS_OK, SYMBOL_MODE, Kernel, ModelInterface
from seqzip._kernels.cm.component cimport Component, Cursor, nothing_bit, nothing_walk
from seqzip._kernels.cm.cxinputs cimport LIN_SCALE
from seqzip._kernels.cm.field cimport F_BYTES
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
    bint top_input       # net_sel bit 0 (netsel.pxd): one more input, from the network's
    bint lin_input       # net_sel bit 3 (netsel.pxd): one more input, its P(1) linear
    bint keep_top        # net_sel & 7 != 0: the top is part of the state
    int top              # top symbol's leaf node (2^B + symbol), set by se_begin


cdef inline int se_init(SymbolExperts* e, int A, int B) noexcept nogil:
    e.A = A
    e.B = B
    e.tree_size = 2 << B
    e.probs = <double*>calloc(A, sizeof(double))
    e.trees = <double*>calloc(max(e.n, 1) * e.tree_size, sizeof(double))
    return -1 if e.probs == NULL or e.trees == NULL else 0


cdef inline size_t se_memory(const SymbolExperts* e) noexcept nogil:
    return e.A * sizeof(double) + max(e.n, 1) * e.tree_size * sizeof(double)


cdef inline int se_begin(SymbolExperts* e) noexcept nogil:
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
    se_find_top(e)
    return STATUS_OK


cdef inline void se_find_top(SymbolExperts* e) noexcept nogil:
    """The network's (the last expert's) most probable symbol, the lowest on a tie."""
    cdef int x, n = e.tree_size >> 1
    cdef const double* tree = e.trees + (e.n - 1) * e.tree_size
    if e.keep_top:
        e.top = n
        for x in range(n + 1, n + e.A):
            if tree[x] > tree[e.top]:
                e.top = x


cdef inline double se_top_share(const SymbolExperts* e, int node, int depth, double* p1,
                                int* agree, int* expect) noexcept nogil:
    """The network's (the last expert's) P(1) at ``node`` (``depth`` bits in), whether
    those bits are its top symbol's, the bit that symbol has next, and its share of the mass
    below the node (0 when they disagree)."""
    cdef const double* tree = e.trees + (e.n - 1) * e.tree_size
    cdef int n = e.tree_size >> 1, top = n + (e.top & (n - 1)), B = e.B
    cdef double t = tree[node]
    p1[0] = tree[2 * node + 1] / t if t > 0.0 else 0.5
    agree[0] = (top >> (B - depth)) == node
    expect[0] = (top >> (B - 1 - depth)) & 1
    return tree[top] / t if agree[0] and t > 0.0 else 0.0


cdef inline double se_top_input(const SymbolExperts* e, const Cursor* at) noexcept nogil:
    """net_sel bit 0's input: the top symbol's share's log-odds, + if it expects a 1."""
    cdef double p1, share
    cdef int agree, expect
    share = se_top_share(e, at.node, at.depth, &p1, &agree, &expect)
    if not agree:
        return 0.0
    return stretch_p(share) if expect else -stretch_p(share)


cdef inline double se_linear_input(const SymbolExperts* e, int node) noexcept nogil:
    """net_sel bit 3's input: the network's P(1) at ``node`` in the linear domain,
    (p - 1/2) * LIN_SCALE as cx_inputs' (0 when its mass there is 0)."""
    cdef const double* tree = e.trees + (e.n - 1) * e.tree_size
    cdef double t = tree[node]
    return (tree[2 * node + 1] / t - 0.5) * LIN_SCALE if t > 0.0 else 0.0


cdef inline double se_input(const SymbolExperts* e, int k, int node) noexcept nogil:
    """Expert k's log-odds that the bit at ``node`` is 1."""
    cdef const double* tree = e.trees + k * e.tree_size
    cdef double t = tree[node]
    return stretch_p(tree[2 * node + 1] / t) if t > 0.0 else 0.0


cdef inline int se_update(SymbolExperts* e, int x) noexcept nogil:
    cdef int k, status
    for k in range(e.n):
        status = e.iface[k].update(e.iface[k].state, x)
        if status < 0:
            return status
    return STATUS_OK


# ---------------------------------------------------------------- the component

cdef inline void se_c_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef const SymbolExperts* e = <const SymbolExperts*>s
    cdef int k
    for k in range(e.n):
        x[k] = se_input(e, k, at.node)
    if e.top_input:
        x[e.n] = se_top_input(e, at)
    if e.lin_input:
        x[e.n + e.top_input] = se_linear_input(e, at.node)


cdef inline int se_c_update(void* s, const Cursor* at, int x) noexcept nogil:
    return se_update(<SymbolExperts*>s, x)


cdef inline int se_c_begin(void* s, const Cursor* at) noexcept nogil:
    return se_begin(<SymbolExperts*>s)


cdef inline size_t se_c_memory(const void* s) noexcept nogil:
    return se_memory(<const SymbolExperts*>s)


cdef inline void se_c_free(void* s) noexcept nogil:
    cdef SymbolExperts* e = <SymbolExperts*>s
    free(e.probs)
    free(e.trees)
    free(e)


cdef inline list se_c_fields(void* s):
    cdef SymbolExperts* e = <SymbolExperts*>s
    out = [("expert_probs", F_BYTES, <size_t>e.probs, e.A * 8, False),
           ("trees", F_BYTES, <size_t>e.trees, max(e.n, 1) * e.tree_size * 8, False)]
    if e.keep_top:  # (any value is safe: kept inside the tree when used)
        out.append(("net_top", F_BYTES, <size_t>&e.top, sizeof(int), False))
    return out


cdef inline int se_build(Component* c, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """The symbol-mode kernels of the list ``arg`` (the network, if any, last)."""
    cdef SymbolExperts* e = <SymbolExperts*>calloc(1, sizeof(SymbolExperts))
    cdef Kernel expert
    cdef int k
    if e == NULL:
        raise MemoryError()
    c.state, c.free = e, se_c_free
    c.predict, c.learn, c.next_bit = se_c_predict, nothing_bit, nothing_bit
    c.update, c.begin, c.walk = se_c_update, se_c_begin, nothing_walk
    c.memory, c.fields = se_c_memory, se_c_fields
    if len(arg) > MAX_SYMBOL_EXPERTS + 1:
        raise ValueError(f"at most {MAX_SYMBOL_EXPERTS} symbol experts and a network")
    e.n = c.n_inputs = len(arg)
    e.top_input = bool(getattr(spec, "net_sel", 0) & 1) and e.n > 0
    e.lin_input = bool(getattr(spec, "net_sel", 0) & 8) and e.n > 0
    c.n_inputs += e.top_input + e.lin_input
    e.keep_top = getattr(spec, "net_sel", 0) & 7 != 0
    for k in range(e.n):
        expert = arg[k]
        if expert.iface.mode != SYMBOL_MODE or expert.iface.alphabet_size != at.A:
            raise ValueError("symbol experts must be symbol-mode kernels over the alphabet")
        e.iface[k] = expert.iface
    if se_init(e, at.A, at.B) < 0:
        raise MemoryError()
    return 0
