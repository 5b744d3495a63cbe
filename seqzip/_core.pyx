# cython: language_level=3
"""The kernel base of seqzip: the C-level model interface and the one coding step.

Every model's arithmetic lives in a *kernel*, a cdef class deriving from :class:`Kernel`.  A
kernel exposes a :c:type:`ModelInterface` (``_core.pxd``), in the spirit of numpy's
``bitgen_t``: a struct holding the kernel's state pointer, its alphabet size, its mode and
function pointers to ``predict`` / ``update`` (symbol mode: a distribution over the alphabet)
or ``predict_bit`` / ``update_bit`` (bit mode: the symbol is coded as ``bits`` binary
decisions, most significant first, each with P(1) in units of 2^-16).  The coding loop below
and the mixing kernels that advance experts call those pointers directly: no Python round trip
per model or per expert.  Other extension modules can get the struct from
``Kernel.interface()`` (a capsule named ``"seqzip.ModelInterface"``).

:func:`run` is the one step every direction shares (SPEC section 2): predict, code one symbol
(or each of its bits), learn it.  Encoding, decoding and scoring differ only in what happens to
the symbol; the probabilities come from the same calls in the same order.  The coder itself is
passed in (``seqzip.coder`` is the only importer of constriction).

This module imports no seqzip Python: it is the bottom of the stack.

    >>> from seqzip._kernels.order2 import Order2Kernel
    >>> k = Order2Kernel(3, 2, 255, 1.0)
    >>> p = k.predict(); k.update(1)
    >>> round(float(k.predict().sum()), 12), k.mode
    (1.0, 0)
"""
import sys

import numpy as np

cimport cython
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

# the directions of run(): C constants inside its loop (a module global would be a dictionary
# look-up and a Python comparison per bit), Python ones outside
cdef enum:
    TO_ENCODE = 0
    TO_DECODE = 1
    TO_SCORE = 2

ENCODE = TO_ENCODE
DECODE = TO_DECODE
SCORE = TO_SCORE
BITS = BIT_MODE
SYMBOLS = SYMBOL_MODE
ONE = PROB_ONE


# ---------------------------------------------------------------- the interface's functions

cdef int _predict(void* state, double* probs) noexcept nogil:
    with gil:
        return (<Kernel>state).c_predict(probs)


cdef int _update(void* state, int symbol) noexcept nogil:
    with gil:
        return (<Kernel>state).c_update(symbol)


cdef int _predict_bit(void* state) noexcept nogil:
    with gil:
        return (<Kernel>state).c_predict_bit()


cdef int _update_bit(void* state, int bit) noexcept nogil:
    with gil:
        return (<Kernel>state).c_update_bit(bit)


cdef const double* _features(void* state, Py_ssize_t* n) noexcept nogil:
    with gil:
        return (<Kernel>state).c_features(n)


cdef object _kept = None


cdef int keep_exception(object exc) noexcept:
    """Keep ``exc``, raised by Python code that a kernel called from a C-level function (which
    cannot pass it on), for ``run`` to re-raise; return STATUS_EXCEPTION.  A model whose step
    was interrupted halfway is not used again: the coding stops with the exception."""
    global _kept
    _kept = exc
    return STATUS_EXCEPTION


def _raise_for(int status, str where):
    global _kept
    if status == STATUS_EXCEPTION:
        exc, _kept = _kept, None
        raise exc if exc is not None else RuntimeError(f"{where}: interrupted")
    if status == STATUS_MEMORY:
        raise MemoryError(f"{where}: out of memory")
    raise ValueError(f"{where}: symbol outside the model's alphabet")


