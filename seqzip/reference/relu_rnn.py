"""NumPy reference of the ReLU RNN trained by path-SGD (003 Sect. 4) and of the orthogonality
pre-training and penalty (002 Sect. II, eq. 16-18 and 29-31), over one training window.

The readable definition the kernel :mod:`seqzip._kernels.relu_rnn` is held to; never on the
coding path.  Parameters (row-major, "inputs x outputs", as :mod:`seqzip.reference.lstm`):
``E`` (A, n) the one-hot input's weights, ``b`` (n,), ``R`` (n, n) recurrent,
``Wo`` (n + 1, A) the output weights (row 0 the bias).  A step reads x and makes
``h' = max(0, b + E[x] + h @ R)``; a window of L symbols starts from the state h_0 that predicted
x_1, step j predicts x_j with ``softmax(Wo . (1, h_{j-1}) + offset_j)`` and then reads x_j (the
last symbol's transition is outside the window).

Path-SGD.  Unrolled over the window, the network is a feedforward network with shared weights
(003 Sect. 2): input nodes are the bias node and the A one-hot coordinates at each step;
internal nodes h_1 .. h_{L-1}; output nodes the L logit vectors.  As in 003 (Table 1:
h_0 = 0), the start state carries no paths: were it an input node, the path norm would change
under the node rescalings of Theorem 1 and path-SGD would lose its invariance (Theorem 2).  The path regulariser
gamma^2 is the sum over input-output paths of the product of squared weights (eq. 2), and
path-SGD steps ``p_i -= eta / kappa_i dL/dp_i`` with ``kappa_i = 1/2 d^2 gamma^2 / dp_i^2``
(eq. 8).  By Theorem 3, kappa^(1) (eq. 9) is the gradient, with respect to the squared
parameters, of g(1): the sum of the outputs of the squared-weight network on the all-ones
input (all-ones: every input coordinate and the bias are 1, h~_0 = 0; with non-negative weights and
inputs the ReLU is the identity).  kappa^(2) (eq. 10) only concerns R, the one parameter shared
along a path; :func:`kappa` computes it in the matrix form of Sect. 4.4.  Note on the constant:
for a path crossing k edges of parameter p, 1/2 d^2 p^{2k} / dp^2 = k (2k - 1) p^{2k-2}, of
which kappa^(1) holds k; the pairs term must therefore count every ordered pair of distinct
edges twice, which is 4 x the Theorem-3 sum over pairs in path order.  The tests check
kappa^(1) + kappa^(2) against a brute-force enumeration of the paths.

    >>> rng = np.random.default_rng(0)
    >>> p = initial_parameters(n=3, A=4, rng=rng)
    >>> p["Wo"] = 0.1 * rng.standard_normal(p["Wo"].shape)
    >>> x = np.array([0, 1, 2, 3, 1])
    >>> loglik, cache = forward(p, np.zeros(3), x)
    >>> k1, k2 = kappa(p, len(x))
    >>> bool(loglik < 0), bool((k1["R"] > 0).all()), bool((k2["E"] == 0).all())
    (True, True, True)
"""
from __future__ import annotations

import numpy as np

NAMES = ("E", "b", "R", "Wo")


def shapes(n: int, A: int) -> dict[str, tuple[int, ...]]:
    """Names and shapes of the parameters, in their order inside the kernel's flat vector.

        >>> shapes(3, 4)
        {'E': (4, 3), 'b': (3,), 'R': (3, 3), 'Wo': (4, 4)}
        >>> list(shapes(3, 4)) == list(NAMES)  # the order of flatten
        True
    """
    return {"E": (A, n), "b": (n,), "R": (n, n), "Wo": (n + 1, A)}


def initial_parameters(n: int, A: int, rng: np.random.Generator,
                       std: float = 0.1) -> dict[str, np.ndarray]:
    """Normal input and recurrent weights, zero biases and output weights.

        >>> p = initial_parameters(3, 4, np.random.default_rng(0))
        >>> {name: value.shape for name, value in p.items()} == shapes(3, 4)
        True
        >>> bool((p["b"] == 0).all() and (p["Wo"] == 0).all() and (p["R"] != 0).all())
        True
    """
    p = {name: std * rng.standard_normal(shape) for name, shape in shapes(n, A).items()}
    p["b"][:] = 0.0
    p["Wo"][:] = 0.0
    return p


