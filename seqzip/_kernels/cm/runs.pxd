# cython: language_level=3
# Run information per hashed context (runs > 0), a component of the bank (component.pxd): for
# each hashed context, the last symbol seen after it and how many times in a row it came (a
# run), in a table of its own (2-way buckets of 4-byte entries: a 16-bit check, the symbol,
# whether another symbol ever came after the context, the run, capped at 127), looked up when
# a symbol begins and updated when it ends.  While
# the bits of the symbol so far agree with a context's last symbol, the context predicts the
# next bit (the symbol's); the inputs, each the stretch of a probability learnt by the
# StateMap rule (``tables.pxd``) from the run's bucket and the bit predicted:
#   bit 0  the agreeing context with the longest run (its index, run, changed, bit, depth);
#   bit 1  a vote: how many agreeing contexts predict 0 and 1, the longest run, depth;
#   bit 2  the agreeing order context of the highest order (rank, run, changed, bit, depth);
#   bit 3  one input per order context (its run, bit, depth);
#   bit 4  one input per hashed context (the same).
# An input is 0 (and learns nothing) where no context agrees.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.component cimport WALK_BEGIN, WALK_END, Component, Cursor
from seqzip._kernels.cm.field cimport F_BYTES, F_INT
from seqzip._kernels.cm.hashed cimport Contexts
from seqzip._kernels.cm.kinds cimport K_ORDER
from seqzip._kernels.cm.slots cimport MAX_CONTEXTS, prefetch, state_contexts
from seqzip._kernels.cm.tables cimport (StateMap, big_calloc, hash2, sm_fields, sm_init_half,
                                        sm_learn, sm_stretch)

cdef enum:
    RUN_BUCKETS = 8
    RUN_DEPTHS = 8               # depths 0..7 (deeper bits share the last)
    RUN_MAPS = 3 + MAX_CONTEXTS  # best, vote, order, then one per order context
    RUN_SALT = 0x52554E53        # the table's hashes differ from the slots'


cdef struct Runs:
    const Contexts* cx
    int mask                       # the config's ``runs``
    int n_hashed, n_orders, n_per
    int order_index[MAX_CONTEXTS]  # the order contexts' indices, lowest order first
    uint32_t* table                # (2^bits,): check << 16 | symbol << 8 | run
    uint64_t table_mask            # entries - 1 (a bucket: an even entry and the next)
    uint8_t sym[MAX_CONTEXTS]      # each context's last symbol, for this symbol
    uint8_t run[MAX_CONTEXTS]      # ... and its run (0: not seen)
    uint8_t changed[MAX_CONTEXTS]  # ... and whether another symbol ever came after it
    uint32_t where[MAX_CONTEXTS]   # ... and its entry (or the one it will take)
    uint16_t check[MAX_CONTEXTS]   # ... and check
    uint8_t live[MAX_CONTEXTS]     # the contexts with a run not refuted by the bits so far
    int n_live
    int pending                    # the entries are not read yet (``_runs_load``)
    int order_rank[MAX_CONTEXTS]   # each context's rank among the order contexts, or -1
    int per_map[MAX_CONTEXTS]      # the map of its own input (bits 3, 4) less 3, or -1
    StateMap map[RUN_MAPS]
    int index[RUN_MAPS]            # this bit's index into each map (-1: no input)
    int saved[RUN_MAPS]


cdef inline int run_bucket(int run) noexcept nogil:
    """0 for none; 1, 2, 3 for runs 1-3; 4: 4-5, 5: 6-9, 6: 10-17, 7: 18 and more."""
    if run < 4:
        return run
    if run < 6:
        return 4
    if run < 10:
        return 5
    if run < 18:
        return 6
    return 7


cdef inline void _runs_load(Runs* r) noexcept nogil:
    """Each context's entry (or the one it will take), last symbol and run; the contexts
    with a run are live.  Done when first needed after the symbol began, so that the
    entries prefetched then have come."""
    cdef int i
    cdef uint64_t h, b
    cdef uint32_t* e
    r.pending = 0
    r.n_live = 0
    for i in range(r.n_hashed):
        h = hash2(r.cx.ctx_hash[i], RUN_SALT)
        b = (h >> 8) & r.table_mask & ~(<uint64_t>1)
        e = r.table + b
        r.check[i] = <uint16_t>(h >> 48)
        if e[0] >> 16 == r.check[i] and e[0] & 0xFF:
            r.where[i] = <uint32_t>b
        elif e[1] >> 16 == r.check[i] and e[1] & 0xFF:
            r.where[i] = <uint32_t>b + 1
        else:  # not in the table: the entry of the shorter run will take it
            r.where[i] = <uint32_t>b + ((e[1] & 0xFF) < (e[0] & 0xFF))
            r.sym[i], r.run[i], r.changed[i] = 0, 0, 0
            continue
        e = r.table + r.where[i]
        r.sym[i], r.run[i] = <uint8_t>(e[0] >> 8), <uint8_t>(e[0] & 0x7F)
        r.changed[i] = (e[0] >> 7) & 1
        r.live[r.n_live] = <uint8_t>i
        r.n_live += 1