cdef class Kernel:
    """Base of every kernel: the interface struct and the Python-level protocol over it.

    Subclasses set ``iface.alphabet_size`` / ``iface.mode`` / ``iface.bits`` in ``__cinit__``
    and override the ``c_*`` methods they support; the defaults refuse (``STATUS_SYMBOL``).
    """

    def __cinit__(self, *args, **kwargs):
        self.iface.state = <void*>self
        self.iface.alphabet_size = 0
        self.iface.mode = SYMBOL_MODE
        self.iface.bits = 0
        self.iface.predict = _predict
        self.iface.update = _update
        self.iface.predict_bit = _predict_bit
        self.iface.update_bit = _update_bit
        self.iface.features = _features
        self.fallbacks = 0

    cdef int c_predict(self, double* probs) noexcept:
        return STATUS_SYMBOL

    cdef int c_update(self, int symbol) noexcept:
        return STATUS_SYMBOL

    cdef int c_predict_bit(self) noexcept:
        return STATUS_SYMBOL

    cdef int c_update_bit(self, int bit) noexcept:
        return STATUS_SYMBOL

    cdef const double* c_features(self, Py_ssize_t* n) noexcept:
        n[0] = 0
        return NULL

    cdef int checked_predict(self, double* probs) noexcept:
        """``c_predict``, then the finite check both directions share: a distribution with a
        NaN, an infinity, a negative entry or no mass is replaced by the uniform one (and
        counted in ``fallbacks``), identically on both sides, so a model that diverges costs
        bits but never a stream."""
        cdef int status = self.c_predict(probs), x, A = self.iface.alphabet_size
        cdef double total = 0.0
        if status < 0:
            return status
        for x in range(A):
            if not (probs[x] >= 0.0 and probs[x] <= 1e300):  # false for NaN too
                total = -1.0
                break
            total = total + probs[x]
        if not (total > 0.0 and total <= 1e300):
            for x in range(A):
                probs[x] = 1.0 / A
            self.fallbacks += 1
        return STATUS_OK

    # ------------------------------------------------------------ the Python-level protocol

    @property
    def alphabet_size(self):
        return self.iface.alphabet_size

    @property
    def mode(self):
        """0 (symbol mode) or 1 (bit mode)."""
        return self.iface.mode

    @property
    def bits(self):
        """Binary decisions per symbol in bit mode (0 in symbol mode)."""
        return self.iface.bits

    def predict(self):
        """Next-symbol distribution: float64, C-contiguous, shape (A,), after the finite check
        the coder applies.  The array is the kernel's buffer, valid until the next call."""
        cdef int status
        if self._out is None or self._out.shape[0] != self.iface.alphabet_size:
            self._out = np.empty(self.iface.alphabet_size)
        status = self.checked_predict(&self._out[0])
        if status < 0:
            if status == STATUS_SYMBOL and self.iface.mode == BIT_MODE:
                raise NotImplementedError("this bit-mode kernel has no full distribution")
            _raise_for(status, type(self).__name__)
        return np.asarray(self._out)

    def update(self, int symbol):
        """Learn that ``symbol`` (an alphabet index) came next."""
        cdef int status
        if symbol < 0 or symbol >= self.iface.alphabet_size:
            raise ValueError(f"symbol {symbol} outside alphabet of size "
                             f"{self.iface.alphabet_size}")
        if self.iface.mode == BIT_MODE:
            for j in range(self.iface.bits - 1, -1, -1):
                self.c_predict_bit()
                status = self.c_update_bit((symbol >> j) & 1)
                if status < 0:
                    _raise_for(status, type(self).__name__)
            return
        status = self.c_update(symbol)
        if status < 0:
            _raise_for(status, type(self).__name__)

    def predict_bit(self):
        """Bit mode: P(next bit = 1) in units of 2^-16 (0 or 65536: the bit is forced)."""
        if self.iface.mode != BIT_MODE:
            raise TypeError("not a bit-mode kernel")
        return self.c_predict_bit()

    def update_bit(self, int bit):
        """Bit mode: learn the next bit (after ``predict_bit``)."""
        cdef int status
        if self.iface.mode != BIT_MODE:
            raise TypeError("not a bit-mode kernel")
        if bit != 0 and bit != 1:
            raise ValueError("a bit is 0 or 1")
        status = self.c_update_bit(bit)
        if status < 0:
            _raise_for(status, type(self).__name__)

    def features(self):
        """A copy of the state vector the kernel offers for gating, or None."""
        cdef Py_ssize_t n = 0
        cdef const double* f = self.c_features(&n)
        if f == NULL:
            return None
        return np.asarray(<double[:n]>f).copy()

    # ------------------------------------------------------------ the full state

    def get_state(self):
        """A copy of everything the kernel's next predictions depend on, as a flat dict of
        numpy arrays (scalars are 0-d arrays): parameters, optimiser and metric state,
        recurrent state, tables, the symbols it remembers.  A kernel built with the same
        arguments and given it by :meth:`set_state` predicts exactly as this one from here on.

            >>> from seqzip._kernels.order2 import Order2Kernel
            >>> a, b = Order2Kernel(3, 2, 255, 1.0), Order2Kernel(3, 2, 255, 1.0)
            >>> for s in [0, 1, 2, 1]:
            ...     a.update(s)
            >>> b.set_state(a.get_state())
            >>> bool((a.predict() == b.predict()).all())
            True
        """
        if type(self).get_state is Kernel.get_state:
            raise NotImplementedError(f"{type(self).__name__} does not expose its state")
        return {"fallbacks": np.array(self.fallbacks, dtype=np.int64)}

    def set_state(self, dict state):
        """Take the state :meth:`get_state` returned from a kernel built with the same
        arguments.

        Raises:
            ValueError: a missing entry, or one of the wrong type or shape.
            NotImplementedError: a kernel that does not expose its state (a new kernel
                overrides both methods, calling ``Kernel.get_state(self)`` first).
        """
        if type(self).set_state is Kernel.set_state:
            raise NotImplementedError(f"{type(self).__name__} does not expose its state")
        self.fallbacks = int(take(state, "fallbacks", np.int64, ()))

    # save points: what bit_distribution uses to walk a bit tree; a kernel may offer lighter
    # ones than its full state (the context-mixing kernel journals its hash table)

    def track_points(self, bint on):
        """Start (or stop) a walk of save points (nothing to do for the full state)."""

    def save_point(self):
        """What :meth:`restore_point` needs to return here: by default the full state."""
        return self.get_state()

    def restore_point(self, point):
        """Return to a :meth:`save_point` taken since :meth:`track_points` started."""
        self.set_state(point)

    def interface(self):
        """A capsule holding a pointer to this kernel's ``ModelInterface`` (valid while the
        kernel lives)."""
        return PyCapsule_New(&self.iface, b"seqzip.ModelInterface", NULL)


# ---------------------------------------------------------------- state helpers