def flatten(p: dict) -> np.ndarray:
    """The parameters as one flat vector, in the order of :func:`shapes` (the kernel's layout).

        >>> p = initial_parameters(3, 4, np.random.default_rng(0))
        >>> theta = flatten(p)
        >>> theta.shape == (sum(int(np.prod(s)) for s in shapes(3, 4).values()),)
        True
        >>> bool((theta[:12] == p["E"].ravel()).all())  # E first, row-major
        True
    """
    return np.concatenate([p[name].ravel() for name in NAMES])


def unflatten(theta: np.ndarray, n: int, A: int) -> dict[str, np.ndarray]:
    """The inverse of :func:`flatten`: a flat vector back to named arrays (copies).

        >>> p = initial_parameters(3, 4, np.random.default_rng(0))
        >>> theta = flatten(p)
        >>> q = unflatten(theta, 3, 4)
        >>> theta[:] = 0.0  # the arrays are copies, not views of theta
        >>> all(np.array_equal(q[name], p[name]) for name in NAMES)
        True
    """
    out, at = {}, 0
    for name, shape in shapes(n, A).items():
        size = int(np.prod(shape))
        out[name] = np.array(theta[at:at + size]).reshape(shape)
        at += size
    return out


def forward(p: dict, h0: np.ndarray, x: np.ndarray,
            offset: np.ndarray | None = None) -> tuple[float, dict]:
    """Window log-likelihood sum_j log p_j(x_j) (natural log) and the cache for backward.

        >>> p = initial_parameters(3, 4, np.random.default_rng(0))
        >>> x = np.array([0, 1, 2, 3])
        >>> loglik, cache = forward(p, np.zeros(3), x)
        >>> bool(np.isclose(loglik, 4 * np.log(1 / 4)))  # zero output weights: uniform
        True
        >>> len(cache["hs"]), len(cache["probs"])  # h_0 .. h_3 predict x_1 .. x_4
        (4, 4)
    """
    hs, zs, probs = [np.asarray(h0, dtype=float)], [], []
    loglik = 0.0
    for j in range(len(x)):
        logits = p["Wo"][0] + hs[-1] @ p["Wo"][1:]
        if offset is not None:
            logits = logits + offset[j]
        q = np.exp(logits - logits.max())
        q /= q.sum()
        probs.append(q)
        loglik += float(np.log(q[x[j]]))
        if j + 1 < len(x):
            z = p["b"] + p["E"][x[j]] + hs[-1] @ p["R"]
            zs.append(z)
            hs.append(np.maximum(z, 0.0))
    return loglik, {"hs": hs, "zs": zs, "probs": probs, "x": np.asarray(x)}


def backward(p: dict, cache: dict) -> dict[str, np.ndarray]:
    """Gradient of the window log-likelihood (truncated at the window's start state).

    It agrees with central differences of :func:`forward` on every parameter:

        >>> rng = np.random.default_rng(0)
        >>> p = initial_parameters(3, 4, rng)
        >>> p["Wo"] = 0.5 * rng.standard_normal(p["Wo"].shape)
        >>> x, h0 = np.array([0, 1, 2, 3, 1]), np.zeros(3)
        >>> grads = backward(p, forward(p, h0, x)[1])
        >>> f = lambda theta: forward(unflatten(theta, 3, 4), h0, x)[0]
        >>> theta, eps = flatten(p), 1e-6
        >>> numeric = [(f(theta + eps * e) - f(theta - eps * e)) / (2 * eps)
        ...            for e in np.eye(len(theta))]
        >>> bool(np.allclose(numeric, flatten(grads), atol=1e-7))
        True
    """
    grads = {name: np.zeros_like(value) for name, value in p.items()}
    hs, zs, probs, x = cache["hs"], cache["zs"], cache["probs"], cache["x"]
    dh_next = np.zeros_like(hs[0])
    for j in range(len(x) - 1, -1, -1):
        err = -probs[j]
        err[x[j]] += 1.0
        grads["Wo"][0] += err
        grads["Wo"][1:] += np.outer(hs[j], err)
        dh = p["Wo"][1:] @ err + dh_next
        if j == 0:
            break
        dz = dh * (zs[j - 1] > 0)
        grads["b"] += dz
        grads["E"][x[j - 1]] += dz
        grads["R"] += np.outer(hs[j - 1], dz)
        dh_next = p["R"] @ dz
    return grads


