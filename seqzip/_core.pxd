# cython: language_level=3
# The C-level model interface of seqzip, shared by every kernel (see _core.pyx for the story).
#
# A kernel is a cdef class deriving from Kernel.  It fills ``iface`` (alphabet size, mode, bits)
# and overrides the c_* methods; Kernel's __cinit__ points the interface's functions at them.
# Users of a model (the coding loop, a mixing kernel advancing its experts, foreign extension
# modules through the capsule) call the functions of the struct and never cross Python.  The
# functions are ``nogil``: callable without the interpreter lock.  The default ones take the
# lock to call the c_* methods (which may run Python: a network's training, a table grown by
# numpy); a kernel whose step is plain C points the struct at nogil functions of its own (cm).

cdef enum:
    SYMBOL_MODE = 0  # predict() fills alphabet_size probabilities; update(symbol)
    BIT_MODE = 1     # predict_bit() -> P(next bit = 1) in units of 2^-16; update_bit(bit);
                     # ``bits`` binary decisions per symbol, most significant first

cdef enum:
    PROB_ONE = 65536  # predict_bit's scale: 0 and PROB_ONE mean the bit is forced (not coded)

cdef enum:  # status codes of the interface functions
    STATUS_OK = 0
    STATUS_MEMORY = -1   # an allocation failed: the model is unusable (MemoryError)
    STATUS_SYMBOL = -2   # a symbol or bit the model cannot accept (a caller's bug)
    STATUS_EXCEPTION = -3  # Python code inside the kernel raised (KeyboardInterrupt, ...):
                           # the exception was kept by keep_exception and run() re-raises it

ctypedef int (*predict_fn)(void* state, double* probs) noexcept nogil
ctypedef int (*update_fn)(void* state, int symbol) noexcept nogil
ctypedef int (*predict_bit_fn)(void* state) noexcept nogil
ctypedef int (*update_bit_fn)(void* state, int bit) noexcept nogil
ctypedef const double* (*features_fn)(void* state, Py_ssize_t* n) noexcept nogil

cdef struct ModelInterface:
    void* state              # the kernel object (borrowed: its owner keeps it alive)
    int alphabet_size        # A: symbols are 0 .. A-1
    int mode                 # SYMBOL_MODE or BIT_MODE
    int bits                 # BIT_MODE: decisions per symbol (ceil(log2 A)); else 0
    predict_fn predict       # fill probs (A,) with the next symbol's distribution
    update_fn update         # learn the next symbol (SYMBOL_MODE)
    predict_bit_fn predict_bit
    update_bit_fn update_bit
    features_fn features     # the model's state vector (1, activities...), or NULL


cdef int keep_exception(object exc) noexcept

# state get/set helpers for the kernels: a C buffer as a uint8 array and back
cdef object raw_get(const void* p, Py_ssize_t nbytes)
cdef int raw_set(void* p, Py_ssize_t nbytes, object state, str name) except -1


cdef class Kernel:
    cdef ModelInterface iface
    cdef double[::1] _out            # (A,) buffer of the Python-level predict()
    cdef readonly long fallbacks     # predictions that were not finite and were replaced

    cdef int c_predict(self, double* probs) noexcept
    cdef int c_update(self, int symbol) noexcept
    cdef int c_predict_bit(self) noexcept
    cdef int c_update_bit(self, int bit) noexcept
    cdef const double* c_features(self, Py_ssize_t* n) noexcept
    cdef int checked_predict(self, double* probs) noexcept

