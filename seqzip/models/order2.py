"""Adaptive order-2 context model blended down to orders 1 and 0 (PPM method C, no exclusion).

The counts live in the kernel :class:`seqzip._kernels.order2.Order2Kernel`; this module holds
the config and the level table.

    >>> m = Order2Model(Order2Config(), alphabet=b"abc", seed=0)
    >>> for s in [0, 1, 2, 0, 1]:
    ...     _ = m.predict(); m.update(s)
    >>> int(m.predict().argmax())   # after "0 1 2 0 1" comes 2
    2
"""
from __future__ import annotations

from dataclasses import dataclass

from .._kernels.order2 import Order2Kernel
from .base import Model, check_range


@dataclass(frozen=True)
class Order2Config:
    """See the module docstring.

        >>> Order2Config.for_level(1).order, Order2Config(order=3)
        Traceback (most recent call last):
        ...
        ValueError: order must be in [0, 2], got 3
    """
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

    def memory_bytes(self, alphabet_size: int) -> int:
        """Bytes the kernel allocates for this config (its tables; a bound, checked by tests)."""
        A = alphabet_size
        return 2 * (A + A ** 2 * (self.order >= 1) + A ** 3 * (self.order >= 2)) + \
            8 * (A * (self.order >= 1) + A * A * (self.order >= 2)) + 16 * A


class Order2Model(Model):
    """Order-2 blended context model over ``alphabet`` (deterministic: the seed is unused).

        >>> m = Order2Model(Order2Config(), alphabet=b"ab", seed=0)
        >>> m.update(0); m.predict().round(3).tolist()
        [0.917, 0.083]
    """

    config_class = Order2Config

    def make_kernel(self) -> Order2Kernel:
        c = self.config
        return Order2Kernel(self.alphabet_size, c.order, c.count_limit, c.escape_weight)
