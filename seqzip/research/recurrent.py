"""Batch training of plain recurrent networks: the ReLU RNN by path-SGD or SGD (003), the
LSTM with or without OINIT (002), and the tanh RNN on 002's pathological problems.

NumPy throughout (offline: nothing here is on a coding path).  Two uses:

* sequence models for Table 1 and ``seqzip train --method``: :func:`fit` trains a ReLU RNN
  (``relu-rnn-path-sgd``, with kappa(2) too ``relu-rnn-path-sgd2``, ``relu-rnn-sgd``) or an LSTM (``lstm-adam``, ``lstm-adam-oinit``) on
  a symbol sequence by truncated BPTT over parallel streams, within a CPU budget, keeping the
  parameters of best validation bits (scored with the (1 - 1/(t+2)) pi_t + 1/(t+2) uniform
  mixing of 000 Sect. 4, as the GLNN rows);
* classification of the pathological problems (002 Sect. III-A): :func:`solve_pathological`
  trains a tanh RNN (SRNN, SRNN + OINIT, SRNN + OPEN) on lines of
  :func:`seqzip.corpora.pathological_line` with minibatches of 20 and reports whether the test
  error fell under 1% within the budget.

Path-SGD uses the kappa of :mod:`seqzip.reference.relu_rnn` for the window length (kappa(1),
plus kappa(2) with ``second=True``); OINIT and OPEN that module's loss and gradient.

    >>> x = np.array([0, 1, 2, 1] * 60, dtype=np.int64)
    >>> result = fit("relu-rnn-path-sgd", x, x[:40], 3, budget=1.0, sizes=[8])
    >>> bool(result.validation_bits < 40 * np.log2(3))
    True
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..reference import relu_rnn as ref

METHODS = {  # name: (network, optimizer, oinit)
    "relu-rnn-path-sgd": ("relu", "path-sgd", False),
    "relu-rnn-path-sgd2": ("relu", "path-sgd2", False),  # kappa(1) + kappa(2)
    "relu-rnn-sgd": ("relu", "sgd", False),
    "lstm-adam": ("lstm", "adam", False),
    "lstm-adam-oinit": ("lstm", "adam", True),
}
RATES = {"path-sgd": 0.1, "path-sgd2": 0.1, "sgd": 0.1, "adam": 0.005}  # per-window steps (see fit); path-SGD
# at 0.3 and above blows up on small alphabets (kappa of R near 0.01 at the start: 000 cycle of
# 4 symbols, 8 units), at 0.01 it crawls (insertions, 10 CPU s: 0.01 -> 28,700, 0.1 -> 19,200 bits)


# -- sequence models ---------------------------------------------------------------------------

def _init(kind: str, n: int, A: int, rng: np.random.Generator, oinit: bool) -> dict:
    if kind == "relu":
        p = {"E": 0.1 * rng.standard_normal((A, n)), "b": np.zeros(n),
             "R": 0.5 / math.sqrt(n) * rng.standard_normal((n, n)),
             "Wo": 0.1 * rng.standard_normal((n + 1, A))}
        blocks = [("R", 0)]
    else:
        p = {"E": 0.1 * rng.standard_normal((A, 4 * n)), "b": np.zeros(4 * n),
             "R": 0.1 * rng.standard_normal((n, 4 * n)), "Wo": np.zeros((n + 1, A))}
        p["b"][2 * n:3 * n] = 1.0  # forget gates open
        blocks = [("R", k) for k in range(4)]
    if oinit:
        for name, k in blocks:
            W, _ = ref.oinit(p[name][:, k * n:(k + 1) * n])
            p[name][:, k * n:(k + 1) * n] = W
    return p


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _forward(kind: str, p: dict, h: np.ndarray, c: np.ndarray, X: np.ndarray):
    """X (B, L): states h_0..h_{L-1} (each predicts X[:, t]), caches, next (h, c)."""
    B, L = X.shape
    n = h.shape[1]
    hs, caches = [h], []
    for t in range(L):
        z = p["b"] + p["E"][X[:, t]] + h @ p["R"]
        if kind == "relu":
            h_new = np.maximum(z, 0.0)
            caches.append((z, None, None))
        else:
            g, i, f, o = z[:, :n], _sigmoid(z[:, n:2 * n]), _sigmoid(z[:, 2 * n:3 * n]), \
                _sigmoid(z[:, 3 * n:])
            c_new = f * c + i * g
            h_new = np.tanh(c_new * o)
            caches.append((g, i, f, o, c, c_new))
            c = c_new
        h = h_new
        hs.append(h)
    return hs, caches, (h, c)


def _softmax(logits):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _window_gradient(kind: str, p: dict, h0, c0, X: np.ndarray, Y: np.ndarray):
    """Mean log-likelihood gradient over a batch of windows: state h_t (after reading X[:, t])
    predicts Y[:, t]."""
    B, L = X.shape
    n = h0.shape[1]
    hs, caches, last = _forward(kind, p, h0, c0, X)
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    dh_next, dc_next = np.zeros((B, n)), np.zeros((B, n))
    loglik = 0.0
    for t in range(L - 1, -1, -1):
        h = hs[t + 1]
        q = _softmax(p["Wo"][0] + h @ p["Wo"][1:])
        loglik += float(np.log(np.maximum(q[np.arange(B), Y[:, t]], 1e-300)).sum())
        err = -q
        err[np.arange(B), Y[:, t]] += 1.0
        grads["Wo"][0] += err.sum(axis=0)
        grads["Wo"][1:] += h.T @ err
        dh = err @ p["Wo"][1:].T + dh_next
        if kind == "relu":
            dz = dh * (caches[t][0] > 0)
        else:
            g, i, f, o, c_prev, c_new = caches[t]
            ds = dh * (1.0 - h * h)
            dct = dc_next + ds * o
            dz = np.concatenate([dct * i, dct * g * i * (1 - i), dct * c_prev * f * (1 - f),
                                 ds * c_new * o * (1 - o)], axis=1)
            dc_next = dct * f
        grads["b"] += dz.sum(axis=0)
        np.add.at(grads["E"], X[:, t], dz)
        grads["R"] += hs[t].T @ dz
        dh_next = dz @ p["R"].T
    return {k: v / B for k, v in grads.items()}, loglik / B, last


def score_bits(kind: str, p: dict, x: np.ndarray, A: int) -> float:
    """Validation bits of ``x`` from the zero state, with 000's uniform mixing.

    Zero output weights predict uniformly; the mixing bounds any model's cost of symbol t by
    log2(A (t + 2)):

        >>> rng = np.random.default_rng(0)
        >>> p = ref.initial_parameters(4, 3, rng)  # a ReLU RNN, Wo = 0
        >>> x = np.array([0, 1, 2, 1, 0])
        >>> bool(np.isclose(score_bits("relu", p, x, 3), 5 * np.log2(3)))
        True
        >>> p["Wo"] = 10 * rng.standard_normal(p["Wo"].shape)
        >>> bool(score_bits("relu", p, x, 3) <= sum(np.log2(3 * (t + 2)) for t in range(5)))
        True
    """
    n = p["R"].shape[0]
    h, c = np.zeros((1, n)), np.zeros((1, n))
    bits = 0.0
    for t in range(len(x)):
        q = _softmax(p["Wo"][0] + h[0] @ p["Wo"][1:])
        mix = 1.0 / (t + 2)
        bits -= math.log2((1 - mix) * q[x[t]] + mix / A)
        _, _, (h, c) = _forward(kind, p, h, c, x[t:t + 1][None, :])
    return bits


@dataclass
class FitResult:
    """What :func:`fit` returns: the best parameters, their validation bits, the run's size
    and cost, and the (step, bits) trajectory of the validation checks.

        >>> r = FitResult("relu-rnn-sgd", {}, 12.5, n_units=8, steps=100, best_step=50,
        ...               seconds=0.5)
        >>> r.trajectory, r.summary()["settings"]
        ([], [(8, 8, 100, 12.5)])
    """

    method: str
    params: dict
    validation_bits: float
    n_units: int
    steps: int
    best_step: int
    seconds: float
    trajectory: list = field(default_factory=list)

    def summary(self) -> dict:
        return {"validation_bits": self.validation_bits, "n_units": self.n_units, "d": self.n_units,
                "steps": self.steps, "best_step": self.best_step, "seconds": self.seconds,
                "settings": [(self.n_units, self.n_units, self.steps, self.validation_bits)]}


def fit(method: str, train_x: np.ndarray, valid_x: np.ndarray, alphabet_size: int,
        budget: float, sizes: list[int] | None = None, seed: int = 0, window: int = 20,
        streams: int = 16, eval_every: int = 50, rate: float | None = None,
        second: bool = False) -> FitResult:
    """Train ``method`` (``METHODS``) on ``train_x`` for ``budget`` CPU seconds; keep the
    parameters of best validation bits.  One size (the first of ``sizes``, default 32 units):
    the budgets here are too small for the GLNN rows' scan.  Each step is one window of
    ``window`` symbols on ``streams`` parallel streams of the training sequence (state
    carried across windows); path-SGD divides by kappa for that window length (eq. 8).

    The kept parameters are never worse than the start (step 0 of the trajectory):

        >>> x = np.array([0, 1, 2] * 40, dtype=np.int64)
        >>> r = fit("relu-rnn-sgd", x, x[:30], 3, budget=0.05, sizes=[4], eval_every=5)
        >>> r.n_units, r.best_step <= r.steps, r.validation_bits <= r.trajectory[0][1]
        (4, True, True)
        >>> fit("rnn", x, x[:30], 3, budget=0.05)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: unknown method 'rnn'; choose from relu-rnn-path-sgd, ...
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    kind, optimizer, oinit = METHODS[method]
    start = time.process_time()
    n, A = (sizes or [32])[0], alphabet_size
    rng = np.random.default_rng(seed)
    p = _init(kind, n, A, rng, oinit)
    rate = RATES[optimizer] if rate is None else rate
    per = (len(train_x) - 1) // streams
    if per < window:
        streams, per = 1, len(train_x) - 1
        window = min(window, per)
    if per < 1:
        raise ValueError("not enough data to train on")
    starts = np.arange(streams) * per
    h, c = np.zeros((streams, n)), np.zeros((streams, n))
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v2 = {k: np.zeros_like(v) for k, v in p.items()}
    best = (score_bits(kind, p, valid_x, A), {k: v.copy() for k, v in p.items()}, 0)
    trajectory = [(0, best[0])]
    steps, offset = 0, 0
    while time.process_time() - start < budget:
        if offset + window > per:
            offset = 0
            h, c = np.zeros((streams, n)), np.zeros((streams, n))
        idx = starts[:, None] + offset + np.arange(window)[None, :]
        grads, _, (h, c) = _window_gradient(kind, p, h, c, train_x[idx], train_x[idx + 1])
        offset += window
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
        if norm > 4.0:
            grads = {k: g * (4.0 / norm) for k, g in grads.items()}
        if optimizer in ("path-sgd", "path-sgd2"):
            # the reference unrolls window + 1 states from h~_0 = 0 (its extra output at
            # h~_0 only adds 1 to the output biases' kappa)
            p = ref.path_sgd_step(p, grads, window + 1, rate,
                                  second=second or optimizer == "path-sgd2", floor=1e-6)
        elif optimizer == "sgd":
            p = {k: p[k] + rate * grads[k] for k in p}
        else:
            for k in p:
                m[k] = 0.9 * m[k] + 0.1 * grads[k]
                v2[k] = 0.999 * v2[k] + 0.001 * grads[k] ** 2
                p[k] = p[k] + rate * (m[k] / (1 - 0.9 ** (steps + 1))) / (
                    np.sqrt(v2[k] / (1 - 0.999 ** (steps + 1))) + 1e-8)
        steps += 1
        if not all(np.isfinite(v).all() for v in p.values()):
            break  # diverged: keep the best so far
        if steps % eval_every == 0:
            bits = score_bits(kind, p, valid_x, A)
            trajectory.append((steps, bits))
            if bits < best[0]:
                best = (bits, {k: v.copy() for k, v in p.items()}, steps)
    return FitResult(method, best[1], best[0], n, steps, best[2], time.process_time() - start,
                     trajectory)


