# cython: language_level=3
"""The order-2 context model's kernel: counts of orders 0-2 blended by PPM method C.

Everything here runs inside the coding loop, so it obeys SPEC section 2: plain ``+ - * /`` on
float64 in a fixed order, no numpy or libm on the coding path, compiled with
``-ffp-contract=off`` and without fast-math.  A symbol-mode :class:`seqzip._core.Kernel`.

Round trip of the protocol::

    >>> k = Order2Kernel(3, 2, 255, 1.0)
    >>> p = k.predict(); k.update(1)
    >>> abs(float(k.predict().sum()) - 1.0) < 1e-12
    True
"""
cimport cython
import numpy as np
from libc.stdint cimport uint16_t, uint32_t

from seqzip._core cimport STATUS_OK, STATUS_SYMBOL, SYMBOL_MODE, Kernel

from seqzip._core import take


cdef inline void _blend(const uint16_t* counts, uint32_t total, uint32_t distinct,
                        double escape_weight, const double* lower,   # IN
                        double* out, Py_ssize_t n) noexcept nogil:  # OUT
    """out[x] = (counts[x] + e * lower[x]) / (total + e), e = escape_weight * distinct.

    This is PPM method C used as blending (no exclusion): the escape mass e spreads over the
    lower-order distribution, so every symbol of the alphabet keeps nonzero mass.
    """
    cdef Py_ssize_t x
    cdef double e, inv
    if total == 0:
        for x in range(n):
            out[x] = lower[x]
        return
    e = escape_weight * distinct
    inv = 1.0 / (total + e)
    for x in range(n):
        out[x] = (counts[x] + e * lower[x]) * inv


cdef inline void _count(uint16_t* counts, uint32_t* total, uint32_t* distinct,
                        Py_ssize_t symbol, Py_ssize_t n, uint32_t limit) noexcept nogil:
    """Add one occurrence; halve the context's counts when one reaches ``limit``.

    Halving keeps the model adaptive on non-stationary data and bounds the counters.
    """
    if counts[symbol] == 0:
        distinct[0] += 1
    counts[symbol] += 1
    total[0] += 1
    if counts[symbol] >= limit:
        _halve(counts, total, distinct, n)


cdef inline void _halve(uint16_t* counts, uint32_t* total, uint32_t* distinct,
                        Py_ssize_t n) noexcept nogil:
    """Halve a context's counts (rounding down) and recount its total and distinct symbols."""
    cdef Py_ssize_t x
    cdef uint32_t t = 0, d = 0
    for x in range(n):
        counts[x] = counts[x] >> 1
        t += counts[x]
        d += counts[x] != 0
    total[0] = t
    distinct[0] = d


