"""An order-2 Markov source over 16 letters (exact truth) and pseudo-English sentences of
Zipfian words.

    >>> from seqzip.corpora import generate
    >>> len(generate("text", 500, seed=2).data)
    500
"""
from __future__ import annotations

import math

import numpy as np

from .registry import Generator, register


# --- order-2 Markov source over 16 letters ----------------------------------------------------

_M2_LETTERS = 16


def _markov2_table(seed: int) -> np.ndarray:
    """Transition probabilities, shape (16, 16, 16): [previous-2, previous-1, next]."""
    rng = np.random.default_rng([seed, 2])
    return rng.dirichlet(np.full(_M2_LETTERS, 0.3), size=(_M2_LETTERS, _M2_LETTERS))


def _markov2_make(n: int, seed: int) -> bytes:
    table = _markov2_table(seed)
    cumulative = np.cumsum(table, axis=2)
    uniforms = np.random.default_rng([seed, 3]).random(n)
    out = bytearray(n)
    a = b = 0  # the chain starts in context (0, 0)
    for i in range(n):
        c = min(int(np.searchsorted(cumulative[a, b], uniforms[i], side="right")),
                _M2_LETTERS - 1)
        out[i] = ord("a") + c
        a, b = b, c
    return bytes(out)


def _markov2_bits(data: bytes, seed: int) -> float:
    table = _markov2_table(seed)
    symbols = np.frombuffer(data, dtype=np.uint8).astype(np.int64) - ord("a")
    if symbols.size and (symbols.min() < 0 or symbols.max() >= _M2_LETTERS):
        return math.inf
    prev2 = np.concatenate([[0, 0], symbols])[:-2]
    prev1 = np.concatenate([[0], symbols])[:-1]
    return float(-np.log2(table[prev2, prev1, symbols]).sum())


register(Generator("markov2", _markov2_make, _markov2_bits,
                   "order-2 Markov chain over 16 letters, Dirichlet(0.3) transitions",
                   "bytes", 100_000))


# --- pseudo-English text ----------------------------------------------------------------------

_ONSETS = ["", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "w", "st", "th",
           "sh", "ch", "br", "tr", "pl"]
_VOWELS = ["a", "e", "i", "o", "u", "ea", "ou", "ai", "ee"]
_CODAS = ["", "", "n", "r", "s", "t", "l", "nd", "ng", "st", "ck"]


def _text_make(n: int, seed: int) -> bytes:
    """Sentences of Zipf-distributed pseudo-words (structure like prose; no exact truth)."""
    rng = np.random.default_rng([seed, 5])
    words = []
    seen = set()
    while len(words) < 3000:
        syllables = 1 + min(int(rng.geometric(0.45)) - 1, 3)
        word = "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
                       + _CODAS[rng.integers(len(_CODAS))] for _ in range(syllables))
        if word not in seen:
            seen.add(word)
            words.append(word)
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.1
    weights /= weights.sum()
    out: list[str] = []
    size = 0
    while size < n:
        length = 4 + int(rng.integers(14))
        picks = rng.choice(len(words), size=length, p=weights)
        sentence = " ".join(words[i] for i in picks)
        sentence = sentence[0].upper() + sentence[1:] + (". " if rng.random() < 0.8 else "? ")
        if rng.random() < 0.15:
            sentence += "\n"
        out.append(sentence)
        size += len(sentence)
    return "".join(out).encode("ascii")[:n]


register(Generator("text", _text_make, None, "pseudo-English sentences of Zipfian words"))
