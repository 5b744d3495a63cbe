# cython: language_level=3
"""The base of the online networks: output layer, experts and gates, priors, the window ring.

A family (``glnn.pyx``, ``lstm.pyx``) derives from :class:`OnlineNetwork` and adds its cell and
its training on the window: ``load_features`` (the state vector (1, activities)),
``output_weights``, ``record_state`` (the state before a symbol, for truncated BPTT),
``transition`` and ``train_window``.  Everything else is here, once:

* ``predict``: each expert (any symbol-mode kernel, through its C interface) gives its
  distribution; the network predicts ``softmax(a . W_out + sum_e beta_e log p_e)`` with gates
  ``beta = a . U`` (``mixing.pxd``), floored at a uniform mass of 2^-16;
* ``update(x)``: a QDH step on the output weights (when the family trains them per symbol) and
  on the gates, the symbol and the experts' offsets into the ring, the family's transition,
  the experts' updates, and every ``interval`` symbols the family's training on the window.

Priors: the output weights' curvature starts at ``writing_prior`` samples at the uniform
distribution (activities of variance 1/4, uncorrelated with the bias), the gates' at
``GATE_PRIOR`` samples of unit variance; without them the first steps are Newton steps on one
sample and saturate the softmax.  The mixture starts as the first expert alone: with an
order-2 expert, a GLNN's first prediction is the expert's (floored at 2^-16):

    >>> from seqzip._kernels.glnn import OnlineGLNN, initial_parameters
    >>> from seqzip._kernels.order2 import Order2Kernel
    >>> from types import SimpleNamespace
    >>> config = SimpleNamespace(window=8, interval=8, metric="qdrbpm", decay=0.999, eps=1.0,
    ...     rate_tau=0.05, rate_tau_max=1.0, rate_w=0.1, writing_memory=2048, writing_eps=3.0,
    ...     writing_prior=256.0, rate_beta=1.0, beta_eps=300.0)
    >>> expert = Order2Kernel(3, 2, 255, 1.0)
    >>> for s in [0, 1, 2, 0, 1]:
    ...     _ = expert.predict(); expert.update(s)
    >>> net = OnlineGLNN(config, *initial_parameters(4, 3, 0.5, 3, 0), [expert])
    >>> want = (1 - 2.0 ** -16) * expert.predict() + 2.0 ** -16 / 3
    >>> bool(np.allclose(net.predict(), want, rtol=1e-13))
    True
"""
import numpy as np
from libc.stdlib cimport free, malloc

from seqzip._core cimport (STATUS_MEMORY, STATUS_OK, STATUS_SYMBOL, SYMBOL_MODE, Kernel,
                           keep_exception)
from seqzip._core import nested, take
from seqzip._kernels.mixing cimport (expert_logs, floor_mix, gate_step, mixed_softmax,
                                     writing_step)

GATE_PRIOR = 64.0  # prior curvature of the gates, in samples of unit variance (format constant)
MAX_EXPERTS = 8


