# cython: language_level=3
# More inputs from each hashed context (``cx_inputs``, a bit mask): the context models
# (``hashed.pxd``) give the mixer one input per context, the log-odds of its bit history's
# StateMap (0 when never seen).  This component reads the states they read for the current
# bit (``Contexts.map_state``) and adds, per hashed context with a history (0 for one never
# seen): (1) the same map's probability in the linear domain, (p - 1/2) * LIN_SCALE; (2) its
# log-odds again when the history holds one bit value only (deterministic), else 0; (4) the
# log-odds of a second map of its own, indexed by the state and the bit's depth in the
# symbol, whose rate stops falling at MAP2_LIMIT (faster than the first map's SM_LIMIT);
# then (8) one input: the share of the hashed contexts never seen.  The inputs come context
# by context (each context's in bit order), the share last.
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.component cimport Component, Cursor, nothing_bit, nothing_begin, \
    nothing_symbol, nothing_walk
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.hashed cimport Contexts
from seqzip._kernels.cm.mixer cimport INIT_SHARE, Mixer
from seqzip._kernels.cm.slots cimport MAX_CONTEXTS
from seqzip._kernels.cm.tables cimport (MAX_STATES, STATE_N0, STATE_N1, StateMap, sm_fields,
                                        sm_init_half, sm_init_states, sm_learn_to, sm_memory,
                                        sm_stretch)

cdef enum:
    CI_MASK = 15
    MAP2_LIMIT = 127      # the second maps' count cap (the first maps': SM_LIMIT, 1023)
    MAP2_DEPTHS = 8       # the second maps' rows: one per bit of the symbol (B <= 8)

cdef extern from *:
    """
    #define SEQZIP_CM_LIN_SCALE 4.0
    """
    double LIN_SCALE "SEQZIP_CM_LIN_SCALE"


cdef struct CxInputs:
    const Contexts* cx
    int mask, n                    # the bits of cx_inputs; hashed contexts
    int index[MAX_CONTEXTS]        # this bit's index into each second map (-1: none)
    StateMap map2[MAX_CONTEXTS]    # (MAP2_DEPTHS * MAX_STATES,) each


cdef inline int ci_per_context(int mask) noexcept nogil:
    """The inputs of ``cx_inputs`` = mask per hashed context (bits 1, 2, 4)."""
    return (mask & 1) + (mask >> 1 & 1) + (mask >> 2 & 1)


cdef inline int ci_count(int mask, int n_hashed) noexcept nogil:
    """The inputs of ``cx_inputs`` = mask over ``n_hashed`` contexts."""
    return n_hashed * ci_per_context(mask) + (mask >> 3 & 1)


cdef inline void ci_predict(void* s, const Cursor* at, double* x) noexcept nogil:
    cdef CxInputs* c = <CxInputs*>s
    cdef const Contexts* cx = c.cx
    cdef int i, st, k = 0, mask = c.mask
    for i in range(c.n):
        st = cx.map_state[i]
        if mask & 1:
            x[k] = (cx.maps[i].p[st] * (1.0 / 4294967296.0) - 0.5) * LIN_SCALE if st else 0.0
            k += 1
        if mask & 2:
            x[k] = sm_stretch(&cx.maps[i], st) \
                if st and (STATE_N0[st] == 0 or STATE_N1[st] == 0) else 0.0
            k += 1
        if mask & 4:
            if st:
                c.index[i] = (at.depth << 8) | st
                x[k] = sm_stretch(&c.map2[i], c.index[i])
            else:
                c.index[i] = -1
                x[k] = 0.0
            k += 1
    if mask & 8:
        x[k] = (c.n - cx.n_known) * (1.0 / c.n) if c.n else 0.0


cdef inline void ci_learn(void* s, const Cursor* at, int bit) noexcept nogil:
    """The second maps learn as StateMaps do, their counts capped at MAP2_LIMIT."""
    cdef CxInputs* c = <CxInputs*>s
    cdef int i
    if not c.mask & 4:
        return
    for i in range(c.n):
        if c.index[i] >= 0:
            sm_learn_to(&c.map2[i], c.index[i], bit, MAP2_LIMIT)


cdef inline size_t ci_memory(const void* s) noexcept nogil:
    cdef const CxInputs* c = <const CxInputs*>s
    cdef size_t total = 0
    cdef int i
    for i in range(c.n):
        total += sm_memory(&c.map2[i]) if c.map2[i].p != NULL else 0
    return total