def take(dict state, str name, dtype, shape=None):
    """``state[name]`` as an array of ``dtype`` (and ``shape`` when given).

    Raises:
        ValueError: missing, or of another dtype or shape.

        >>> take({"n": np.array(3)}, "n", np.int64, ())
        array(3)
    """
    try:
        value = state[name]
    except KeyError:
        raise ValueError(f"model state lacks {name!r}") from None
    if not isinstance(value, np.ndarray) or value.dtype != np.dtype(dtype) or \
            (shape is not None and value.shape != tuple(shape)):
        raise ValueError(f"model state entry {name!r} has the wrong type or shape")
    return value


def put(target, dict state, str name):
    """Copy ``state[name]`` into the array (or memoryview) ``target`` of the same shape.

        >>> out = np.zeros(2)
        >>> put(out, {"x": np.array([1.0, 2.0])}, "x"); out
        array([1., 2.])
    """
    t = np.asarray(target)
    t[...] = take(state, name, t.dtype, t.shape)


def nested(dict state, str prefix):
    """The entries of ``state`` under ``prefix`` (a sub-kernel's state), prefix removed.

        >>> nested({"e0.x": 1, "y": 2}, "e0.")
        {'x': 1}
    """
    n = len(prefix)
    return {k[n:]: v for k, v in state.items() if k.startswith(prefix)}


cdef object raw_get(const void* p, Py_ssize_t nbytes):
    """A copy of ``nbytes`` bytes at ``p`` as a uint8 array."""
    if nbytes == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer((<const char*>p)[:nbytes], dtype=np.uint8).copy()


cdef int raw_set(void* p, Py_ssize_t nbytes, object state, str name) except -1:
    """Copy ``state[name]`` (uint8, ``nbytes`` long) to ``p``."""
    cdef const uint8_t[::1] v = np.ascontiguousarray(take(state, name, np.uint8, (nbytes,)))
    if nbytes:
        memcpy(p, &v[0], nbytes)
    return 0


cdef inline double _total(const double* probs, int A) noexcept:
    """The sum SCORE divides by (the coder's Categorical normalises the same array)."""
    cdef double total = 0.0
    cdef int j
    for j in range(A):
        total = total + probs[j]
    return total


def distribution(Kernel kernel):
    """The next symbol's distribution exactly as the coding loop's SCORE step charges it: a
    symbol-mode kernel's checked prediction divided by its sum, or a bit-mode kernel's
    :func:`bit_distribution`.  A fresh array; the kernel is left as it was.

        >>> from seqzip._kernels.order2 import Order2Kernel
        >>> distribution(Order2Kernel(4, 2, 255, 1.0)).tolist()
        [0.25, 0.25, 0.25, 0.25]
    """
    cdef int status, j, A = kernel.iface.alphabet_size
    cdef double total
    cdef double[::1] p
    if kernel.iface.mode == BIT_MODE:
        return bit_distribution(kernel)
    out = np.empty(A)
    p = out
    status = kernel.checked_predict(&p[0])
    if status < 0:
        _raise_for(status, type(kernel).__name__)
    total = _total(&p[0], A)
    for j in range(A):
        p[j] = p[j] / total
    return out


def bit_distribution(Kernel kernel):
    """The next symbol's distribution under a bit-mode kernel: for each symbol, the product
    of the probabilities of its bits as the coding loop's SCORE step multiplies them (each
    bit's P(1) is ``predict_bit() / 2^16``, predicted after learning the symbol's earlier
    bits).  The bit tree is walked from save points (``Kernel.save_point``: the full state
    by default, lighter where the kernel offers it) and the kernel is left as it was; the
    last bit of a symbol is never learnt (its two leaves need only its prediction), so no
    symbol ends during the walk.

        >>> from seqzip.models import create
        >>> m = create("cm", None, alphabet_size=3, seed=0)
        >>> p = bit_distribution(m.kernel)
        >>> round(float(p.sum()), 12), p.shape
        (1.0, (3,))
    """
    cdef int A = kernel.iface.alphabet_size, B = kernel.iface.bits
    if kernel.iface.mode != BIT_MODE:
        raise TypeError("not a bit-mode kernel")
    out = np.zeros(A)
    kernel.track_points(True)
    try:
        start = kernel.save_point()
        _walk(kernel, out, B - 1, 0, 1.0, A)
        kernel.restore_point(start)
    finally:
        kernel.track_points(False)
    return out


cdef void _walk_error(int status, Kernel kernel) except *:
    _raise_for(status, type(kernel).__name__)


def _walk(Kernel kernel, double[::1] out, int j, int prefix, double score, int A):
    cdef int p, bit, status
    if prefix >= A:
        return  # every symbol below this node is outside the alphabet
    if j == 0:  # the leaves: the last bit's prediction is all they need
        p = kernel.iface.predict_bit(kernel.iface.state)
        if p < PROB_ONE:
            out[prefix] = score * ((PROB_ONE - p) * (1.0 / PROB_ONE))
        if p > 0 and prefix + 1 < A:
            out[prefix + 1] = score * (p * (1.0 / PROB_ONE))
        return
    saved = kernel.save_point()
    for bit in range(2):
        if bit:
            kernel.restore_point(saved)
        p = kernel.iface.predict_bit(kernel.iface.state)
        if (p <= 0 and bit) or (p >= PROB_ONE and not bit):
            continue  # a forced bit: the other branch has no mass
        status = kernel.iface.update_bit(kernel.iface.state, bit)
        if status < 0:
            _walk_error(status, kernel)
        _walk(kernel, out, j - 1, prefix | (bit << j),
              score * ((p if bit else PROB_ONE - p) * (1.0 / PROB_ONE)), A)