cdef inline void runs_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    """The inputs for the bit at the cursor from the contexts whose last symbol agrees with
    the bits so far (those of ``live`` that do: the list may hold more)."""
    cdef Runs* r = <Runs*>s
    cdef int i, j, k, n = 0, shift = at.B - at.depth, prefix = at.node - (1 << at.depth)
    cdef int depth = min(at.depth, RUN_DEPTHS - 1), bit, best = -1, best_run = 0
    cdef int votes0 = 0, votes1 = 0, top = -1
    if r.pending:
        _runs_load(r)
    for k in range(3 + r.n_per):
        r.index[k] = -1
    for j in range(r.n_live):
        i = r.live[j]
        if (r.sym[i] >> shift) != prefix:
            continue
        bit = (r.sym[i] >> (shift - 1)) & 1
        votes1 += bit
        votes0 += 1 - bit
        if r.run[i] >= best_run:
            best, best_run = i, r.run[i]
        if r.order_rank[i] > top:
            top = r.order_rank[i]
        if r.per_map[i] >= 0:
            r.index[3 + r.per_map[i]] = (run_bucket(r.run[i]) * RUN_DEPTHS + depth) * 2 + bit
    if best >= 0:
        bit = (r.sym[best] >> (shift - 1)) & 1
        if r.mask & 1:
            r.index[0] = (((best * RUN_BUCKETS + run_bucket(best_run)) * 2 + r.changed[best]) *
                          RUN_DEPTHS + depth) * 2 + bit
        if r.mask & 2:
            r.index[1] = ((min(votes0, 7) * 8 + min(votes1, 7)) * RUN_BUCKETS +
                          run_bucket(best_run)) * RUN_DEPTHS + depth
    if top >= 0 and r.mask & 4:
        i = r.order_index[top]
        r.index[2] = (((top * RUN_BUCKETS + run_bucket(r.run[i])) * 2 + r.changed[i]) *
                      RUN_DEPTHS + depth) * 2 + ((r.sym[i] >> (shift - 1)) & 1)
    for k in range(3 + r.n_per):
        if k >= 3 or r.mask >> k & 1:
            x[n] = sm_stretch(&r.map[k], r.index[k]) if r.index[k] >= 0 else 0.0
            n += 1


cdef inline void runs_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef Runs* r = <Runs*>s
    cdef int k
    for k in range(3 + r.n_per):
        if r.index[k] >= 0:
            sm_learn(&r.map[k], r.index[k], bit)


cdef inline void runs_next_bit(void* s, const Cursor* at, int bit) noexcept nogil:
    """The coded bit drops the contexts whose symbol it refutes from ``live``."""
    cdef Runs* r = <Runs*>s
    cdef int i, j, n = 0, shift = at.B - at.depth, prefix = at.node - (1 << at.depth)
    if r.pending:
        _runs_load(r)
    for j in range(r.n_live):
        i = r.live[j]
        if (r.sym[i] >> shift) == prefix:
            r.live[n] = i
            n += 1
    r.n_live = n


cdef inline int runs_begin(void* s, const Cursor* at) noexcept nogil:
    """A symbol begins (the context models have hashed its contexts): their entries are
    prefetched, and read when first needed (``_runs_load``)."""
    cdef Runs* r = <Runs*>s
    cdef int i
    cdef uint64_t h
    for i in range(r.n_hashed):
        h = hash2(r.cx.ctx_hash[i], RUN_SALT)
        prefetch(r.table + ((h >> 8) & r.table_mask & ~(<uint64_t>1)))
    r.pending = 1
    return 0


cdef inline int runs_update(void* s, const Cursor* at, int x) noexcept nogil:
    """Symbol x ended: each context's run grows (x again) or starts (a new symbol, or a
    context new to the table)."""
    cdef Runs* r = <Runs*>s
    cdef int i
    cdef uint32_t* e
    if r.pending:
        _runs_load(r)
    for i in range(r.n_hashed):
        e = r.table + r.where[i]
        if e[0] >> 16 == r.check[i] and e[0] & 0xFF and (e[0] >> 8) & 0xFF == <uint32_t>x:
            if e[0] & 0x7F < 127:
                e[0] += 1
        elif e[0] >> 16 == r.check[i] and e[0] & 0xFF:  # another symbol: changed
            e[0] = <uint32_t>r.check[i] << 16 | <uint32_t>x << 8 | 0x81
        else:
            e[0] = <uint32_t>r.check[i] << 16 | <uint32_t>x << 8 | 1
    return 0


