# cython: language_level=3
# The base of the online networks (GLNN, LSTM, mLSTM, mRNN): what they share, written once.
# See online.pyx.
from libc.stdint cimport int64_t

from seqzip._core cimport Kernel, ModelInterface


cdef class OnlineNetwork(Kernel):
    cdef Py_ssize_t A
    cdef readonly Py_ssize_t n_features     # 1 + units: feature 0 is the constant 1
    cdef readonly Py_ssize_t window         # symbols of truncated BPTT per training step
    cdef readonly Py_ssize_t interval       # symbols between training steps
    cdef readonly Py_ssize_t n_experts
    # output layer: softmax(features . W_out + sum_e beta_e log p_e), floored
    cdef double[::1] feat                   # (n_features,), feat[0] = 1
    cdef double[::1] raw                    # (A,) the softmax itself, for the gradients
    cdef double[::1] scratch                # (A,) a prediction update() makes for itself
    cdef bint qdh_output                    # the output weights take a QDH step per symbol
    cdef double[:, ::1] w_diag, w_cross     # (n_features, A) their running Hessian
    cdef double rate_w, writing_decay, writing_eps
    # experts: symbol-mode kernels advanced through their ModelInterface
    cdef list experts
    cdef ModelInterface* expert_if
    cdef double[::1] expert_probs           # (A,)
    cdef double[:, ::1] lexp                # (E, A) their log-probabilities
    cdef double[:, ::1] U, u_diag, u_cross  # (n_features, E) gates, beta = features . U
    cdef double[::1] beta, offset           # (E,), (A,)
    cdef double rate_beta, beta_eps
    # ring of the last ``window`` symbols and of the experts' offsets when each was coded
    cdef int64_t[::1] ring_symbols          # (window,)
    cdef double[:, ::1] ring_offsets        # (window, A)
    cdef Py_ssize_t filled, pos, since
    cdef bint predicted

    cdef setup_network(self, object config, Py_ssize_t n_features, Py_ssize_t A,
                       list experts, bint qdh_output)
    # the family's part
    cdef double* output_weights(self) noexcept nogil
    cdef void load_features(self) noexcept nogil
    cdef void record_state(self, Py_ssize_t slot) noexcept nogil
    cdef void transition(self, int symbol) noexcept nogil
    cdef int train_window(self) except -1
    # the interface's step without the interpreter lock (it takes it to train)
    cdef int _free_predict(self, double* out) noexcept nogil
    cdef int _free_update(self, int x) noexcept nogil
    cdef int _train_step(self) noexcept
    # helpers for the family's window pass
    cdef Py_ssize_t ring_index(self, Py_ssize_t t) noexcept