def squared_network(p: dict, L: int) -> tuple[float, list, list]:
    """g(1) of the squared-weight network unrolled over L steps (= gamma^2, the path
    regulariser), its states h~_0 .. h~_{L-1} and dg/dh~_t.

    gamma^2 is invariant under rescaling a unit (in-weights x c, out-weights / c; 003 Thm. 1):

        >>> rng = np.random.default_rng(0)
        >>> p = initial_parameters(3, 4, rng)
        >>> p["Wo"] = rng.standard_normal(p["Wo"].shape)
        >>> g, hs, deltas = squared_network(p, 5)
        >>> len(hs), len(deltas), bool(g > 0)
        (5, 5, True)
        >>> q = {name: value.copy() for name, value in p.items()}
        >>> q["E"][:, 0] *= 2; q["R"][:, 0] *= 2; q["R"][0] /= 2; q["Wo"][1] /= 2
        >>> bool(np.isclose(squared_network(q, 5)[0], g))
        True
    """
    sq = {name: value ** 2 for name, value in p.items()}
    drive = sq["b"] + sq["E"].sum(axis=0)  # bias and every input coordinate set to 1
    hs = [np.zeros(p["R"].shape[0])]
    for _ in range(L - 1):
        hs.append(drive + hs[-1] @ sq["R"])
    A = p["Wo"].shape[1]
    g = float(sum(sq["Wo"][0].sum() + h @ sq["Wo"][1:].sum(axis=1) for h in hs))
    out_grad = sq["Wo"][1:].sum(axis=1)  # dg/dh~_t through the outputs at t
    deltas = [None] * L
    d = np.zeros_like(hs[0])
    for t in range(L - 1, -1, -1):
        d = out_grad + d
        deltas[t] = d
        d = sq["R"] @ d  # to the state before
    del A
    return g, hs, deltas


def kappa(p: dict, L: int) -> tuple[dict, dict]:
    """(kappa^(1), kappa^(2)) per parameter for a window of L symbols (Theorem 3).

    kappa^(1) is positive and is the derivative of g(1) with respect to a squared weight;
    kappa^(2) concerns R alone:

        >>> rng = np.random.default_rng(0)
        >>> p = initial_parameters(3, 4, rng)
        >>> p["Wo"] = rng.standard_normal(p["Wo"].shape)
        >>> k1, k2 = kappa(p, 5)
        >>> all(bool((k1[name] > 0).all()) for name in NAMES), bool((k1["Wo"][0] == 5).all())
        (True, True)
        >>> [name for name in NAMES if k2[name].any()]
        ['R']
        >>> q = {name: value.copy() for name, value in p.items()}
        >>> q["E"][1, 2] = np.sqrt(p["E"][1, 2] ** 2 + 1e-6)  # E[1, 2]^2 up by 1e-6
        >>> slope = (squared_network(q, 5)[0] - squared_network(p, 5)[0]) / 1e-6
        >>> bool(np.isclose(slope, k1["E"][1, 2]))
        True
    """
    sq = {name: value ** 2 for name, value in p.items()}
    _, hs, deltas = squared_network(p, L)
    A = p["Wo"].shape[1]
    k1 = {name: np.zeros_like(value) for name, value in p.items()}
    k1["Wo"][0] = L
    for t in range(L):
        k1["Wo"][1:] += hs[t][:, None] * np.ones(A)
        if t >= 1:
            k1["b"] += deltas[t]
            k1["E"] += deltas[t][None, :]
            k1["R"] += np.outer(hs[t - 1], deltas[t])
    k2 = {name: np.zeros_like(value) for name, value in p.items()}
    n = p["R"].shape[0]
    powers = [np.eye(n)]
    for _ in range(L):
        powers.append(powers[-1] @ sq["R"])
    # sum over pairs of R-edges (k -> j) into h~_t1 and h~_t2, 1 <= t1 < t2 <= L-1:
    # delta_t2[j] * d h~_{t2-1}[k] / d h~_t1[j] * h~_{t1-1}[k]; h~_{t1+d} = h~_t1 @ R~^d.
    pairs = np.zeros((n, n))
    for t2 in range(2, L):
        for t1 in range(1, t2):
            pairs += hs[t1 - 1][:, None] * powers[t2 - 1 - t1].T * deltas[t2][None, :]
    k2["R"] = 4.0 * sq["R"] * pairs
    return k1, k2


