# cython: language_level=3
"""The CTW kernel's storage (declared in ctw_tree.pxd): the arrays of a tree being loaded, and
the check that a loaded tree is one the kernel could have built.  A model file is untrusted
input: a context node claiming block class 32 would make ``1 << class`` wrap and index past the
9 free lists, so the check refuses it before the kernel takes the arrays.

    >>> from seqzip._kernels.ctw import CTWKernel
    >>> k = CTWKernel(4, 3, 0.5, 0, 255, 1 << 20, 0)
    >>> _ = k.predict(); k.update(2); _ = k.predict(); k.update(1)
    >>> state = k.get_state()
    >>> CTWKernel(4, 3, 0.5, 0, 255, 1 << 20, 0).set_state(state)  # a tree it could build
    >>> state["node_class"] = state["node_class"].copy(); state["node_class"][0] = 32
    >>> CTWKernel(4, 3, 0.5, 0, 255, 1 << 20, 0).set_state(state)
    Traceback (most recent call last):
    ValueError: model state holds an impossible block class
"""
cimport cython
import numpy as np
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memset


@cython.final
cdef class _Tree:
    """Arrays of a tree being loaded, owned until the kernel takes them (freed otherwise)."""

    def __dealloc__(self):
        cdef int i
        for i in range(N_CLASSES):
            free(self.free_lists[i])
        free(self.entries)
        free(self.node_block)
        free(self.node_count)
        free(self.node_class)
        free(self.children)


cdef int check_tree(_Tree t, int code_bits, uint32_t count_limit, Py_ssize_t A,
                    uint64_t entries_used, uint64_t nodes_used, uint64_t child_mask,
                    uint64_t path_len, uint64_t tick, uint64_t predicted,
                    history) except -1:
    """Raise ValueError unless ``t`` is a tree this kernel could have built (see
    CTWKernel.set_state).  Linear in the arrays' sizes (plus one sort of the blocks)."""
    cdef uint64_t n_nodes = 1u << code_bits, i, j, k, size, start, count, n_blocks
    cdef uint64_t key, home, parent, child, run, n_keys = 0
    cdef int cls, d
    cdef uint8_t seen[256]
    cdef const Entry* e
    n_blocks = nodes_used
    for cls in range(N_CLASSES):
        n_blocks += t.free_count[cls]
    block_start = np.empty(n_blocks, dtype=np.uint64)
    block_size = np.empty_like(block_start)
    cdef uint64_t[::1] starts = block_start, sizes = block_size
    n_blocks = 0
    for i in range(nodes_used):  # the live blocks and their entries
        start, count, cls = t.node_block[i], t.node_count[i], t.node_class[i]
        if cls >= N_CLASSES:
            raise ValueError("model state holds an impossible block class")
        if start == EMPTY:
            if count:
                raise ValueError("model state holds entries of a context without a block")
            continue
        size = 1u << cls
        if count > size or start + size > entries_used:
            raise ValueError("model state holds a block outside the entry pool")
        starts[n_blocks], sizes[n_blocks] = start, size
        n_blocks += 1
        memset(seen, 0, sizeof(seen))
        for j in range(start, start + count):
            e = &t.entries[j]
            if e.node < 1 or e.node >= n_nodes or seen[e.node]:
                raise ValueError("model state holds an impossible decision node")
            seen[e.node] = 1
            if (<uint32_t>e.count0 + e.count1 > count_limit or e.count0 > 65534 or
                    e.count1 > 65534 or not (BETA_MIN <= e.beta <= BETA_MAX)):
                raise ValueError("model state holds impossible counts")
    for cls in range(N_CLASSES):  # the free blocks
        size = 1u << cls
        for j in range(t.free_count[cls]):
            start = t.free_lists[cls][j]
            if start + size > entries_used:
                raise ValueError("model state holds a free block outside the entry pool")
            starts[n_blocks], sizes[n_blocks] = start, size
            n_blocks += 1
    order = np.argsort(block_start[:n_blocks], kind="stable")
    first = block_start[:n_blocks][order]
    ends = first + block_size[:n_blocks][order]
    if n_blocks > 1 and (first[1:n_blocks] < ends[0:n_blocks - 1]).any():
        raise ValueError("model state holds overlapping blocks")
    # The child map: every link findable, from an older node to a younger one, each node
    # (but the root) the child of exactly one link.
    parents = np.zeros(nodes_used, dtype=np.uint8)
    cdef uint8_t[::1] has_parent = parents
    k = 0
    while k <= child_mask and t.children[k].key != 0:
        k += 1
    if k > child_mask:
        raise ValueError("model state holds a full child map")
    run = 0
    for j in range(1, child_mask + 2):
        i = (k + j) & child_mask
        key = t.children[i].key
        if key == 0:
            run = 0
            continue
        run += 1
        n_keys += 1
        home = slot_of(key, child_mask)  # in the state's map, not this kernel's
        if ((i - home) & child_mask) >= run:
            raise ValueError("model state holds a child link the map cannot find")
        parent, child = (key - 1) >> 8, t.children[i].node
        if (parent >= nodes_used or <int64_t>((key - 1) & 255) >= A or
                child >= nodes_used or child <= parent or has_parent[child]):
            raise ValueError("model state holds an impossible child link")
        has_parent[child] = 1
    if n_keys != nodes_used - 1:
        raise ValueError("model state holds a child map of the wrong size")
    # The walk's caches: the path, and the entries it found when a prediction is pending.
    # Without a pending prediction the next step walks the tree again: path and cache
    # are not read.
    if predicted and t.path[0] != 0:
        raise ValueError("model state holds an impossible context path")
    for d in range(1, path_len if predicted else 1):  # path[d] = child(path[d-1], ...)
        key = <uint64_t>t.path[d - 1] * 256 + <uint64_t>history[d - 1] + 1
        i = slot_of(key, child_mask)
        while t.children[i].key != 0 and t.children[i].key != key:
            i = (i + 1) & child_mask  # ends: the map has an empty slot (checked above)
        if t.children[i].key != key or t.children[i].node != t.path[d]:
            raise ValueError("model state holds an impossible context path")
    for d in range(MAX_DEPTH + 1):
        for j in range(256):
            if t.stamp[d][j] > tick:
                raise ValueError("model state holds an impossible cache stamp")
            if predicted and t.stamp[d][j] == tick:
                if d >= <int>path_len:
                    raise ValueError("model state holds an impossible cache stamp")
                start = t.node_block[t.path[d]]
                if (start == EMPTY or not start <= t.where[d][j] <
                        start + t.node_count[t.path[d]] or
                        t.entries[t.where[d][j]].node != j):
                    raise ValueError("model state holds an impossible cache entry")
    if predicted:  # and every entry of the path is in the cache (else update adds twins)
        for d in range(path_len):
            start = t.node_block[t.path[d]]
            if start == EMPTY:
                continue
            for j in range(start, start + t.node_count[t.path[d]]):
                if (t.stamp[d][t.entries[j].node] != tick or
                        t.where[d][t.entries[j].node] != j):
                    raise ValueError("model state holds an incomplete cache")
    return 0
