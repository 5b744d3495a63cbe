# cython: language_level=3
# The context models component: the hashed contexts (``kinds.pxd``) in the slot table
# (``slots.pxd``) and the direct order-0 and order-1 tables, each a bit history per context
# and node mapped to a probability by its own StateMap (``tables.pxd``).  Inputs: one per
# hashed context (0 for a context never seen), then order 0 and order 1.  The hashed and the
# direct tables share one array of maps and of the states read (their state names, ``mapI``
# and ``map_state``, run across both), so they are one component.
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.component cimport (WALK_BEGIN, WALK_END, Component, Cursor,
                                           nothing_symbol)
from seqzip._kernels.cm.field cimport F_BYTES, F_INT
from seqzip._kernels.cm.kinds cimport kind_function, kind_hash, kind_tag
from seqzip._kernels.cm.slots cimport (EMPTY_SLOT, MAX_CONTEXTS, SlotTable, st_bytes, st_find,
                                       st_init, st_lookup, st_prefetch, st_write, state_contexts)
from seqzip._kernels.cm.tables cimport (STATE_NEXT, StateMap, hash2, sm_fields,
                                        sm_init_states, sm_learn, sm_memory, sm_stretch)


cdef struct Contexts:
    int A, B
    int n_hashed
    int kinds[MAX_CONTEXTS]
    int params[MAX_CONTEXTS]
    kind_hash hashers[MAX_CONTEXTS]
    uint64_t ctx_hash[MAX_CONTEXTS]    # each context's hash for this symbol
    uint64_t group_hash[MAX_CONTEXTS]  # ... and for the current group of bits
    uint8_t* slot[MAX_CONTEXTS]        # each context's slot for the current group
    uint8_t* saved[MAX_CONTEXTS]       # the slots before a walk
    SlotTable slots
    uint8_t* o0                        # (2^B,) order-0 bit histories by node
    uint8_t* o1                        # (A, 2^B) order-1 bit histories
    StateMap maps[MAX_CONTEXTS + 2]    # hashed contexts, then order 0, order 1
    int map_state[MAX_CONTEXTS + 2]    # the state each map read for the current bit
    int n_known                        # hashed contexts with a non-empty history


cdef inline void cx_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef Contexts* c = <Contexts*>s
    cdef int i, st, n = c.n_hashed
    c.n_known = 0
    for i in range(n):
        st = c.slot[i][at.gnode]
        c.map_state[i] = st
        c.n_known += st != 0
        x[i] = sm_stretch(&c.maps[i], st) if st else 0.0
    st = c.o0[at.node]
    c.map_state[n] = st
    x[n] = sm_stretch(&c.maps[n], st)
    st = c.o1[(at.ctx.c1_index << c.B) | at.node]
    c.map_state[n + 1] = st
    x[n + 1] = sm_stretch(&c.maps[n + 1], st)


cdef inline void cx_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    cdef Contexts* c = <Contexts*>s
    cdef int i, st, n = c.n_hashed
    for i in range(n):
        st = c.map_state[i]
        sm_learn(&c.maps[i], st, bit)
        st_write(&c.slots, c.slot[i], at.gnode, STATE_NEXT[st][bit])
    st = c.map_state[n]
    sm_learn(&c.maps[n], st, bit)
    c.o0[at.node] = STATE_NEXT[st][bit]
    st = c.map_state[n + 1]
    sm_learn(&c.maps[n + 1], st, bit)
    c.o1[(at.ctx.c1_index << c.B) | at.node] = STATE_NEXT[st][bit]


cdef inline void _cx_lookup(Contexts* c, uint64_t node) noexcept nogil:
    """The slots of the group that begins at ``node`` (hashes first, so that the buckets load
    in parallel)."""
    cdef int i
    for i in range(c.n_hashed):
        c.group_hash[i] = hash2(c.ctx_hash[i], node)
        st_prefetch(&c.slots, c.group_hash[i])
    for i in range(c.n_hashed):
        c.slot[i] = st_lookup(&c.slots, c.group_hash[i])


cdef inline void cx_next_bit(void* s, const Cursor* at, int bit) noexcept nogil:
    if at.gnode == 1:  # a new group of bits
        _cx_lookup(<Contexts*>s, <uint64_t>at.node)


cdef inline int cx_begin(void* s, const Cursor* at) noexcept nogil:
    cdef Contexts* c = <Contexts*>s
    cdef int i
    for i in range(c.n_hashed):
        c.ctx_hash[i] = c.hashers[i](at.ctx, kind_tag(c.kinds[i], c.params[i]), c.params[i])
    _cx_lookup(c, 1)
    return 0


