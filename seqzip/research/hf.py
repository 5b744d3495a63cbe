"""Hessian-free optimisation of the plain tanh RNN, LSTM, mRNN and mLSTM (001 Sect. 3.3 and
4.1-4.2; 004 "Structural damping"), offline, in numpy; and Adam on the same objective, the
first-order baseline it is benchmarked against.

The models are :mod:`seqzip.reference.lstm`'s (same parameter names, shapes and cell
equations, so a trained parameter dict drops into that reference); here they run on a batch of
B sequences at once.  The training text is cut into sequences of ``seq_len`` symbols, each
starting from the zero state; the objective f is the mean negative log-likelihood per symbol
(nats).  One HF iteration (001 Algorithm 6):

1. the gradient of f on all training sequences (BPTT);
2. a random quarter of them (001 Sect. 4.2) is the curvature batch; its forward pass is kept;
3. conjugate gradient (001 Algorithm 3) minimises the damped quadratic model
   q(d) = g.d + 1/2 d.(G + lambda I + mu G_s) d, started from 0.95 x the previous solution
   (Martens 2010).  G v = J^T H_L J v is the Gauss-Newton product: J v by the R-forward pass
   (001 Algorithm 4, eq. 3.20-3.22, extended to the gated cells), H_L of softmax + cross-entropy
   (eq. 3.23), J^T by backpropagation (:func:`gauss_newton_product`).  G_s is structural damping
   (eq. 3.24-3.28): the Gauss-Newton matrix of the squared change of the hidden states h, i.e.
   mu R(h_t) added to dE/dh_t in the backward pass.  CG stops by the thesis's rule (eq. 4.2:
   k = 10, eps = 0.0005) or after 100 iterations;
4. backtracking over the CG iterates (Martens 2010: the iterates kept at i = ceil(1.3^j), the
   last one that does not get worse on the curvature batch going backwards);
5. the Levenberg-Marquardt adjustment of the damping from the reduction ratio
   rho = (f(theta + d) - f(theta)) / q(d): rho < 1/4 multiplies lambda and mu by 3/2,
   rho > 3/4 by 2/3 (004; the thesis's text at eq. 4.1 states the two cases the other way
   round, which would loosen the damping exactly when the model is wrong: not followed);
6. a backtracking line search on the step size (001 Sect. 4.1: the step that lowers the
   training error, Armijo condition on the curvature batch, factor 0.8).

``damping="line-search"`` is the thesis's line-search damping instead (Sect. 3.3.3.2,
Algorithm 5, Sect. 4.1): CG updates its quadratic iterate x_q as usual, the network update
x_f = sum_i eps_i alpha_i S_i takes each CG direction with its own step eps_i found by
backtracking from 1 by ``tau``; CG stops once the line search fails more than 5 times.

    >>> x = np.tile([0, 1, 2, 1, 0], 80)
    >>> result = fit("mrnn", x, x[:100], alphabet_size=3, n_units=4, budget=1.0, seq_len=20)
    >>> bool(result.validation_bpc < 0.5 * result.history[0][1])  # bits per symbol
    True
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

# the networks themselves live in .unrolled; hf.forward, hf.loss, ... stay reachable here
from .unrolled import (KINDS, flatten, forward, gauss_newton_product,  # noqa: F401
                       initial_parameters, loss, loss_and_gradient, r_forward, sequences,
                       unflatten, validation_bits)

DAMPINGS = ("tikhonov", "structural", "line-search")


# -- conjugate gradient -------------------------------------------------------------------------


@dataclass
class CGResult:
    x: np.ndarray  # the last iterate
    iterates: list  # (iteration, x) kept for backtracking: i = ceil(1.3^j) and the last
    q: list  # q(x_i) for i = 0..iterations
    iterations: int
    stopped_by: str


def conjugate_gradient(apply_A, b: np.ndarray, x0: np.ndarray | None = None, *,
                       max_iterations: int = 100, k: int = 10, eps: float = 5e-4,
                       tol: float = 1e-12, on_iterate=None) -> CGResult:
    """Minimise q(x) = 1/2 x.A x - b.x (solve A x = b) for symmetric positive (semi)definite
    A given as a product ``apply_A``; 001 Algorithm 3 in its usual residual form.

    Stops after ``max_iterations``, at a residual below ``tol`` |b| or zero curvature, by the thesis's
    progress rule (eq. 4.2): i > k, q(i) < 0 and (q(i) - q(i - k)) / q(i) < k eps; or when
    ``on_iterate(i, x, alpha, direction)`` returns True (line-search damping).

    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]]); b = np.array([1.0, 2.0])
    >>> r = conjugate_gradient(lambda v: A @ v, b)
    >>> bool(np.allclose(A @ r.x, b)), r.iterations
    (True, 2)
    """
    x = np.zeros_like(b) if x0 is None else x0.copy()
    Ax = apply_A(x) if x0 is not None and np.any(x0) else np.zeros_like(b)
    r = b - Ax
    q_values = [float(0.5 * x @ Ax - b @ x)]
    d = r.copy()
    rr = float(r @ r)
    kept, next_keep, j = [], 1, 0
    stopped_by, i = "max-iterations", 0
    limit = tol ** 2 * float(b @ b)
    for i in range(1, max_iterations + 1):
        if rr <= limit:
            stopped_by, i = "converged", i - 1
            break
        Ad = apply_A(d)
        curvature = float(d @ Ad)
        if not curvature > 0:
            stopped_by, i = "non-positive curvature", i - 1
            break
        alpha = rr / curvature
        x = x + alpha * d
        r = r - alpha * Ad
        # q = 1/2 x.Ax - b.x with Ax = b - r
        q_values.append(float(-0.5 * x @ (b + r)))
        if i >= next_keep:
            kept.append((i, x.copy()))
            while next_keep <= i:
                j += 1
                next_keep = math.ceil(1.3 ** j)
        if on_iterate is not None and on_iterate(i, x, alpha, d):
            stopped_by = "line search"
            break
        rr_new = float(r @ r)
        d = r + (rr_new / rr) * d
        rr = rr_new
        span = max(k, int(0.1 * i))
        qi = q_values[i]
        if i > span and qi < 0 and (qi - q_values[i - span]) / qi < span * eps:
            stopped_by = "progress"
            break
    if not kept or kept[-1][0] != i:
        kept.append((i, x.copy()))
    return CGResult(x, kept, q_values, i, stopped_by)


# -- damping ------------------------------------------------------------------------------------


def levenberg_marquardt(damping: float, rho: float, *, boost: float = 1.5,
                        drop: float = 2.0 / 3.0, floor: float = 1e-8) -> float:
    """The damping after a step of reduction ratio ``rho`` (004; Martens 2010): x3/2 below
    1/4 (the quadratic overestimated the progress), x2/3 above 3/4, unchanged between.  A
    non-finite rho (the step broke the network) counts as below 1/4.

    >>> levenberg_marquardt(1.0, 0.1), levenberg_marquardt(1.0, 0.5), levenberg_marquardt(1.0, 0.9)
    (1.5, 1.0, 0.6666666666666666)
    """
    if not np.isfinite(rho) or rho < 0.25:
        return damping * boost
    if rho > 0.75:
        return max(damping * drop, floor)
    return damping


# -- training -----------------------------------------------------------------------------------


@dataclass
class HFConfig:
    """Options of :class:`HFTrainer` (defaults: 001 Sect. 4.1-4.2 where the thesis gives them)."""

    damping: str = "structural"  # "tikhonov", "structural" or "line-search"
    lam: float = 0.01  # Tikhonov lambda (initial; LM-adjusted)
    mu: float = 0.1  # structural mu (initial; LM-adjusted; 001 Sect. 4.5 used 0.1 for mLSTM)
    curvature_fraction: float = 0.25  # of the training sequences, resampled every iteration
    max_cg: int = 100
    cg_k: int = 10
    cg_eps: float = 5e-4
    decay: float = 0.95  # CG warm start: decay x previous solution
    tau: float = 0.5  # line-search damping: step decay
    line_search_tries: int = 10
    line_search_failures: int = 5


class HFTrainer:
    """One :meth:`step` = one HF iteration over the training sequences X (rows).

    >>> x = np.random.default_rng(1).integers(0, 2, 240)
    >>> t = HFTrainer("rnn", initial_parameters("rnn", 3, 2), 3, 2, sequences(x, 12))
    >>> info = t.step()
    >>> bool(loss("rnn", unflatten(t.theta, "rnn", 3, 2), t.X) / t.X.size < info["f"])
    True
    """

    def __init__(self, kind: str, theta: np.ndarray, n: int, A: int, X: np.ndarray,
                 config: HFConfig = HFConfig(), seed: int = 0) -> None:
        if config.damping not in DAMPINGS:
            raise ValueError(f"unknown damping {config.damping!r}; choose from "
                             f"{', '.join(DAMPINGS)}")
        self.kind, self.n, self.A, self.X, self.config = kind, n, A, X, config
        self.theta = np.array(theta, dtype=np.float64)
        self.lam = config.lam
        self.mu = config.mu if config.damping == "structural" else 0.0
        self.rng = np.random.default_rng(seed)
        self.previous = np.zeros_like(self.theta)
        self.n_symbols = X.size
        self.f = loss(kind, self._p(self.theta), X) / self.n_symbols
        self.steps = 0
        self.log: list[dict] = []

    def _p(self, theta):
        return unflatten(theta, self.kind, self.n, self.A)

    def step(self) -> dict:
        kind, config = self.kind, self.config
        total, grad = loss_and_gradient(kind, self._p(self.theta), self.X)
        self.f = total / self.n_symbols
        g = grad / self.n_symbols
        rows = max(1, int(round(config.curvature_fraction * len(self.X))))
        Xc = self.X[np.sort(self.rng.choice(len(self.X), rows, replace=False))]
        p = self._p(self.theta)
        cache = forward(kind, p, Xc)
        nc = Xc.size
        f_c = cache.loss / nc

        def f_batch(delta):
            value = loss(kind, self._p(self.theta + delta), Xc) / nc
            return value if np.isfinite(value) else math.inf

        def apply_A(vec):
            Gv = flatten(gauss_newton_product(kind, p, cache, self._p(vec), self.mu), kind) / nc
            return Gv + self.lam * vec

        info = {"f": self.f, "lam": self.lam, "mu": self.mu}
        if config.damping == "line-search":
            delta = self._line_search_cg(apply_A, g, f_batch, f_c, info)
        else:
            delta = self._damped_cg(apply_A, g, f_batch, f_c, info)
        self.theta = self.theta + delta
        self.steps += 1
        self.log.append(info)
        return info

    def _damped_cg(self, apply_A, g, f_batch, f_c, info):
        config = self.config
        result = conjugate_gradient(apply_A, -g, config.decay * self.previous,
                                    max_iterations=config.max_cg, k=config.cg_k,
                                    eps=config.cg_eps)
        self.previous = result.x
        # Backtracking over the CG iterates (Martens 2010).
        best_i, best_x = result.iterates[-1]
        best_f = f_batch(best_x)
        for i, x in reversed(result.iterates[:-1]):
            value = f_batch(x)
            if value >= best_f:
                break
            best_i, best_x, best_f = i, x, value
        q = result.q[best_i] if best_i < len(result.q) else result.q[-1]
        rho = (best_f - f_c) / q if q < 0 else -math.inf
        self.lam = levenberg_marquardt(self.lam, rho) if self.lam else 0.0
        self.mu = levenberg_marquardt(self.mu, rho) if self.mu else 0.0
        # Backtracking line search on the step size (Armijo on the curvature batch).
        slope, rate = float(g @ best_x), 1.0
        value = best_f
        for _ in range(60):
            if value <= f_c + 1e-2 * rate * slope:
                break
            rate *= 0.8
            value = f_batch(rate * best_x)
        else:
            rate = 0.0
        info.update(cg_iterations=result.iterations, cg_stop=result.stopped_by,
                    chosen_iterate=best_i, rho=rho, rate=rate)
        return rate * best_x

    def _line_search_cg(self, apply_A, g, f_batch, f_c, info):
        config = self.config
        state = {"xf": np.zeros_like(g), "f": f_c, "failures": 0}

        def on_iterate(i, x, alpha, direction):
            step = alpha * direction
            eps = 1.0
            best = f_batch(state["xf"] + step)
            for _ in range(config.line_search_tries):
                trial = f_batch(state["xf"] + config.tau * eps * step)
                if trial < best:
                    best, eps = trial, config.tau * eps
                else:
                    break
            if best < state["f"]:
                state["xf"] = state["xf"] + eps * step
                state["f"] = best
            else:
                state["failures"] += 1
            return state["failures"] > config.line_search_failures

        result = conjugate_gradient(apply_A, -g, config.decay * self.previous,
                                    max_iterations=config.max_cg, k=config.cg_k,
                                    eps=config.cg_eps, on_iterate=on_iterate)
        self.previous = result.x
        info.update(cg_iterations=result.iterations, cg_stop=result.stopped_by,
                    failures=state["failures"], rate=1.0)
        return state["xf"]


class AdamTrainer:
    """BPTT + Adam on the same objective (minibatches of ``batch`` training sequences, the
    gradient norm clipped at ``clip``): the first-order baseline of the HF benchmark.

    >>> x = np.random.default_rng(1).integers(0, 2, 240)
    >>> t = AdamTrainer("lstm", initial_parameters("lstm", 3, 2), 3, 2, sequences(x, 12))
    >>> t.step(); t.steps
    1
    """

    def __init__(self, kind: str, theta: np.ndarray, n: int, A: int, X: np.ndarray, *,
                 lr: float = 2e-3, batch: int = 32, beta1: float = 0.9, beta2: float = 0.999,
                 clip: float = 1.0, seed: int = 0) -> None:
        self.kind, self.n, self.A, self.X = kind, n, A, X
        self.theta = np.array(theta, dtype=np.float64)
        self.lr, self.batch, self.beta1, self.beta2, self.clip = lr, batch, beta1, beta2, clip
        self.m, self.v = np.zeros_like(self.theta), np.zeros_like(self.theta)
        self.rng = np.random.default_rng(seed)
        self.order, self.at, self.steps = self.rng.permutation(len(X)), 0, 0

    def step(self) -> None:
        if self.at >= len(self.order):
            self.order, self.at = self.rng.permutation(len(self.X)), 0
        rows = self.order[self.at:self.at + self.batch]
        self.at += self.batch
        Xb = self.X[np.sort(rows)]
        _, grad = loss_and_gradient(self.kind, unflatten(self.theta, self.kind, self.n, self.A),
                                    Xb)
        grad /= Xb.size
        norm = float(np.linalg.norm(grad))
        if self.clip and norm > self.clip:
            grad *= self.clip / norm
        self.steps += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * grad
        self.v = self.beta2 * self.v + (1 - self.beta2) * grad ** 2
        m_hat = self.m / (1 - self.beta1 ** self.steps)
        v_hat = self.v / (1 - self.beta2 ** self.steps)
        self.theta = self.theta - self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


@dataclass
class Recurrent:
    """A trained recurrent model: ``kind`` and the reference's parameter dict.

    >>> from seqzip.reference import lstm as ref
    >>> m = Recurrent("rnn", ref.initial_parameters("rnn", 2, 3, np.random.default_rng(0)))
    >>> m.n_units, m.alphabet_size, round(m.bits(np.array([0, 1, 2])), 3)  # zero Wo: uniform
    (2, 3, 4.755)
    """

    kind: str
    params: dict

    @property
    def n_units(self) -> int:
        return self.params["R"].shape[0]

    @property
    def alphabet_size(self) -> int:
        return self.params["Wo"].shape[1]

    def bits(self, x: np.ndarray, streams: int = 1) -> float:
        """Bits of ``x`` coded from the zero state (see :func:`validation_bits`)."""
        return validation_bits(self.kind, flatten(self.params, self.kind), self.n_units,
                               self.alphabet_size, x, streams)


@dataclass
class FitResult:
    """A trained model: ``params`` in the reference layout, the validation history as
    (training CPU seconds, validation bits per symbol) and the best point's index."""

    kind: str
    n_units: int
    alphabet_size: int
    params: dict
    validation_bpc: float
    history: list = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0
    optimizer: str = "hf"
    log: list = field(default_factory=list)  # HF: per-iteration CG and damping details

    @property
    def network(self) -> Recurrent:
        return Recurrent(self.kind, self.params)

    def summary(self) -> dict:
        return {"validation_bits_per_symbol": self.validation_bpc, "n_units": self.n_units,
                "optimizer": self.optimizer, "steps": self.steps, "seconds": self.seconds}