cdef class OnlineNetwork(Kernel):
    """Base class; see the module docstring.  Not usable on its own."""

    def __dealloc__(self):
        free(self.expert_if)

    cdef setup_network(self, object config, Py_ssize_t n_features, Py_ssize_t A,
                       list experts, bint qdh_output):
        """Allocate the shared state from ``config`` (window, interval, writing_memory,
        writing_eps, writing_prior, rate_w, rate_beta, beta_eps) and the experts' kernels."""
        cdef Py_ssize_t E = len(experts), e, rows = max(E, 1)
        cdef Kernel expert
        if A < 1 or A > 256:
            raise ValueError("alphabet size must be in 1..256")
        if E > MAX_EXPERTS:
            raise ValueError(f"at most {MAX_EXPERTS} experts")
        self.A = A
        self.iface.alphabet_size = <int>A
        self.iface.mode = SYMBOL_MODE
        self.iface.predict, self.iface.update = _net_predict, _net_update  # see the end
        self.n_features = n_features
        self.window = config.window
        self.interval = config.interval
        if self.window < 1 or self.interval < 1:
            raise ValueError("window and interval must be positive")
        self.qdh_output = qdh_output
        self.rate_w = config.rate_w
        self.writing_decay = 1.0 - 1.0 / config.writing_memory
        self.writing_eps = config.writing_eps
        self.rate_beta = config.rate_beta
        self.beta_eps = config.beta_eps
        self.feat = np.zeros(n_features)
        self.feat[0] = 1.0
        self.raw = np.zeros(A)
        self.scratch = np.zeros(A)
        v0 = (1.0 / A) * (1.0 - 1.0 / A)
        w_diag = np.full((n_features, A), config.writing_prior * v0 * 0.25)
        w_diag[0] = config.writing_prior * v0
        self.w_diag = w_diag
        self.w_cross = np.zeros((n_features, A))
        for e in range(E):
            expert = experts[e]
            if expert.iface.mode != SYMBOL_MODE or expert.iface.alphabet_size != A:
                raise ValueError("experts must be symbol-mode kernels over the same alphabet")
        self.experts = list(experts)
        self.n_experts = E
        self.expert_if = <ModelInterface*>malloc(rows * sizeof(ModelInterface))
        if self.expert_if == NULL:
            raise MemoryError()
        for e in range(E):
            expert = experts[e]
            self.expert_if[e] = expert.iface
        self.expert_probs = np.zeros(A)
        self.lexp = np.zeros((rows, A))
        U = np.zeros((n_features, rows))
        if E:
            U[0, 0] = 1.0  # the mixture starts as the first expert alone
        self.U = U
        u_diag = np.full((n_features, rows), GATE_PRIOR * 0.25)
        u_diag[0] = GATE_PRIOR
        self.u_diag = u_diag
        self.u_cross = np.zeros((n_features, rows))
        self.beta = np.zeros(rows)
        self.offset = np.zeros(A)
        self.ring_symbols = np.zeros(self.window, dtype=np.int64)
        self.ring_offsets = np.zeros((self.window, A))
        self.filled = self.pos = self.since = 0
        self.predicted = False

    # ------------------------------------------------------------ the family's part

    cdef double* output_weights(self) noexcept nogil:
        return NULL

    cdef void load_features(self) noexcept nogil:
        pass

    cdef void record_state(self, Py_ssize_t slot) noexcept nogil:
        pass

    cdef void transition(self, int symbol) noexcept nogil:
        pass

    cdef int train_window(self) except -1:
        return 0

    cdef Py_ssize_t ring_index(self, Py_ssize_t t) noexcept:
        """Ring slot of the window's t-th symbol (0 = the oldest)."""
        return (self.pos + t) % self.window

    # ------------------------------------------------------------ the interface

    cdef int c_predict(self, double* out) noexcept:
        return self._free_predict(out)

    cdef int c_update(self, int x) noexcept:
        return self._free_update(x)

    cdef int _free_predict(self, double* out) noexcept nogil:
        cdef Py_ssize_t e
        cdef int status
        for e in range(self.n_experts):
            status = self.expert_if[e].predict(self.expert_if[e].state, &self.expert_probs[0])
            if status < 0:
                return status
            expert_logs(&self.expert_probs[0], &self.lexp[e, 0], self.A)
        self.load_features()
        mixed_softmax(&self.feat[0], self.output_weights(), self.n_features, self.A,
                      &self.lexp[0, 0], &self.U[0, 0], self.n_experts, &self.beta[0],
                      &self.offset[0], &self.raw[0])
        floor_mix(&self.raw[0], out, self.A)
        self.predicted = True
        return STATUS_OK

    cdef int _free_update(self, int x) noexcept nogil:
        cdef Py_ssize_t e, y
        cdef int status
        if x < 0 or x >= self.A:
            return STATUS_SYMBOL
        if not self.predicted:
            status = self._free_predict(&self.scratch[0])
            if status < 0:
                return status
        self.predicted = False
        if self.qdh_output:
            writing_step(&self.feat[0], self.n_features, &self.raw[0], x, self.A,
                         &self.w_diag[0, 0], &self.w_cross[0, 0], self.writing_decay,
                         self.writing_eps, self.rate_w, self.output_weights())
        gate_step(&self.feat[0], self.n_features, &self.raw[0], x, self.A, &self.lexp[0, 0],
                  self.n_experts, &self.u_diag[0, 0], &self.u_cross[0, 0],
                  self.writing_decay, self.beta_eps, self.rate_beta, &self.U[0, 0])
        self.ring_symbols[self.pos] = x
        self.record_state(self.pos)
        if self.n_experts:
            for y in range(self.A):
                self.ring_offsets[self.pos, y] = self.offset[y]
        self.pos = (self.pos + 1) % self.window
        if self.filled < self.window:
            self.filled += 1
        self.transition(x)
        for e in range(self.n_experts):
            status = self.expert_if[e].update(self.expert_if[e].state, x)
            if status < 0:
                return status
        self.since += 1
        if self.since >= self.interval and self.filled == self.window:
            self.since = 0
            with gil:  # a family's training may run Python (and lets the lock go itself)
                return self._train_step()
        return STATUS_OK

    cdef int _train_step(self) noexcept:
        """train_window, its exception kept for run() (``keep_exception``)."""
        try:
            self.train_window()
        except MemoryError:
            return STATUS_MEMORY
        except BaseException as exc:  # e.g. KeyboardInterrupt inside numpy: stop coding
            return keep_exception(exc)
        return STATUS_OK

    cdef const double* c_features(self, Py_ssize_t* n) noexcept:
        self.load_features()
        n[0] = self.n_features
        return &self.feat[0]

    # ------------------------------------------------------------ inspection

    def window_offsets(self):
        """The experts' logit offsets of the window's symbols in time order (None without
        experts): the window objective holds them fixed, so training improves what the
        network adds to the experts, not the gates (those have their own step)."""
        if not self.n_experts:
            return None
        order = (np.arange(self.window) + self.pos) % self.window
        return np.ascontiguousarray(np.asarray(self.ring_offsets)[order])

    def window_symbols(self):
        """The last ``window`` symbols in time order."""
        order = (np.arange(self.window) + self.pos) % self.window
        return np.ascontiguousarray(np.asarray(self.ring_symbols)[order])

    def expert_weights(self):
        """The experts' weights beta at the last prediction, and their gates U."""
        E = self.n_experts
        return (np.asarray(self.beta)[:E].copy(), np.asarray(self.U)[:, :E].copy())

    def parameters(self):
        """Copies of the parameters by name, cut from ``flat_parameters()`` in the order of the
        family's ``layout()`` (the LSTM family and the ReLU RNN keep all their parameters in
        one flat ``theta``)."""
        out, at = {}, 0
        theta = np.asarray(self.flat_parameters())
        for name, shape in self.layout().items():
            size = int(np.prod(shape))
            out[name] = theta[at:at + size].reshape(shape).copy()
            at += size
        return out

    # ------------------------------------------------------------ the full state

    def get_state(self):
        """The output layer, the gates, their metrics, the ring of recent symbols and the
        experts' states (under ``expertE.``); the families add theirs (``Kernel.get_state``)."""
        cdef Py_ssize_t e
        state = Kernel.get_state(self)
        for name, mv in self._network_arrays():
            state[name] = np.array(mv)
        state["counters"] = np.array([self.filled, self.pos, self.since, self.predicted],
                                     dtype=np.int64)
        for e in range(self.n_experts):
            for key, value in self.experts[e].get_state().items():
                state[f"expert{e}.{key}"] = value
        return state

    def set_state(self, dict state):
        """Take a state from ``get_state`` -- untrusted input: counters and the ring's symbols
        in range and every array of the right type and shape, checked before this kernel's
        arrays change (each expert checks its own state the same way).  A family calls it
        after checking its own part.

        Raises:
            ValueError: a missing entry, wrong type or shape, or an impossible value.
        """
        cdef Py_ssize_t e
        take(state, "fallbacks", np.int64, ())
        counters = take(state, "counters", np.int64, (4,))
        if not (0 <= counters[0] <= self.window and 0 <= counters[1] < self.window and
                0 <= counters[2] and 0 <= counters[3] <= 1):
            raise ValueError("model state holds impossible counters")
        arrays = [(mv, take(state, name, np.asarray(mv).dtype, np.asarray(mv).shape))
                  for name, mv in self._network_arrays()]
        ring = take(state, "ring_symbols", np.int64, (self.window,))
        if ring.min() < 0 or ring.max() >= self.A:
            raise ValueError("model state holds symbols outside the alphabet")
        for e in range(self.n_experts):
            self.experts[e].set_state(nested(state, f"expert{e}."))
        Kernel.set_state(self, state)
        for mv, value in arrays:
            np.asarray(mv)[...] = value
        self.filled, self.pos, self.since = counters[0], counters[1], counters[2]
        self.predicted = counters[3]

    def _network_arrays(self):
        return [("feat", self.feat), ("raw", self.raw), ("scratch", self.scratch),
                ("w_diag", self.w_diag), ("w_cross", self.w_cross),
                ("expert_probs", self.expert_probs), ("lexp", self.lexp), ("U", self.U),
                ("u_diag", self.u_diag), ("u_cross", self.u_cross), ("beta", self.beta),
                ("offset", self.offset), ("ring_symbols", self.ring_symbols),
                ("ring_offsets", self.ring_offsets)]


# The interface's functions: the step in C without the interpreter lock, which it takes only
# to train (``_train_step``), so a model that holds a network as an expert (cm at levels 7-9)
# steps it without the lock for most of its time (``_core.pxd``).
cdef int _net_predict(void* s, double* out) noexcept nogil:
    return (<OnlineNetwork>s)._free_predict(out)


cdef int _net_update(void* s, int symbol) noexcept nogil:
    return (<OnlineNetwork>s)._free_update(symbol)
