"""The ReLU RNN reference: gradients against finite differences, kappa against a brute-force
enumeration of the paths of a tiny unrolled network, orthogonality pre-training and penalty."""
from collections import Counter

import numpy as np
import pytest

from seqzip.reference import relu_rnn as ref


def _paths(n, A, L):
    """Every input-output path of the unrolled network as a Counter {parameter: times}."""
    edges = {}  # node -> [(next node, parameter)]

    def add(u, v, param):
        edges.setdefault(u, []).append((v, param))

    for t in range(L):
        for y in range(A):
            add("bias", ("out", t, y), ("Wo", (0, y)))
            for i in range(n):
                add(("h", t, i), ("out", t, y), ("Wo", (i + 1, y)))
        if t >= 1:
            for j in range(n):
                add("bias", ("h", t, j), ("b", (j,)))
                for a in range(A):
                    add(("in", t, a), ("h", t, j), ("E", (a, j)))
                for k in range(n):
                    add(("h", t - 1, k), ("h", t, j), ("R", (k, j)))
    inputs = ["bias"] + [
        ("in", t, a) for t in range(1, L) for a in range(A)]
    out = []

    def walk(node, used):
        if node[0] == "out":
            out.append(Counter(used))
            return
        for nxt, param in edges.get(node, []):
            walk(nxt, used + [param])

    for node in inputs:
        walk(node, [])
    return out


@pytest.mark.parametrize("n, A, L", [(2, 2, 4), (3, 2, 3), (1, 3, 5), (2, 2, 5)])
def test_kappa_against_enumerated_paths(n, A, L):
    rng = np.random.default_rng(n * 10 + L)
    p = {name: rng.uniform(0.3, 1.2, shape) * rng.choice([-1, 1], shape)
         for name, shape in ref.shapes(n, A).items()}
    paths = _paths(n, A, L)

    def value(param):
        return p[param[0]][param[1]]

    gamma2 = sum(np.prod([value(q) ** (2 * c) for q, c in path.items()]) for path in paths)
    g, _, _ = ref.squared_network(p, L)
    assert g == pytest.approx(gamma2, rel=1e-12)
    k1, k2 = ref.kappa(p, L)
    for name, shape in ref.shapes(n, A).items():
        for index in np.ndindex(*shape):
            param = (name, index)
            first = exact = 0.0
            for path in paths:
                k = path.get(param, 0)
                if not k:
                    continue
                rest = np.prod([value(q) ** (2 * c) for q, c in path.items() if q != param])
                first += k * value(param) ** (2 * k - 2) * rest  # eq. 9
                exact += k * (2 * k - 1) * value(param) ** (2 * k - 2) * rest  # 1/2 d2/dp2
            assert k1[name][index] == pytest.approx(first, rel=1e-10, abs=1e-300)
            assert k1[name][index] + k2[name][index] == pytest.approx(exact, rel=1e-10)
    assert (k2["E"] == 0).all() and (k2["Wo"] == 0).all() and (k2["b"] == 0).all()
    if L >= 5:  # pairs of R-edges on one path off the diagonal (h~_0 = 0 carries none)
        assert (k2["R"] > 0).all()


def test_kappa_is_half_the_second_derivative_of_gamma2():
    """kappa^(1) + kappa^(2) = 1/2 d^2 gamma^2 / dp_i^2, by finite differences of g(1)."""
    rng = np.random.default_rng(3)
    p = ref.initial_parameters(3, 4, rng, std=0.6)
    p["Wo"] = 0.5 * rng.standard_normal(p["Wo"].shape)
    L, h = 5, 1e-4
    k1, k2 = ref.kappa(p, L)
    for name in ref.NAMES:
        for index in [tuple(0 for _ in p[name].shape), tuple(s - 1 for s in p[name].shape)]:
            vals = []
            for d in (-h, 0.0, h):
                q = {k: v.copy() for k, v in p.items()}
                q[name][index] += d
                vals.append(ref.squared_network(q, L)[0])
            second = (vals[0] - 2 * vals[1] + vals[2]) / h ** 2
            assert k1[name][index] + k2[name][index] == pytest.approx(second / 2, rel=1e-5)


