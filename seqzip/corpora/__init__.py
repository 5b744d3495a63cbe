"""Generated corpora with exact truth (installed as ``seqzip.corpora``).

Every generator is seeded and returns a :class:`Sample`: the bytes and, where the generating
model is known, the exact log2-probability of those bytes under it, so that a report can show
regret = model bits - true bits.  Third-party corpora are never stored here: see
``corpora/fetch.py`` and the ``SEQZIP_CORPORA`` directory.

    >>> s = generate("markov2", 1000, seed=1)
    >>> len(s.data), round(s.true_bits - true_log2_loss("markov2", s.data, seed=1), 9)
    (1000, 0.0)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Sample:
    name: str
    data: bytes
    true_bits: float | None  # -log2 P(data) under the generating model, when known


@dataclass(frozen=True)
class Generator:
    name: str
    make: Callable[[int, int], bytes]  # (n units, seed) -> data
    true_bits: Callable[[bytes, int], float] | None  # (data, seed) -> -log2 P(data)
    summary: str
    unit: str = "bytes"  # what n counts
    default_n: int = 100_000  # the size the papers use


GENERATORS: dict[str, Generator] = {}


def register(gen: Generator) -> None:
    GENERATORS[gen.name] = gen


def generate(name: str, n: int | None = None, seed: int = 0) -> Sample:
    """``n`` units (bytes, lines, bars or blocks: ``GENERATORS[name].unit``) of corpus ``name``.

    ``n=None`` gives the size used in the papers.  The seed fixes every random choice.
    """
    gen = _lookup(name)
    if n is None:
        n = gen.default_n
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    data = gen.make(n, seed)
    truth = gen.true_bits(data, seed) if gen.true_bits else None
    return Sample(name, data, truth)


def true_log2_loss(name: str, data: bytes, seed: int = 0) -> float:
    """-log2 P(data) under generator ``name`` with ``seed`` (exact, in bits)."""
    gen = _lookup(name)
    if gen.true_bits is None:
        raise ValueError(f"corpus {name!r} has no known true model")
    return gen.true_bits(data, seed)


def _lookup(name: str) -> Generator:
    try:
        return GENERATORS[name]
    except KeyError:
        raise ValueError(f"unknown corpus {name!r}; choose from {', '.join(sorted(GENERATORS))}"
                         ) from None


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


# --- Ollivier 000, Sect. 4: the four synthetic problems ----------------------------------------
#
# Each problem is a *choice program*: a function that makes every random decision through a
# ``choices`` object (``uniform(k)``, ``bernoulli(p)``) and returns the text.  Sampling drives it
# with a seeded RNG; the tests drive it with an enumerator that walks every choice path of tiny
# instances, to check the exact log-probabilities below, which parse the text back into those
# choices (summing over hidden ones).  Text the program cannot produce has infinite bits.


class Sampler:
    """The ``choices`` object used for sampling."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def uniform(self, k: int) -> int:
        return int(self.rng.integers(k))

    def bernoulli(self, p: float) -> bool:
        return bool(self.rng.random() < p)


@dataclass(frozen=True)
class InsertionsParams:
    letters: str = "abcdefghijklmnopqrstuvwxyz"  # the main sequence of each line
    digits: str = "0123456789"  # the inserted sub-block
    capitals: str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # drawn inside sub-sub-blocks
    n_random: int = 9  # random capitals per sub-sub-block
    p_insert: float = 1 / 26  # sub-block after each letter
    p_sub: float = 1 / 5  # sub-sub-block after each digit


def insertions_program(choices, n_lines: int, prm: InsertionsParams = InsertionsParams()) -> str:
    out = []
    for _ in range(n_lines):
        for letter in prm.letters:
            out.append(letter)
            if choices.bernoulli(prm.p_insert):
                out.append("(")
                for digit in prm.digits:
                    out.append(digit)
                    if choices.bernoulli(prm.p_sub):
                        out.append("[" + "".join(prm.capitals[choices.uniform(len(prm.capitals))]
                                                 for _ in range(prm.n_random)) + "]")
                out.append(")")
        out.append("\n")
    return "".join(out)