cdef inline void runs_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """A walk predicts at nodes it did not code: the coded bit's indices are put back."""
    cdef Runs* r = <Runs*>s
    cdef int k
    for k in range(3 + r.n_per):
        if event == WALK_BEGIN:
            r.saved[k] = r.index[k]
        elif event == WALK_END:
            r.index[k] = r.saved[k]


cdef inline size_t runs_memory(const void* s) noexcept nogil:
    cdef const Runs* r = <const Runs*>s
    cdef size_t total = (r.table_mask + 1) * 4
    cdef int k
    for k in range(3 + r.n_per):
        total += <size_t>r.map[k].size * 6
    return total


cdef inline void runs_free(void* s) noexcept nogil:
    cdef Runs* r = <Runs*>s
    cdef int k
    free(r.table)
    for k in range(RUN_MAPS):
        free(r.map[k].p)
        free(r.map[k].n)
    free(r)


cdef inline list runs_fields(void* s):
    """The maps and the indices (they move every bit: light), the table and the contexts'
    symbols and runs (they move when a symbol ends: heavy); the per-context buffers of
    ``state_contexts`` entries."""
    cdef Runs* r = <Runs*>s
    cdef int k
    cdef size_t n = state_contexts(r.n_hashed)
    cdef list out = [("runs.table", F_BYTES, <size_t>r.table, (r.table_mask + 1) * 4, True),
                     ("runs.sym", F_BYTES, <size_t>&r.sym[0], n, True),
                     ("runs.run", F_BYTES, <size_t>&r.run[0], n, True),
                     ("runs.changed", F_BYTES, <size_t>&r.changed[0], n, True),
                     ("runs.where", F_BYTES, <size_t>&r.where[0], 4 * n, True),
                     ("runs.check", F_BYTES, <size_t>&r.check[0], 2 * n, True),
                     ("runs.live", F_BYTES, <size_t>&r.live[0], n, False),
                     ("runs.n_live", F_INT, <size_t>&r.n_live, sizeof(int), False),
                     ("runs.pending", F_INT, <size_t>&r.pending, sizeof(int), False)]
    for k in range(3 + r.n_per):
        out += sm_fields(f"runs{k}", &r.map[k])
        out.append((f"runs{k}.index", F_INT, <size_t>&r.index[k], sizeof(int), False))
    return out


cdef inline dict runs_layout(const void* s):
    """Each map's size, the table's entries (``checks.check_runs``)."""
    cdef const Runs* r = <const Runs*>s
    return {"maps": [r.map[k].size for k in range(3 + r.n_per)],
            "entries": r.table_mask + 1}


cdef inline int runs_build(Component* c, const Cursor* at, object spec, object arg,
                           int index) except -1:
    """Run information for the context models ``arg`` (the address of their ``Contexts``):
    a table of 2^(table_bits - 2) entries, the maps of the inputs ``spec.runs`` names."""
    cdef Runs* r = <Runs*>calloc(1, sizeof(Runs))
    cdef int i, k, sizes[3]
    if r == NULL:
        raise MemoryError()
    c.state, c.free = r, runs_free
    c.predict, c.learn, c.next_bit = runs_predict, runs_learn, runs_next_bit
    c.update, c.begin, c.walk = runs_update, runs_begin, runs_walk
    c.memory, c.fields = runs_memory, runs_fields
    r.cx = <const Contexts*><size_t>arg
    r.mask = spec.runs
    r.n_hashed = r.cx.n_hashed
    for i in range(r.n_hashed):
        r.order_rank[i] = r.per_map[i] = -1
        if r.cx.kinds[i] == K_ORDER:
            r.order_rank[i] = r.n_orders
            r.order_index[r.n_orders] = i
            r.n_orders += 1
        if r.mask & 16 or (r.mask & 8 and r.cx.kinds[i] == K_ORDER):
            r.per_map[i] = r.n_per
            r.n_per += 1
    r.table_mask = (<uint64_t>1 << (spec.table_bits - 2)) - 1
    with nogil:
        r.table = <uint32_t*>big_calloc((r.table_mask + 1) * 4, at.big)
    if r.table == NULL:
        raise MemoryError()
    # maps 0 and 2 by context: for 48 at least (STATE_CONTEXTS), the size older states hold
    sizes[0] = state_contexts(r.n_hashed) * RUN_BUCKETS * RUN_DEPTHS * 4
    sizes[1] = 64 * RUN_BUCKETS * RUN_DEPTHS
    sizes[2] = sizes[0]
    c.n_inputs = 0
    for k in range(3 + r.n_per):
        r.index[k] = -1
        if sm_init_half(&r.map[k], sizes[k] if k < 3 else RUN_BUCKETS * RUN_DEPTHS * 2) < 0:
            raise MemoryError()
        if k >= 3 or r.mask >> k & 1:
            c.n_inputs += 1
    return 0
