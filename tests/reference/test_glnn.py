"""The NumPy reference of GLNN / GNN / RNN and Ollivier's training (000 Sect. 2-3)."""
import numpy as np
import pytest

from seqzip import corpora
from seqzip.reference.glnn import (Network, TrainConfig, activation, quasi_diagonal_step,
                                   score_bits, train, transition_metric)

A = 3
X = np.array([0, 1, 2, 1, 0, 0, 2, 1, 1, 0, 2, 2, 1, 0], dtype=np.int64)
CHI = (np.arange(len(X)) % 3 == 2).astype(float)  # only every third symbol is scored


def perturbed(net, kind, index, delta):
    other = net.copy()
    getattr(other, kind)[index] += delta
    return other


def random_network(kind, seed=0, activation_name="tanh"):
    net = Network.initial(kind, n_units=3, d=2, x=X, alphabet_size=A, seed=seed,
                          activation=activation_name)
    rng = np.random.default_rng(seed + 100)
    # Move away from the symmetric start so that every gradient term is exercised.
    net.w += 0.3 * rng.standard_normal(net.w.shape)
    net.tau[1:] += 0.3 * rng.standard_normal(net.tau[1:].shape)
    net.V0[1:] += 0.2 * rng.standard_normal(3)
    if net.rho is not None:
        net.rho[1:] += 0.3 * rng.standard_normal(net.rho[1:].shape)
    return net


@pytest.mark.parametrize("kind", ["glnn", "gnn", "rnn"])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("activation_name", ["tanh", "logistic"])
def test_gradients_match_finite_differences(kind, masked, activation_name):
    chi = CHI if masked else None
    net = random_network(kind, activation_name=activation_name)
    grads = net.backward(X, net.forward(X, chi), chi)
    h = 1e-6
    names = ["w", "tau", "V0"] + (["rho"] if kind == "rnn" else [])
    for name in names:
        analytic = {"w": grads.W, "tau": grads.tau, "V0": grads.V0, "rho": grads.rho}[name]
        param = getattr(net, name)
        for index in np.ndindex(param.shape):
            if name != "w" and index[0] == 0:
                continue  # unit 0 has no incoming parameters
            if name == "tau" and kind != "rnn" and index[1] > net.sources.shape[1]:
                continue
            up = perturbed(net, name, index, h).forward(X, chi).log_likelihood
            down = perturbed(net, name, index, -h).forward(X, chi).log_likelihood
            numeric = (up - down) / (2 * h)
            assert analytic[index] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (name, index)


def unfolded_log_likelihood(net, x, hook):
    """Forward pass of the time-unfolded network: ``hook(t, a, tau)`` may perturb the
    activities a^t or use a time-t copy of the transition parameters (dummy parameters)."""
    T = len(x)
    V = net.V0.copy()
    total = 0.0
    for t in range(T):
        a = activation(net.activation, V)
        a[0] = 1.0
        tau = net.tau.copy()
        hook(t, a, tau)
        logits = a @ net.w
        p = np.exp(logits - logits.max())
        p /= p.sum()
        total += np.log(p[x[t]])
        new = np.zeros_like(V)
        for j in range(1, net.n_units + 1):
            weights = tau[j] if net.kind == "rnn" else tau[j, :, x[t]]
            new[j] = a[net.incoming(j)] @ weights + (V[j] if net.kind == "glnn" else 0.0)
            if net.kind == "rnn":
                new[j] += net.rho[j, x[t]]
        V = new
    return total


