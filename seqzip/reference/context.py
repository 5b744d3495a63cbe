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
    """PPM method C blending from order 2 to 1 to 0, counts in dictionaries.

        >>> r = Order2Reference(2, 2, 255, 1.0)
        >>> r.update(0); r.predict().round(3).tolist()
        [0.917, 0.083]
    """

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


class CTWReference:
    """CTW computed from its recursive definition with exact fractions (tiny inputs only).

    For each decision node n of the binary decomposition, the bits coded at n are grouped by
    their context (the previous ``depth`` symbols; before the start of the data the context is
    padded with a start marker, -1).  The block probability is
    Pw(s) = Pe(s) at depth D, else Pe(s)/2 + prod_c Pw(s c)/2, with Pe the KT (or zero-redundancy)
    block estimate; the next-symbol probability is the ratio of the products of root Pw's with
    and without the candidate symbol, normalised over the alphabet.

        >>> r = CTWReference(2, depth=1)
        >>> [float(v) for v in r.predict()]
        [0.5, 0.5]
    """

    def __init__(self, alphabet_size: int, depth: int, alpha: float = 0.5,
                 zero_redundancy: bool = False) -> None:
        from fractions import Fraction

        self.F = Fraction
        self.A, self.D = alphabet_size, depth
        self.alpha = Fraction(alpha)
        self.zr = zero_redundancy
        self.bits = max(1, (alphabet_size - 1).bit_length()) if alphabet_size > 1 else 0
        self.history: list[int] = []

    def _pe(self, zeros: int, ones: int):
        F, a = self.F, self.alpha
        p = F(1)
        for i in range(zeros):
            p *= (i + a) / (i + 2 * a)
        for j in range(ones):
            p *= (j + a) / (zeros + j + 2 * a)
        if self.zr and zeros + ones > 0:
            p = p / 2 + F(int(ones == 0), 4) + F(int(zeros == 0), 4)
        return p

    def _pw(self, coded: list[tuple[tuple[int, ...], int]], d: int):
        zeros = sum(1 for _, bit in coded if bit == 0)
        pe = self._pe(zeros, len(coded) - zeros)
        if d == self.D:
            return pe
        children: dict[int, list] = {}
        for context, bit in coded:
            children.setdefault(context[d], []).append((context, bit))
        product = self.F(1)
        for group in children.values():
            product *= self._pw(group, d + 1)
        return pe / 2 + product / 2

    def _root_product(self, sequence: list[int]):
        per_node: dict[int, list] = {}
        for t, symbol in enumerate(sequence):
            past = sequence[:t][::-1] + [-1] * self.D
            context = tuple(past[:self.D])
            node = 1
            for k in range(self.bits):
                bit = (symbol >> (self.bits - 1 - k)) & 1
                per_node.setdefault(node, []).append((context, bit))
                node = 2 * node + bit
        product = self.F(1)
        for coded in per_node.values():
            product *= self._pw(coded, 0)
        return product

    def predict(self) -> np.ndarray:
        base = self._root_product(self.history)
        joint = [self._root_product(self.history + [x]) / base for x in range(self.A)]
        total = sum(joint)
        return np.array([float(p / total) for p in joint])

    def update(self, symbol: int) -> None:
        self.history.append(symbol)
