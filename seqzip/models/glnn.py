"""Online GLNN: Ollivier's gated leaky network trained with his metrics while coding.

The kernel is :class:`seqzip._kernels.glnn.OnlineGLNN` (on the base of
:mod:`seqzip._kernels.online`).  The graph and the initial parameters (000 Sect. 2, eq. 30-33,
with uniform symbol frequencies: the only ones both sides know at the start) come from
:func:`seqzip._kernels.glnn.initial_parameters`: splitmix64 of the header's seed and plain float
arithmetic, the same on every platform.

    >>> m = GLNNModel(GLNNConfig(n_units=4, window=8, interval=8), alphabet=b"abc", seed=1)
    >>> for s in [0, 1, 2] * 200:
    ...     _ = m.predict(); m.update(s)
    >>> int(m.predict().argmax())   # after "... 1 2" comes 0
    0
"""
from __future__ import annotations

from dataclasses import dataclass

from .._kernels import glnn as kernels
from .base import Model, check_output_layer, check_range
from .experts import experts_memory, make_experts, parse_experts

METRICS = ("qdrbpm", "qdruop", "rbpm", "ruop")


@dataclass(frozen=True)
class GLNNConfig:
    """See the module docstring.

        >>> GLNNConfig.for_level(1).n_units, GLNNConfig(metric="nope")
        Traceback (most recent call last):
        ...
        ValueError: metric must be one of ('qdrbpm', 'qdruop', 'rbpm', 'ruop')
    """
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
        # Ranges: what the levels use (up to 32 units, d = 3, window / interval = 8) with a
        # margin of 2x in units and about 3x in connectivity.  A header is untrusted input: these
        # bound the memory and the work per symbol a stream can ask for (benchmarks/hostile.py).
        check_range("n_units", self.n_units, 1, 64)
        check_range("connectivity", self.connectivity, 1, 8)
        check_range("window", self.window, 1, 256)
        check_range("interval", self.interval, 1, 4096)
        if self.window > 8 * self.interval:
            raise ValueError("window must be at most 8 times the interval")
        check_range("decay", self.decay, 0.0, 1.0)
        check_range("eps", self.eps, 1e-12, 1e6)
        check_output_layer(self)
        check_range("rate_w", self.rate_w, 0.0, 1e3)
        check_range("rate_tau", self.rate_tau, 0.0, 1e3)
        check_range("rate_tau_max", self.rate_tau_max, 0.0, 1e3)
        check_range("alpha", self.alpha, 0.01, 10.0)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}")
        parse_experts(self.experts)

    def memory_bytes(self, alphabet_size: int) -> int:
        """Bytes the kernel and its experts allocate for this config (a bound)."""
        N, A = self.n_units, alphabet_size
        K = min(self.connectivity, N) + 1
        network = 8 * ((N + 1) * A * (4 + 2 * K * K + 2 * K) + self.window * (N + 1 + A)
                       + 8 * (N + 1) * 8 + 4 * A)
        window_pass = 8 * (self.window + 1) * (N + 1) * 6 + 8 * self.window * A * 2
        return network + window_pass + experts_memory(self.experts, alphabet_size)

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


def initial_parameters(config: GLNNConfig, alphabet_size: int, seed: int):
    """``(incoming, w, tau, V0)`` of 000 Sect. 2 for ``config`` (see the kernel's function).

        >>> incoming, w, tau, V0 = initial_parameters(GLNNConfig(n_units=4), 3, seed=0)
        >>> incoming.shape, w.shape, tau.shape, V0.shape
        ((5, 4), (5, 3), (5, 4, 3), (5,))
    """
    return kernels.initial_parameters(config.n_units, config.connectivity, config.alpha,
                                      alphabet_size, seed)


class GLNNModel(Model):
    """Online GLNN over ``alphabet``.

        >>> m = GLNNModel(GLNNConfig.for_level(1), alphabet=b"ab", seed=0)
        >>> for s in [0, 1] * 100:
        ...     m.update(s)
        >>> bool(m.predict()[0] > 0.8)
        True
    """

    config_class = GLNNConfig

    def make_kernel(self) -> kernels.OnlineGLNN:
        c = self.config
        incoming, w, tau, V0 = initial_parameters(c, self.alphabet_size, self.seed)
        return kernels.OnlineGLNN(c, incoming, w, tau, V0,
                                  make_experts(c.experts, self.alphabet, self.seed))

    def expert_weights(self) -> list[float]:
        return self.kernel.expert_weights()[0].round(3).tolist()

    def stats(self) -> dict:
        return {**super().stats(), "steps_kept": self.kernel.steps_kept,
                "steps_undone": self.kernel.steps_undone, "rate_tau": self.kernel.rate_tau,
                "expert_weights": self.expert_weights()}