# ---------------------------------------------------------------- the shared step

# A bit-mode kernel coded by BitEncoder / BitDecoder or scored runs without the interpreter
# lock for the whole call (_run_bits_free): other threads run meanwhile, and several such
# streams coded on threads at once use as many cores (a kernel whose step is plain C, cm,
# never takes it; one that runs Python takes it back for each call).  Any other run() holds
# the interpreter while it codes (it calls the coder's Python objects for every symbol), so it
# lets it go now and then: every YIELD_SYMBOLS symbols (every symbol in bit
# mode) it reads a monotonic clock and, when twice the interpreter's switch interval
# (sys.getswitchinterval(), 5 ms by default) of work has passed since the last time, releases
# and retakes the GIL.  The pause must outlast the switch interval: a thread waiting for the
# GIL asks for it only when its wait of one interval times out, and only then does the
# release hand it over (a release that comes sooner wakes it, retakes the lock first and
# restarts its wait: it would starve).  A bit-mode symbol costs microseconds but not always:
# cm's first symbols touch its tables' fresh pages (the kernel zeroes each huge page of
# 2 MiB on its first write), and 32 of them took 90-230 ms of CPU on a loaded machine; a read
# of the clock (~20 ns) per symbol bounds the wait by one symbol.  This changes no arithmetic.
cdef enum:
    YIELD_SYMBOLS = 32

# Symbols coded (or decoded, or scored) by run() in this process since it started: the
# position a progress line measures its rate from.
cdef long long _symbols_done = 0

cdef extern from *:
    """
    static inline void seqzip_count(long long* counter, long long k) {
        __atomic_fetch_add(counter, k, __ATOMIC_RELAXED);
    }
    """
    void _count "seqzip_count"(long long* counter, long long k) noexcept nogil


def symbols_done():
    """Symbols that :func:`run` has coded, decoded or scored in this process so far (only
    grows; read it twice and subtract to measure a job).

        >>> symbols_done() >= 0
        True
    """
    return _symbols_done


cdef inline long long _now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <long long>ts.tv_sec * 1000000000 + ts.tv_nsec


def run(Kernel kernel, int direction, uint8_t[::1] symbols, object coder=None,
        object categorical=None, object bernoulli=None, list cache=None,
        double[::1] scores=None):
    """Run the model over ``len(symbols)`` symbols in one direction; return that count.

    ENCODE reads each symbol and codes it with ``coder.encode(value, model)``; DECODE writes
    each symbol from ``coder.decode(model)``; SCORE reads each symbol and writes its
    probability under the model to ``scores``.  In symbol mode the coder's model is
    ``categorical(probs)``; in bit mode it is ``cache[p]``, built once per 16-bit probability
    by ``bernoulli(p)``.

    In bit mode a :class:`BitEncoder` (ENCODE) or :class:`BitDecoder` (DECODE) as ``coder``
    codes each bit in C, with no Python call per bit: the same words as constriction's.  With
    them (or scoring) the loop runs without the interpreter lock (``_run_bits_free``).

    Raises:
        ValueError: a decoded symbol or bit the model rules out (corrupt data), or a symbol
            the model cannot code.
        MemoryError: the model ran out of memory.
    """
    cdef Py_ssize_t n = symbols.shape[0], i
    cdef int A = kernel.iface.alphabet_size, B = kernel.iface.bits, symbol, bit, j, p, status
    cdef bint bits = kernel.iface.mode == BIT_MODE
    cdef double[::1] probs
    cdef object probs_array = None, model, code = None
    cdef long long last_yield = _now_ns(), now
    cdef long long yield_ns = <long long>(2e9 * sys.getswitchinterval())
    cdef Py_ssize_t yield_mask = 0 if bits else YIELD_SYMBOLS - 1
    cdef BitDecoder native = None
    cdef BitEncoder writer = None
    global _symbols_done
    if direction == TO_ENCODE:
        if isinstance(coder, BitEncoder):
            if not bits:
                raise ValueError("a BitEncoder codes bit mode only")
            writer = coder
        else:
            code = coder.encode
    elif direction == TO_DECODE:
        if isinstance(coder, BitDecoder):
            if not bits:
                raise ValueError("a BitDecoder decodes bit mode only")
        else:
            code = coder.decode
    elif direction == TO_SCORE:
        if scores is None or scores.shape[0] < n:
            raise ValueError("scores must hold one value per symbol")
    else:
        raise ValueError("direction must be ENCODE, DECODE or SCORE")
    if not bits:
        probs_array = np.empty(A)
        probs = probs_array
    elif direction == TO_DECODE and isinstance(coder, BitDecoder):
        native = coder
    elif writer is not None:
        pass
    elif cache is None and direction != TO_SCORE:
        raise ValueError("bit mode needs a model cache")
    if bits and (writer is not None or native is not None or direction == TO_SCORE):
        return _run_bits_free(kernel, direction, symbols, writer, native, scores)
    for i in range(n):
        symbol = symbols[i] if direction != TO_DECODE else 0
        if symbol >= A:
            raise ValueError(f"symbol {symbol} outside the model's alphabet of {A}")
        if not bits:
            status = kernel.checked_predict(&probs[0])
            if status < 0:
                _raise_for(status, type(kernel).__name__)
            if direction == TO_SCORE:
                scores[i] = probs[symbol] / _total(&probs[0], A)
            else:
                model = categorical(probs_array)
                if direction == TO_ENCODE:
                    code(symbol, model)
                else:
                    symbol = code(model)
            status = kernel.iface.update(kernel.iface.state, symbol)
        else:  # constriction's coder, a Python call per bit (BitEncoder, BitDecoder and
            # scoring took _run_bits_free above)
            status = STATUS_OK
            if direction == TO_DECODE:
                symbol = 0
            for j in range(B - 1, -1, -1):
                p = kernel.iface.predict_bit(kernel.iface.state)
                if direction == TO_DECODE:
                    if p <= 0 or p >= PROB_ONE:
                        bit = p >= PROB_ONE
                    else:
                        model = cache[p]
                        if model is None:
                            model = cache[p] = bernoulli(p)
                        bit = code(model)
                    symbol = symbol | (bit << j)
                else:
                    bit = (symbol >> j) & 1
                    if (p <= 0 and bit) or (p >= PROB_ONE and not bit):
                        raise ValueError("symbol outside the model's alphabet")
                    if 0 < p < PROB_ONE:
                        model = cache[p]
                        if model is None:
                            model = cache[p] = bernoulli(p)
                        code(bit, model)
                status = kernel.iface.update_bit(kernel.iface.state, bit)
                if status < 0:
                    break
        if status < 0:
            _raise_for(status, type(kernel).__name__)
        if direction == TO_DECODE:
            if symbol >= A:
                raise ValueError(f"decoded symbol {symbol} outside the alphabet")
            symbols[i] = symbol
        _count(&_symbols_done, 1)
        if (i & yield_mask) == yield_mask:
            now = _now_ns()
            if now - last_yield >= yield_ns:
                with nogil:  # a thread waiting for the interpreter takes it here
                    pass
                last_yield = _now_ns()
    return n


