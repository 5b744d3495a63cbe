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
    """Validation bits of ``x`` from the zero state, with 000's uniform mixing."""
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
    carried across windows); path-SGD divides by kappa for that window length (eq. 8)."""
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
    """(inputs (size, t) as indices of the task's symbols, targets (size,) class indices)."""
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
    """Normalised (Glorot) uniform initialisation [002 ref. 2], OINIT on Whh if asked."""
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
    X); with ``penalty`` the OPEN term lam * 4 (W W^T - I) W joins Whh's gradient (eq. 31)."""
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
    returns the longest T solved (0: none) and every run."""
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
    :func:`seqzip.research.training.train_bytes` (the last 10% held out when no validation)."""
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
    """A .sqm file (numpy .npz, no pickles) holding the parameters; returns its SHA-256."""
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
    """(method, parameters, alphabet, info) of a file from :func:`save_model`."""
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
