"""The four synthetic problems of Ollivier 000, Sect. 4 (alphabet with insertions, synthetic
music, distant XOR, a^n b^n), each with its exact true log2-probability.

    >>> from seqzip.corpora import generate
    >>> generate("xor", 3, seed=1).true_bits > 0
    True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .registry import Generator, register


# --- Ollivier 000, Sect. 4: the four synthetic problems ----------------------------------------
#
# Each problem is a *choice program*: a function that makes every random decision through a
# ``choices`` object (``uniform(k)``, ``bernoulli(p)``) and returns the text.  Sampling drives it
# with a seeded RNG; the tests drive it with an enumerator that walks every choice path of tiny
# instances, to check the exact log-probabilities below, which parse the text back into those
# choices (summing over hidden ones).  Text the program cannot produce has infinite bits.


class Sampler:
    """The ``choices`` object used for sampling.

        >>> s = Sampler(np.random.default_rng(0))
        >>> s.uniform(1), s.bernoulli(0.0)
        (0, False)
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def uniform(self, k: int) -> int:
        return int(self.rng.integers(k))

    def bernoulli(self, p: float) -> bool:
        return bool(self.rng.random() < p)


@dataclass(frozen=True)
class InsertionsParams:
    """See the module docstring.

        >>> insertions_bits(insertions_program(Sampler(np.random.default_rng(0)), 1,
        ...                                    InsertionsParams(p_insert=0.0)),
        ...                 InsertionsParams(p_insert=0.0))
        0.0
    """
    letters: str = "abcdefghijklmnopqrstuvwxyz"  # the main sequence of each line
    digits: str = "0123456789"  # the inserted sub-block
    capitals: str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # drawn inside sub-sub-blocks
    n_random: int = 9  # random capitals per sub-sub-block
    p_insert: float = 1 / 26  # sub-block after each letter
    p_sub: float = 1 / 5  # sub-sub-block after each digit


def insertions_program(choices, n_lines: int, prm: InsertionsParams = InsertionsParams()) -> str:
    """Lines of the alphabet with sub-blocks of digits inserted at random, and sub-sub-blocks of random capitals inside them (Ollivier 000, Example 1).

        >>> insertions_program(Sampler(np.random.default_rng(0)), 1, InsertionsParams(p_insert=0.0))
        'abcdefghijklmnopqrstuvwxyz\\n'
    """
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
    """-log2 P(text) under :func:`insertions_program` (inf for text it cannot write).

        >>> insertions_bits("abc")  # not a line the program writes
        inf
    """
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
    """See the module docstring.

        >>> text = music_program(Sampler(np.random.default_rng(0)), 4)
        >>> 0 < music_bits(text) < float("inf")
        True
    """
    chords: tuple = (("I", "ceg"), ("IV", "cfa"), ("V", "gbd"))
    cycle: tuple = ("I", "IV", "I", "V", "I", "IV", "V", "I")  # harmony of successive bars
    rhythms: tuple = (("4", "4", "4"), ("2", "4"), ("4.", "8", "4"), ("2.",), ("4", "4", "8", "8"))


def _chord(prm: MusicParams, bar: int, phase: int) -> str:
    return dict(prm.chords)[prm.cycle[(phase + bar) % len(prm.cycle)]]


def music_program(choices, n_bars: int, prm: MusicParams = MusicParams()) -> str:
    """Bars "p4 p4 p4 |\n": the harmony follows the cycle from a hidden random phase, pitches
    are uniform in the bar's chord, the rhythm is uniform and independent of the harmony.

        >>> music_program(Sampler(np.random.default_rng(0)), 2).count("\\n")
        2
    """
    phase = choices.uniform(len(prm.cycle))
    bars = []
    for b in range(n_bars):
        chord = _chord(prm, b, phase)
        rhythm = prm.rhythms[choices.uniform(len(prm.rhythms))]
        bars.append(" ".join(chord[choices.uniform(len(chord))] + value for value in rhythm)
                    + " |\n")
    return "".join(bars)


def music_bits(text: str, prm: MusicParams = MusicParams()) -> float:
    """-log2 P: rhythm and pitch choices given the phase, summed over the hidden phases.

        >>> music_bits("not music")
        inf
    """
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
    and a newline.

        >>> line = xor_program(Sampler(np.random.default_rng(0)), 1, t=20)
        >>> line.count("X"), line[-3]
        (2, '=')
    """
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
    """-log2 P(text) under :func:`xor_program` (inf for text it cannot write).

        >>> text = xor_program(Sampler(np.random.default_rng(0)), 2, t=20)
        >>> xor_bits(text, t=20) < float("inf"), xor_bits(text.replace("=0", "=2"), t=20)
        (True, inf)
    """
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
    """Indices of the bits distant XOR scores: those right after "=" (chi_t of 000, eq. 4-5).

        >>> xor_scored_positions(b" 1X0=1\\n").tolist()
        [5]
    """
    arr = np.frombuffer(data, dtype=np.uint8)
    return np.flatnonzero(arr[:-1] == ord("=")) + 1


register(Generator("xor",
                   lambda n, seed: xor_program(Sampler(np.random.default_rng([seed, 13])),
                                               n).encode("ascii"),
                   lambda data, seed: xor_bits(data.decode("latin-1")),
                   "distant XOR over lines of ~100 bits (Ollivier 000, Example 2)", "lines",
                   10_000))


def anbn_program(choices, n_blocks: int, low: int = 1024, high: int = 2048) -> str:
    """For each block a line of n a's, then a line of n b's; n uniform in [low, high).

        >>> anbn_program(Sampler(np.random.default_rng(0)), 1, low=2, high=3)
        'aa\\nbb\\n'
    """
    out = []
    for _ in range(n_blocks):
        n = low + choices.uniform(high - low)
        out.append("a" * n + "\n" + "b" * n + "\n")
    return "".join(out)


def anbn_bits(text: str, low: int = 1024, high: int = 2048) -> float:
    """-log2 P(text) under :func:`anbn_program` (inf for text it cannot write).

        >>> anbn_bits("aa\\nbb\\n", low=2, high=4), anbn_bits("aa\\nb\\n", low=2, high=4)
        (1.0, inf)
    """
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