cdef inline void ci_free(void* s) noexcept nogil:
    cdef CxInputs* c = <CxInputs*>s
    cdef int i
    for i in range(MAX_CONTEXTS):
        free(c.map2[i].p)
        free(c.map2[i].n)
    free(c)


cdef inline list ci_fields(void* s):
    """The second maps and this bit's indices into them (light: they move every bit)."""
    cdef CxInputs* c = <CxInputs*>s
    cdef int i
    cdef list out = []
    if c.mask & 4:
        for i in range(c.n):
            out += sm_fields(f"cxmap{i}", &c.map2[i])
        out.append(("cxmap.index", F_BYTES, <size_t>&c.index[0], sizeof(int) * c.n, False))
    return out


cdef inline int _init_map2(StateMap* m) noexcept nogil:
    """MAP2_DEPTHS rows of MAX_STATES, each row the states' own estimates (as the first maps
    start).  -1 when out of memory."""
    cdef StateMap first
    cdef int d, st
    first.p, first.n = NULL, NULL
    if sm_init_half(m, MAP2_DEPTHS * MAX_STATES) < 0 or sm_init_states(&first) < 0:
        free(first.p)
        free(first.n)
        return -1
    for d in range(MAP2_DEPTHS):
        for st in range(MAX_STATES):
            m.p[d * MAX_STATES + st] = first.p[st]
    free(first.p)
    free(first.n)
    return 0


cdef inline int ci_build(Component* comp, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """The inputs of ``spec.cx_inputs`` over the context models ``arg`` (the address of their
    ``Contexts``); the second maps start as the first do (each state's own estimate)."""
    cdef CxInputs* c = <CxInputs*>calloc(1, sizeof(CxInputs))
    cdef int i
    if c == NULL:
        raise MemoryError()
    comp.state, comp.free = c, ci_free
    comp.predict, comp.learn, comp.next_bit = ci_predict, ci_learn, nothing_bit
    comp.update, comp.begin, comp.walk = nothing_symbol, nothing_begin, nothing_walk
    comp.memory, comp.fields = ci_memory, ci_fields
    c.cx = <const Contexts*><size_t>arg
    c.mask, c.n = spec.cx_inputs, c.cx.n_hashed
    if not 0 < c.mask <= CI_MASK or at.B > MAP2_DEPTHS:
        raise ValueError(f"cx_inputs must be in 1..{CI_MASK} (at most 8 bits per symbol)")
    comp.n_inputs = ci_count(c.mask, c.n)
    for i in range(MAX_CONTEXTS):
        c.index[i] = -1
    for i in range(c.n if c.mask & 4 else 0):
        if _init_map2(&c.map2[i]) < 0:
            raise MemoryError()
    return 0


cdef inline void ci_init_weights(const Component* bank, int n_bank, Mixer* sets,
                                 int n_sets) noexcept nogil:
    """With ``mix_init`` (weights summing to INIT_SHARE), the rows start as a mean of the
    log-odds inputs only: the second maps' with the others, the linear, deterministic and
    share inputs at 0 (as a share they moved the rows' first predictions: +0.2 to +0.5% on
    text)."""
    cdef int k = 0, first = 1, i, j, s, r, n, zero, per
    cdef double share
    cdef const CxInputs* c
    cdef double* w
    while k < n_bank and bank[k].predict != ci_predict:
        first += bank[k].n_inputs
        k += 1
    if k == n_bank:
        return
    c = <const CxInputs*>bank[k].state
    per = ci_per_context(c.mask)
    zero = c.n * ((c.mask & 1) + (c.mask >> 1 & 1)) + (c.mask >> 3 & 1)
    for s in range(n_sets):
        n = sets[s].n
        if n - 1 - zero <= 0 or sets[s].w[1] == 0.0:  # no share to move (mix_init 0)
            continue
        share = INIT_SHARE / (n - 1 - zero)
        for r in range(sets[s].n_sets):
            w = sets[s].w + <size_t>r * n
            for i in range(1, n):
                w[i] = share
            for j in range(c.n):
                i = first + j * per
                if c.mask & 1:
                    w[i] = 0.0
                    i += 1
                if c.mask & 2:
                    w[i] = 0.0
            if c.mask & 8:
                w[first + c.n * per] = 0.0