@cython.final
cdef class Order2Kernel(Kernel):
    """Adaptive order-2 context model blended down to orders 1 and 0.

    Counts of order k live in a dense table indexed by the last k symbols (alphabet indices,
    not bytes), so memory is ``2 * A**3`` bytes for the order-2 table (32 MiB at A = 256).
    The order-0 estimate is Laplace's ``(c + 1) / (n + A)``, so no symbol ever has zero mass.
    """
    cdef Py_ssize_t A
    cdef readonly int order
    cdef uint32_t count_limit
    cdef double escape_weight
    cdef Py_ssize_t prev1, prev2
    cdef uint16_t[::1] c0, c1, c2          # (A,), (A*A,), (A*A*A,)
    cdef uint32_t[::1] n1, u1, n2, u2      # totals and distinct counts per context
    cdef uint32_t n0, u0
    cdef double[::1] p0, p1                 # (A,) each

    def __cinit__(self, Py_ssize_t alphabet_size, int order, uint32_t count_limit,
                  double escape_weight):
        if alphabet_size < 1 or alphabet_size > 256:
            raise ValueError("alphabet_size must be in 1..256")
        if order < 0 or order > 2:
            raise ValueError("order must be 0, 1 or 2")
        if count_limit < 2 or count_limit > 65535:
            raise ValueError("count_limit must be in 2..65535")
        if not escape_weight > 0.0:
            raise ValueError("escape_weight must be positive")
        cdef Py_ssize_t A = alphabet_size
        self.A = A
        self.iface.alphabet_size = <int>A
        self.iface.mode = SYMBOL_MODE
        self.iface.predict, self.iface.update = _order2_predict, _order2_update  # no lock
        self.order = order
        self.count_limit = count_limit
        self.escape_weight = escape_weight
        self.prev1 = 0
        self.prev2 = 0
        self.c0 = np.zeros(A, dtype=np.uint16)
        self.c1 = np.zeros(A * A if order >= 1 else 1, dtype=np.uint16)
        self.c2 = np.zeros(A * A * A if order >= 2 else 1, dtype=np.uint16)
        self.n1 = np.zeros(A if order >= 1 else 1, dtype=np.uint32)
        self.u1 = np.zeros(A if order >= 1 else 1, dtype=np.uint32)
        self.n2 = np.zeros(A * A if order >= 2 else 1, dtype=np.uint32)
        self.u2 = np.zeros(A * A if order >= 2 else 1, dtype=np.uint32)
        self.n0 = 0
        self.u0 = 0
        self.p0 = np.empty(A, dtype=np.float64)
        self.p1 = np.empty(A, dtype=np.float64)

    cdef int c_predict(self, double* out) noexcept:
        return self._free_predict(out)

    cdef int _free_predict(self, double* out) noexcept nogil:
        cdef Py_ssize_t x, A = self.A
        cdef double inv = 1.0 / (self.n0 + A)
        cdef Py_ssize_t ctx1 = self.prev1, ctx2 = self.prev2 * A + self.prev1
        for x in range(A):
            self.p0[x] = (self.c0[x] + 1.0) * inv
        if self.order == 0:
            for x in range(A):
                out[x] = self.p0[x]
        elif self.order == 1:
            _blend(&self.c1[ctx1 * A], self.n1[ctx1], self.u1[ctx1], self.escape_weight,
                   &self.p0[0], out, A)
        else:
            _blend(&self.c1[ctx1 * A], self.n1[ctx1], self.u1[ctx1], self.escape_weight,
                   &self.p0[0], &self.p1[0], A)
            _blend(&self.c2[ctx2 * A], self.n2[ctx2], self.u2[ctx2], self.escape_weight,
                   &self.p1[0], out, A)
        return STATUS_OK

    cdef int c_update(self, int symbol) noexcept:
        return self._free_update(symbol)

    cdef int _free_update(self, int symbol) noexcept nogil:
        if symbol < 0 or symbol >= self.A:
            return STATUS_SYMBOL
        self._update(symbol)
        return STATUS_OK

    cdef void _update(self, Py_ssize_t symbol) noexcept nogil:
        cdef Py_ssize_t A = self.A
        cdef Py_ssize_t ctx1 = self.prev1, ctx2 = self.prev2 * A + self.prev1
        _count(&self.c0[0], &self.n0, &self.u0, symbol, A, self.count_limit)
        if self.order >= 1:
            _count(&self.c1[ctx1 * A], &self.n1[ctx1], &self.u1[ctx1], symbol, A,
                   self.count_limit)
        if self.order >= 2:
            _count(&self.c2[ctx2 * A], &self.n2[ctx2], &self.u2[ctx2], symbol, A,
                   self.count_limit)
        self.prev2 = self.prev1
        self.prev1 = symbol

    def get_state(self):
        """The counts and the last two symbols (see ``Kernel.get_state``)."""
        state = Kernel.get_state(self)
        state["prev"] = np.array([self.prev1, self.prev2, self.n0, self.u0], dtype=np.int64)
        for name, mv in (("c0", self.c0), ("c1", self.c1), ("c2", self.c2), ("n1", self.n1),
                         ("u1", self.u1), ("n2", self.n2), ("u2", self.u2)):
            state[name] = np.array(mv)
        return state

    def set_state(self, dict state):
        """Take a state from ``get_state`` -- untrusted input: the last two symbols inside the
        alphabet, every count below the count limit, each context's total and number of
        distinct symbols equal to its counts' (what ``_count`` keeps), all checked before
        anything changes.

        Raises:
            ValueError: a missing entry, wrong type or shape, or impossible counts.
        """
        cdef Py_ssize_t A = self.A
        take(state, "fallbacks", np.int64, ())
        prev = take(state, "prev", np.int64, (4,))
        if not (0 <= prev[0] < A and 0 <= prev[1] < A):
            raise ValueError("model state holds an impossible context")
        tables = {name: take(state, name, np.asarray(mv).dtype, np.asarray(mv).shape)
                  for name, mv in (("c0", self.c0), ("c1", self.c1), ("c2", self.c2),
                                   ("n1", self.n1), ("u1", self.u1), ("n2", self.n2),
                                   ("u2", self.u2))}
        levels = [(tables["c0"].reshape(1, A), np.array([prev[2]]), np.array([prev[3]]))]
        if self.order >= 1:
            levels.append((tables["c1"].reshape(A, A), tables["n1"], tables["u1"]))
        if self.order >= 2:
            levels.append((tables["c2"].reshape(A * A, A), tables["n2"], tables["u2"]))
        for counts, totals, distinct in levels:
            if (counts.max() >= self.count_limit or
                    (counts.sum(axis=1, dtype=np.int64) != totals).any() or
                    ((counts != 0).sum(axis=1) != distinct).any()):
                raise ValueError("model state holds impossible counts")
        Kernel.set_state(self, state)
        for name, mv in (("c0", self.c0), ("c1", self.c1), ("c2", self.c2), ("n1", self.n1),
                         ("u1", self.u1), ("n2", self.n2), ("u2", self.u2)):
            np.asarray(mv)[...] = tables[name]
        self.prev1, self.prev2 = prev[0], prev[1]
        self.n0, self.u0 = prev[2], prev[3]

    def rescale(self, uint32_t cap):
        """Halve every context's counts (as the model halves them at its count limit) until
        each context's total is at most ``cap``, so that a model trained elsewhere (a
        dictionary) keeps its statistics but gives way to new data quickly: small totals
        leave the escape to the lower orders its weight.  Deterministic; a step taken once,
        when a dictionary is made.

            >>> k = Order2Kernel(2, 2, 1000, 1.0)
            >>> for _ in range(40):
            ...     k.update(0)
            >>> k.rescale(8); int(k.get_state()["n1"][0]) <= 8
            True
        """
        cdef Py_ssize_t A = self.A, ctx, contexts
        if cap < 1:
            raise ValueError("cap must be at least 1")
        _rescale(&self.c0[0], &self.n0, &self.u0, A, cap)
        if self.order >= 1:
            for ctx in range(A):
                _rescale(&self.c1[ctx * A], &self.n1[ctx], &self.u1[ctx], A, cap)
        if self.order >= 2:
            contexts = A * A
            for ctx in range(contexts):
                _rescale(&self.c2[ctx * A], &self.n2[ctx], &self.u2[ctx], A, cap)


cdef void _rescale(uint16_t* counts, uint32_t* total, uint32_t* distinct, Py_ssize_t n,
                   uint32_t cap) noexcept nogil:
    while total[0] > cap:
        _halve(counts, total, distinct, n)


# The interface's functions: plain C, so a model that holds this kernel as an expert (cm) steps
# it without taking the interpreter lock (``_core.pxd``).
cdef int _order2_predict(void* s, double* out) noexcept nogil:
    return (<Order2Kernel>s)._free_predict(out)


cdef int _order2_update(void* s, int symbol) noexcept nogil:
    return (<Order2Kernel>s)._free_update(symbol)