cdef enum:  # why _bits_free stopped
    FREE_DONE = 0
    FREE_SYMBOL = 1    # a symbol outside the alphabet (to code or to score)
    FREE_FORCED = 2    # a bit the model rules out (P(bit) = 0)
    FREE_WORDS = 3     # decoding: words no encoder writes
    FREE_MEMORY = 4    # the range encoder ran out of memory
    FREE_DECODED = 5   # decoding: a symbol outside the alphabet
    FREE_STATUS = 6    # the model's status (its value in *value)


cdef int _bits_free(ModelInterface* m, int direction, uint8_t* symbols, Py_ssize_t n,
                    BitEncoder writer, BitDecoder native, double* scores,
                    Py_ssize_t* at, int* value) noexcept nogil:
    """run()'s loop for a bit-mode kernel coded by BitEncoder or BitDecoder or scored,
    without the interpreter lock (see run; a kernel's functions that run Python take it).
    Stops at the first symbol that fails, with its index in ``at`` and the reason returned."""
    cdef Py_ssize_t i
    cdef int A = m.alphabet_size, B = m.bits, j, p, bit, symbol, status
    cdef double score
    for i in range(n):
        at[0] = i
        symbol = symbols[i] if direction != TO_DECODE else 0
        if symbol >= A:
            value[0] = symbol
            return FREE_SYMBOL
        score = 1.0
        for j in range(B - 1, -1, -1):
            p = m.predict_bit(m.state)
            if direction == TO_DECODE:
                if p <= 0 or p >= PROB_ONE:
                    bit = p >= PROB_ONE
                else:
                    bit = native.decode_bit(p)
                    if bit < 0:
                        return FREE_WORDS
                symbol = symbol | (bit << j)
            else:
                bit = (symbol >> j) & 1
                if (p <= 0 and bit) or (p >= PROB_ONE and not bit):
                    return FREE_FORCED
                if direction == TO_SCORE:
                    score = score * ((p if bit else PROB_ONE - p) * (1.0 / PROB_ONE))
                elif 0 < p < PROB_ONE and writer.encode_bit(bit, p) < 0:
                    return FREE_MEMORY
            status = m.update_bit(m.state, bit)
            if status < 0:
                value[0] = status
                return FREE_STATUS
        if direction == TO_SCORE:
            scores[i] = score
        elif direction == TO_DECODE:
            if symbol >= A:
                value[0] = symbol
                return FREE_DECODED
            symbols[i] = symbol
        _count(&_symbols_done, 1)
    at[0] = n
    return FREE_DONE


