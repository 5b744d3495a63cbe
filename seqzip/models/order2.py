"""Adaptive order-2 context model blended down to orders 1 and 0 (PPM method C, no exclusion).

The counts live in the Cython kernel :class:`seqzip._core.Order2Kernel`; this module holds the
config and the level table.

    >>> m = Order2Model(Order2Config(), alphabet_size=3, seed=0)
    >>> for s in [0, 1, 2, 0, 1]:
    ...     _ = m.predict(); m.update(s)
    >>> int(m.predict().argmax())   # after "0 1 2 0 1" comes 2
    2
"""
from __future__ import annotations

from dataclasses import dataclass

from .._core import Order2Kernel
from .base import check_range


@dataclass(frozen=True)
class Order2Config:
    order: int = 2  # longest context, in symbols (0, 1 or 2)
    count_limit: int = 255  # a context's counts are halved when one reaches this (adaptivity)
    escape_weight: float = 1.0  # escape mass per distinct symbol seen (1.0 = PPM method C)

    def __post_init__(self) -> None:
        check_range("order", self.order, 0, 2)
        check_range("count_limit", self.count_limit, 2, 65535)
        check_range("escape_weight", self.escape_weight, 1e-3, 1e3)

    @classmethod
    def for_level(cls, level: int) -> "Order2Config":
        """Levels 1-3 use order 1 (256x less memory), 4-9 order 2 with growing count limits."""
        if level <= 3:
            return cls(order=1, count_limit=255)
        return cls(order=2, count_limit={4: 127, 5: 255, 6: 255, 7: 511, 8: 1023, 9: 1023}[level])


class Order2Model:
    """Order-2 blended context model over an alphabet of ``alphabet_size`` symbols."""

    def __init__(self, config: Order2Config, alphabet_size: int, seed: int) -> None:
        self.config = config
        self.alphabet_size = alphabet_size
        self.seed = seed  # deterministic model: the seed is unused but kept for the protocol
        self._kernel = Order2Kernel(alphabet_size, config.order, config.count_limit,
                                    config.escape_weight)
        # Bind the kernel's methods directly: the coding loop then calls Cython, not Python.
        self.predict = self._kernel.predict
        self.update = self._kernel.update
