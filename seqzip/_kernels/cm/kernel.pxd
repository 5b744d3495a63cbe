# cython: language_level=3
# The context-mixing kernel's state (its code and the module's docstring are in kernel.pyx):
# declared here so that the kernel's .pyx holds its steps, not its fields.
cimport cython
from libc.stdint cimport uint8_t

from seqzip._core cimport Kernel, ModelInterface
from seqzip._kernels.cm.apm cimport Apm
from seqzip._kernels.cm.component cimport MAX_COMPONENTS, Component, Cursor, build_fn
from seqzip._kernels.cm.context cimport Context
from seqzip._kernels.cm.gate cimport Gate
from seqzip._kernels.cm.hashed cimport Contexts
from seqzip._kernels.cm.match cimport MatchModel
from seqzip._kernels.cm.mixer cimport Mixer, Optimiser
from seqzip._kernels.cm.netsel cimport NetSel
from seqzip._kernels.cm.post cimport Post
from seqzip._kernels.cm.sse cimport Sse

cdef enum:
    MAX_INPUTS = 256, MAX_SETS = 8, MAX_MATCH = 2
    STATE_INPUTS = 96  # the inputs a state holds at least (all before cx_inputs: 96 at most)


@cython.final
cdef class CMKernel(Kernel):
    # alphabet and the symbol being coded
    cdef int A, B, n_groups
    cdef int group_bits[8]
    cdef uint8_t to_byte[256]
    cdef Cursor at                         # the node, depth and node in the group
    cdef int group, group_left
    cdef int forced                        # the current bit is forced (0 or 1), or -1
    cdef int p_floor                       # P(1) in [p_floor, 2^16 - p_floor] / 2^16
    # the shared context state and the bank of experts (components)
    cdef Context ctx
    cdef int n_bank
    cdef Component bank[MAX_COMPONENTS]
    cdef Contexts* cx                      # the context models (bank[0]: selectors, state)
    cdef int image                         # the 1-bit image expert follows them (image=1, 2)
    cdef bint samples                      # then the numeric-sample expert (samples=1)
    cdef int n_match, runs                 # runs: the run information's place, or -1
    cdef MatchModel* match[MAX_MATCH]      # the match models (selectors, APM, inspection)
    cdef list owned                        # symbol experts (and the network, last)
    cdef bint has_network
    cdef ModelInterface network            # the network's interface (its features)
    # mixer
    cdef int n_inputs
    cdef double inputs[MAX_INPUTS]
    cdef int n_sets
    cdef int selector[MAX_SETS]
    cdef Mixer sets[MAX_SETS]
    cdef Optimiser opt
    cdef int gate_set                      # index of the gated set, or -1
    cdef Gate gate
    cdef int net_pattern                   # signs of the network's first six units
    cdef bint layer2
    cdef Mixer final
    cdef double y2[MAX_SETS + 1]           # the second layer's inputs
    cdef double rate, rate2, gate_rate
    # secondary estimation
    cdef Apm apm
    cdef Sse sse                           # sse > 0: counts, a learned mix, more stages
    cdef Post post                         # the last mix (post > 0)
    cdef NetSel ns                         # the network's prediction as context (net_sel)
    cdef double p_mix, p_final
    cdef readonly long symbols_seen
    cdef list fields                       # every field of the state (``field.pxd``)
    cdef list light                        # ... those in save points

    cdef int _add(self, build_fn build, spec, arg=*, int index=*) except -1
    cdef int _build_bank(self, spec) except -1
    cdef int _init_mixer(self, spec) except -1
    cdef int _begin_symbol(self) noexcept nogil
    cdef int _end_symbol(self, int x) noexcept nogil
    cdef int _match_state(self) noexcept nogil
    cdef int _predict_bit(self) noexcept nogil
    cdef int _update_bit(self, int bit) noexcept nogil
    cdef void _walk(self, int event) noexcept nogil
    cdef void _descend(self, int node, int depth, double mass, double* probs) noexcept nogil
    cdef int _predict(self, double* probs) noexcept nogil
