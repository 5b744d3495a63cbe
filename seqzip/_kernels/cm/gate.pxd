# cython: language_level=3
# The gated weight set: its weights at a node are computed from the online network's state,
# w_i = sum_j U[node, j, i] a_j over the network's features a (a_0 = 1), and the gates U are
# what learns: input i's weight has the features a_j x_i, one step of the mixer's optimiser
# (``mixer.pxd``) per input.
from libc.stdlib cimport calloc, free
from seqzip._kernels.cm.field cimport F_BYTES
from seqzip._kernels.cm.mixer cimport (OPT_QDH, OPT_SGD, PRIOR, Mixer, Optimiser, adam_step,
                                       qdh_step)


cdef struct Gate:
    int units            # network features that gate (0: no gated set)
    int n                # mixer inputs
    int nodes            # 2^B
    double* U            # (2^B, units, n): U per node
    double* hd
    double* hc
    double* features     # (units,), [0] = 1
    double* z            # (units,) features times one input


cdef inline int gate_init(Gate* g, int units, int n, int nodes, const Optimiser* o) noexcept nogil:
    cdef int i, size = nodes * units * n
    g.units, g.n, g.nodes = units, n, nodes
    g.U = <double*>calloc(size, sizeof(double))
    g.hd = <double*>calloc(size, sizeof(double))
    g.hc = <double*>calloc(size, sizeof(double))
    g.features = <double*>calloc(units, sizeof(double))
    g.z = <double*>calloc(units, sizeof(double))
    if g.U == NULL or g.hd == NULL or g.hc == NULL or g.features == NULL or g.z == NULL:
        return -1
    if o.kind == OPT_QDH:
        for i in range(size):
            g.hd[i] = PRIOR
    g.features[0] = 1.0
    return 0


cdef inline void gate_free(Gate* g) noexcept nogil:
    free(g.U)
    free(g.hd)
    free(g.hc)
    free(g.features)
    free(g.z)


cdef inline size_t gate_memory(const Gate* g) noexcept nogil:
    return g.units * (3 * <size_t>g.nodes * g.n + 2) * sizeof(double)


cdef inline void gate_weights(const Gate* g, int node, double* w) noexcept nogil:
    """The gated set's weights at this node."""
    cdef int i, j, n = g.n
    cdef double s
    cdef const double* U = g.U + node * g.units * n
    for i in range(n):
        s = 0.0
        for j in range(g.units):
            s = s + U[j * n + i] * g.features[j]
        w[i] = s


cdef inline void gate_train(Gate* g, const Mixer* mix, int node, const double* inputs,
                            int bit, double rate, const Optimiser* o) noexcept nogil:
    """One step of the gates U[node] on the gated set's error."""
    cdef double err = bit - mix.p, var = mix.p * (1.0 - mix.p), gr
    cdef int i, j, n = g.n, u = g.units, at
    cdef int base = node * u * n
    for i in range(n):
        if o.kind == OPT_QDH:
            for j in range(u):
                g.z[j] = g.features[j] * inputs[i]
            qdh_step(g.z, u, var, err, g.hd + base + i, g.hc + base + i, n, o.decay, o.eps,
                     rate, g.U + base + i)
        else:
            for j in range(u):
                at = base + j * n + i
                gr = err * g.features[j] * inputs[i]
                if o.kind == OPT_SGD:
                    g.U[at] = g.U[at] + rate * gr
                else:
                    adam_step(&g.hd[at], &g.hc[at], &g.U[at], gr, rate, o)


cdef inline list gate_fields(const Gate* g):
    cdef size_t n = <size_t>g.nodes * g.units * g.n * 8
    return [("gate_U", F_BYTES, <size_t>g.U, n, False),
            ("gate_hd", F_BYTES, <size_t>g.hd, n, False),
            ("gate_hc", F_BYTES, <size_t>g.hc, n, False),
            ("gate_features", F_BYTES, <size_t>g.features, g.units * 8, False),
            ("gate_z", F_BYTES, <size_t>g.z, g.units * 8, False)]
