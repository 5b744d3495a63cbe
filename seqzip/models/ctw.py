"""Context-tree weighting over bytes: the baseline of Ollivier's Table 1, usable as a model.

The kernel is :class:`seqzip._kernels.ctw.CTWKernel`; this module holds the config and levels.

    >>> m = CTWModel(CTWConfig(depth=4), alphabet=b"abc", seed=0)
    >>> for s in [0, 1, 2] * 20:
    ...     _ = m.predict(); m.update(s)
    >>> int(m.predict().argmax())   # after "... 1 2" comes 0
    0
"""
from __future__ import annotations

from dataclasses import dataclass

from .._kernels.ctw import CTWKernel
from .base import CTW_MAX_DEPTH as MAX_DEPTH
from .base import CTW_MAX_MEMORY_MB as MAX_MEMORY_MB
from .base import Model, check_range

ESTIMATORS = ("kt", "zr")
WHEN_FULL = ("freeze", "reset")


@dataclass(frozen=True)
class CTWConfig:
    """See the module docstring.

        >>> CTWConfig.for_level(1).depth < CTWConfig.for_level(9).depth
        True
    """
    depth: int = 8  # context length in symbols (chosen by benchmarks/ctw_sweep.py)
    alpha: float = 0.125  # estimator (count + alpha) / (total + 2 alpha); 0.5 = Krichevsky-
    # Trofimov.  1/8 measured 0.05 bpc better than 1/2 on English text (the rare-symbol mass
    # of KT is too large for text contexts, as Willems et al. also note).
    estimator: str = "kt"  # "kt", or "zr": Willems' zero-redundancy estimator built on it
    count_limit: int = 65535  # counts are halved when their sum reaches this.  65535 (only to
    # avoid overflow) is textbook CTW: halving at 1023 cost 26 bits per 10 a^n b^n blocks and
    # gained < 0.001 bpc on text (benchmarks/ctw_sweep.py).
    memory_mb: int = 512  # budget of the context tree, MiB
    when_full: str = "freeze"  # "freeze": stop adding contexts; "reset": start a new tree

    def __post_init__(self) -> None:
        # Ranges: the levels use depths 2-16 and 512 MiB; a header may ask for up to 1.5x the
        # depth and 2x the memory (it is untrusted input).
        check_range("depth", self.depth, 0, MAX_DEPTH)
        check_range("alpha", self.alpha, 1e-4, 16.0)
        check_range("count_limit", self.count_limit, 2, 65535)
        check_range("memory_mb", self.memory_mb, 1, MAX_MEMORY_MB)
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}")
        if self.when_full not in WHEN_FULL:
            raise ValueError(f"when_full must be one of {WHEN_FULL}")

    @classmethod
    def for_level(cls, level: int) -> "CTWConfig":
        return cls(depth={1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 8, 7: 10, 8: 12, 9: 16}[level])

    def memory_bytes(self, alphabet_size: int) -> int:
        """The budget (the tree never grows past it) plus the kernel's fixed tables."""
        return (self.memory_mb << 20) + (1 << 20)


class CTWModel(Model):
    """CTW over ``alphabet`` (deterministic; the seed is unused).

        >>> m = CTWModel(CTWConfig(depth=2), alphabet=b"ab", seed=0)
        >>> for s in [0, 1] * 50:
        ...     m.update(s)
        >>> bool(m.predict()[0] > 0.9)
        True
    """

    config_class = CTWConfig

    def make_kernel(self) -> CTWKernel:
        c = self.config
        return CTWKernel(self.alphabet_size, c.depth, c.alpha, int(c.estimator == "zr"),
                         c.count_limit, c.memory_mb << 20, int(c.when_full == "reset"))

    def memory_used(self) -> int:
        return self.kernel.memory_used()

    def stats(self) -> dict:
        return {**super().stats(), **self.kernel.stats()}
