"""The four recurrent networks of the Hessian-free experiments (rnn, lstm, mrnn, mlstm:
:mod:`seqzip.reference.lstm`'s cells) unrolled over a batch of sequences, their parameters as
one flat vector: the forward pass, back-propagation through time, the R-forward pass
(Pearlmutter's R operator) and the Gauss-Newton product that :mod:`seqzip.research.hf`'s
conjugate gradient multiplies by (Martens 2010, 001 Sect. 2-3; Martens and Sutskever 2011).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..reference import lstm as ref

KINDS = ("rnn", "lstm", "mrnn", "mlstm")


# -- parameters as one flat vector --------------------------------------------------------------


def layout(kind: str, n: int, A: int) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes of :func:`seqzip.reference.lstm.shapes`, in the flat vector's order.

    >>> [name for name, _ in layout("mlstm", 2, 3)]
    ['E', 'b', 'R', 'Wmh', 'Wmi', 'Wo']
    """
    if kind not in KINDS:
        raise ValueError(f"unknown model {kind!r}; choose from {', '.join(KINDS)}")
    return list(ref.shapes(kind, n, A).items())


def unflatten(theta: np.ndarray, kind: str, n: int, A: int) -> dict[str, np.ndarray]:
    """Views of ``theta`` as the reference's parameter dict.

    >>> p = unflatten(np.arange(ref.count_parameters("rnn", 2, 2), dtype=float), "rnn", 2, 2)
    >>> p["b"].tolist(), p["Wo"].shape
    ([4.0, 5.0], (3, 2))
    """
    out, at = {}, 0
    for name, shape in layout(kind, n, A):
        size = int(np.prod(shape))
        out[name] = theta[at:at + size].reshape(shape)
        at += size
    if at != theta.size:
        raise ValueError(f"{theta.size} parameters given, {kind} with n={n}, A={A} has {at}")
    return out


def flatten(params: dict[str, np.ndarray], kind: str) -> np.ndarray:
    """The reference's parameter dict as one flat vector (inverse of :func:`unflatten`).

    >>> p = ref.initial_parameters("lstm", 2, 3, np.random.default_rng(0))
    >>> bool(np.array_equal(unflatten(flatten(p, "lstm"), "lstm", 2, 3)["R"], p["R"]))
    True
    """
    n, A = params["Wo"].shape[0] - 1, params["Wo"].shape[1]
    return np.concatenate([np.asarray(params[name], dtype=np.float64).ravel()
                           for name, _ in layout(kind, n, A)])


def initial_parameters(kind: str, n: int, A: int, seed: int = 0, std: float = 0.1) -> np.ndarray:
    """The reference's initialisation (the thesis's N(0, 0.1) weights, zero biases and output
    weights) as a flat vector."""
    if kind not in KINDS:
        raise ValueError(f"unknown model {kind!r}; choose from {', '.join(KINDS)}")
    return flatten(ref.initial_parameters(kind, n, A, np.random.default_rng(seed), std), kind)


# -- batched forward, backward and R-forward ----------------------------------------------------


def _softmax(logits):
    q = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return q / q.sum(axis=-1, keepdims=True)


@dataclass
class Cache:
    """A batched forward pass: states H[j] (predicting x_j), transitions, predictions."""

    X: np.ndarray  # (B, L) symbols
    H: np.ndarray  # (L, B, n)
    steps: list
    probs: np.ndarray  # (L, B, A)
    loss: float  # sum of -log p over the batch (nats)


def forward(kind: str, p: dict, X: np.ndarray) -> Cache:
    """B sequences (rows of X) from the zero state; step j predicts X[:, j] from the state
    after X[:, :j], as :func:`seqzip.reference.lstm.forward` does for one window."""
    X = np.asarray(X, dtype=np.int64)
    B, L = X.shape
    n, A = p["R"].shape[0], p["Wo"].shape[1]
    h, c = np.zeros((B, n)), np.zeros((B, n))
    H, logits, steps = np.empty((L, B, n)), np.empty((L, B, A)), []
    for j in range(L):
        H[j] = h
        logits[j] = p["Wo"][0] + h @ p["Wo"][1:]
        if j + 1 < L:
            s = ref.step(kind, p, h, c, X[:, j])
            steps.append(s)
            h, c = s["h"], s["c"]
    probs = _softmax(logits)
    picked = np.take_along_axis(probs, X.T[:, :, None], axis=2)[:, :, 0]
    return Cache(X, H, steps, probs, float(-np.log(picked).sum()))