def fit(kind: str, data: np.ndarray, validation: np.ndarray, *, alphabet_size: int,
        n_units: int, budget: float, seed: int = 0, optimizer: str = "hf",
        seq_len: int = 100, config: HFConfig | None = None, adam: dict | None = None,
        eval_every: float | None = None, progress=None) -> FitResult:
    """Train ``kind`` on the symbols ``data`` for ``budget`` CPU seconds of training (the
    validation evaluations are not counted) with ``optimizer`` "hf" or "adam"; keep the
    parameters of best validation bits per symbol.

    The history has a point at 0 s and after each HF iteration (for Adam, every
    ``eval_every`` CPU seconds, default budget / 30).
    """
    if optimizer not in ("hf", "adam"):
        raise ValueError("optimizer must be 'hf' or 'adam'")
    if alphabet_size < 1 or n_units < 1:
        raise ValueError("alphabet_size and n_units must be positive")
    X = sequences(data, seq_len)
    validation = np.asarray(validation, dtype=np.int64)
    if not len(validation):
        raise ValueError("empty validation sequence")
    theta = initial_parameters(kind, n_units, alphabet_size, seed)
    if optimizer == "hf":
        trainer = HFTrainer(kind, theta, n_units, alphabet_size, X, config or HFConfig(), seed)
    else:
        trainer = AdamTrainer(kind, theta, n_units, alphabet_size, X, seed=seed, **(adam or {}))

    def score():
        return validation_bits(kind, trainer.theta, n_units, alphabet_size, validation) / len(
            validation)

    spent = 0.0
    best_bpc = score()
    best_theta = trainer.theta.copy()
    history = [(0.0, best_bpc)]
    eval_every = eval_every or budget / 30
    next_eval = eval_every
    while spent < budget:
        start = time.process_time()
        trainer.step()
        spent += time.process_time() - start
        if optimizer == "hf" or spent >= next_eval or spent >= budget:
            next_eval = spent + eval_every
            bpc = score()
            if not np.isfinite(bpc):
                break
            history.append((spent, bpc))
            if progress:
                progress(spent, bpc, trainer.log[-1] if optimizer == "hf" else None)
            if bpc < best_bpc:
                best_bpc, best_theta = bpc, trainer.theta.copy()
    params = {k: v.copy() for k, v in unflatten(best_theta, kind, n_units, alphabet_size).items()}
    return FitResult(kind, n_units, alphabet_size, params, best_bpc, history, trainer.steps,
                     spent, optimizer, getattr(trainer, "log", []))


