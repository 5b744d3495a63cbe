# cython: language_level=3
"""Context-tree weighting over symbols by binary decomposition (Willems, Shtarkov, Tjalkens).

Each symbol (an alphabet index) is written as B = ceil(log2 A) bits, most significant first; the
bits are the decisions of a binary decomposition tree whose internal nodes are numbered 1..2^B-1
(root 1, children 2n and 2n+1).  Every decision node has its own binary CTW over the context of
the previous D symbols.

Storage.  The context tree is a real tree over symbols: node 0 is the empty context and the
child of node s for symbol c is the context s extended one symbol further into the past, found
in an exact open-addressing hash map keyed by (s, c).  Each context node owns a block of
*entries*, one per decision node that has ever been coded in that context: KT counts and the
ratio beta = Pe(s) / prod Pw(children).  A decision node never coded in a context is fresh, and
a fresh subtree's weighted probability of either bit is exactly 1/2; so a prediction touches only
the entries that exist.  Nothing is hashed lossily: predictions equal the textbook recursion.

Arithmetic.  Only + - * / on float64, in a fixed order (SPEC section 2).  beta is clamped to
[2^-600, 2^600] so that nothing overflows or underflows on any input length; at that range the
weighting is already saturated.

Memory.  Entries and context nodes come from pools capped by ``memory_bytes``; when a pool is
full the policy is either ``freeze`` (stop adding contexts, keep updating the existing ones) or
``reset`` (start over with an empty tree).  Both sides make the same choice at the same symbol,
because "full" is decided by counts against caps computed from the budget (a header field),
never by the machine: when the operating system refuses an allocation below the caps, the
kernel reports ``STATUS_MEMORY`` (a MemoryError) instead of changing what it computes.

    >>> k = CTWKernel(4, 3, 0.5, 0, 255, 1 << 20, 0)
    >>> p = k.predict(); k.update(2)
    >>> abs(float(k.predict().sum()) - 1.0) < 1e-12
    True
"""
cimport cython
import numpy as np
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset, memcpy

from cpython.pystate cimport PyThreadState

from seqzip._core cimport (STATUS_MEMORY, STATUS_OK, STATUS_SYMBOL, SYMBOL_MODE, Kernel,
                           raw_get, raw_set)

from seqzip._core import put, take
from seqzip._kernels.ctw_tree cimport (BETA_MAX, BETA_MIN, EMPTY, MAX_DEPTH, N_CLASSES, ChildSlot,
                                       Entry, _Tree, check_tree, slot_of)

# Growing the tables (a realloc's copy, the children's rehash) takes tens to hundreds of ms
# once they hold millions of entries: the step lets the interpreter go meanwhile, when it
# holds it (run() codes symbol mode holding it), so a progress line and other threads go on.
cdef extern from *:
    """
    static inline PyThreadState* seqzip_ctw_let_go(void) {
        return PyGILState_Check() ? PyEval_SaveThread() : NULL;
    }
    static inline void seqzip_ctw_take_back(PyThreadState* saved) {
        if (saved != NULL) PyEval_RestoreThread(saved);
    }
    """
    PyThreadState* _let_go "seqzip_ctw_let_go"() noexcept nogil
    void _take_back "seqzip_ctw_take_back"(PyThreadState* saved) noexcept nogil

