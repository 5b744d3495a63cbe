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
from .experts import GATE_PRIOR, ExpertMixed, initial_gates, make_experts, parse_experts

METRICS = ("qdrbpm", "qdruop", "rbpm", "ruop")


@dataclass(frozen=True)
class GLNNConfig:
    n_units: int = 16  # units besides the always-on unit 0
    connectivity: int = 3  # incoming edges per unit, self-loop included (d)
    window: int = 32  # symbols of truncated BPTT per transition step
    interval: int = 32  # symbols between transition steps
    metric: str = "qdrbpm"  # transition metric: (quasi-diagonal) RBPM or RUOP
    decay: float = 0.999  # running transition metric kept across windows.  Regret on
    # insertions, 32 units: 0.9 -> 13,235, 0.99 -> 11,815, 0.999 -> 10,676; 16 units: 0.99 ->
    # 11,428, 0.999 -> 10,496.  Text (alice29.txt) unchanged.
    eps: float = 1.0  # damping of the transition metric (000 Sect. 2)
    writing_memory: int = 2048  # symbols of memory of the writing-weight Hessian
    writing_eps: float = 3.0  # damping of the writing-weight Hessian (absolute, on running sums
    # over ~writing_memory samples: 0.01 let slow units take huge steps; 3 measured best)
    writing_prior: float = 256.0  # prior curvature, in samples at the uniform distribution
    rate_w: float = 0.1  # learning rate of the writing weights.  1.0 was best without experts;
    # with ctw8+order2 and 16 units on alice29.txt: 1.0 -> 2.0702, 0.3 -> 2.0550, 0.1 -> 2.0531
    rate_tau: float = 0.05  # initial rate of the transition weights (then x1.1 or /2)
    rate_tau_max: float = 1.0  # cap on that rate (uncapped, it overflowed on saturated nets)
    alpha: float = 0.5  # self-loop at start (eq. 31, 33)
    experts: str = "ctw8+order2"  # context models whose log-probabilities join the logits, "+"-joined:
    # "ctwD" (CTW of depth D, its default estimator), "order2"; "" for the GLNN alone
    rate_beta: float = 1.0  # learning rate of the experts' weights
    beta_eps: float = 300.0  # damping of the gates' curvature.  1 let the gates explode on
    # near-deterministic data (a^n b^n: beta 256 and -114, regret 1,006); 300 costs nothing on
    # text (alice29.txt 2.0518 -> 2.0516 bpc with 8 units)

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
        check_range("rate_tau_max", self.rate_tau_max, 0.0, 1e3)
        check_range("alpha", self.alpha, 0.01, 10.0)
        check_range("rate_beta", self.rate_beta, 0.0, 1e3)
        check_range("beta_eps", self.beta_eps, 1e-12, 1e6)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}")
        parse_experts(self.experts)

    @classmethod
    def for_level(cls, level: int) -> "GLNNConfig":
        """Levels trade speed for ratio (benchmarks/online_glnn.py measures them all)."""
        units, experts, window, interval = {
            1: (4, "order2", 32, 128),
            2: (4, "ctw3", 32, 64),
            3: (4, "ctw4+order2", 32, 64),
            4: (8, "ctw6+order2", 32, 32),
            5: (8, "ctw8+order2", 32, 64),
            6: (16, "ctw8+order2", 32, 32),
            7: (24, "ctw10+order2", 32, 32),
            8: (32, "ctw12+order2", 32, 16),
            9: (32, "ctw16+ctw4+order2", 64, 8),
        }[level]
        return cls(n_units=units, experts=experts, window=window, interval=interval)


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


class GLNNModel(ExpertMixed):
    """Online GLNN over an alphabet of ``alphabet_size`` symbols."""

    def __init__(self, config: GLNNConfig, alphabet_size: int, seed: int) -> None:
        self.config = config
        self.alphabet_size = alphabet_size
        self.seed = seed
        incoming, w, tau, V0 = initial_parameters(config, alphabet_size, seed)
        experts = make_experts(config.experts, alphabet_size, seed)
        self._bind(OnlineGLNN(incoming, w, tau, V0, config.window, config.interval,
                              config.decay, config.eps, 1.0 - 1.0 / config.writing_memory,
                              config.writing_eps, config.metric.endswith("rbpm"),
                              not config.metric.startswith("qd"), config.rate_w,
                              config.rate_tau, config.writing_prior, initial_gates(experts),
                              config.beta_eps, config.rate_beta, GATE_PRIOR,
                              config.rate_tau_max),
                   experts)

    def stats(self) -> dict:
        return {"steps_kept": self._kernel.steps_kept,
                "steps_undone": self._kernel.steps_undone, "rate_tau": self._kernel.rate_tau,
                "expert_weights": self.expert_weights()}