cdef Py_ssize_t _run_bits_free(Kernel kernel, int direction, uint8_t[::1] symbols,
                               BitEncoder writer, BitDecoder native, double[::1] scores) except -1:
    """run() for a bit-mode kernel coded in C or scored: the loop lets the interpreter go
    for all of its length, so other threads run while it codes (a progress line, a program's
    other work, another stream coded at the same time); the errors are run()'s."""
    cdef Py_ssize_t n = symbols.shape[0], at = 0
    cdef int why, value = 0
    cdef uint8_t* sym = &symbols[0] if n else NULL
    cdef double* sc = &scores[0] if scores is not None and n else NULL
    cdef ModelInterface* m = &kernel.iface
    with nogil:
        why = _bits_free(m, direction, sym, n, writer, native, sc, &at, &value)
    if why == FREE_SYMBOL:
        raise ValueError(f"symbol {value} outside the model's alphabet of {m.alphabet_size}")
    if why == FREE_FORCED:
        raise ValueError("symbol outside the model's alphabet")
    if why == FREE_WORDS:
        raise ValueError("the words are not a range coder's")
    if why == FREE_MEMORY:
        raise MemoryError("range encoder: out of memory")
    if why == FREE_DECODED:
        raise ValueError(f"decoded symbol {value} outside the alphabet")
    if why == FREE_STATUS:
        _raise_for(value, type(kernel).__name__)
    return n


# ---------------------------------------------------------------- bit mode's range coder

# constriction's queue range coder as seqzip's bit mode uses it (``seqzip.coder``): 32-bit
# words, a 64-bit state, models of PRECISION bits.  Bernoulli(p, perfect=False) of a bit whose
# P(1) is p / PROB_ONE gives the 0 the slots [0, c) and the 1 the slots [c, 2^PRECISION), with
# c = floor((1 - p / PROB_ONE) * (2^PRECISION - 2)) + 1 (every symbol keeps one slot).  For
# PROB_ONE = 2^16 that float product is exact, so the integer form below is the same number.
cdef enum:
    PRECISION = 24