cdef inline void cx_walk(void* s, const Cursor* at, int event) noexcept nogil:
    """A walk finds the slots of a new group read-only (nothing is inserted)."""
    cdef Contexts* c = <Contexts*>s
    cdef int i
    if event == WALK_BEGIN:
        for i in range(c.n_hashed):
            c.saved[i] = c.slot[i]
    elif event == WALK_END:
        for i in range(c.n_hashed):
            c.slot[i] = c.saved[i]
    elif at.gnode == 1 and at.depth > 0:
        for i in range(c.n_hashed):
            c.slot[i] = st_find(&c.slots, hash2(c.ctx_hash[i], <uint64_t>at.node))


cdef inline size_t cx_memory(const void* s) noexcept nogil:
    cdef const Contexts* c = <const Contexts*>s
    cdef size_t total = st_bytes(&c.slots) + (1 << c.B) + (c.A << c.B)
    cdef int i
    for i in range(c.n_hashed + 2):
        total += sm_memory(&c.maps[i])
    return total


cdef inline void cx_free(void* s) noexcept nogil:
    cdef Contexts* c = <Contexts*>s
    cdef int i
    free(c.slots.table)
    free(c.o0)
    free(c.o1)
    for i in range(MAX_CONTEXTS + 2):
        free(c.maps[i].p)
        free(c.maps[i].n)
    free(c)


cdef inline list cx_fields(void* s):
    """The tables and maps, then the per-context buffers of ``state_contexts`` entries."""
    cdef Contexts* c = <Contexts*>s
    cdef int i, n = state_contexts(c.n_hashed)
    out = [("table", F_BYTES, <size_t>c.slots.table, st_bytes(&c.slots), True),
           ("o0", F_BYTES, <size_t>c.o0, 1 << c.B, False),
           ("o1", F_BYTES, <size_t>c.o1, c.A << c.B, False)]
    for i in range(c.n_hashed + 2):
        out += sm_fields(f"map{i}", &c.maps[i])
    out += [("ctx_hash", F_BYTES, <size_t>&c.ctx_hash[0], 8 * n, False),
            ("group_hash", F_BYTES, <size_t>&c.group_hash[0], 8 * n, False),
            ("map_state", F_BYTES, <size_t>&c.map_state[0], sizeof(int) * (n + 2), False),
            ("symbol.n_known", F_INT, <size_t>&c.n_known, sizeof(int), False)]
    return out


cdef inline list cx_slot_offsets(const Contexts* c):
    """The current slot of each hashed context as an offset into the table (-1: the empty
    slot, -2: none)."""
    cdef int i
    out = []
    for i in range(c.n_hashed):
        if c.slot[i] == NULL:
            out.append(-2)
        elif c.slot[i] == EMPTY_SLOT:
            out.append(-1)
        else:
            out.append(c.slot[i] - c.slots.table)
    return out


cdef inline void cx_set_slots(Contexts* c, list offsets):
    """Point the slots at checked offsets (as ``cx_slot_offsets`` gives them)."""
    cdef int i
    for i in range(c.n_hashed):
        if offsets[i] == -2:
            c.slot[i] = NULL
        elif offsets[i] == -1:
            c.slot[i] = EMPTY_SLOT
        else:
            c.slot[i] = c.slots.table + <Py_ssize_t>offsets[i]


cdef inline int cx_build(Component* comp, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """The hashed contexts of ``spec.contexts`` ((kind, j) pairs) and the direct tables."""
    cdef Contexts* c = <Contexts*>calloc(1, sizeof(Contexts))
    cdef int i
    if c == NULL:
        raise MemoryError()
    comp.state, comp.free = c, cx_free
    comp.predict, comp.learn, comp.next_bit = cx_predict, cx_learn, cx_next_bit
    comp.update, comp.begin, comp.walk = nothing_symbol, cx_begin, cx_walk
    comp.memory, comp.fields = cx_memory, cx_fields
    c.A, c.B = at.A, at.B
    c.n_hashed = len(spec.contexts)
    comp.n_inputs = c.n_hashed + 2
    for i in range(c.n_hashed):
        c.kinds[i], c.params[i] = spec.contexts[i]
        c.hashers[i] = kind_function(c.kinds[i])
        if c.hashers[i] == NULL:
            raise ValueError(f"no context kind {c.kinds[i]}")
    c.o0 = <uint8_t*>calloc(1 << c.B, 1)
    c.o1 = <uint8_t*>calloc(c.A << c.B, 1)
    cdef int table_bits = spec.table_bits, status
    with nogil:
        status = st_init(&c.slots, table_bits, at.big)
    if status < 0 or c.o0 == NULL or c.o1 == NULL:
        raise MemoryError()
    for i in range(c.n_hashed + 2):
        if sm_init_states(&c.maps[i]) < 0:
            raise MemoryError()
    return 0