@pytest.mark.parametrize("kind", ["glnn", "gnn"])
def test_ruop_metric_equals_sum_of_dummy_gradient_outer_products(kind):
    """Eq. 55: M_(j) = sum_t g_t g_t^T with g_t the gradient w.r.t. time-t copies of the
    incoming parameters of j (computed here by finite differences)."""
    net = random_network(kind, seed=3)
    run = net.forward(X)
    m = net.modulus(X, run, net.backward(X, run), "ruop")
    h = 1e-6
    for j in range(1, 4):
        for y in range(A):
            brute = np.zeros((3, 3))
            for t in np.flatnonzero(X == y):
                g = np.zeros(3)
                for k in range(3):
                    def bump(s, a, tau, sign):
                        if s == t:
                            tau[j, k, y] += sign * h
                    up = unfolded_log_likelihood(net, X, lambda s, a, tau: bump(s, a, tau, 1))
                    down = unfolded_log_likelihood(net, X,
                                                   lambda s, a, tau: bump(s, a, tau, -1))
                    g[k] = (up - down) / (2 * h)
                brute += np.outer(g, g)
            ours = transition_metric(net, X, run, m, j, y, eps=0.0)
            np.testing.assert_allclose(ours, brute, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("kind", ["glnn", "gnn"])
def test_rbpm_modulus_equals_backpropagated_definition(kind):
    """Eq. 58-63: m_i^t = Var_pi(w_i) + sum_j (da_j^{t+1}/da_i^t)^2 m_j^{t+1}, the
    derivatives taken by finite differences on the unfolded network; m~ = s'(V)^2 m."""
    net = random_network(kind, seed=5)
    run = net.forward(X)
    ours = net.modulus(X, run, net.backward(X, run), "rbpm")
    T, N, h = len(X), 3, 1e-6
    brute = np.zeros((T + 1, N + 1))
    for t in range(T - 1, -1, -1):
        p = run.pi[t]
        for i in range(1, N + 1):
            variance = p @ net.w[i] ** 2 - (p @ net.w[i]) ** 2
            spread = 0.0
            if t + 1 < T:
                for j in range(1, N + 1):
                    a = run.a[t].copy()
                    a_plus, a_minus = a.copy(), a.copy()
                    a_plus[i] += h
                    a_minus[i] -= h
                    next_v = [net._transition(v, run.V[t], X[t]) for v in (a_plus, a_minus)]
                    if kind == "glnn":  # V_i^t itself moves with a_i^t = s(V_i^t)
                        dv = h / (1 - np.tanh(run.V[t, i]) ** 2)
                        next_v[0][i] += dv
                        next_v[1][i] -= dv
                    da = (np.tanh(next_v[0][j]) - np.tanh(next_v[1][j])) / (2 * h)
                    m_next = brute[t + 1, j] / (1 - np.tanh(run.V[t + 1, j]) ** 2) ** 2
                    spread += da ** 2 * m_next
            brute[t, i] = (variance + spread) * (1 - np.tanh(run.V[t, i]) ** 2) ** 2
    # The definition starts at m^T = 0; the reference too (its last row is zero).
    np.testing.assert_allclose(ours[:T], brute[:T], rtol=1e-5, atol=1e-10)


def test_quasi_diagonal_step_exact_cases():
    """Exact for a bias plus one input (the 2x2 blocks it is built from) and for a diagonal
    metric; otherwise each input is solved against the bias alone (Oll13 Sect. 2.3)."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        B = rng.standard_normal((2, 2))
        M = B @ B.T + np.eye(2)
        G = rng.standard_normal(2)
        step = quasi_diagonal_step(G[:, None], np.diag(M)[:, None], M[0][:, None])[:, 0]
        np.testing.assert_allclose(step, np.linalg.solve(M, G), rtol=1e-12)
    D = np.diag(rng.random(5) + 0.5)
    G = rng.standard_normal(5)
    step = quasi_diagonal_step(G[:, None], np.diag(D)[:, None], D[0][:, None])[:, 0]
    np.testing.assert_allclose(step, G / np.diag(D), rtol=1e-12)


@pytest.mark.parametrize("kind, writing, transition", [
    ("glnn", "qdh", "rbpm"), ("glnn", "qdh", "ruop"), ("gnn", "qdh", "ruop"),
    ("rnn", "qdh", "qdruop"), ("rnn", "dh", "fb"), ("glnn", "dh", "fb"), ("rnn", "dh", "rms"),
])
def test_training_raises_log_likelihood(kind, writing, transition):
    data = corpora.generate("insertions", 4, seed=1).data[:300]
    alphabet = sorted(set(data))
    x = np.array([alphabet.index(b) for b in data], dtype=np.int64)
    net = Network.initial(kind, n_units=6, d=3, x=x, alphabet_size=len(alphabet), seed=2)
    result = train(net, x, TrainConfig(writing=writing, transition=transition, iterations=6))
    assert result.history[-1] > result.history[0] + 5  # nats on 300 symbols
    assert all(b >= a for a, b in zip(result.history, result.history[1:]))
    assert np.isfinite(score_bits(result.network, x))


def test_invariance_tanh_versus_logistic():
    """Sect. 3.6: from affinely equivalent starts, invariant methods follow the same
    log-likelihood trajectory with tanh and logistic, up to damping (eps = 1e-6 here) and the
    conditioning of near-constant units; backpropagation and DH+FB do not.

    Measured (8 accepted steps, GLNN 5 units, music): max relative gap 4.3e-3 for QDH+RBPM,
    8e-4 for QDH+RUOP, against 0.21 for plain backpropagation and 0.105 for DH+FB.
    """
    import warnings

    data = corpora.generate("music", 12, seed=4).data
    alphabet = sorted(set(data))
    x = np.array([alphabet.index(b) for b in data], dtype=np.int64)

    def gap(writing, transition):
        runs = []
        for act in ("tanh", "logistic"):
            net = Network.initial("glnn", n_units=5, d=3, x=x, alphabet_size=len(alphabet),
                                  seed=1, activation=act)
            config = TrainConfig(writing=writing, transition=transition, iterations=4,
                                 eps=1e-6, writing_eps=1e-6)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # exp overflow in logistic
                runs.append(np.array(train(net, x, config).history))
        n = min(map(len, runs))
        assert n >= 4 and runs[0][0] == pytest.approx(runs[1][0], rel=1e-12)
        return np.abs(runs[0][:n] / runs[1][:n] - 1).max()

    assert gap("qdh", "rbpm") < 1e-2
    assert gap("qdh", "ruop") < 1e-2
    assert gap("plain", "plain") > 5e-2
    assert gap("dh", "fb") > 5e-2