def insertions_bits(text: str, prm: InsertionsParams = InsertionsParams()) -> float:
    bits, i, n = 0.0, 0, len(text)
    capital_bits = prm.n_random * math.log2(len(prm.capitals))

    def at(j: int) -> str:
        return text[j] if j < n else ""

    while i < n:
        for letter in prm.letters:
            if at(i) != letter:
                return math.inf
            i += 1
            if at(i) != "(":
                bits -= math.log2(1 - prm.p_insert)
                continue
            bits -= math.log2(prm.p_insert)
            i += 1
            for digit in prm.digits:
                if at(i) != digit:
                    return math.inf
                i += 1
                if at(i) != "[":
                    bits -= math.log2(1 - prm.p_sub)
                    continue
                block = text[i + 1:i + 1 + prm.n_random]
                if len(block) != prm.n_random or any(c not in prm.capitals for c in block) \
                        or at(i + 1 + prm.n_random) != "]":
                    return math.inf
                bits += -math.log2(prm.p_sub) + capital_bits
                i += prm.n_random + 2
            if at(i) != ")":
                return math.inf
            i += 1
        if at(i) != "\n":
            return math.inf
        i += 1
    return bits


register(Generator("insertions",
                   lambda n, seed: insertions_program(Sampler(np.random.default_rng([seed, 7])),
                                                      n).encode("ascii"),
                   lambda data, seed: insertions_bits(data.decode("latin-1")),
                   "alphabet with nested insertions (Ollivier 000, Example 1)", "lines", 1000))


@dataclass(frozen=True)
class MusicParams:
    chords: tuple = (("I", "ceg"), ("IV", "cfa"), ("V", "gbd"))
    cycle: tuple = ("I", "IV", "I", "V", "I", "IV", "V", "I")  # harmony of successive bars
    rhythms: tuple = (("4", "4", "4"), ("2", "4"), ("4.", "8", "4"), ("2.",), ("4", "4", "8", "8"))


def _chord(prm: MusicParams, bar: int, phase: int) -> str:
    return dict(prm.chords)[prm.cycle[(phase + bar) % len(prm.cycle)]]


def music_program(choices, n_bars: int, prm: MusicParams = MusicParams()) -> str:
    """Bars "p4 p4 p4 |\n": the harmony follows the cycle from a hidden random phase, pitches
    are uniform in the bar's chord, the rhythm is uniform and independent of the harmony."""
    phase = choices.uniform(len(prm.cycle))
    bars = []
    for b in range(n_bars):
        chord = _chord(prm, b, phase)
        rhythm = prm.rhythms[choices.uniform(len(prm.rhythms))]
        bars.append(" ".join(chord[choices.uniform(len(chord))] + value for value in rhythm)
                    + " |\n")
    return "".join(bars)


def music_bits(text: str, prm: MusicParams = MusicParams()) -> float:
    """-log2 P: rhythm and pitch choices given the phase, summed over the hidden phases."""
    if not text:
        return 0.0
    lines = text.split("\n")
    if lines[-1] != "":
        return math.inf
    bits = 0.0
    bars = []
    for line in lines[:-1]:
        tokens = line.split(" ")
        notes = tokens[:-1]
        values = tuple(note[1:] for note in notes)
        if tokens[-1] != "|" or values not in prm.rhythms or any(len(t) < 2 for t in notes):
            return math.inf
        bits += math.log2(len(prm.rhythms))
        bars.append([note[0] for note in notes])
    return bits + _music_bits_log(bars, prm)


def _music_bits_log(bars: list, prm: MusicParams) -> float:
    """-log2 of the pitch probability summed over phases, in the log domain (2,700 bars of
    pitch probabilities underflow float64)."""
    logs = []
    for phase in range(len(prm.cycle)):
        total = -math.log2(len(prm.cycle))
        for b, pitches in enumerate(bars):
            chord = _chord(prm, b, phase)
            if any(pitch not in chord for pitch in pitches):
                break
            total -= len(pitches) * math.log2(len(chord))
        else:
            logs.append(total)
    if not logs:
        return math.inf
    top = max(logs)
    return -(top + math.log2(sum(2.0 ** (v - top) for v in logs)))