cdef inline uint64_t _split(int p) noexcept nogil:
    """The first slot of the 1 (``c`` above) for P(1) = p / PROB_ONE, 0 < p < PROB_ONE."""
    return ((<uint64_t>(PROB_ONE - p) * ((1 << PRECISION) - 2)) // PROB_ONE) + 1


cdef class BitEncoder:
    """The range encoder of bit mode in C: the words constriction's RangeEncoder writes for
    ``encode(bit, Bernoulli(p / PROB_ONE, perfect=False))`` bit after bit, with no Python call
    per bit (:func:`run` calls :meth:`encode_bit`).  Like constriction's, it keeps the words of
    a pending carry (``inverted``: the low end wrapped below the high end) until it is known.

        >>> e = BitEncoder()
        >>> e.encode_bits(np.array([1, 0, 1]), np.array([40000, 20000, 65535]))
        >>> BitDecoder(e.get_compressed()).decode_bits(np.array([40000, 20000, 65535])).tolist()
        [1, 0, 1]
    """
    cdef uint32_t* out
    cdef Py_ssize_t n, size
    cdef uint64_t lower, span
    cdef readonly Py_ssize_t inverted  # words held back (0: none)
    cdef uint32_t first_inverted # the first of them before the carry is known

    def __cinit__(self):
        self.out, self.n, self.size = NULL, 0, 0
        self.lower, self.span = 0, <uint64_t>0xFFFFFFFFFFFFFFFF
        self.inverted, self.first_inverted = 0, 0

    def __dealloc__(self):
        free(self.out)

    cdef inline int write(self, uint32_t word) noexcept nogil:
        cdef uint32_t* grown
        if self.n == self.size:
            grown = <uint32_t*>realloc(self.out, 4 * (2 * self.size + 1024))
            if grown == NULL:
                return -1
            self.out, self.size = grown, 2 * self.size + 1024
        self.out[self.n] = word
        self.n += 1
        return 0

    cdef inline uint32_t held(self, Py_ssize_t k, bint carry) noexcept nogil:
        """Held-back word k once the carry is known: with the carry the first plus one and
        zeros after it, else the first and all ones."""
        if k == 0:
            return self.first_inverted + 1 if carry else self.first_inverted
        return 0 if carry else 0xFFFFFFFF

    cdef int release(self, bint carry) noexcept nogil:
        """Write the held-back words (``held``)."""
        cdef Py_ssize_t k
        for k in range(self.inverted):
            if self.write(self.held(k, carry)) < 0:
                return -1
        return 0

    cdef inline int encode_bit(self, int bit, int p) noexcept nogil:
        """Code ``bit`` under P(1) = p / PROB_ONE (0 < p < PROB_ONE); -1 when out of memory."""
        cdef uint64_t scale = self.span >> PRECISION, c = _split(p), lower, word
        lower = self.lower
        if bit:
            lower = lower + scale * c
            self.span = scale * ((<uint64_t>1 << PRECISION) - c)
        else:
            self.span = scale * c
        if self.inverted and lower + self.span > lower:  # the carry is known now
            if self.release(lower < self.lower) < 0:
                return -1
            self.inverted = 0
        self.lower = lower
        if self.span < (<uint64_t>1 << 32):
            self.span = self.span << 32
            word = self.lower >> 32
            self.lower = self.lower << 32
            if self.inverted:
                self.inverted += 1
            elif self.lower + self.span > self.lower:
                return self.write(<uint32_t>word)
            else:
                self.inverted, self.first_inverted = 1, <uint32_t>word
        return 0

    def encode_bits(self, bits, p):
        """Code each of ``bits`` (0 or 1) under its ``p`` (P(1) in units of 2^-16, inside
        (0, PROB_ONE))."""
        cdef const int32_t[::1] b = np.ascontiguousarray(bits, dtype=np.int32)
        cdef const int32_t[::1] q = np.ascontiguousarray(p, dtype=np.int32)
        cdef Py_ssize_t i
        if b.shape[0] != q.shape[0]:
            raise ValueError("one P(1) per bit")
        for i in range(b.shape[0]):
            if not 0 < q[i] < PROB_ONE or not 0 <= b[i] <= 1:
                raise ValueError("bits are 0 or 1, P(1) inside (0, 65536)")
            if self.encode_bit(b[i], q[i]) < 0:
                raise MemoryError("range encoder: out of memory")

    def get_compressed(self, bint tight=False):
        """The words so far, sealed as constriction's ``get_compressed`` seals them (the
        encoder can go on): uint32, none when nothing was coded.  ``tight``: sealed for
        :class:`BitDecoder` alone, which reads zeros past the last word: the point is the value
        in the final range with the most trailing zero bits (one word: the range spans at
        least 2^32 after every bit, so a multiple of 2^32 lies in it), so that a lean payload
        (``seqzip.coder``) may leave out the zero bytes that end it.

            >>> e = BitEncoder()
            >>> e.encode_bits(np.array([1, 0, 1] * 40), np.array([40000, 20000, 65535] * 40))
            >>> w = e.get_compressed(True)
            >>> len(w) <= len(e.get_compressed())
            True
            >>> BitDecoder(w).decode_bits(np.array([40000, 20000, 65535] * 40)).tolist()[:6]
            [1, 0, 1, 1, 0, 1]
        """
        cdef uint64_t point, upper, mask
        cdef Py_ssize_t k, m = self.n
        cdef uint32_t[::1] v
        cdef int t
        if self.span == <uint64_t>0xFFFFFFFFFFFFFFFF:
            return np.zeros(0, dtype=np.uint32)
        if tight:
            t = 63
            while True:  # t = 0 always fits (the point lower itself)
                mask = (<uint64_t>1 << t) - 1
                point = (self.lower + mask) & ~mask
                if point - self.lower < self.span:
                    break
                t -= 1
            out = np.empty(m + self.inverted + 2, dtype=np.uint32)
            v = out
            for k in range(m):
                v[k] = self.out[k]
            for k in range(self.inverted):  # the carry: the point wrapped past 2^64
                v[m] = self.held(k, point < self.lower)
                m += 1
            v[m] = <uint32_t>(point >> 32)
            m += 1
            if t < 32:
                v[m] = <uint32_t>point
                m += 1
            return out[:m].copy()
        point = self.lower + ((<uint64_t>1 << 32) - 1)
        upper = self.lower + self.span
        out = np.empty(m + self.inverted + 2, dtype=np.uint32)
        v = out
        for k in range(m):
            v[k] = self.out[k]
        for k in range(self.inverted):  # the seal decides the carry
            v[m] = self.held(k, point < self.lower)
            m += 1
        v[m] = <uint32_t>(point >> 32)
        m += 1
        if <uint32_t>(upper >> 32) == <uint32_t>(point >> 32):
            v[m] = 0
            m += 1
        return out[:m].copy()


cdef class BitDecoder:
    """The range decoder of bit mode in C: the words of constriction's RangeEncoder, decoded
    bit by bit as ``RangeDecoder.decode(Bernoulli(p / PROB_ONE, perfect=False))`` would, with
    no Python call per bit (:func:`run` calls :meth:`decode_bit`).

        >>> d = BitDecoder(np.zeros(0, np.uint32))
        >>> d.maybe_exhausted()
        True
    """
    cdef object words            # the uint32 array the pointer reads
    cdef const uint32_t* w
    cdef Py_ssize_t pos, n
    cdef uint64_t lower, span, point

    def __init__(self, words):
        cdef const uint32_t[::1] v
        cdef int read = 0
        self.words = np.ascontiguousarray(words, dtype=np.uint32)
        v = self.words
        self.n, self.pos, self.w = v.shape[0], 0, NULL
        if self.n:
            self.w = &v[0]
        self.lower, self.span, self.point = 0, <uint64_t>0xFFFFFFFFFFFFFFFF, 0
        while read < 2 and self.pos < self.n:  # the point: the first two words, zeros after
            self.point = (self.point << 32) | self.w[self.pos]
            self.pos += 1
            read += 1
        if read == 1:
            self.point = self.point << 32

    @cython.cdivision(True)
    cdef inline int decode_bit(self, int p) noexcept nogil:
        """The next bit under P(1) = p / PROB_ONE (0 < p < PROB_ONE), or -1 for words no
        encoder writes."""
        cdef uint64_t scale = self.span >> PRECISION, c = _split(p)
        cdef uint64_t quantile = (self.point - self.lower) // scale
        cdef int bit
        if quantile >= (<uint64_t>1 << PRECISION):
            return -1
        if quantile < c:
            bit = 0
            self.span = scale * c
        else:
            bit = 1
            self.lower = self.lower + scale * c
            self.span = scale * ((<uint64_t>1 << PRECISION) - c)
        if self.span < (<uint64_t>1 << 32):
            self.lower = self.lower << 32
            self.span = self.span << 32
            self.point = self.point << 32
            if self.pos < self.n:
                self.point = self.point | self.w[self.pos]
                self.pos += 1
        return bit

    def decode_bits(self, p):
        """Decode one bit per entry of ``p`` (P(1) in units of 2^-16, 0 < p < PROB_ONE).

        Raises:
            ValueError: a P(1) out of range, or words no encoder writes.
        """
        cdef const int32_t[::1] q = np.ascontiguousarray(p, dtype=np.int32)
        cdef Py_ssize_t i
        cdef int bit
        out = np.empty(q.shape[0], dtype=np.uint8)
        cdef uint8_t[::1] o = out
        for i in range(q.shape[0]):
            if not 0 < q[i] < PROB_ONE:
                raise ValueError("P(1) must be inside (0, 65536)")
            bit = self.decode_bit(q[i])
            if bit < 0:
                raise ValueError("the words are not a range coder's")
            o[i] = bit
        return out

    def words_read(self):
        """True when every word has been read (a tight seal's point, ``BitEncoder``, may lie
        anywhere in the final range, so only this is asked of a lean payload)."""
        return self.pos >= self.n

    def maybe_exhausted(self):
        """True when the words may hold no more data than the bits decoded so far (as
        ``RangeDecoder.maybe_exhausted``)."""
        return self.pos >= self.n and (self.span == <uint64_t>0xFFFFFFFFFFFFFFFF or
                                       self.point - self.lower < (<uint64_t>1 << 33) - 1)


# ---------------------------------------------------------------- distributions along a sequence

def distributions(Kernel kernel, uint8_t[::1] symbols, double[:, ::1] out, bint learn=True,
                  double[::1] scores=None):
    """Write to ``out[i]`` the distribution over the alphabet before ``symbols[i]``, then let
    the kernel learn that symbol (with ``learn``); one C-level loop, no Python per position.
    With ``learn`` and ``scores``, ``scores[i]`` is also what :func:`run`'s SCORE step gives:
    the probability the coder charges for ``symbols[i]``.

    Symbol mode: the checked prediction divided by its sum, exactly what :func:`run`'s SCORE
    step divides (so ``out[i, symbols[i]]`` is the probability SCORE gives).  Bit mode: the
    kernel's full distribution (``c_predict``: every bit decision evaluated as ``predict_bit``
    would, learning nothing, about A calls of it), divided by its sum, then the symbol's bits
    are predicted and learnt as the coder does.  For a bit-mode kernel that has no full
    distribution the walk of :func:`bit_distribution` is used (far slower).  The coder's own
    charge for a symbol of a bit-mode kernel differs a little from ``out[i, symbols[i]]``:
    it predicts each bit after learning the symbol's earlier ones.

    Without ``learn`` every row is the distribution under the current state (nothing is
    learnt, the kernel is left as it was).

    Raises:
        ValueError: ``out`` of the wrong shape, or a symbol outside the alphabet.
        MemoryError: the model ran out of memory.

        >>> from seqzip._kernels.order2 import Order2Kernel
        >>> out = np.empty((2, 3))
        >>> distributions(Order2Kernel(3, 2, 255, 1.0), np.array([1, 1], np.uint8), out)
        >>> out[0].tolist(), bool(out[1, 1] > out[0, 1])
        ([0.3333333333333333, 0.3333333333333333, 0.3333333333333333], True)
    """
    cdef Py_ssize_t n = symbols.shape[0], i
    cdef int A = kernel.iface.alphabet_size, B = kernel.iface.bits, x, j, bit, p, status
    cdef bint bits = kernel.iface.mode == BIT_MODE, full = True, keep = scores is not None
    cdef double total, score
    if out.shape[0] != n or out.shape[1] != A:
        raise ValueError(f"out must have shape ({n}, {A})")
    if keep and scores.shape[0] < n:
        raise ValueError("scores must hold one value per symbol")
    for i in range(n):
        if symbols[i] >= A:
            raise ValueError(f"symbol {symbols[i]} outside the model's alphabet of {A}")
    if n == 0:
        return
    if bits:
        status = kernel.c_predict(&out[0, 0])
        full = status >= 0
    for i in range(n if learn else 1):
        if bits and not full:
            out[i, :] = bit_distribution(kernel)
        else:
            status = kernel.checked_predict(&out[i, 0])
            if status < 0:
                _raise_for(status, type(kernel).__name__)
            total = _total(&out[i, 0], A)
            for x in range(A):
                out[i, x] = out[i, x] / total
        if not learn:
            break
        if bits:
            status = STATUS_OK
            score = 1.0
            for j in range(B - 1, -1, -1):
                bit = (symbols[i] >> j) & 1
                p = kernel.iface.predict_bit(kernel.iface.state)
                if (p <= 0 and bit) or (p >= PROB_ONE and not bit):
                    raise ValueError("symbol outside the model's alphabet")
                score = score * ((p if bit else PROB_ONE - p) * (1.0 / PROB_ONE))
                status = kernel.iface.update_bit(kernel.iface.state, bit)
                if status < 0:
                    break
        else:
            score = out[i, symbols[i]]
            status = kernel.iface.update(kernel.iface.state, symbols[i])
        if keep:
            scores[i] = score
        if status < 0:
            _raise_for(status, type(kernel).__name__)
    if not learn:
        for i in range(1, n):
            out[i, :] = out[0, :]