@cython.final
cdef class CTWKernel(Kernel):
    """Byte-context CTW; ``predict()`` gives the full distribution over the alphabet.

    Args:
        alphabet_size: A, 1..256.
        depth: D, context length in symbols, 0..32.
        alpha: estimator parameter; 0.5 is Krichevsky-Trofimov.
        zero_redundancy: 1 to use Willems' zero-redundancy estimator built on it.
        count_limit: both counts of an entry are halved when their sum reaches this.
        memory_bytes: budget for the context tree.
        reset_when_full: 1 = reset policy, 0 = freeze policy.
    """
    cdef Py_ssize_t A
    cdef readonly int depth, code_bits, zero_redundancy, reset_when_full
    cdef readonly double alpha
    cdef uint32_t count_limit
    # entry pool, with per-capacity-class free lists
    cdef Entry* entries
    cdef uint32_t entries_used, entries_cap, entries_max
    cdef uint32_t* free_lists[N_CLASSES]
    cdef uint32_t free_count[N_CLASSES]
    cdef uint32_t free_cap[N_CLASSES]
    # context nodes
    cdef uint32_t* node_block
    cdef uint16_t* node_count
    cdef uint8_t* node_class
    cdef uint32_t nodes_used, nodes_cap, nodes_max
    # child map: key = parent * 256 + symbol + 1 (0 = empty slot)
    cdef ChildSlot* children
    cdef uint64_t child_mask, slots_max
    cdef uint32_t child_used
    # history and per-symbol work arrays
    cdef int64_t n_seen
    cdef int history[MAX_DEPTH]
    cdef uint32_t path[MAX_DEPTH + 1]         # context node per depth for the next symbol
    cdef int path_len                          # depths 0 .. path_len - 1 exist
    cdef double q[256]                         # P(bit = 1) at each decision node, weighted
    cdef double leaf[512]
    cdef uint32_t where[MAX_DEPTH + 1][256]    # entry index of (depth, decision node)
    cdef uint64_t stamp[MAX_DEPTH + 1][256]    # valid when == tick
    cdef uint64_t tick
    cdef bint predicted
    cdef double kt_det[65536]                   # Pe of a one-sided run of length a (ZR only)
    cdef readonly uint64_t resets
    cdef bint out_of_memory                    # an allocation below the caps failed
    cdef double[::1] scratch                   # (A,) prediction made by update() itself

    def __cinit__(self, Py_ssize_t alphabet_size, int depth, double alpha, int zero_redundancy,
                  uint32_t count_limit, uint64_t memory_bytes, int reset_when_full):
        cdef int i
        if alphabet_size < 1 or alphabet_size > 256:
            raise ValueError("alphabet_size must be in 1..256")
        if depth < 0 or depth > MAX_DEPTH:
            raise ValueError(f"depth must be in 0..{MAX_DEPTH}")
        if not (alpha > 0.0 and alpha <= 16.0):
            raise ValueError("alpha must be in (0, 16]")
        if count_limit < 2 or count_limit > 65535:
            raise ValueError("count_limit must be in 2..65535")
        if memory_bytes < (1 << 16):
            raise ValueError("memory budget must be at least 64 KiB")
        self.A = alphabet_size
        self.iface.alphabet_size = <int>alphabet_size
        self.iface.mode = SYMBOL_MODE
        self.iface.predict, self.iface.update = _ctw_predict, _ctw_update  # no lock taken
        self.depth = depth
        self.alpha = alpha
        self.zero_redundancy = zero_redundancy
        self.count_limit = count_limit
        self.reset_when_full = reset_when_full
        self.code_bits = 0
        while (1 << self.code_bits) < alphabet_size:
            self.code_bits += 1
        # Budget: 5/8 for entries (16 bytes each, free lists included), 1/8 for the node
        # arrays (7 bytes per node) and 1/4 for the child map (12 bytes per slot, a power of
        # two, at most half full).
        self.entries_max = <uint32_t>min(<uint64_t>(memory_bytes * 5 // 8 // (sizeof(Entry) + 4)),
                                         <uint64_t>0xFFFFFFF0)
        self.slots_max = 1 << 15
        while self.slots_max * 2 * 12 <= memory_bytes // 4:
            self.slots_max *= 2
        self.nodes_max = <uint32_t>min(min(memory_bytes // 8 // 7, self.slots_max // 2),
                                       <uint64_t>0x7FFFFFF0)
        # Pointer fields start NULL (Cython zero-fills a new object); _allocate releases first.
        self.kt_det[0] = 1.0
        for i in range(1, 65536):
            self.kt_det[i] = self.kt_det[i - 1] * ((i - 1) + alpha) / ((i - 1) + 2.0 * alpha)
        self.scratch = np.empty(alphabet_size, dtype=np.float64)
        self.resets = 0
        self.out_of_memory = False
        self._allocate()

    def __dealloc__(self):
        self._release()

    cdef void _release(self) noexcept:
        cdef int i
        for i in range(N_CLASSES):
            free(self.free_lists[i])
            self.free_lists[i] = NULL
        free(self.entries)
        free(self.node_block)
        free(self.node_count)
        free(self.node_class)
        free(self.children)
        self.entries = NULL
        self.node_block = NULL
        self.node_count = NULL
        self.node_class = NULL
        self.children = NULL

    cdef int _allocate(self) except -1:
        """Empty tree: the root context only.  Sizes start small and double up to the caps."""
        cdef int i
        self._release()
        self.entries_cap = min(1 << 16, self.entries_max)
        self.entries = <Entry*>malloc(self.entries_cap * sizeof(Entry))
        self.nodes_cap = min(1 << 14, self.nodes_max)
        self.node_block = <uint32_t*>malloc(self.nodes_cap * sizeof(uint32_t))
        self.node_count = <uint16_t*>malloc(self.nodes_cap * sizeof(uint16_t))
        self.node_class = <uint8_t*>malloc(self.nodes_cap * sizeof(uint8_t))
        self.child_mask = (1 << 15) - 1
        self.children = <ChildSlot*>malloc((self.child_mask + 1) * sizeof(ChildSlot))
        if (self.entries == NULL or self.node_block == NULL or self.node_count == NULL
                or self.node_class == NULL or self.children == NULL):
            raise MemoryError("CTW: cannot allocate the context tree")
        memset(self.children, 0, (self.child_mask + 1) * sizeof(ChildSlot))
        for i in range(N_CLASSES):
            self.free_count[i] = 0
            self.free_cap[i] = 0
        self.entries_used = 0
        self.child_used = 0
        self.nodes_used = 1
        self.node_block[0] = EMPTY
        self.node_count[0] = 0
        self.node_class[0] = 0
        self.n_seen = 0
        self.tick = 1
        memset(self.stamp, 0, sizeof(self.stamp))
        self.predicted = False
        return 0

    # ---- memory pools ------------------------------------------------------------------

    cdef uint32_t _alloc_block(self, int cls) noexcept nogil:
        """Index of a free block of 2**cls entries, or EMPTY when the budget is spent."""
        cdef uint32_t size = 1u << cls, new_cap
        cdef Entry* grown
        cdef PyThreadState* held
        if self.free_count[cls] > 0:
            self.free_count[cls] -= 1
            return self.free_lists[cls][self.free_count[cls]]
        if self.entries_used + size > self.entries_cap:
            if self.entries_used + size > self.entries_max:
                return EMPTY
            new_cap = self.entries_cap
            while new_cap < self.entries_used + size:
                new_cap = <uint32_t>min(<uint64_t>new_cap * 2, <uint64_t>self.entries_max)
            held = _let_go()
            grown = <Entry*>realloc(self.entries, new_cap * sizeof(Entry))
            _take_back(held)
            if grown == NULL:
                self.out_of_memory = True
                return EMPTY
            self.entries = grown
            self.entries_cap = new_cap
        self.entries_used += size
        return self.entries_used - size

    cdef bint _free_block(self, uint32_t start, int cls) noexcept nogil:
        cdef uint32_t new_cap
        cdef uint32_t* grown
        if self.free_count[cls] == self.free_cap[cls]:
            new_cap = 64 if self.free_cap[cls] == 0 else self.free_cap[cls] * 2
            grown = <uint32_t*>realloc(self.free_lists[cls], new_cap * sizeof(uint32_t))
            if grown == NULL:
                self.out_of_memory = True
                return False
            self.free_lists[cls] = grown
            self.free_cap[cls] = new_cap
        self.free_lists[cls][self.free_count[cls]] = start
        self.free_count[cls] += 1
        return True

    cdef uint32_t _add_entry(self, int d, uint32_t ctx, uint8_t node) noexcept nogil:
        """Append a fresh entry for decision ``node`` to context ``ctx`` at depth ``d``.

        Returns its index, or EMPTY when the budget is spent.  When the context's block has to
        move to a larger one, the ``where`` indices of its entries move with it.
        """
        cdef uint32_t start = self.node_block[ctx], fresh, i
        cdef uint16_t count = self.node_count[ctx]
        cdef int cls = self.node_class[ctx], new_cls
        cdef Entry* e
        if start == EMPTY or count == (1u << cls):
            new_cls = 0 if start == EMPTY else cls + 1
            if start == EMPTY:
                while (1u << new_cls) < <uint32_t>self.code_bits:
                    new_cls += 1  # room for one whole path from the start
            if new_cls >= N_CLASSES:
                return EMPTY  # unreachable: a block holds at most 255 distinct decision nodes
            fresh = self._alloc_block(new_cls)
            if fresh == EMPTY:
                return EMPTY
            if start != EMPTY:
                memcpy(&self.entries[fresh], &self.entries[start], count * sizeof(Entry))
                self._free_block(start, cls)
                for i in range(count):
                    self.where[d][self.entries[fresh + i].node] = fresh + i
            self.node_block[ctx] = fresh
            self.node_class[ctx] = new_cls
            start = fresh
        e = &self.entries[start + count]
        e.beta = 1.0
        e.count0 = 0
        e.count1 = 0
        e.node = node
        self.node_count[ctx] = count + 1
        return start + count

    cdef inline uint64_t _slot(self, uint64_t key) noexcept nogil:
        return slot_of(key, self.child_mask)

    cdef uint32_t _child(self, uint32_t parent, int symbol) noexcept nogil:
        cdef uint64_t key = <uint64_t>parent * 256 + symbol + 1
        cdef uint64_t i = self._slot(key)
        while self.children[i].key != 0:
            if self.children[i].key == key:
                return self.children[i].node
            i = (i + 1) & self.child_mask
        return EMPTY

    cdef bint _grow_children(self) noexcept nogil:
        cdef PyThreadState* held = _let_go()
        cdef bint done = self._rehash_children()
        _take_back(held)
        return done

    cdef bint _rehash_children(self) noexcept nogil:
        cdef uint64_t old_mask = self.child_mask, i, j, new_size = (old_mask + 1) * 2
        cdef ChildSlot* old = self.children
        cdef ChildSlot* grown = <ChildSlot*>malloc(new_size * sizeof(ChildSlot))
        if grown == NULL:
            self.out_of_memory = True
            return False
        memset(grown, 0, new_size * sizeof(ChildSlot))
        self.children = grown
        self.child_mask = new_size - 1
        for i in range(old_mask + 1):
            if old[i].key != 0:
                j = self._slot(old[i].key)
                while grown[j].key != 0:
                    j = (j + 1) & self.child_mask
                grown[j] = old[i]
        free(old)
        return True

    cdef bint _grow_nodes(self, uint32_t new_cap) noexcept nogil:
        """The context nodes' arrays to ``new_cap`` entries; False when out of memory."""
        cdef void* grown = realloc(self.node_block, new_cap * sizeof(uint32_t))
        if grown == NULL:
            return False
        self.node_block = <uint32_t*>grown
        grown = realloc(self.node_count, new_cap * sizeof(uint16_t))
        if grown == NULL:
            return False
        self.node_count = <uint16_t*>grown
        grown = realloc(self.node_class, new_cap * sizeof(uint8_t))
        if grown == NULL:
            return False
        self.node_class = <uint8_t*>grown
        self.nodes_cap = new_cap
        return True

    cdef uint32_t _add_child(self, uint32_t parent, int symbol) noexcept nogil:
        """Create the context node ``symbol`` + context(parent); EMPTY when the budget is spent."""
        cdef uint64_t key = <uint64_t>parent * 256 + symbol + 1, i
        cdef uint32_t node
        cdef PyThreadState* held
        cdef bint grew
        if self.nodes_used >= self.nodes_max:
            return EMPTY
        if (self.child_used + 1) * 2 > self.child_mask + 1:
            if self.child_mask + 1 >= self.slots_max or not self._grow_children():
                return EMPTY
        if self.nodes_used == self.nodes_cap:
            held = _let_go()
            grew = self._grow_nodes(<uint32_t>min(<uint64_t>self.nodes_cap * 2,
                                                  <uint64_t>self.nodes_max))
            _take_back(held)
            if not grew:
                self.out_of_memory = True
                return EMPTY
        node = self.nodes_used
        self.nodes_used += 1
        self.node_block[node] = EMPTY
        self.node_count[node] = 0
        self.node_class[node] = 0
        i = self._slot(key)
        while self.children[i].key != 0:
            i = (i + 1) & self.child_mask
        self.children[i].key = key
        self.children[i].node = node
        self.child_used += 1
        return node

    # ---- estimators and weighting --------------------------------------------------------

    cdef inline double _pe1(self, const Entry* e) noexcept nogil:
        """Estimated P(bit = 1) in this context (KT with alpha, or zero-redundancy)."""
        cdef double a = e.count0, b = e.count1
        cdef double run_now, run_next
        if self.zero_redundancy and (e.count0 == 0) != (e.count1 == 0):
            # Pzr(a, b) = Pkt/2 + [b = 0]/4 + [a = 0]/4 (for a + b > 0); a one-sided run of
            # length n has Pkt = kt_det[n].
            if e.count1 == 0:
                run_now = 0.5 * self.kt_det[e.count0] + 0.25
                run_next = 0.5 * self.kt_det[e.count0 + 1] + 0.25   # the run goes on (a zero)
                return 1.0 - run_next / run_now
            run_now = 0.5 * self.kt_det[e.count1] + 0.25
            run_next = 0.5 * self.kt_det[e.count1 + 1] + 0.25
            return run_next / run_now
        return (b + self.alpha) / (a + b + 2.0 * self.alpha)

    cdef void _walk(self) noexcept nogil:
        """Find the context node of each depth for the next symbol."""
        cdef int d, limit = self.depth
        cdef uint32_t child
        if self.n_seen < limit:
            limit = <int>self.n_seen
        self.path[0] = 0
        self.path_len = 1
        for d in range(1, limit + 1):
            child = self._child(self.path[d - 1], self.history[d - 1])
            if child == EMPTY:
                break
            self.path[d] = child
            self.path_len = d + 1

    cdef void _predict(self, double* out) noexcept nogil:
        cdef int d, k, n_nodes = 1 << self.code_bits
        cdef uint32_t ctx, i, start, count
        cdef Entry* e
        cdef double pe, total
        cdef Py_ssize_t x, A = self.A
        self._walk()
        self.tick += 1
        for k in range(n_nodes):
            self.q[k] = 0.5
        for d in range(self.path_len - 1, -1, -1):
            ctx = self.path[d]
            start = self.node_block[ctx]
            count = self.node_count[ctx]
            for i in range(count):
                e = &self.entries[start + i]
                pe = self._pe1(e)
                if d == self.depth:
                    self.q[e.node] = pe
                else:
                    self.q[e.node] = (e.beta * pe + self.q[e.node]) / (e.beta + 1.0)
                self.where[d][e.node] = start + i
                self.stamp[d][e.node] = self.tick
        # Leaf probabilities, top-down through the decomposition tree.
        self.leaf[1] = 1.0
        for k in range(1, n_nodes):
            self.leaf[2 * k + 1] = self.leaf[k] * self.q[k]
            self.leaf[2 * k] = self.leaf[k] * (1.0 - self.q[k])
        total = 0.0
        for x in range(A):
            total = total + self.leaf[n_nodes + x]
        for x in range(A):
            out[x] = self.leaf[n_nodes + x] / total
        self.predicted = True

    cdef int c_predict(self, double* out) noexcept:
        return self._free_predict(out)

    cdef int _free_predict(self, double* out) noexcept nogil:
        if self.out_of_memory:
            return STATUS_MEMORY
        self._predict(out)
        return STATUS_OK

    cdef int c_update(self, int symbol) noexcept:
        return self._free_update(symbol)

    cdef inline bint _full(self) noexcept nogil:
        """Whether the next update resets the tree first (``reset_when_full``)."""
        return self.reset_when_full and (self.entries_used + 64 * (self.depth + 1) *
                                         self.code_bits > self.entries_max or
                                         self.nodes_used + self.depth + 1 >= self.nodes_max)

    cdef int _free_update(self, int symbol) noexcept nogil:
        """The interface's update, without the interpreter lock: it takes the lock only to
        reset a full tree (``_reset``)."""
        if symbol < 0 or symbol >= self.A:
            return STATUS_SYMBOL
        if self.out_of_memory:
            return STATUS_MEMORY
        if not self.predicted:
            self._predict(&self.scratch[0])
        self.predicted = False
        if self._full():
            with gil:
                self._reset()
            if self.out_of_memory:
                return STATUS_MEMORY
        self._learn(symbol)
        return STATUS_MEMORY if self.out_of_memory else STATUS_OK

    cdef void _reset(self) noexcept:
        """A full tree starts again empty (``_allocate`` may raise MemoryError)."""
        try:
            self._allocate()
        except MemoryError:
            self.out_of_memory = True
            return
        self.resets += 1
        self._predict(&self.scratch[0])
        self.predicted = False

    cdef void _learn(self, int symbol) noexcept nogil:
        """The tree's update by ``symbol`` (the context path extended, the counts and the
        weighting ratios along the symbol's decisions, the history shifted)."""
        cdef int d, k, top, bit, reachable, deepest
        cdef uint32_t ctx, idx, node
        cdef Entry* e
        cdef double pe, pw, below
        # Extend the context path to the full available depth, creating nodes.
        reachable = self.depth
        if self.n_seen < reachable:
            reachable = <int>self.n_seen
        while self.path_len <= reachable:
            ctx = self._add_child(self.path[self.path_len - 1], self.history[self.path_len - 1])
            if ctx == EMPTY:
                break
            self.path[self.path_len] = ctx
            self.path_len += 1
        node = 1
        for k in range(self.code_bits):
            bit = (symbol >> (self.code_bits - 1 - k)) & 1
            # Entries exist at depths 0 .. deepest; create the missing ones (stop when full).
            deepest = -1
            for d in range(self.path_len):
                if self.stamp[d][node] != self.tick:
                    idx = self._add_entry(d, self.path[d], <uint8_t>node)
                    if idx == EMPTY:
                        break
                    self.where[d][node] = idx
                    self.stamp[d][node] = self.tick
                deepest = d
            below = 0.5  # a fresh subtree gives either bit probability 1/2
            for d in range(deepest, -1, -1):
                e = &self.entries[self.where[d][node]]
                pe = self._pe1(e)
                if bit == 0:
                    pe = 1.0 - pe
                if d == self.depth:
                    pw = pe
                else:
                    pw = (e.beta * pe + below) / (e.beta + 1.0)
                    e.beta = e.beta * pe / below
                    if e.beta > BETA_MAX:
                        e.beta = BETA_MAX
                    elif e.beta < BETA_MIN:
                        e.beta = BETA_MIN
                if bit:
                    e.count1 += 1
                else:
                    e.count0 += 1
                if <uint32_t>e.count0 + e.count1 >= self.count_limit:
                    e.count0 = (e.count0 + 1) >> 1
                    e.count1 = (e.count1 + 1) >> 1
                below = pw
            node = 2 * node + bit
        for d in range(self.depth - 1, 0, -1):
            self.history[d] = self.history[d - 1]
        self.history[0] = symbol
        self.n_seen += 1

    def memory_used(self):
        """Bytes held by the context tree now (pools, free lists and child map as allocated)."""
        cdef int i
        cdef uint64_t free_bytes = 0
        for i in range(N_CLASSES):
            free_bytes += self.free_cap[i] * 4
        return (self.entries_cap * sizeof(Entry) + free_bytes + self.nodes_cap * 7
                + (self.child_mask + 1) * 12)

    def stats(self):
        """Counts of context nodes and entries in use, and of resets so far."""
        return {"nodes": self.nodes_used, "entries": self.entries_used,
                "entries_max": self.entries_max, "nodes_max": self.nodes_max,
                "resets": self.resets}

    def rescale(self, uint32_t cap, bint reset_weights=True):
        """Halve the counts of every entry (as the model halves them at its count limit)
        until their sum is at most ``cap`` and, with ``reset_weights``, set every weighting
        ratio beta back to 1 (a fresh entry's), so that a tree trained elsewhere (a
        dictionary) keeps its contexts but gives way to new data quickly, and weighs its
        depths afresh.  Deterministic; a step taken once, when a dictionary is made.

            >>> k = CTWKernel(2, 2, 0.5, 0, 65535, 1 << 20, 0)
            >>> for _ in range(50):
            ...     k.update(1)
            >>> before = float(k.predict()[0]); k.rescale(4)
            >>> bool(k.predict()[0] > before)
            True
        """
        cdef uint32_t i
        cdef Entry* e
        if cap < 2:
            raise ValueError("cap must be at least 2")
        for i in range(self.entries_used):
            e = &self.entries[i]
            while <uint32_t>e.count0 + e.count1 > cap:
                e.count0 = (e.count0 + 1) >> 1
                e.count1 = (e.count1 + 1) >> 1
            if reset_weights:
                e.beta = 1.0
        self.predicted = False

    # ---- the full state -----------------------------------------------------------------

    def get_state(self):
        """The context tree (entries, nodes, child map, free lists as they are), the history
        and the walk's caches (see ``Kernel.get_state``)."""
        cdef int i
        state = Kernel.get_state(self)
        state["sizes"] = np.array(
            [self.entries_used, self.entries_cap, self.nodes_used, self.nodes_cap,
             self.child_mask, self.child_used, self.n_seen, self.path_len, self.tick,
             self.predicted, self.resets, self.out_of_memory], dtype=np.uint64)
        state["free_count"] = np.array([self.free_count[i] for i in range(N_CLASSES)],
                                       dtype=np.uint64)
        state["free_cap"] = np.array([self.free_cap[i] for i in range(N_CLASSES)],
                                     dtype=np.uint64)
        state["entries"] = raw_get(self.entries, self.entries_used * sizeof(Entry))
        state["node_block"] = raw_get(self.node_block, self.nodes_used * sizeof(uint32_t))
        state["node_count"] = raw_get(self.node_count, self.nodes_used * sizeof(uint16_t))
        state["node_class"] = raw_get(self.node_class, self.nodes_used)
        state["children"] = raw_get(self.children, (self.child_mask + 1) * sizeof(ChildSlot))
        for i in range(N_CLASSES):
            state[f"free{i}"] = raw_get(self.free_lists[i], self.free_count[i] * 4)
        state["history"] = raw_get(self.history, sizeof(self.history))
        state["path"] = raw_get(self.path, sizeof(self.path))
        state["q"] = raw_get(self.q, sizeof(self.q))
        state["leaf"] = raw_get(self.leaf, sizeof(self.leaf))
        state["where"] = raw_get(self.where, sizeof(self.where))
        state["stamp"] = raw_get(self.stamp, sizeof(self.stamp))
        state["scratch"] = np.array(self.scratch)
        return state

    def set_state(self, dict state):
        """Take a state from ``get_state`` -- untrusted input (a model file from anyone).

        Every size is checked against the caps of this kernel's config, and the tree against
        itself before anything of the kernel changes (``ctw_tree.check_tree``): blocks inside
        the entry pool and disjoint from each other and from the free lists, block classes and
        counts within their tables, entries' decision nodes, counts and ratios in range, child
        links inside the node array, each node the child of exactly one older node (so the
        tree is acyclic), every link findable by the hash probe, the walk's caches pointing at
        live entries.

        Raises:
            ValueError: a missing entry, wrong type or shape, or an impossible tree (the
                kernel is left as it was).
            MemoryError: the arrays cannot be allocated.
        """
        cdef int i
        cdef uint64_t entries_used, entries_cap, nodes_used, nodes_cap, child_mask, limit
        take(state, "fallbacks", np.int64, ())
        sizes = [int(v) for v in take(state, "sizes", np.uint64, (12,))]
        entries_used, entries_cap, nodes_used, nodes_cap, child_mask = sizes[:5]
        child_used, n_seen, path_len, tick, predicted, resets, out_of_memory = sizes[5:]
        free_count = [int(v) for v in take(state, "free_count", np.uint64, (N_CLASSES,))]
        free_cap = [int(v) for v in take(state, "free_cap", np.uint64, (N_CLASSES,))]
        if not (entries_used <= entries_cap <= self.entries_max and
                1 <= nodes_used <= nodes_cap <= self.nodes_max and
                (child_mask + 1) & child_mask == 0 and child_mask + 1 <= self.slots_max and
                child_mask >= (1 << 15) - 1 and child_used == nodes_used - 1 and
                child_used * 2 <= child_mask + 1):
            raise ValueError("model state holds impossible tree sizes")
        for i in range(N_CLASSES):
            # a class-i list holds at most entries_max / 2^i blocks; its array at most doubles
            limit = 2 * (self.entries_max >> i) + 64
            if not free_count[i] <= free_cap[i] <= limit:
                raise ValueError("model state holds impossible free-list sizes")
        # a fresh tree has walked no path yet (path_len 0); a pending prediction has one
        if not (n_seen < (1 << 62) and path_len <= min(self.depth, n_seen) + 1 and
                (path_len >= 1 or not predicted) and 1 <= tick < (1 << 62) and predicted <= 1):
            raise ValueError("model state holds impossible counters")
        if out_of_memory:
            raise ValueError("model state records a failed allocation (it cannot code)")
        history = np.frombuffer(take(state, "history", np.uint8, (sizeof(self.history),)),
                                dtype=np.intc)
        if history.min() < 0 or history.max() >= self.A:
            raise ValueError("model state holds symbols outside the alphabet")
        for name, size in (("path", sizeof(self.path)), ("q", sizeof(self.q)),
                           ("leaf", sizeof(self.leaf)), ("where", sizeof(self.where)),
                           ("stamp", sizeof(self.stamp))):
            take(state, name, np.uint8, (size,))
        take(state, "scratch", np.float64, (self.A,))
        fresh = _Tree()
        fresh.entries = <Entry*>malloc(max(entries_cap, 1) * sizeof(Entry))
        fresh.node_block = <uint32_t*>malloc(nodes_cap * sizeof(uint32_t))
        fresh.node_count = <uint16_t*>malloc(nodes_cap * sizeof(uint16_t))
        fresh.node_class = <uint8_t*>malloc(nodes_cap * sizeof(uint8_t))
        fresh.children = <ChildSlot*>malloc((child_mask + 1) * sizeof(ChildSlot))
        for i in range(N_CLASSES):
            fresh.free_lists[i] = NULL
            if free_cap[i]:
                fresh.free_lists[i] = <uint32_t*>malloc(free_cap[i] * 4)
                if fresh.free_lists[i] == NULL:
                    raise MemoryError("CTW: cannot allocate the context tree")
        if (fresh.entries == NULL or fresh.node_block == NULL or fresh.node_count == NULL
                or fresh.node_class == NULL or fresh.children == NULL):
            raise MemoryError("CTW: cannot allocate the context tree")
        raw_set(fresh.entries, entries_used * sizeof(Entry), state, "entries")
        raw_set(fresh.node_block, nodes_used * sizeof(uint32_t), state, "node_block")
        raw_set(fresh.node_count, nodes_used * sizeof(uint16_t), state, "node_count")
        raw_set(fresh.node_class, nodes_used, state, "node_class")
        raw_set(fresh.children, (child_mask + 1) * sizeof(ChildSlot), state, "children")
        for i in range(N_CLASSES):
            raw_set(fresh.free_lists[i], free_count[i] * 4, state, f"free{i}")
            fresh.free_count[i] = free_count[i]
        raw_set(fresh.path, sizeof(self.path), state, "path")
        raw_set(fresh.where, sizeof(self.where), state, "where")
        raw_set(fresh.stamp, sizeof(self.stamp), state, "stamp")
        check_tree(fresh, self.code_bits, self.count_limit, self.A, entries_used, nodes_used,
                   child_mask, path_len, tick, predicted, history)
        # Valid: the kernel takes the checked arrays (nothing of it changed before here).
        Kernel.set_state(self, state)
        self._release()
        self.entries, fresh.entries = fresh.entries, NULL
        self.node_block, fresh.node_block = fresh.node_block, NULL
        self.node_count, fresh.node_count = fresh.node_count, NULL
        self.node_class, fresh.node_class = fresh.node_class, NULL
        self.children, fresh.children = fresh.children, NULL
        for i in range(N_CLASSES):
            self.free_lists[i], fresh.free_lists[i] = fresh.free_lists[i], NULL
            self.free_count[i], self.free_cap[i] = free_count[i], free_cap[i]
        self.entries_cap, self.nodes_cap, self.child_mask = entries_cap, nodes_cap, child_mask
        self.entries_used, self.nodes_used = entries_used, nodes_used
        (self.child_used, self.n_seen, self.path_len, self.tick, self.predicted, self.resets,
         self.out_of_memory) = child_used, n_seen, path_len, tick, predicted, resets, \
            out_of_memory
        memcpy(self.path, fresh.path, sizeof(self.path))
        memcpy(self.where, fresh.where, sizeof(self.where))
        memcpy(self.stamp, fresh.stamp, sizeof(self.stamp))
        raw_set(self.history, sizeof(self.history), state, "history")
        raw_set(self.q, sizeof(self.q), state, "q")
        raw_set(self.leaf, sizeof(self.leaf), state, "leaf")
        put(self.scratch, state, "scratch")


# The interface's functions: plain C, so a model that holds this kernel as an expert (cm) steps
# it without taking the interpreter lock (``_core.pxd``).
cdef int _ctw_predict(void* s, double* out) noexcept nogil:
    return (<CTWKernel>s)._free_predict(out)


cdef int _ctw_update(void* s, int symbol) noexcept nogil:
    return (<CTWKernel>s)._free_update(symbol)
