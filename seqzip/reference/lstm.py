"""NumPy reference of the LSTM, multiplicative LSTM and multiplicative RNN (001 Sect. 2.2,
2.4, 4.5, Algorithms 2 and 7; 004 for the factorised mRNN), and of the plain tanh RNN
(001 Sect. 2.1, trained offline by :mod:`seqzip.research.hf`), over one training window.

This is the readable definition the Cython kernel (:mod:`seqzip._kernels.lstm`) is held to: the tests
compare its forward pass to this one to 1e-12 and both gradients to finite differences.  It is
never on the coding path (numpy's tanh and exp differ between builds).

Parameters (row-major, "inputs x outputs" so that a step is ``z = b + E[x] + r @ R``):

* ``E`` (A, P), ``b`` (P,): the one-hot input's weights and the bias of the P pre-activations;
* ``R`` (n, P): from r = h (LSTM) or the multiplicative state m (mLSTM, mRNN) to them;
* ``Wmh`` (n, n), ``Wmi`` (A, n): m = (h @ Wmh) * Wmi[x] (mLSTM and mRNN only);
* ``Wo`` (n + 1, A): output weights, row 0 the bias.

P = 4n for the LSTM cells, in the order Hin (linear), input gate, forget gate, output gate;
P = n for the mRNN and the plain RNN (``rnn``: h = tanh(b + E[x] + h @ R), no R's input m).
The LSTM cell is the thesis's: c = f * c + i * Hin, h = tanh(c * o).

A window of L symbols x_1..x_L starts from the state S_0 that predicted x_1: step j predicts
x_j from S_{j-1} with ``softmax(Wo . (1, h) + offset_j)`` and then reads x_j.  ``offset`` holds
the experts' gated log-probabilities as they were when each symbol was coded (held fixed).

    >>> rng = np.random.default_rng(0)
    >>> p = initial_parameters("mlstm", n=3, A=4, rng=rng)
    >>> x = np.array([0, 1, 2, 3, 1])
    >>> loglik, cache = forward("mlstm", p, np.zeros(3), np.zeros(3), x)
    >>> bool(loglik < 0)
    True
"""
from __future__ import annotations

import numpy as np

CELLS = ("lstm", "mlstm", "mrnn", "rnn")  # the coding kernel has the first three


def width(cell: str, n: int) -> int:
    """Number of pre-activations P.

        >>> width("lstm", 3), width("mrnn", 3), width("rnn", 3)
        (12, 3, 3)
    """
    return n if cell in ("mrnn", "rnn") else 4 * n


def multiplicative(cell: str) -> bool:
    """Whether ``cell`` has the multiplicative state m (mLSTM, mRNN).

        >>> multiplicative("mlstm"), multiplicative("lstm")
        (True, False)
    """
    return cell in ("mlstm", "mrnn")


def shapes(cell: str, n: int, A: int) -> dict[str, tuple[int, ...]]:
    """Names and shapes of the parameters, in their order inside the kernel's flat vector.

        >>> shapes("mrnn", 2, 3)
        {'E': (3, 2), 'b': (2,), 'R': (2, 2), 'Wmh': (2, 2), 'Wmi': (3, 2), 'Wo': (3, 3)}
    """
    P = width(cell, n)
    out = {"E": (A, P), "b": (P,), "R": (n, P)}
    if multiplicative(cell):
        out.update(Wmh=(n, n), Wmi=(A, n))
    out["Wo"] = (n + 1, A)
    return out


def count_parameters(cell: str, n: int, A: int) -> int:
    """The number of parameters (the size of the kernel's theta).

        >>> count_parameters("mrnn", 2, 3)  # E 6, b 2, R 4, Wmh 4, Wmi 6, Wo 9
        31
    """
    return sum(int(np.prod(s)) for s in shapes(cell, n, A).values())


