"""Slow, obvious pure-Python/NumPy references of the models, for tests.

Each mirrors a Cython kernel line by line in meaning, not in layout, so the tests can check the
kernels against them (and they can be read to understand the kernels).

    >>> ref = Order2Reference(alphabet_size=3, order=2, count_limit=255, escape_weight=1.0)
    >>> p = ref.predict(); ref.update(0)
    >>> [float(x) for x in ref.predict()]   # orders 0, 1, 2 each blend toward the "0" seen
    [0.875, 0.0625, 0.0625]
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np


class Order2Reference:
    """PPM method C blending from order 2 to 1 to 0, counts in dictionaries."""

    def __init__(self, alphabet_size: int, order: int, count_limit: int,
                 escape_weight: float) -> None:
        self.A, self.order = alphabet_size, order
        self.limit, self.escape_weight = count_limit, escape_weight
        self.counts = [defaultdict(lambda: np.zeros(alphabet_size, dtype=np.int64))
                       for _ in range(order + 1)]
        self.history: list[int] = []

    def _context(self, k: int) -> tuple[int, ...]:
        padded = [0, 0] + self.history  # the kernels start in context (0, 0)
        return tuple(padded[len(padded) - k:]) if k else ()

    def predict(self) -> np.ndarray:
        c0 = self.counts[0][()]
        p = (c0 + 1.0) / (c0.sum() + self.A)
        for k in range(1, self.order + 1):
            c = self.counts[k][self._context(k)]
            if c.sum() == 0:
                continue
            escape = self.escape_weight * np.count_nonzero(c)
            p = (c + escape * p) / (c.sum() + escape)
        return p

    def update(self, symbol: int) -> None:
        for k in range(self.order + 1):
            c = self.counts[k][self._context(k)]
            c[symbol] += 1
            if c[symbol] >= self.limit:
                c //= 2
        self.history.append(symbol)