register(Generator("music",
                   lambda n, seed: music_program(Sampler(np.random.default_rng([seed, 11])),
                                                 n).encode("ascii"),
                   lambda data, seed: music_bits(data.decode("latin-1")),
                   "synthetic waltz bars with a hidden harmony cycle (Ollivier 000, Example 3)",
                   "bars", 2700))


def xor_program(choices, n_lines: int, t: int = 100) -> str:
    """Distant XOR: T' (uniform in [T, 1.1T]) random bits, each after a space or an "X"; the
    two X's stand in [0, T'/10) and [T'/10, T'/2); then "=", the XOR of the two marked bits,
    and a newline."""
    lengths = range(t, int(1.1 * t) + 1)
    out = []
    for _ in range(n_lines):
        length = lengths[choices.uniform(len(lengths))]
        first = choices.uniform(length // 10)
        second = length // 10 + choices.uniform(length // 2 - length // 10)
        bits = [choices.uniform(2) for _ in range(length)]
        line = "".join(("X" if i in (first, second) else " ") + str(b) for i, b in
                       enumerate(bits))
        out.append(f"{line}={bits[first] ^ bits[second]}\n")
    return "".join(out)


def xor_bits(text: str, t: int = 100) -> float:
    lengths = range(t, int(1.1 * t) + 1)
    if text and not text.endswith("\n"):
        return math.inf
    total = 0.0
    for line in text.split("\n")[:-1]:
        body, sep, result = line.partition("=")
        length = len(body) // 2
        if not sep or len(body) % 2 or length not in lengths or result not in ("0", "1"):
            return math.inf
        if any(body[2 * i] not in " X" or body[2 * i + 1] not in "01" for i in range(length)):
            return math.inf
        marks = [i for i in range(length) if body[2 * i] == "X"]
        if len(marks) != 2 or not (marks[0] < length // 10 <= marks[1] < length // 2):
            return math.inf
        if int(body[2 * marks[0] + 1]) ^ int(body[2 * marks[1] + 1]) != int(result):
            return math.inf
        total += (math.log2(len(lengths)) + math.log2(length // 10)
                  + math.log2(length // 2 - length // 10) + length)
    return total


def xor_scored_positions(data: bytes) -> np.ndarray:
    """Indices of the bits distant XOR scores: those right after "=" (chi_t of 000, eq. 4-5)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    return np.flatnonzero(arr[:-1] == ord("=")) + 1


register(Generator("xor",
                   lambda n, seed: xor_program(Sampler(np.random.default_rng([seed, 13])),
                                               n).encode("ascii"),
                   lambda data, seed: xor_bits(data.decode("latin-1")),
                   "distant XOR over lines of ~100 bits (Ollivier 000, Example 2)", "lines",
                   10_000))


def anbn_program(choices, n_blocks: int, low: int = 1024, high: int = 2048) -> str:
    """For each block a line of n a's, then a line of n b's; n uniform in [low, high)."""
    out = []
    for _ in range(n_blocks):
        n = low + choices.uniform(high - low)
        out.append("a" * n + "\n" + "b" * n + "\n")
    return "".join(out)


def anbn_bits(text: str, low: int = 1024, high: int = 2048) -> float:
    lines = text.split("\n")
    if lines[-1] != "" or (len(lines) - 1) % 2:
        return math.inf
    for a, b in zip(lines[0:-1:2], lines[1:-1:2]):
        if a != "a" * len(a) or b != "b" * len(a) or not low <= len(a) < high:
            return math.inf
    return (len(lines) - 1) // 2 * math.log2(high - low)


register(Generator("anbn",
                   lambda n, seed: anbn_program(Sampler(np.random.default_rng([seed, 17])),
                                                n).encode("ascii"),
                   lambda data, seed: anbn_bits(data.decode("latin-1")),
                   "blocks of n a's then n b's, n uniform in [1024, 2048) (Ollivier 000, "
                   "Example 4)", "blocks", 10))