# -- the pathological problems with a tanh RNN (002 Sect. III-A) -------------------------------

PATHOLOGICAL_SYMBOLS = "abcdXY"  # temporal order's inputs (both variants)
VARIANTS = ("srnn", "srnn-oinit", "srnn-open")


def pathological_batch(task: str, t: int, size: int, rng: np.random.Generator):
    """(inputs (size, t) as indices of the task's symbols, targets (size,) class indices).

    In temporal order each line holds two of X, Y (indices 4, 5); the class reads them as
    binary digits in order:

        >>> X, y = pathological_batch("temporal-order", 10, 5, np.random.default_rng(0))
        >>> X.shape, y.shape
        ((5, 10), (5,))
        >>> marks = [[s - 4 for s in row if s >= 4] for row in X]
        >>> all(len(m) == 2 and 2 * m[0] + m[1] == c for m, c in zip(marks, y))
        True
    """
    from .. import corpora

    sampler = corpora.Sampler(rng)
    X = np.zeros((size, t), dtype=np.int64)
    y = np.zeros(size, dtype=np.int64)
    for i in range(size):
        inputs, target = corpora.pathological_line(sampler, task, t)
        X[i] = [PATHOLOGICAL_SYMBOLS.index(ch) for ch in inputs]
        y[i] = corpora.pathological_target_class(task, target)
    return X, y