def test_gradient_against_finite_differences():
    rng = np.random.default_rng(1)
    n, A = 4, 3
    p = ref.initial_parameters(n, A, rng, std=0.5)
    p["b"] = 0.1 * rng.standard_normal(n)
    p["Wo"] = 0.3 * rng.standard_normal((n + 1, A))
    x = rng.integers(0, A, 9)
    offset = rng.standard_normal((9, A))
    h0 = np.abs(rng.standard_normal(n))
    _, cache = ref.forward(p, h0, x, offset)
    grads = ref.backward(p, cache)
    theta = ref.flatten(p)
    numeric = np.zeros_like(theta)
    for i in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        numeric[i] = (ref.forward(ref.unflatten(up, n, A), h0, x, offset)[0]
                      - ref.forward(ref.unflatten(down, n, A), h0, x, offset)[0]) / 2e-6
    np.testing.assert_allclose(ref.flatten(grads), numeric, rtol=1e-6, atol=1e-8)


def test_path_sgd_is_invariant_to_node_rescaling():
    """Theorem 2: rescaling hidden unit j (incoming x alpha, outgoing / alpha) leaves the
    function and the function after a path-SGD step unchanged; plain SGD is not invariant."""
    rng = np.random.default_rng(5)
    n, A = 3, 4
    p = ref.initial_parameters(n, A, rng, std=0.5)
    p["Wo"] = 0.3 * rng.standard_normal((n + 1, A))
    alpha = np.array([3.0, 0.5, 1.7])
    q = {"E": p["E"] * alpha, "b": p["b"] * alpha, "R": p["R"] / alpha[:, None] * alpha,
         "Wo": np.vstack([p["Wo"][:1], p["Wo"][1:] / alpha[:, None]])}
    x = rng.integers(0, A, 8)
    lp, cp = ref.forward(p, np.zeros(n), x)
    lq, cq = ref.forward(q, np.zeros(n), x)
    assert lp == pytest.approx(lq, rel=1e-12)
    p1 = ref.path_sgd_step(p, ref.backward(p, cp), len(x), 0.05)
    q1 = ref.path_sgd_step(q, ref.backward(q, cq), len(x), 0.05)
    y = rng.integers(0, A, 8)
    assert ref.forward(p1, np.zeros(n), y)[0] == pytest.approx(ref.forward(q1, np.zeros(n), y)[0],
                                                               rel=1e-9)
    s1 = {k: p[k] + 0.05 * v for k, v in ref.backward(p, cp).items()}
    s2 = {k: q[k] + 0.05 * v for k, v in ref.backward(q, cq).items()}
    assert abs(ref.forward(s1, np.zeros(n), y)[0] - ref.forward(s2, np.zeros(n), y)[0]) > 1e-6


def test_oinit_converges_on_random_64x64():
    rng = np.random.default_rng(7)
    for trial in range(3):
        W, steps = ref.oinit(0.1 * rng.standard_normal((64, 64)))
        assert ref.orthogonality_loss(W) < 1e-6 and 0 < steps < 100


def test_orthogonality_penalty_gradient_against_finite_differences():
    rng = np.random.default_rng(2)
    W = 0.4 * rng.standard_normal((5, 5))
    grad = ref.orthogonality_gradient(W)
    for index in np.ndindex(5, 5):
        up, down = W.copy(), W.copy()
        up[index] += 1e-6
        down[index] -= 1e-6
        numeric = (ref.orthogonality_loss(up) - ref.orthogonality_loss(down)) / 2e-6
        assert grad[index] == pytest.approx(numeric, rel=1e-6, abs=1e-9)