def initial_parameters(cell: str, n: int, A: int, rng: np.random.Generator,
                       std: float = 0.1) -> dict[str, np.ndarray]:
    """Random normal weights (the thesis's N(0, 0.1)), zero biases and output weights.

        >>> p = initial_parameters("lstm", 2, 3, np.random.default_rng(0))
        >>> float(abs(p["Wo"]).sum()), p["E"].shape
        (0.0, (3, 8))
    """
    params = {name: std * rng.standard_normal(shape) for name, shape in shapes(cell, n, A).items()}
    params["b"][:] = 0.0
    params["Wo"][:] = 0.0
    return params


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def step(cell: str, p: dict, h: np.ndarray, c: np.ndarray, x) -> dict:
    """One transition S -> S' on input x; returns every intermediate for the backward pass.
    Batched as well: ``h``, ``c`` of shape (B, n) and ``x`` of shape (B,) step B sequences at
    once (the offline trainers, :mod:`seqzip.research.dictionary` and ``hf``, use this).

        >>> p = initial_parameters("mrnn", 2, 3, np.random.default_rng(0))
        >>> s = step("mrnn", p, np.zeros(2), np.zeros(2), 1)
        >>> sorted(s)[:4], s["h"].shape
        (['c', 'c_prev', 'h', 'h_prev'], (2,))
    """
    n = h.shape[-1]
    s = {"h_prev": h, "c_prev": c, "x": x}
    if multiplicative(cell):
        s["u"] = h @ p["Wmh"]
        s["v"] = p["Wmi"][x]
        r = s["u"] * s["v"]
    else:
        r = h
    s["r"] = r
    z = p["b"] + p["E"][x] + r @ p["R"]
    if cell in ("mrnn", "rnn"):
        s["h"] = np.tanh(z)
        s["c"] = c
        return s
    g, i = z[..., :n], _sigmoid(z[..., n:2 * n])
    f, o = _sigmoid(z[..., 2 * n:3 * n]), _sigmoid(z[..., 3 * n:])
    s.update(g=g, i=i, f=f, o=o)
    s["c"] = f * c + i * g
    s["h"] = np.tanh(s["c"] * o)
    return s


def forward(cell: str, p: dict, h0: np.ndarray, c0: np.ndarray, x: np.ndarray,
            offset: np.ndarray | None = None) -> tuple[float, dict]:
    """Window log-likelihood sum_j log p_j(x_j) (natural log) and the cache for backward.

        >>> p = initial_parameters("lstm", 2, 4, np.random.default_rng(0))
        >>> loglik, cache = forward("lstm", p, np.zeros(2), np.zeros(2), np.array([0, 1, 2]))
        >>> round(float(loglik / np.log(0.25)), 9), len(cache["steps"])  # uniform at start
        (3.0, 2)
    """
    L, A = len(x), p["Wo"].shape[1]
    hs, steps, probs = [h0], [], []
    h, c = h0, c0
    loglik = 0.0
    for j in range(L):
        logits = p["Wo"][0] + h @ p["Wo"][1:]
        if offset is not None:
            logits = logits + offset[j]
        q = np.exp(logits - logits.max())
        q /= q.sum()
        probs.append(q)
        loglik += float(np.log(q[x[j]]))
        if j + 1 < L:  # the last symbol's transition does not touch this window
            s = step(cell, p, h, c, int(x[j]))
            steps.append(s)
            h, c = s["h"], s["c"]
            hs.append(h)
    return loglik, {"hs": hs, "steps": steps, "probs": probs, "x": x, "A": A}


def backward(cell: str, p: dict, cache: dict) -> dict[str, np.ndarray]:
    """Gradient of the window log-likelihood with respect to every parameter (truncated at
    the window's start state).

        >>> p = initial_parameters("lstm", 2, 4, np.random.default_rng(0))
        >>> _, cache = forward("lstm", p, np.zeros(2), np.zeros(2), np.array([0, 1, 2]))
        >>> sorted(backward("lstm", p, cache)) == sorted(p)
        True
    """
    grads = {name: np.zeros_like(value) for name, value in p.items()}
    hs, steps, probs, x = cache["hs"], cache["steps"], cache["probs"], cache["x"]
    L = len(x)
    n = hs[0].shape[0]
    dh_next = np.zeros(n)
    dc_next = np.zeros(n)
    for j in range(L - 1, -1, -1):
        err = -probs[j]
        err[x[j]] += 1.0
        h = hs[j]
        grads["Wo"][0] += err
        grads["Wo"][1:] += np.outer(h, err)
        dh = p["Wo"][1:] @ err + dh_next
        if j == 0:
            break
        s = steps[j - 1]  # the transition that made S_j from S_{j-1}
        dh_next, dc_next = _step_backward(cell, p, s, dh, dc_next, grads)
    return grads


def _step_backward(cell, p, s, dh, dc, grads):
    n = dh.shape[0]
    if cell in ("mrnn", "rnn"):
        dz = dh * (1.0 - s["h"] ** 2)
        dc_prev = np.zeros(n)
    else:
        o, i, f, g = s["o"], s["i"], s["f"], s["g"]
        ds = dh * (1.0 - s["h"] ** 2)
        dc_total = dc + ds * o
        dz = np.concatenate([dc_total * i,
                             dc_total * g * i * (1.0 - i),
                             dc_total * s["c_prev"] * f * (1.0 - f),
                             ds * s["c"] * o * (1.0 - o)])
        dc_prev = dc_total * f
    x = s["x"]
    grads["b"] += dz
    grads["E"][x] += dz
    grads["R"] += np.outer(s["r"], dz)
    dr = p["R"] @ dz
    if multiplicative(cell):
        du = dr * s["v"]
        grads["Wmi"][x] += dr * s["u"]
        grads["Wmh"] += np.outer(s["h_prev"], du)
        dh_prev = p["Wmh"] @ du
    else:
        dh_prev = dr
    return dh_prev, dc_prev