def srnn_initial(n_in: int, n: int, n_out: int, rng: np.random.Generator,
                 oinit: bool = False) -> dict:
    """Normalised (Glorot) uniform initialisation [002 ref. 2], OINIT on Whh if asked.

        >>> p = srnn_initial(6, 8, 4, np.random.default_rng(0))
        >>> {name: value.shape for name, value in p.items()}
        {'Wxh': (6, 8), 'Whh': (8, 8), 'bh': (8,), 'Why': (8, 4), 'by': (4,)}
        >>> bool(np.abs(p["Wxh"]).max() <= np.sqrt(6 / (6 + 8)))
        True
        >>> q = srnn_initial(6, 8, 4, np.random.default_rng(0), oinit=True)
        >>> bool(ref.orthogonality_loss(q["Whh"]) < 1e-6)
        True
    """
    def glorot(a, b):
        r = math.sqrt(6.0 / (a + b))
        return rng.uniform(-r, r, (a, b))

    p = {"Wxh": glorot(n_in, n), "Whh": glorot(n, n), "bh": np.zeros(n),
         "Why": glorot(n, n_out), "by": np.zeros(n_out)}
    if oinit:
        p["Whh"], _ = ref.oinit(p["Whh"])
    return p


def srnn_gradient(p: dict, X: np.ndarray, y: np.ndarray, penalty: float = 0.0):
    """Mean cross-entropy of the last step's softmax and its gradient (BPTT through all of
    X); with ``penalty`` the OPEN term lam * 4 (W W^T - I) W joins Whh's gradient (eq. 31).

        >>> rng = np.random.default_rng(0)
        >>> p = srnn_initial(6, 5, 4, rng)
        >>> X, y = rng.integers(0, 6, (3, 7)), rng.integers(0, 4, 3)
        >>> loss, g = srnn_gradient(p, X, y)
        >>> up, down = dict(p, Whh=p["Whh"].copy()), dict(p, Whh=p["Whh"].copy())
        >>> up["Whh"][1, 2] += 1e-6; down["Whh"][1, 2] -= 1e-6
        >>> numeric = (srnn_gradient(up, X, y)[0] - srnn_gradient(down, X, y)[0]) / 2e-6
        >>> bool(np.isclose(numeric, g["Whh"][1, 2], atol=1e-8))
        True
        >>> _, g_open = srnn_gradient(p, X, y, penalty=0.5)
        >>> bool(np.allclose(g_open["Whh"] - g["Whh"],
        ...                  0.5 * ref.orthogonality_gradient(p["Whh"])))
        True
    """
    B, T = X.shape
    n = p["Whh"].shape[0]
    h = np.zeros((B, n))
    hs = [h]
    for t in range(T):
        h = np.tanh(p["Wxh"][X[:, t]] + h @ p["Whh"] + p["bh"])
        hs.append(h)
    q = _softmax(h @ p["Why"] + p["by"])
    loss = float(-np.log(q[np.arange(B), y] + 1e-300).mean())
    d = q
    d[np.arange(B), y] -= 1.0
    d /= B
    g = {"Why": h.T @ d, "by": d.sum(axis=0), "Wxh": np.zeros_like(p["Wxh"]),
         "Whh": np.zeros_like(p["Whh"]), "bh": np.zeros_like(p["bh"])}
    dh = d @ p["Why"].T
    for t in range(T, 0, -1):
        dz = dh * (1.0 - hs[t] ** 2)
        g["Whh"] += hs[t - 1].T @ dz
        g["bh"] += dz.sum(axis=0)
        np.add.at(g["Wxh"], X[:, t - 1], dz)
        dh = dz @ p["Whh"].T
    if penalty:
        g["Whh"] += penalty * ref.orthogonality_gradient(p["Whh"])
    return loss, g


