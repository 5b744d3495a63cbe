"""Slow, obvious NumPy reference of Ollivier's GLNN, GNN and RNN and of their training (000).

This is the specification the Cython kernels are tested against, and a small-scale trainer in
its own right.  Equation numbers refer to 000 (Ollivier, "Riemannian metrics for neural networks
II").  Conventions:

* units 1..N, plus the always-activated unit 0 (a_0 = 1);
* ``sources[j]`` lists the d units i with an edge i -> j (always including j itself), and the
  incoming list of j is ``[0] + sources[j]`` (k = 0 is the bias);
* time t = 0..T-1: pi_t is computed from a^t, the symbol x_t is read, and V^{t+1} follows;
* chi_t (eq. 4-5) says which symbols are scored.

Models (``kind``):

* ``glnn`` (Def. 5):  V_j^{t+1} = V_j^t + sum_k tau[j, k, x_t] a_{src(j,k)}^t
* ``gnn``  (eq. 10):  V_j^{t+1} =         sum_k tau[j, k, x_t] a_{src(j,k)}^t
* ``rnn``  (eq. 8):   V_j^{t+1} = rho[j, x_t] + sum_k tau[j, k] a_{src(j,k)}^t

    >>> import numpy as np
    >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
    >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
    >>> run = net.forward(x)
    >>> run.pi.shape, bool(np.allclose(run.pi.sum(axis=1), 1.0))
    ((8, 3), True)
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

KINDS = ("glnn", "gnn", "rnn")
ACTIVATIONS = ("tanh", "logistic")


def activation(name: str, v: np.ndarray) -> np.ndarray:
    """tanh or the logistic function of ``v``.

        >>> float(activation("tanh", np.array(0.0))), float(activation("logistic", np.array(0.0)))
        (0.0, 0.5)
    """
    return np.tanh(v) if name == "tanh" else 1.0 / (1.0 + np.exp(-v))


def activation_derivative(name: str, v: np.ndarray) -> np.ndarray:
    """The derivative of :func:`activation` at ``v``.

        >>> float(activation_derivative("tanh", np.array(0.0)))
        1.0
    """
    if name == "tanh":
        return 1.0 - np.tanh(v) ** 2
    s = 1.0 / (1.0 + np.exp(-v))
    return s * (1.0 - s)


def inverse_activation(name: str, a: np.ndarray) -> np.ndarray:
    """The inverse of :func:`activation`.

        >>> float(inverse_activation("logistic", np.array(0.5)))
        0.0
    """
    return np.arctanh(a) if name == "tanh" else np.log(a / (1.0 - a))


def random_graph(n_units: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """(N+1, d) incoming sources: for unit j, itself and d-1 distinct other units.

        >>> random_graph(3, 2, np.random.default_rng(0))[1:, 0].tolist()  # each unit feeds itself
        [1, 2, 3]
    """
    d = min(d, n_units)
    sources = np.zeros((n_units + 1, d), dtype=np.int64)
    for j in range(1, n_units + 1):
        others = [i for i in range(1, n_units + 1) if i != j]
        picked = rng.choice(others, size=d - 1, replace=False) if d > 1 else []
        sources[j] = [j, *sorted(int(i) for i in picked)]
    return sources


@dataclass
class Run:
    """Everything a forward pass computes.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> run.V.shape, run.a.shape, run.pi.shape, bool(run.log_likelihood < 0)
        ((9, 5), (9, 5), (8, 3), True)
    """

    V: np.ndarray  # (T+1, N+1) potentials (column 0 unused)
    a: np.ndarray  # (T+1, N+1) activities, a[:, 0] = 1
    pi: np.ndarray  # (T, A) predicted distributions
    log_likelihood: float  # sum_t chi_t log pi_t(x_t), natural log


@dataclass
class Gradients:
    """See the module docstring.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> grads.W.shape, grads.tau.shape == net.tau.shape, grads.rho is None
        ((5, 3), True, True)
    """
    B: np.ndarray  # (T+1, N+1) dlogL/dV_i^t (eq. 22)
    W: np.ndarray  # (N+1, A) dlogL/dw (eq. 17)
    tau: np.ndarray  # like Network.tau (eq. 25)
    rho: np.ndarray | None  # like Network.rho (RNN)
    V0: np.ndarray  # (N+1,) dlogL/dV^0 = B^0


@dataclass
class Network:
    """See the module docstring.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> net.n_units, net.alphabet_size, net.kind
        (4, 3, 'glnn')
    """
    kind: str
    sources: np.ndarray  # (N+1, d), row 0 unused
    w: np.ndarray  # (N+1, A) writing weights
    tau: np.ndarray  # (N+1, d+1, A) for glnn/gnn, (N+1, d+1) for rnn; k = 0 is unit 0
    V0: np.ndarray  # (N+1,) starting potentials
    rho: np.ndarray | None = None  # (N+1, A), RNN input weights
    activation: str = "tanh"

    @property
    def n_units(self) -> int:
        return self.sources.shape[0] - 1

    @property
    def alphabet_size(self) -> int:
        return self.w.shape[1]

    def incoming(self, j: int) -> np.ndarray:
        return np.concatenate([[0], self.sources[j]])

    def copy(self) -> "Network":
        return dataclasses.replace(self, w=self.w.copy(), tau=self.tau.copy(),
                                   V0=self.V0.copy(),
                                   rho=None if self.rho is None else self.rho.copy())

    # -- initialisation (000 Sect. 2, eq. 30-33; eq. 69 for the RNN) ---------------------------

    @classmethod
    def initial(cls, kind: str, n_units: int, d: int, x: np.ndarray, alphabet_size: int,
                seed: int, chi: np.ndarray | None = None, activation: str = "tanh",
                alpha: float = 0.5) -> "Network":
        """The paper's initialisation for tanh; for the logistic activation, the affinely
        equivalent parameters (:meth:`to_logistic`)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        rng = np.random.default_rng(seed)
        sources = random_graph(n_units, d, rng)
        A, N, dd = alphabet_size, n_units, sources.shape[1]
        chi = np.ones(len(x)) if chi is None else chi
        counts = np.bincount(x, weights=chi, minlength=A) + 1e-3  # avoid log 0
        nu = counts / counts.sum()  # frequencies among scored symbols
        nu_all = (np.bincount(x, minlength=A) + 1e-3) / (len(x) + 1e-3 * A)
        w = np.zeros((N + 1, A))
        w[0] = np.log(nu)
        u = rng.random((N + 1, A))
        centred = u - (u * nu_all).sum(axis=1, keepdims=True)
        V0 = np.zeros(N + 1)
        rho = None
        if kind == "glnn":
            tau = np.zeros((N + 1, dd + 1, A))
            for j in range(1, N + 1):
                mu = 1.0 / (j + 1)
                beta = -math.sqrt(alpha * (alpha - mu))
                tau[j, 1 + list(sources[j]).index(j), :] = -alpha  # self-loop (eq. 31)
                tau[j, 0, :] = beta + mu / 4 * centred[j]  # bias (eq. 32)
                V0[j] = np.arctanh(beta / alpha)
        elif kind == "gnn":
            # Appendix A is not in the seed text: by analogy with eq. 69, each unit is a leaky
            # average of a random linear combination of recent symbols, time scale ~ j.
            tau = np.zeros((N + 1, dd + 1, A))
            for j in range(1, N + 1):
                tau[j, 1 + list(sources[j]).index(j), :] = 1.0 - 1.0 / (j + 1)
                tau[j, 0, :] = 0.5 * centred[j]
        else:  # rnn, eq. 69
            tau = np.zeros((N + 1, dd + 1))
            rho = np.zeros((N + 1, A))
            for j in range(1, N + 1):
                tau[j, 1 + list(sources[j]).index(j)] = 1.0 - 1.0 / j
                rho[j] = 0.5 * centred[j]
        net = cls(kind, sources, w, tau, V0, rho, "tanh")
        return net.to_logistic() if activation == "logistic" else net

    def to_logistic(self) -> "Network":
        """The same model with the logistic activation: tanh(v) = 2 logistic(2v) - 1.

        Potentials double (V' = 2V) and activities map affinely (a = 2a' - 1), so
        w'_i = 2 w_i, w'_0 = w_0 - sum_i w_i, and transitions into V' pick up the factor 2.
        """
        if self.activation != "tanh":
            raise ValueError("already logistic")
        net = self.copy()
        net.activation = "logistic"
        net.w[1:] = 2 * self.w[1:]
        net.w[0] = self.w[0] - self.w[1:].sum(axis=0)
        net.V0 = 2 * self.V0
        for j in range(1, self.n_units + 1):
            # sum_k tau_k a_k = tau_0 + sum_{k>0} tau_k (2 a'_k - 1)
            net.tau[j, 1:] = 4 * self.tau[j, 1:]
            net.tau[j, 0] = 2 * (self.tau[j, 0] - self.tau[j, 1:].sum(axis=0))
        if self.rho is not None:
            net.rho = 2 * self.rho
        return net

    # -- forward pass ----------------------------------------------------------------------

    def _transition(self, a: np.ndarray, V: np.ndarray, symbol: int) -> np.ndarray:
        N = self.n_units
        new = np.zeros(N + 1)
        for j in range(1, N + 1):
            inputs = a[self.incoming(j)]
            if self.kind == "rnn":
                new[j] = self.rho[j, symbol] + inputs @ self.tau[j]
            else:
                new[j] = inputs @ self.tau[j, :, symbol]
                if self.kind == "glnn":
                    new[j] += V[j]
        return new

    def forward(self, x: np.ndarray, chi: np.ndarray | None = None) -> Run:
        T, N = len(x), self.n_units
        chi = np.ones(T) if chi is None else chi
        V = np.zeros((T + 1, N + 1))
        a = np.zeros((T + 1, N + 1))
        pi = np.zeros((T, self.alphabet_size))
        V[0] = self.V0
        log_likelihood = 0.0
        for t in range(T + 1):
            a[t] = activation(self.activation, V[t])
            a[t, 0] = 1.0
            if t == T:
                break
            logits = a[t] @ self.w
            e = np.exp(logits - logits.max())
            pi[t] = e / e.sum()
            log_likelihood += chi[t] * math.log(pi[t, x[t]])
            V[t + 1] = self._transition(a[t], V[t], x[t])
        return Run(V, a, pi, log_likelihood)

    # -- backpropagation through time (eq. 17, 22, 25) -------------------------------------

    def backward(self, x: np.ndarray, run: Run, chi: np.ndarray | None = None) -> Gradients:
        T, N, A = len(x), self.n_units, self.alphabet_size
        chi = np.ones(T) if chi is None else chi
        onehot = np.eye(A)[x]
        W = ((chi[:, None] * run.a[:T]).T @ (onehot - run.pi))  # (N+1, A), eq. 17
        B = np.zeros((T + 1, N + 1))
        for t in range(T - 1, -1, -1):
            mean_w = self.w @ run.pi[t]  # (N+1,)
            error = chi[t] * (self.w[:, x[t]] - mean_w)
            back = np.zeros(N + 1)
            for j in range(1, N + 1):
                weights = self.tau[j] if self.kind == "rnn" else self.tau[j, :, x[t]]
                back[self.incoming(j)] += weights * B[t + 1, j]
            B[t, 1:] = activation_derivative(self.activation, run.V[t, 1:]) * (error + back)[1:]
            if self.kind == "glnn":
                B[t, 1:] += B[t + 1, 1:]
        tau = np.zeros_like(self.tau)
        rho = None if self.rho is None else np.zeros_like(self.rho)
        for t in range(T):
            for j in range(1, N + 1):
                inputs = run.a[t, self.incoming(j)]
                if self.kind == "rnn":
                    tau[j] += inputs * B[t + 1, j]
                    rho[j, x[t]] += B[t + 1, j]
                else:
                    tau[j, :, x[t]] += inputs * B[t + 1, j]  # eq. 25
        return Gradients(B, W, tau, rho, B[0].copy())

    # -- metric moduli (eq. 23-24) ------------------------------------------------------------

    def modulus(self, x: np.ndarray, run: Run, grads: Gradients, method: str,
                chi: np.ndarray | None = None) -> np.ndarray:
        """(T+1, N+1) m~_i^t: RUOP = (B_i^t)^2 (eq. 23); RBPM by backward induction (eq. 24,
        and its non-leaky form for gnn/rnn, where every j including i gets tau^2 m~)."""
        if method == "ruop":
            return grads.B ** 2
        if method != "rbpm":
            raise ValueError("method must be 'ruop' or 'rbpm'")
        T, N = len(x), self.n_units
        chi = np.ones(T) if chi is None else chi
        m = np.zeros((T + 1, N + 1))
        for t in range(T - 1, -1, -1):
            sp = activation_derivative(self.activation, run.V[t])
            variance = run.pi[t] @ (self.w ** 2).T - (run.pi[t] @ self.w.T) ** 2  # (N+1,)
            spread = np.zeros(N + 1)
            self_term = np.zeros(N + 1)
            for j in range(1, N + 1):
                weights = self.tau[j] if self.kind == "rnn" else self.tau[j, :, x[t]]
                for k, i in enumerate(self.incoming(j)):
                    if i == j and self.kind == "glnn":
                        self_term[i] = weights[k]
                    else:
                        spread[i] += weights[k] ** 2 * m[t + 1, j]
            m[t, 1:] = (sp[1:] ** 2 * (chi[t] * variance[1:] + spread[1:]))
            if self.kind == "glnn":
                m[t, 1:] += (1 + self_term[1:] * sp[1:]) ** 2 * m[t + 1, 1:]
        return m


    # -- statistics for the metric steps (overridden by the Cython-backed network) ----------

    def writing_stats(self, x: np.ndarray, run: Run, chi: np.ndarray | None,
                      eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return writing_hessian(self, x, run, chi, eps)

    def transition_stats(self, x: np.ndarray, run: Run, m: np.ndarray,
                         eps: float) -> tuple[np.ndarray, np.ndarray]:
        """For glnn/gnn the full metrics M (N+1, A, K, K) and None; for rnn the quasi-diagonal
        (diag, cross), each (N+1, K+A), over the inputs [incoming activities, symbols]."""
        T, N, A = len(x), self.n_units, self.alphabet_size
        K = self.sources.shape[1] + 1
        if self.kind != "rnn":
            M = np.zeros((N + 1, A, K, K))
            for j in range(1, N + 1):
                for y in range(A):
                    M[j, y] = transition_metric(self, x, run, m, j, y, eps)
            return M, None
        diag = np.zeros((N + 1, K + A))
        cross = np.zeros((N + 1, K + A))
        for j in range(1, N + 1):
            inputs = np.concatenate([run.a[:T][:, self.incoming(j)], np.eye(A)[x]], axis=1)
            weights = m[1:T + 1, j]
            diag[j] = (inputs ** 2 * weights[:, None]).sum(axis=0) + eps
            cross[j] = (inputs * weights[:, None]).sum(axis=0)
        return diag, cross


# -- metrics and updates (eq. 18-21, 26-29, 34-35) ---------------------------------------------


def writing_hessian(net: Network, x: np.ndarray, run: Run, chi: np.ndarray | None,
                    eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """h_ii^y (eq. 18, damped by eps_y, see :func:`writing_step`) and h_0i^y (eq. 19); both
    (N+1, A).

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> h_diag, h_cross = writing_hessian(net, x, run, None, np.ones(3))
        >>> h_diag.shape, bool((h_diag > 0).all())
        ((5, 3), True)
    """
    T = len(x)
    chi = np.ones(T) if chi is None else chi
    weight = chi[:, None] * run.pi * (1 - run.pi)  # (T, A)
    a = run.a[:T]
    h_diag = (a ** 2).T @ weight + eps[None, :]
    h_cross = a.T @ weight  # row 0 is h_00 - eps (a_0 = 1)
    h_diag[0] = weight.sum(axis=0) + eps
    return h_diag, h_cross


def quasi_diagonal_last(grad: np.ndarray, diag: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """:func:`quasi_diagonal_step` along the last axis.

        >>> g, d, c = np.ones((1, 2)), np.full((1, 2), 2.0), np.zeros((1, 2))
        >>> quasi_diagonal_last(g, d, c).tolist()   # no cross terms: g / d
        [[0.5, 0.5]]
    """
    return np.moveaxis(quasi_diagonal_step(np.moveaxis(grad, -1, 0), np.moveaxis(diag, -1, 0),
                                           np.moveaxis(cross, -1, 0)), 0, -1)


def quasi_diagonal_step(grad: np.ndarray, diag: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """The quasi-diagonal inverse (eq. 20-21 / 34-35) along axis 0; row 0 is the bias.

        >>> quasi_diagonal_step(np.array([1.0, 1.0]), np.array([2.0, 4.0]), np.zeros(2)).tolist()
        [0.5, 0.25]
    """
    step = np.zeros_like(grad)
    m00 = diag[0]
    step[1:] = (grad[1:] - grad[0] * cross[1:] / m00) / (diag[1:] - cross[1:] ** 2 / m00)
    step[0] = grad[0] / m00 - (cross[1:] / m00 * step[1:]).sum(axis=0)
    return step


def writing_step(net: Network, x: np.ndarray, run: Run, grads: Gradients, method: str,
                 chi: np.ndarray | None = None, eps: float | None = None) -> np.ndarray:
    """Direction for w: "qdh" (eq. 20-21), "dh" (diagonal Hessian) or "plain".

    ``eps`` replaces the paper's damping eps_y (frequency of y + machine epsilon) by a constant.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> writing_step(net, x, run, grads, "plain") is grads.W
        True
    """
    if method == "plain":
        return grads.W
    if eps is None:
        damping = np.bincount(x, minlength=net.alphabet_size) / len(x) + np.finfo(float).eps
    else:
        damping = np.full(net.alphabet_size, eps)
    h_diag, h_cross = net.writing_stats(x, run, chi, damping)
    if method == "dh":
        return grads.W / h_diag
    if method == "qdh":
        return quasi_diagonal_step(grads.W, h_diag, h_cross)
    raise ValueError(f"unknown writing method {method!r}")


def transition_metric(net: Network, x: np.ndarray, run: Run, m: np.ndarray, j: int,
                      y: int | None = None, eps: float = 1.0) -> np.ndarray:
    """M~^{(jy)} (eq. 26): (d+1, d+1) over the incoming units of j, damped by eps.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> m = net.modulus(x, run, grads, "rbpm")
        >>> transition_metric(net, x, run, m, j=1).shape   # d + 1 incoming, the bias included
        (3, 3)
    """
    T = len(x)
    mask = np.ones(T, dtype=bool) if y is None else (x == y)
    inputs = run.a[:T][mask][:, net.incoming(j)]
    weights = m[1:T + 1, j][mask]
    return (inputs * weights[:, None]).T @ inputs + eps * np.eye(inputs.shape[1])


def transition_step(net: Network, x: np.ndarray, run: Run, grads: Gradients, method: str,
                    chi: np.ndarray | None = None, eps: float = 1.0,
                    rms: np.ndarray | None = None, relative_eps: float = 0.0
                    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Directions for (tau, rho, V0).

    ``method``: "rbpm" / "ruop" (full metric per (j, y), eq. 26-28; for the RNN the
    quasi-diagonal reduction over tau and rho, as the paper does), "qdrbpm" / "qdruop"
    (eq. 34-35), "fb" (plain gradient with the learning rate of symbol y's parameters divided
    by the frequency of y), "rms" (gradient divided by the running RMS in ``rms``), "plain".

    ``relative_eps`` > 0 damps each M~^{(jy)} by its own scale as well: relative_eps times the
    mean of its undamped diagonal is added to the diagonal (per-(j, y) damping; the paper's
    constant eps = 1 is "small compared to the T terms", which does not hold for rare y).

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> tau, rho, V0 = transition_step(net, x, run, grads, "qdrbpm")
        >>> tau.shape == net.tau.shape, rho, float(V0[0])
        (True, None, 0.0)
    """
    T, A = len(x), net.alphabet_size
    freq = np.bincount(x, minlength=A) / T + 1e-12
    if method in ("plain", "fb", "rms"):
        tau, rho = grads.tau.copy(), None if grads.rho is None else grads.rho.copy()
        if method == "fb":
            if net.kind == "rnn":
                rho = rho / freq[None, :]
            else:
                tau = tau / freq[None, None, :]
        if method == "rms":
            flat = np.concatenate([tau.ravel()] + ([] if rho is None else [rho.ravel()]))
            scaled = flat / np.sqrt(rms + 1e-8)
            tau = scaled[:tau.size].reshape(tau.shape)
            if rho is not None:
                rho = scaled[tau.size:].reshape(rho.shape)
        return tau, rho, grads.V0
    quasi = method.startswith("qd")
    base = method[2:] if quasi else method
    m = net.modulus(x, run, grads, base, chi)
    tau = np.zeros_like(net.tau)
    rho = None if net.rho is None else np.zeros_like(net.rho)
    first, second = net.transition_stats(x, run, m, eps)
    if relative_eps:
        if net.kind == "rnn":
            first = first + relative_eps * (first - eps)
        else:
            K = first.shape[-1]
            scale = np.diagonal(first, axis1=2, axis2=3).mean(axis=-1) - eps  # (N+1, A)
            first = first + relative_eps * scale[..., None, None] * np.eye(K)
    if net.kind == "rnn":
        # Inputs of unit j: its incoming activities (tau) and one indicator per symbol (rho),
        # quasi-diagonal with the bias as the reference (as 000 Sect. 4 does for RNNs).
        K = net.tau.shape[1]
        grad = np.concatenate([grads.tau, grads.rho], axis=1)
        step = quasi_diagonal_last(grad[1:], first[1:], second[1:])
        tau[1:], rho[1:] = step[:, :K], step[:, K:]
    else:
        G = np.moveaxis(grads.tau[1:], 1, 2)  # (N, A, K)
        M = first[1:]  # (N, A, K, K)
        if quasi:
            diag = np.diagonal(M, axis1=2, axis2=3)
            step = quasi_diagonal_last(G, diag, M[:, :, 0, :])
        else:
            step = np.linalg.solve(M, G[..., None])[..., 0]  # eq. 27
        tau[1:] = np.moveaxis(step, 2, 1)
    V0 = grads.V0 / (m[0] + eps)  # eq. 29
    V0[0] = 0.0
    return tau, rho, V0


# -- training with learning-rate control (000 Sect. 2) -----------------------------------------


@dataclass
class TrainConfig:
    """See the module docstring.

        >>> TrainConfig().writing, TrainConfig(transition="qdruop").transition
        ('qdh', 'qdruop')
    """
    writing: str = "qdh"  # "qdh", "dh" or "plain"
    transition: str = "rbpm"  # see transition_step
    iterations: int = 20  # pairs of (w step, tau step)
    eps: float = 1.0  # damping of the transition metric
    writing_eps: float | None = None  # damping of the w metric; None = the paper's eps_y
    rms_decay: float = 0.9
    # Switches studied for the Table 1 gaps (issue 13); the defaults are the original trainer.
    retry: int = 0  # a rejected step is tried again at once at half the rate, up to this often
    relative_eps: float = 0.0  # per-(j, y) damping of the transition metric (transition_step)
    tau_prior: float = 0.0  # Gaussian prior kappa/2 |tau - tau_init|^2 (and rho) on the objective


@dataclass
class TrainResult:
    """See the module docstring.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> result = train(net, x, TrainConfig(iterations=2))
        >>> isinstance(result.network, Network), len(result.history) >= 1
        (True, True)
    """
    network: Network
    history: list = field(default_factory=list)  # log-likelihood after each accepted step


def _apply(net: Network, direction, rate: float, part: str) -> Network:
    new = net.copy()
    if part == "w":
        new.w += rate * direction
    else:
        tau, rho, V0 = direction
        new.tau += rate * tau
        if rho is not None:
            new.rho += rate * rho
        new.V0 += rate * V0
    return new


class Trainer:
    """Resumable training: each :meth:`step` is one w step then one (tau, V0) step (Sect. 2).

    A step is kept only if it raises the training log-likelihood (its rate then x1.1); otherwise
    it is undone and its rate halved.  Rates start at 1/N.  With ``config.retry`` the halved
    step is tried again at once, as 000 Sect. 2 words it ("the update is tried again"), up to
    that many times; ``config.tau_prior`` adds a Gaussian prior on the transition parameters
    to the objective.

    it is undone and its rate halved.  Rates start at 1/N.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> t = Trainer(net, x)
        >>> t.step(); t.steps
        1
    """

    def __init__(self, net: Network, x: np.ndarray, config: TrainConfig = TrainConfig(),
                 chi: np.ndarray | None = None) -> None:
        self.net, self.x, self.config, self.chi = net, x, config, chi
        self.rates = {"w": 1.0 / net.n_units, "tau": 1.0 / net.n_units}
        self.run = net.forward(x, chi)
        self.prior = (net.tau.copy(), None if net.rho is None else net.rho.copy())
        self.history = [self.run.log_likelihood]
        self.rms = None
        self.steps = 0

    def objective(self, net: Network, run: Run) -> float:
        """What a step must raise: the log-likelihood, minus the tau prior when it is on."""
        kappa = self.config.tau_prior
        if not kappa:
            return run.log_likelihood
        penalty = ((net.tau - self.prior[0]) ** 2).sum()
        if net.rho is not None:
            penalty += ((net.rho - self.prior[1]) ** 2).sum()
        return run.log_likelihood - 0.5 * kappa * penalty

    def step(self) -> None:
        config, x, chi = self.config, self.x, self.chi
        for part in ("w", "tau"):
            net, run = self.net, self.run
            grads = net.backward(x, run, chi)
            if part == "w":
                direction = writing_step(net, x, run, grads, config.writing, chi,
                                         config.writing_eps)
            else:
                if config.transition == "rms":
                    flat = np.concatenate([grads.tau.ravel()] + (
                        [] if grads.rho is None else [grads.rho.ravel()]))
                    self.rms = flat ** 2 if self.rms is None else \
                        config.rms_decay * self.rms + (1 - config.rms_decay) * flat ** 2
                if config.tau_prior:  # the prior's gradient and curvature
                    grads.tau = grads.tau - config.tau_prior * (net.tau - self.prior[0])
                    if grads.rho is not None:
                        grads.rho = grads.rho - config.tau_prior * (net.rho - self.prior[1])
                direction = transition_step(net, x, run, grads, config.transition, chi,
                                            config.eps + config.tau_prior, self.rms,
                                            config.relative_eps)
            current = self.objective(net, run)
            for _ in range(1 + config.retry):
                candidate = _apply(net, direction, self.rates[part], part)
                candidate_run = candidate.forward(x, chi)
                value = self.objective(candidate, candidate_run)
                if np.isfinite(value) and value > current:
                    self.net, self.run = candidate, candidate_run
                    self.rates[part] *= 1.1
                    self.history.append(candidate_run.log_likelihood)
                    break
                self.rates[part] /= 2
        self.steps += 1


def train(net: Network, x: np.ndarray, config: TrainConfig = TrainConfig(),
          chi: np.ndarray | None = None) -> TrainResult:
    """``config.iterations`` steps of :class:`Trainer`, starting with w.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> bool(train(net, x, TrainConfig(iterations=3)).history[-1] >= run.log_likelihood)
        True
    """
    trainer = Trainer(net, x, config, chi)
    for _ in range(config.iterations):
        trainer.step()
    return TrainResult(trainer.net, trainer.history)


def score_bits(net: Network, x: np.ndarray, chi: np.ndarray | None = None) -> float:
    """Validation cost in bits with the (1 - 1/(t+2)) pi_t + 1/(t+2) uniform mixing of Sect. 4.

        >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int64)
        >>> net = Network.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
        >>> run = net.forward(x)
        >>> grads = net.backward(x, run)
        >>> bool(0 < score_bits(net, x) < -run.log_likelihood / np.log(2) + len(x))
        True
    """
    run = net.forward(x, chi)
    T, A = len(x), net.alphabet_size
    chi = np.ones(T) if chi is None else chi
    t = np.arange(T)
    mix = 1.0 / (t + 2)
    p = (1 - mix) * run.pi[t, x] + mix / A
    return float(-(chi * np.log2(p)).sum())