def fit_bytes(data: bytes, validation: bytes | None = None, *, kind: str = "mlstm",
              optimizer: str = "hf", budget: float = 60.0, units: int | None = None,
              seed: int = 0, seq_len: int = 100) -> tuple[FitResult, list[int], int]:
    """The library call behind ``seqzip train --method KIND --optimizer hf|adam``: as
    :func:`seqzip.research.training.train_bytes` (the last 10% of ``data`` validates when no
    ``validation`` is given; the alphabet is the sorted bytes of both), for the recurrent kinds.

    Raises:
        ValueError: unknown kind or optimizer, too little data.

    >>> result, alphabet, n = fit_bytes(b"abcab" * 100, kind="rnn", budget=0.5, units=4,
    ...                                 seq_len=20)
    >>> alphabet, n, result.network.kind
    ([97, 98, 99], 50, 'rnn')
    """
    if kind not in KINDS:
        raise ValueError(f"unknown model {kind!r}; choose from {', '.join(KINDS)}")
    if validation is None:
        cut = len(data) - max(1, len(data) // 10)
        data, validation = data[:cut], data[cut:]
    if len(data) < 2 or not validation:
        raise ValueError("not enough data to train on")
    alphabet = sorted(set(data) | set(validation))
    lut = np.zeros(256, dtype=np.int64)
    lut[alphabet] = np.arange(len(alphabet))
    seq_len = max(2, min(seq_len, len(data)))
    result = fit(kind, lut[np.frombuffer(data, np.uint8)], lut[np.frombuffer(validation, np.uint8)],
                 alphabet_size=len(alphabet), n_units=units or 64, budget=budget, seed=seed,
                 optimizer=optimizer, seq_len=seq_len)
    return result, alphabet, len(validation)