def srnn_error(p: dict, X: np.ndarray, y: np.ndarray) -> float:
    """Fraction of the lines of X whose last step's argmax class is not y.

        >>> p = srnn_initial(6, 5, 4, np.random.default_rng(0))
        >>> p["Why"][:] = 0.0; p["by"][2] = 1.0  # always says class 2
        >>> srnn_error(p, np.zeros((4, 10), dtype=np.int64), np.array([2, 2, 0, 1]))
        0.5
    """
    n = p["Whh"].shape[0]
    h = np.zeros((X.shape[0], n))
    for t in range(X.shape[1]):
        h = np.tanh(p["Wxh"][X[:, t]] + h @ p["Whh"] + p["bh"])
    return float(((h @ p["Why"] + p["by"]).argmax(axis=1) != y).mean())


def solve_pathological(task: str, t: int, variant: str, *, iterations: int = 2000,
                       rate: float = 0.01, penalty: float = 1.0, hidden: int = 100,
                       batch: int = 20, test_size: int = 1000, check_every: int = 100,
                       seed: int = 0) -> dict:
    """Train ``variant`` ("srnn", "srnn-oinit", "srnn-open") on ``task`` of length ``t`` by
    SGD (minibatches of ``batch``) for at most ``iterations``; every ``check_every``
    iterations measure the error on ``test_size`` fresh sequences; solved when it is under 1%
    (002's criterion).  Returns the iterations used, the best error and the spectral radius of
    Whh at the start and end.

        >>> r = solve_pathological("temporal-order", 10, "srnn", iterations=100, hidden=8,
        ...                        test_size=100)
        >>> sorted(r)[:3], r["iterations"] <= 100
        (['best_error', 'cpu_seconds', 'iterations'], True)
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}")
    if task not in ("temporal-order", "temporal-order-3bit"):
        raise ValueError("the tanh RNN runs the temporal order problems")
    start = time.process_time()
    rng = np.random.default_rng([seed, t])
    n_out = 4 if task == "temporal-order" else 8
    p = srnn_initial(len(PATHOLOGICAL_SYMBOLS), hidden, n_out, rng, variant == "srnn-oinit")
    lam = penalty if variant == "srnn-open" else 0.0
    radius0 = float(np.abs(np.linalg.eigvals(p["Whh"])).max())
    test_X, test_y = pathological_batch(task, t, test_size, np.random.default_rng([seed, t, 1]))
    best, solved, it = 1.0, False, 0
    for it in range(1, iterations + 1):
        X, y = pathological_batch(task, t, batch, rng)
        _, g = srnn_gradient(p, X, y, lam)
        p = {k: p[k] - rate * g[k] for k in p}
        if not all(np.isfinite(v).all() for v in p.values()):
            break
        if it % check_every == 0:
            best = min(best, srnn_error(p, test_X, test_y))
            if best < 0.01:
                solved = True
                break
    radius = float(np.abs(np.linalg.eigvals(p["Whh"])).max()) if np.isfinite(p["Whh"]).all() \
        else math.inf
    return {"task": task, "t": t, "variant": variant, "solved": solved, "iterations": it,
            "best_error": best, "radius_before": radius0, "radius_after": radius,
            "cpu_seconds": time.process_time() - start}


def longest_solved(task: str, variant: str, *, start: int = 10, step: int = 10,
                   limit: int = 200, **kw) -> tuple[int, list[dict]]:
    """002's protocol: from T = ``start``, raise T by ``step`` while the network solves it;
    returns the longest T solved (0: none) and every run.

    One length only, on a tiny network:

        >>> best, runs = longest_solved("temporal-order", "srnn", start=10, limit=10,
        ...                             iterations=20, hidden=4, test_size=20, check_every=20)
        >>> len(runs), best == (10 if runs[0]["solved"] else 0)
        (1, True)
    """
    runs, best = [], 0
    for t in range(start, limit + 1, step):
        r = solve_pathological(task, t, variant, **kw)
        runs.append(r)
        if not r["solved"]:
            break
        best = t
    return best, runs


# -- seqzip train ------------------------------------------------------------------------------

MODEL_FILE_MAGIC = "seqzip-recurrent-1"


def train_bytes(data: bytes, validation: bytes | None = None, *, method: str, budget: float,
                units: int | None = None, seed: int = 0) -> tuple[FitResult, list[int], int]:
    """``seqzip train --method relu-rnn-path-sgd`` and the others of ``METHODS``: as
    :func:`seqzip.research.training.train_bytes` (the last 10% held out when no validation).

        >>> data = b"abcab" * 30
        >>> result, alphabet, n_valid = train_bytes(data, method="relu-rnn-sgd", budget=0.05,
        ...                                         units=4)
        >>> alphabet == sorted(set(data)), n_valid == len(data) // 10, result.n_units
        (True, True, 4)
    """
    from .training import encode

    if validation is None:
        cut = len(data) - max(1, len(data) // 10)
        data, validation = data[:cut], data[cut:]
    if len(data) < 3 or not validation:
        raise ValueError("not enough data to train on")
    alphabet = sorted(set(data) | set(validation))
    result = fit(method, encode(data, alphabet), encode(validation, alphabet), len(alphabet),
                 budget, sizes=[units] if units else None, seed=seed)
    return result, alphabet, len(validation)


def save_model(path, result: FitResult, alphabet: list[int], info: dict) -> str:
    """A .sqm file (numpy .npz, no pickles) holding the parameters; returns its SHA-256.

        >>> import hashlib, os, tempfile
        >>> params = ref.initial_parameters(4, 3, np.random.default_rng(0))
        >>> r = FitResult("relu-rnn-sgd", params, 9.0, 4, 10, 10, 0.1)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "model.sqm")
        ...     digest = save_model(path, r, [97, 98, 99], {"budget": 1.0})
        ...     with open(path, "rb") as f:
        ...         print(hashlib.sha256(f.read()).hexdigest() == digest)
        True
    """
    import hashlib
    import io
    import json

    meta = {"magic": MODEL_FILE_MAGIC, "method": result.method,
            "alphabet": list(map(int, alphabet)), "info": info}
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
             **result.params)
    data = buffer.getvalue()
    if hasattr(path, "write"):
        path.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)
    return hashlib.sha256(data).hexdigest()


def load_model(path) -> tuple[str, dict, list[int], dict]:
    """(method, parameters, alphabet, info) of a file from :func:`save_model`.

        >>> import os, tempfile
        >>> params = ref.initial_parameters(4, 3, np.random.default_rng(0))
        >>> r = FitResult("relu-rnn-sgd", params, 9.0, 4, 10, 10, 0.1)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "model.sqm")
        ...     _ = save_model(path, r, [97, 98, 99], {"budget": 1.0})
        ...     method, loaded, alphabet, info = load_model(path)
        ...     with open(path, "wb") as f:
        ...         _ = f.write(b"not a model")
        ...     try:
        ...         load_model(path)
        ...     except ValueError:
        ...         print("rejected")
        rejected
        >>> method, alphabet, info
        ('relu-rnn-sgd', [97, 98, 99], {'budget': 1.0})
        >>> all(np.array_equal(loaded[name], params[name]) for name in params)
        True
    """
    import json

    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            if meta.get("magic") != MODEL_FILE_MAGIC:
                raise ValueError("not a seqzip recurrent model file")
            params = {k: z[k] for k in z.files if k != "meta"}
    except (OSError, KeyError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a seqzip model file: {exc}") from None
    return meta["method"], params, meta["alphabet"], meta["info"]
