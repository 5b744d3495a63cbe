# cython: language_level=3
# The one interface of the context mixer's bit-level experts (its *components*).
#
# A component is a C record: its state pointer and the functions the kernel calls on it, in
# the spirit of cmix's Predict / Perceive / ByteUpdate and numpy's ``bitgen_t``.  The kernel
# (kernel.pyx) holds an array of them, the *bank*, and runs it: for each bit it asks every
# component for its ``n_inputs`` mixer inputs (in bank order: the inputs' order), learns the
# coded bit in each, and after each symbol lets each update and begin the next one.  A
# component reads the shared position (``Cursor``: the node of the symbol, the shared context
# state) and writes only its own state.  What it holds is named for get/set state by
# ``fields`` (a list of ``(name, type, address, bytes, heavy)``: ``field.pxd``), so the
# kernel saves, checks and restores it without knowing it.
#
# Adding an expert: a module with its state struct, its functions and a ``build`` function
# (filling the record: ``*_build(Component*, const Cursor*, spec, arg, index)``), and one
# line in ``kernel.pyx``'s ``_build_bank`` (plus its cimport).
from libc.stdint cimport uint8_t
from seqzip._kernels.cm.context cimport Context

cdef enum:
    MAX_COMPONENTS = 10

cdef enum:  # walk events (``Kernel.c_predict``: the bit tree walked without learning)
    WALK_BEGIN = 0   # keep what the walk moves
    WALK_NODE = 1    # the cursor is at a node the walk reached (not by coding)
    WALK_END = 2     # put it back


cdef struct Cursor:
    int A, B             # alphabet size, bits per symbol
    int node             # 1, then 2 node + bit ...: the bits of the symbol so far
    int depth            # bits coded in this symbol
    int gnode            # node inside the current group of up to 4 bits (1: a group begins)
    const uint8_t* to_byte
    const Context* ctx   # the shared context state (updated before ``update``)
    int big              # how builders allocate their large tables (tables.pxd: BIG_*)


ctypedef void (*predict_fn)(void* s, const Cursor* at, double* x) noexcept nogil
ctypedef void (*bit_fn)(void* s, const Cursor* at, int bit) noexcept nogil
ctypedef int (*symbol_fn)(void* s, const Cursor* at, int x) noexcept nogil
ctypedef int (*begin_fn)(void* s, const Cursor* at) noexcept nogil
ctypedef void (*walk_fn)(void* s, const Cursor* at, int event) noexcept nogil
ctypedef size_t (*memory_fn)(const void* s) noexcept nogil
ctypedef void (*free_fn)(void* s) noexcept nogil
ctypedef list (*fields_fn)(void* s)


cdef struct Component:
    void* state
    int n_inputs         # inputs it writes per bit
    predict_fn predict   # its inputs for the bit at the cursor (a bit that is not forced)
    bit_fn learn         # learn the coded bit (after its predict)
    bit_fn next_bit      # the cursor moved past ``bit`` (forced or not; the symbol goes on)
    symbol_fn update     # symbol x ended (the context state holds it): a status
    begin_fn begin       # a symbol begins: a status
    walk_fn walk         # WALK_* (a bit tree walked from the symbol's start, nothing learnt)
    memory_fn memory     # bytes it allocated
    free_fn free         # free its state (and the state itself)
    fields_fn fields     # its state for get/set: [(name, F_*, address, bytes, heavy)]


ctypedef int (*build_fn)(Component* c, const Cursor* at, object spec, object arg,
                         int index) except -1


cdef inline void nothing_bit(void* s, const Cursor* at, int bit) noexcept nogil:
    pass


cdef inline int nothing_symbol(void* s, const Cursor* at, int x) noexcept nogil:
    return 0


cdef inline int nothing_begin(void* s, const Cursor* at) noexcept nogil:
    return 0


cdef inline void nothing_walk(void* s, const Cursor* at, int event) noexcept nogil:
    pass
