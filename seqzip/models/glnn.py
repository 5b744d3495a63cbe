"""Online GLNN: Ollivier's gated leaky network trained with his metrics while coding.

The kernel is :class:`seqzip._online.OnlineGLNN`.  The graph and the initial parameters (000
Sect. 2, eq. 30-33, with uniform symbol frequencies: the only ones both sides know at the start)
come from a splitmix64 stream of the header's seed and plain float arithmetic, so that they are
the same on every platform.

    >>> m = GLNNModel(GLNNConfig(n_units=4, window=8, interval=8), alphabet_size=3, seed=1)
    >>> for s in [0, 1, 2] * 200:
    ...     _ = m.predict(); m.update(s)
    >>> int(m.predict().argmax())   # after "... 1 2" comes 0
    0
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._glnn import py_log
from .._online import OnlineGLNN
from .base import check_range

METRICS = ("qdrbpm", "qdruop", "rbpm", "ruop")


@dataclass(frozen=True)
class GLNNConfig:
    n_units: int = 32  # units besides the always-on unit 0
    connectivity: int = 3  # incoming edges per unit, self-loop included (d)
    window: int = 32  # symbols of truncated BPTT per transition step
    interval: int = 32  # symbols between transition steps
    metric: str = "qdrbpm"  # transition metric: (quasi-diagonal) RBPM or RUOP
    decay: float = 0.9  # running transition metric kept across windows
    eps: float = 1.0  # damping of the transition metric (000 Sect. 2)
    writing_memory: int = 2048  # symbols of memory of the writing-weight Hessian
    writing_eps: float = 3.0  # damping of the writing-weight Hessian (absolute, on running sums
    # over ~writing_memory samples: 0.01 let slow units take huge steps; 3 measured best)
    writing_prior: float = 256.0  # prior curvature, in samples at the uniform distribution
    rate_w: float = 1.0  # learning rate of the writing weights
    rate_tau: float = 0.05  # initial rate of the transition weights (then x1.1 or /2)
    alpha: float = 0.5  # self-loop at start (eq. 31, 33)

    def __post_init__(self) -> None:
        check_range("n_units", self.n_units, 1, 1024)
        check_range("connectivity", self.connectivity, 1, 64)
        check_range("window", self.window, 1, 4096)
        check_range("interval", self.interval, 1, 4096)
        check_range("decay", self.decay, 0.0, 1.0)
        check_range("eps", self.eps, 1e-12, 1e6)
        check_range("writing_memory", self.writing_memory, 1, 1 << 24)
        check_range("writing_eps", self.writing_eps, 1e-12, 1e6)
        check_range("writing_prior", self.writing_prior, 0.0, 1e9)
        check_range("rate_w", self.rate_w, 0.0, 1e3)
        check_range("rate_tau", self.rate_tau, 0.0, 1e3)
        check_range("alpha", self.alpha, 0.01, 10.0)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}")

    @classmethod
    def for_level(cls, level: int) -> "GLNNConfig":
        units = {1: 8, 2: 12, 3: 16, 4: 24, 5: 32, 6: 32, 7: 48, 8: 64, 9: 96}[level]
        return cls(n_units=units)


class _SplitMix64:
    """A tiny PRNG with a fixed, documented output stream (part of the file format)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & (2**64 - 1)

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        return z ^ (z >> 31)

    def uniform(self) -> float:
        return (self.next() >> 11) * 2.0 ** -53

    def below(self, n: int) -> int:
        return self.next() % n  # bias < n / 2**64: irrelevant here


def initial_parameters(config: GLNNConfig, alphabet_size: int, seed: int):
    """Graph and parameters of 000 Sect. 2 (eq. 30-33) with uniform frequencies."""
    rng = _SplitMix64(seed)
    N, A = config.n_units, alphabet_size
    d = min(config.connectivity, N)
    incoming = np.zeros((N + 1, d + 1), dtype=np.int64)
    for j in range(1, N + 1):
        others = [i for i in range(1, N + 1) if i != j]
        for k in range(d - 1):  # partial Fisher-Yates
            pick = k + rng.below(len(others) - k)
            others[k], others[pick] = others[pick], others[k]
        incoming[j, 1:] = [j] + sorted(others[:d - 1])
    tau = np.zeros((N + 1, d + 1, A))
    V0 = np.zeros(N + 1)
    alpha = config.alpha
    for j in range(1, N + 1):
        mu = 1.0 / (j + 1)
        beta = -math.sqrt(alpha * (alpha - mu)) if alpha > mu else 0.0
        u = [rng.uniform() for _ in range(A)]
        mean = sum(u) / A
        for y in range(A):
            tau[j, 0, y] = beta + mu / 4 * (u[y] - mean)
            tau[j, 1, y] = -alpha
        z = beta / alpha
        V0[j] = 0.5 * py_log((1.0 + z) / (1.0 - z))  # atanh, with seqzip's own log
    return incoming, np.zeros((N + 1, A)), tau, V0


class GLNNModel:
    """Online GLNN over an alphabet of ``alphabet_size`` symbols."""

    def __init__(self, config: GLNNConfig, alphabet_size: int, seed: int) -> None:
        self.config = config
        self.alphabet_size = alphabet_size
        self.seed = seed
        incoming, w, tau, V0 = initial_parameters(config, alphabet_size, seed)
        self._kernel = OnlineGLNN(incoming, w, tau, V0, config.window, config.interval,
                                  config.decay, config.eps, 1.0 - 1.0 / config.writing_memory,
                                  config.writing_eps, config.metric.endswith("rbpm"),
                                  not config.metric.startswith("qd"), config.rate_w,
                                  config.rate_tau, config.writing_prior)
        self.predict = self._kernel.predict
        self.update = self._kernel.update

    def stats(self) -> dict:
        return {"steps_kept": self._kernel.steps_kept,
                "steps_undone": self._kernel.steps_undone, "rate_tau": self._kernel.rate_tau}