def path_sgd_step(p: dict, grads: dict, L: int, rate: float, second: bool = False,
                  floor: float = 1e-12) -> dict:
    """Eq. 8 on the log-likelihood's gradient: p + rate * grad / kappa (ascent on loglik).

    A small step raises the window's log-likelihood:

        >>> rng = np.random.default_rng(0)
        >>> p = initial_parameters(3, 4, rng)
        >>> p["Wo"] = 0.1 * rng.standard_normal(p["Wo"].shape)
        >>> x, h0 = np.array([0, 1, 2, 3, 1]), np.zeros(3)
        >>> loglik, cache = forward(p, h0, x)
        >>> q = path_sgd_step(p, backward(p, cache), len(x), rate=0.01)
        >>> bool(forward(q, h0, x)[0] > loglik)
        True
        >>> q2 = path_sgd_step(p, backward(p, cache), len(x), rate=0.01, second=True)
        >>> bool(forward(q2, h0, x)[0] > loglik)
        True
    """
    k1, k2 = kappa(p, L)
    return {name: p[name] + rate * grads[name] / np.maximum(
        k1[name] + (k2[name] if second else 0.0), floor) for name in p}


# -- orthogonality (002 Sect. II) ----------------------------------------------------------------

def orthogonality_loss(W: np.ndarray) -> float:
    """||W W^T - I||_F^2 (eq. 16).

        >>> Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))
        >>> bool(orthogonality_loss(Q) < 1e-20)  # orthogonal: ~0
        True
        >>> orthogonality_loss(2 * np.eye(3))  # each diagonal entry of W W^T - I is 3
        27.0
    """
    D = W @ W.T - np.eye(W.shape[0])
    return float((D * D).sum())


def orthogonality_gradient(W: np.ndarray) -> np.ndarray:
    """d ||W W^T - I||_F^2 / dW = 4 (W W^T - I) W (the penalty term of eq. 31, written there
    as W (W W^T - I); for a square W the two losses ||W W^T - I|| and ||W^T W - I|| are equal
    and this is the gradient of both).

        >>> W = 0.5 * np.random.default_rng(0).standard_normal((3, 3))
        >>> numeric = [(orthogonality_loss(W + 1e-6 * D) - orthogonality_loss(W - 1e-6 * D))
        ...            / 2e-6 for D in np.eye(9).reshape(9, 3, 3)]
        >>> bool(np.allclose(numeric, orthogonality_gradient(W).ravel(), atol=1e-6))
        True
        >>> Q, _ = np.linalg.qr(W)
        >>> bool(np.allclose(orthogonality_gradient(Q), 0.0))  # zero at an orthogonal matrix
        True
    """
    return 4.0 * (W @ W.T - np.eye(W.shape[0])) @ W


def oinit(W: np.ndarray, rate: float = 0.1, tol: float = 1e-6,
          max_steps: int = 100_000) -> tuple[np.ndarray, int]:
    """Pre-train W towards orthogonality by gradient descent (eq. 17-18) until the loss is
    below ``tol``; returns (W, steps).

        >>> W, steps = oinit(0.1 * np.random.default_rng(1).standard_normal((16, 16)))
        >>> orthogonality_loss(W) < 1e-6
        True
    """
    W = np.array(W, dtype=float)
    for step in range(max_steps):
        if orthogonality_loss(W) < tol:
            return W, step
        W = W - rate * orthogonality_gradient(W)
    raise ValueError(f"OINIT did not converge in {max_steps} steps")