def backward(kind: str, p: dict, cache: Cache, dlogits: np.ndarray,
             dh_extra: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """J^T of the map theta -> (logits, hidden states): the parameter gradient given
    ``dlogits`` (L, B, A) and ``dh_extra`` (L, B, n), dE/d of the logits and of H[j]."""
    grads = {name: np.zeros_like(value) for name, value in p.items()}
    H, steps, X = cache.H, cache.steps, cache.X
    L, B, n = H.shape
    P = p["b"].shape[0]
    Wo1 = p["Wo"][1:]
    grads["Wo"][0] = dlogits.sum(axis=(0, 1))
    grads["Wo"][1:] = H.reshape(L * B, n).T @ dlogits.reshape(L * B, -1)
    A = p["Wo"].shape[1]
    DZ = np.empty((max(L - 1, 0), B, P))
    onehot = np.eye(A)[X[:, :-1].T]  # (L-1, B, A): sums over symbols as matrix products
    dh_next, dc_next = np.zeros((B, n)), np.zeros((B, n))
    for j in range(L - 1, 0, -1):
        dh = dlogits[j] @ Wo1.T + dh_next
        if dh_extra is not None:
            dh = dh + dh_extra[j]
        s = steps[j - 1]
        dh_next, dc_next, DZ[j - 1] = _step_backward(kind, p, s, dh, dc_next, grads,
                                                     onehot[j - 1])
    if L > 1:
        DZf = DZ.reshape(-1, P)
        grads["b"] = DZf.sum(axis=0)
        grads["E"] = onehot.reshape(-1, A).T @ DZf
    return grads


def gate_backward(s: dict, dh: np.ndarray, dc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One LSTM-family step backwards through its gates: the gradient of the pre-activations
    (input, input gate, forget gate, output gate, side by side) and of the previous cell,
    from those of the step's output ``dh`` and cell ``dc`` (``s``: the step's forward
    values).  Shared by the batched BPTT here and by seqzip.research.dictionary's."""
    o, i, f, g = s["o"], s["i"], s["f"], s["g"]
    ds = dh * (1.0 - s["h"] ** 2)
    dc_total = dc + ds * o
    dz = np.concatenate([dc_total * i, dc_total * g * i * (1.0 - i),
                         dc_total * s["c_prev"] * f * (1.0 - f),
                         ds * s["c"] * o * (1.0 - o)], axis=1)
    return dz, dc_total * f


def _step_backward(kind, p, s, dh, dc, grads, onehot):
    if kind in ("rnn", "mrnn"):
        dz = dh * (1.0 - s["h"] ** 2)
        dc_prev = dc
    else:
        dz, dc_prev = gate_backward(s, dh, dc)
    grads["R"] += s["r"].T @ dz
    dr = dz @ p["R"].T
    if ref.multiplicative(kind):
        du = dr * s["v"]
        grads["Wmi"] += onehot.T @ (dr * s["u"])
        grads["Wmh"] += s["h_prev"].T @ du
        dh_prev = du @ p["Wmh"].T
    else:
        dh_prev = dr
    return dh_prev, dc_prev, dz


def r_forward(kind: str, p: dict, v: dict, cache: Cache) -> tuple[np.ndarray, np.ndarray]:
    """The R-forward pass (001 Algorithm 4, eq. 3.20-3.22): directional derivatives along the
    parameter direction ``v`` of the logits (L, B, A) and of the hidden states H (L, B, n)."""
    H, steps = cache.H, cache.steps
    L, B, n = H.shape
    Rh, Rc = np.zeros((B, n)), np.zeros((B, n))
    RH = np.empty_like(H)
    for j in range(L):
        RH[j] = Rh
        if j + 1 == L:
            break
        s = steps[j]
        x = s["x"]
        if ref.multiplicative(kind):
            Rr = (Rh @ p["Wmh"] + s["h_prev"] @ v["Wmh"]) * s["v"] + s["u"] * v["Wmi"][x]
        else:
            Rr = Rh
        Rz = v["b"] + v["E"][x] + Rr @ p["R"] + s["r"] @ v["R"]
        if kind in ("rnn", "mrnn"):
            Rh = (1.0 - s["h"] ** 2) * Rz
        else:
            i, f, o, g = s["i"], s["f"], s["o"], s["g"]
            Rc = (f * (1.0 - f) * Rz[:, 2 * n:3 * n] * s["c_prev"] + f * Rc
                  + i * (1.0 - i) * Rz[:, n:2 * n] * g + i * Rz[:, :n])
            Ro = o * (1.0 - o) * Rz[:, 3 * n:]
            Rh = (1.0 - s["h"] ** 2) * (Rc * o + s["c"] * Ro)
    Rlogits = (v["Wo"][0] + RH.reshape(L * B, n) @ p["Wo"][1:]
               + H.reshape(L * B, n) @ v["Wo"][1:]).reshape(L, B, -1)
    return Rlogits, RH


def gauss_newton_product(kind: str, p: dict, cache: Cache, v: dict, mu: float = 0.0
                         ) -> dict[str, np.ndarray]:
    """(G + mu G_s) v summed over the batch, G = J^T H_L J of softmax + cross-entropy
    (eq. 3.18, 3.23) and G_s = J_h^T J_h of structural damping (eq. 3.24-3.28)."""
    Rlogits, RH = r_forward(kind, p, v, cache)
    q = cache.probs
    HRl = q * (Rlogits - (q * Rlogits).sum(axis=-1, keepdims=True))
    return backward(kind, p, cache, HRl, mu * RH if mu else None)


def loss_and_gradient(kind: str, p: dict, X: np.ndarray, chunk: int = 256
                      ) -> tuple[float, np.ndarray]:
    """Summed -log-likelihood (nats) over the sequences X and its gradient (flat), by chunks
    of ``chunk`` sequences to bound memory."""
    total, grad = 0.0, None
    for start in range(0, len(X), chunk):
        cache = forward(kind, p, X[start:start + chunk])
        d = cache.probs.copy()
        Xt = cache.X.T
        np.put_along_axis(d, Xt[:, :, None],
                          np.take_along_axis(d, Xt[:, :, None], axis=2) - 1.0, axis=2)
        g = flatten(backward(kind, p, cache, d), kind)
        total += cache.loss
        grad = g if grad is None else grad + g
    return total, grad


def loss(kind: str, p: dict, X: np.ndarray, chunk: int = 256) -> float:
    """Summed -log-likelihood (nats) of the sequences X."""
    return sum(forward(kind, p, X[s:s + chunk]).loss for s in range(0, len(X), chunk))


def validation_bits(kind: str, theta: np.ndarray, n: int, A: int, x: np.ndarray,
                    streams: int = 4) -> float:
    """Bits of ``x`` coded continuously (the state carried from symbol to symbol, from the zero
    state), cut into ``streams`` contiguous parts run side by side."""
    p = unflatten(theta, kind, n, A)
    x = np.asarray(x, dtype=np.int64)
    streams = max(1, min(streams, len(x)))
    length = math.ceil(len(x) / streams)
    bits = 0.0
    parts = [x[i * length:(i + 1) * length] for i in range(streams)]
    parts = [q for q in parts if len(q)]
    B = len(parts)
    h, c = np.zeros((B, n)), np.zeros((B, n))
    for j in range(length):
        alive = np.array([j < len(q) for q in parts])
        if not alive.any():
            break
        sym = np.array([q[j] if j < len(q) else 0 for q in parts])
        logits = p["Wo"][0] + h @ p["Wo"][1:]
        logq = logits - logits.max(axis=1, keepdims=True)
        logq -= np.log(np.exp(logq).sum(axis=1, keepdims=True))
        bits -= float(logq[np.arange(B), sym][alive].sum()) / math.log(2)
        s = ref.step(kind, p, h, c, sym)
        h, c = s["h"], s["c"]
    return bits


def sequences(x: np.ndarray, seq_len: int) -> np.ndarray:
    """The training symbols cut into rows of ``seq_len`` (the tail that does not fill a row
    is dropped).

    >>> sequences(np.arange(7), 3).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    x = np.asarray(x, dtype=np.int64)
    rows = len(x) // seq_len
    if rows < 1:
        raise ValueError(f"need at least seq_len={seq_len} training symbols, got {len(x)}")
    return x[:rows * seq_len].reshape(rows, seq_len)
