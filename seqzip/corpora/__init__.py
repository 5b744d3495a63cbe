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
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Sample:
    """See the module docstring.

        >>> s = generate("markov2", 100, seed=1)
        >>> len(s.data), s.true_bits > 0
        (100, True)
    """
    name: str
    data: bytes
    true_bits: float | None  # -log2 P(data) under the generating model, when known


@dataclass(frozen=True)
class Generator:
    """See the module docstring.

        >>> GENERATORS["anbn"].unit, GENERATORS["english"].true_bits is None
        ('blocks', True)
    """
    name: str
    make: Callable[[int, int], bytes]  # (n units, seed) -> data
    true_bits: Callable[[bytes, int], float] | None  # (data, seed) -> -log2 P(data)
    summary: str
    unit: str = "bytes"  # what n counts
    default_n: int = 100_000  # the size the papers use


GENERATORS: dict[str, Generator] = {}


def register(gen: Generator) -> None:
    """Add ``gen`` to ``GENERATORS`` (by its name).

        >>> register(Generator("ab", lambda n, seed: b"ab" * n, lambda data, seed: 0.0,
        ...                    "ab repeated"))
        >>> generate("ab", 3).data, true_log2_loss("ab", b"abab")
        (b'ababab', 0.0)
        >>> del GENERATORS["ab"]
    """
    GENERATORS[gen.name] = gen


def generate(name: str, n: int | None = None, seed: int = 0) -> Sample:
    """``n`` units (bytes, lines, bars or blocks: ``GENERATORS[name].unit``) of corpus ``name``.

    ``n=None`` gives the size used in the papers.  The seed fixes every random choice.

        >>> generate("anbn", 1, seed=0).data.count(b"\\n")
        2
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
    """-log2 P(data) under generator ``name`` with ``seed`` (exact, in bits).

        >>> true_log2_loss("anbn", b"a" * 1024 + b"\\n" + b"b" * 1024 + b"\\n")
        10.0
    """
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



# --- Manchev & Spratling 002, Sect. III-A: the pathological synthetic problems ------------------
#
# Hochreiter & Schmidhuber's long-range problems as symbolic lines: T input symbols, "=", the
# target, a newline.  Every input choice is uniform and the target is a function of the inputs,
# so the exact bits of a line are the log2 of its input choices and the target costs nothing.
#
# * temporal order: distractors from "abcd"; at t1 in [T/10, 2T/10) and t2 in [5T/10, 6T/10)
#   a relevant symbol X or Y; the target is the two relevant symbols in order (4 classes);
# * 3-bit temporal order: three relevant symbols at [T/10, 2T/10), [3T/10, 4T/10),
#   [6T/10, 7T/10) (8 classes);
# * adding: T pairs (a mark " " or "X", a digit 0-9) with marks at [0, T/10) and [T/10, T/2);
#   the target is the sum of the two marked digits as two decimal digits (a symbolic adding
#   problem: the values are digits rather than reals);
# * random permutation: the first symbol is A or B, the T - 1 others uniform over 60 symbols
#   (a-z, C-Z, 0-9); the target is the first symbol.

PATHOLOGICAL = ("temporal-order", "temporal-order-3bit", "adding", "permutation")
_TO_DISTRACTORS, _TO_RELEVANT = "abcd", "XY"
_PERM_CLASSES = "AB"
_PERM_NOISE = "abcdefghijklmnopqrstuvwxyzCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _relevant_windows(task: str, t: int) -> list[tuple[int, int]]:
    """[start, stop) of each relevant position (temporal order) or mark (adding)."""
    if task == "temporal-order":
        spans = ((1, 2), (5, 6))
    elif task == "temporal-order-3bit":
        spans = ((1, 2), (3, 4), (6, 7))
    elif task == "adding":
        return [(0, t // 10), (t // 10, t // 2)]
    else:
        raise ValueError(f"task {task!r} has no relevant positions")
    return [(a * t // 10, b * t // 10) for a, b in spans]


def pathological_line(choices, task: str, t: int) -> tuple[str, str]:
    """One sequence of ``task`` of length ``t`` (``t`` >= 10): (inputs, target) as text.

        >>> inputs, target = pathological_line(Sampler(np.random.default_rng(0)),
        ...                                    "temporal-order", 20)
        >>> len(inputs), target == inputs[2:4].strip("abcd") + inputs[10:12].strip("abcd")
        (20, True)
    """
    if task not in PATHOLOGICAL:
        raise ValueError(f"unknown task {task!r}; choose from {', '.join(PATHOLOGICAL)}")
    if isinstance(t, bool) or not isinstance(t, int) or t < 10:
        raise ValueError(f"sequence length must be an integer >= 10, got {t!r}")
    if task == "permutation":
        first = _PERM_CLASSES[choices.uniform(2)]
        rest = "".join(_PERM_NOISE[choices.uniform(len(_PERM_NOISE))] for _ in range(t - 1))
        return first + rest, first
    windows = _relevant_windows(task, t)
    marks = [a + choices.uniform(b - a) for a, b in windows]
    if task == "adding":
        digits = [choices.uniform(10) for _ in range(t)]
        body = "".join(("X" if i in marks else " ") + str(d) for i, d in enumerate(digits))
        return body, f"{digits[marks[0]] + digits[marks[1]]:02d}"
    symbols = []
    for i in range(t):
        pool = _TO_RELEVANT if i in marks else _TO_DISTRACTORS
        symbols.append(pool[choices.uniform(len(pool))])
    return "".join(symbols), "".join(symbols[i] for i in marks)


def pathological_program(choices, n_lines: int, task: str, t: int = 100) -> str:
    """``n_lines`` lines "inputs=target" of ``task`` (see :func:`pathological_line`).

        >>> text = pathological_program(Sampler(np.random.default_rng(1)), 3, "adding", 12)
        >>> [len(line.split("=")[1]) for line in text.splitlines()]  # two-digit sums
        [2, 2, 2]
    """
    return "".join("=".join(pathological_line(choices, task, t)) + "\n"
                   for _ in range(n_lines))


def pathological_bits(text: str, task: str, t: int = 100) -> float:
    """-log2 P(text) under :func:`pathological_program` (infinite for text it cannot make).

        >>> text = pathological_program(Sampler(np.random.default_rng(1)), 2, "adding", 12)
        >>> 0 < pathological_bits(text, "adding", 12) < math.inf
        True
        >>> pathological_bits(text[:-1], "adding", 12)  # a line cut short: impossible
        inf
    """
    if text and not text.endswith("\n"):
        return math.inf
    total = 0.0
    for line in text.split("\n")[:-1]:
        inputs, sep, target = line.partition("=")
        if not sep:
            return math.inf
        bits = _line_bits(inputs, target, task, t)
        if bits == math.inf:
            return bits
        total += bits
    return total


def _line_bits(inputs: str, target: str, task: str, t: int) -> float:
    if task == "permutation":
        if len(inputs) != t or inputs[0] not in _PERM_CLASSES or target != inputs[0] or \
                any(c not in _PERM_NOISE for c in inputs[1:]):
            return math.inf
        return 1.0 + (t - 1) * math.log2(len(_PERM_NOISE))
    windows = _relevant_windows(task, t)
    position_bits = sum(math.log2(b - a) for a, b in windows)
    if task == "adding":
        if len(inputs) != 2 * t or any(inputs[2 * i] not in " X" or not inputs[2 * i + 1].isdigit()
                                       for i in range(t)):
            return math.inf
        marks = [i for i in range(t) if inputs[2 * i] == "X"]
        if len(marks) != 2 or any(not a <= m < b for m, (a, b) in zip(marks, windows)):
            return math.inf
        if target != f"{int(inputs[2 * marks[0] + 1]) + int(inputs[2 * marks[1] + 1]):02d}":
            return math.inf
        return position_bits + t * math.log2(10)
    if len(inputs) != t or any(c not in _TO_DISTRACTORS + _TO_RELEVANT for c in inputs):
        return math.inf
    marks = [i for i in range(t) if inputs[i] in _TO_RELEVANT]
    if len(marks) != len(windows) or any(not a <= m < b for m, (a, b) in zip(marks, windows)):
        return math.inf
    if target != "".join(inputs[i] for i in marks):
        return math.inf
    return position_bits + len(marks) + (t - len(marks)) * 2.0


def pathological_target_class(task: str, target: str) -> int:
    """The class index of a target (temporal order: X = 0, Y = 1 read as binary digits;
    permutation: A = 0, B = 1; adding: the sum 0..18).

        >>> pathological_target_class("temporal-order", "YX"), pathological_target_class("adding", "13")
        (2, 13)
    """
    if task == "adding":
        return int(target)
    if task == "permutation":
        return _PERM_CLASSES.index(target)
    value = 0
    for c in target:
        value = 2 * value + _TO_RELEVANT.index(c)
    return value


def _register_pathological(task: str, salt: int, summary: str) -> None:
    register(Generator(task,
                       lambda n, seed: pathological_program(
                           Sampler(np.random.default_rng([seed, salt])), n, task).encode("ascii"),
                       lambda data, seed: pathological_bits(data.decode("latin-1"), task),
                       summary + " (Manchev & Spratling 002, Sect. III-A; T = 100)", "lines",
                       1000))


_register_pathological("temporal-order", 19, "temporal order: two of X/Y among abcd, 4 classes")
_register_pathological("temporal-order-3bit", 23,
                       "3-bit temporal order: three of X/Y among abcd, 8 classes")
_register_pathological("adding", 29, "symbolic adding: the sum of two marked digits")
_register_pathological("permutation", 31, "random permutation: recall the first of T symbols")


# --- English-like prose -----------------------------------------------------------------------
#
# `seqzip bench` needs built-in text whose statistics are those of real prose, or its figures
# mislead: the pseudo-words of "text" are far easier than English (bzip2 -9: 1.75 bpc there
# against 2.27 on alice29.txt).  "english" is a small grammar over a built-in vocabulary:
# sentences of clauses (subject, verb, object, prepositional phrases, adverbs), joined by
# conjunctions, with commas, dialogue in quotes, questions and exclamations, capitals at
# sentence starts and on names, paragraphs wrapped at 72 columns and separated by blank lines.
# Words are drawn from Zipf-like weights within their class, as in real text.

_NAMES = ("Alice Thomas Margaret John Mary Edward Anne Robert Elizabeth William Jane Henry "
          "Catherine George Emily Arthur Sarah Charles Lucy Walter Harriet Peter Clara Hugh "
          "Martha Oliver Rose Daniel Agnes Samuel").split()
_PLACES = ("London Paris Oxford Dover Bristol York Kent Brighton Lisbon Vienna Venice Bath "
           "Cambridge Edinburgh Dublin").split()
_NOUNS = ("time day way man woman house door hand eye head world life night thing room voice "
          "face moment father mother child girl boy friend letter table window garden road "
          "morning evening water heart mind word place side light year king queen story "
          "book sister brother fire tree hill river street town village field wall chair bed "
          "dream question answer name matter end master servant gentleman lady doctor "
          "captain soldier horse dog cat bird rabbit mouse key box glass paper candle picture "
          "song sound silence noise corner stair hall kitchen church school shop money hat "
          "coat dress shoe ship sea shore island wind rain snow sun moon star sky cloud "
          "forest stone bridge gate path journey party dinner tea bread cake wine cup plate "
          "business truth reason fear hope anger pleasure surprise trouble danger chance "
          "person people crowd army court law duty promise secret purpose thought memory "
          "idea feeling pain smile tear laugh kiss arm shoulder finger foot knee hair lip "
          "neck cheek breath blood bone skin summer winter spring autumn hour week month "
          "minute afternoon dawn shadow edge top bottom middle part piece half line page "
          "note message news sign mark picture map clock bell ring chain rope wheel cart "
          "carriage train station office desk drawer pocket purse coin gold silver iron "
          "wood grass flower rose leaf branch root fruit apple seed garden meadow valley "
          "mountain lake pond well cottage castle tower palace prison inn farm mill").split()
_ADJECTIVES = ("little old great good young long small large dark white black strange curious "
               "quiet poor dear last first whole own other certain same new high low short "
               "cold warm bright pale gentle sudden silent kind cruel wise foolish happy sad "
               "tired hungry angry afraid glad sorry proud simple plain grave serious heavy "
               "light narrow broad deep empty full rich beautiful ugly pretty handsome tall "
               "thin wild soft hard sweet bitter green red blue grey golden silver distant "
               "early late secret real true false strong weak busy idle lonely famous "
               "wretched splendid dreadful wonderful terrible ordinary particular").split()
_TRANSITIVE = ("saw took found made gave knew thought heard felt told left held brought kept "
               "met wanted loved opened closed followed watched carried touched broke lost "
               "noticed reached passed called asked answered remembered forgot received "
               "wrote read sent bought sold showed pulled pushed dropped lifted raised "
               "covered filled finished began tried needed liked hated feared admired "
               "understood believed married visited discovered examined described").split()
_INTRANSITIVE = ("went came looked seemed stood sat walked turned ran fell waited smiled "
                 "laughed cried spoke listened slept woke stopped paused returned remained "
                 "appeared vanished trembled sighed nodded hesitated wondered hurried "
                 "lingered shivered rose arrived departed wandered continued").split()
_BASE_VERBS = ("see know take come go find make give tell think say hear feel leave keep hold "
               "bring meet want open close follow watch carry touch break lose reach pass call "
               "ask answer remember forget write read send buy sell show pull push drop lift "
               "cover finish begin try need like fear believe marry visit discover understand "
               "wait walk run sit stand speak listen sleep wake stop return stay appear try "
               "help mind bear spare forgive allow explain manage promise refuse suppose "
               "wish hope expect dare choose guess notice describe pretend prove").split()
_PARTICIPLES = ("seen known heard found taken been gone come said thought done given told "
                "left kept brought met lost made written read sent bought sold shown broken "
                "forgotten begun chosen spoken understood forgiven driven risen fallen "
                "become grown worn torn drawn").split()
_SPEECH = ("said asked replied cried answered whispered exclaimed added remarked "
           "continued murmured shouted").split()
_ADVERBS = ("then|again|never|always|still|only|once|now|soon|slowly|quickly|quietly|"
            "suddenly|gently|softly|nearly|almost|rather|quite|very well|indeed|perhaps|"
            "certainly|hardly|presently|away|back|here|there|together|alone|already|"
            "once more|at last|at once|of course|for a moment|in silence|in a hurry|"
            "without a word|as usual|by and by|all the same|after all|at first").split("|")
_PREPOSITIONS = ("in on at to from with without into through under over behind beside near "
                 "across along towards upon before after about against among between by "
                 "for of round beyond").split()
_SUBORDINATORS = "when while because although as before after if until since though".split()
_CONJUNCTIONS = ["and", "but", "and", "so", "for", "yet", "or", "and then"]
_PRONOUNS = ("he she they it i we you".split(), "him her them it me us you".split())
_POSSESSIVES = "his her their its my our your".split()
_DETERMINERS = "the the the the a a this that every some no one another each".split()
_ABSTRACT_OPENERS = ["It was", "There was", "It seemed that", "There had been", "It is true that",
                     "Nobody knew that", "It was clear that", "I think that"]


FLAT = 0.5  # flattens every class's Zipf weights (measured: bzip2 bpc rises as it falls)
RARE = 0.2  # share of content words drawn from the long tail of derived words
# The long tail: real prose has thousands of words seen once or twice.  Derived words
# (prefix + root + suffix) give it: tens of thousands of forms, each rare.
_PREFIXES = ("un re in dis over under out mis fore pre be with up").split()
_ROOTS = ("bear hold stand turn come take make break speak think know grace fort mark pass "
          "press form port spect tract ject duct vent mit scribe pend cept rupt struct "
          "sign light dark hope fear rest trust care help heart mind faith kind thank doubt "
          "power wonder peace joy harm grace shape colour favour honour labour measure "
          "settle trouble wander gather shelter whisper tremble question govern").split()
_SUFFIXES = ("able ful less ness ment ing ed er ly ity ive ous ance ence ship hood some ward "
             "ish al s").split()
_CONTRACTIONS = ("don't I'm it's can't won't didn't wasn't I'll you're couldn't isn't "
                 "that's there's she'd he'd shan't wouldn't").split()
_ROMAN = "I II III IV V VI VII VIII IX X XI XII".split()


class _Prose:
    """The choices of one English-like document (all from one seeded RNG)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.flat = FLAT
        self._weights: dict[tuple, np.ndarray] = {}

    def pick(self, words: list[str] | tuple[str, ...], exponent: float = 1.0) -> str:
        key = (id(words), exponent)
        weights = self._weights.get(key)
        if weights is None:
            weights = 1.0 / np.arange(1, len(words) + 1) ** (exponent * self.flat)
            weights = np.cumsum(weights / weights.sum())
            self._weights[key] = weights
        return words[min(int(np.searchsorted(weights, self.rng.random())), len(words) - 1)]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def rare(self, words, exponent: float) -> str:
        """A word of class ``words``, or now and then a rare derived word."""
        if self.chance(RARE):
            rng = self.rng
            word = _ROOTS[rng.integers(len(_ROOTS))] + _SUFFIXES[rng.integers(len(_SUFFIXES))]
            if self.chance(0.4):
                word = _PREFIXES[rng.integers(len(_PREFIXES))] + word
            return word
        return self.pick(words, exponent)

    def noun_phrase(self, object_case: bool = False) -> str:
        r = self.rng.random()
        if r < 0.22:
            return self.pick(_PRONOUNS[1 if object_case else 0], 0.9)
        if r < 0.32:
            name = self.pick(_NAMES, 1.1)
            return name + "'s " + self.rare(_NOUNS, 0.95) if self.chance(0.15) else name
        first = self.pick(_POSSESSIVES, 1.0) if self.chance(0.25) else self.pick(_DETERMINERS, 1.1)
        words = [first]
        if self.chance(0.4):
            words.append(self.rare(_ADJECTIVES, 0.9))
            if self.chance(0.12):
                words.extend(["and", self.rare(_ADJECTIVES, 0.9)])
        noun = self.rare(_NOUNS, 0.95)
        if first in ("some", "no") and self.chance(0.5) or self.chance(0.12):
            noun = noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")
            if first in ("a", "one", "another", "each", "every", "this", "that"):
                words[0] = "the"
        words.append(noun)
        if words[0] == "a" and words[1][0] in "aeiou":
            words[0] = "an"
        if self.chance(0.15):
            words.extend([self.pick(_PREPOSITIONS, 1.2), self.noun_phrase(True)])
        return " ".join(words)

    def place(self) -> str:
        return self.pick(_PLACES, 1.0) if self.chance(0.2) else self.noun_phrase(True)

    def clause(self) -> str:
        subject = self.noun_phrase()
        r = self.rng.random()
        if r < 0.45:
            verb = [self.rare(_TRANSITIVE, 1.0), self.noun_phrase(True)]
        elif r < 0.75:
            verb = [self.rare(_INTRANSITIVE, 1.0)]
        elif r < 0.82:
            verb = [self.pick(["was", "were", "is", "had been", "kept"], 1.0),
                    _ing(self.rare(_BASE_VERBS, 0.8))]
        elif r < 0.9:
            verb = [self.pick(["was", "was", "seemed", "looked", "felt", "had been", "grew",
                               "was not", "became"], 1.0), self.pick(_ADJECTIVES, 0.9)]
        elif r < 0.95:
            verb = [self.pick(["would", "could", "must", "might", "did not", "should",
                               "will", "cannot", "may", "shall"], 1.0),
                    self.rare(_BASE_VERBS, 0.8)]
            if self.chance(0.5):
                verb.append(self.noun_phrase(True))
        else:
            verb = [self.pick(["had", "had never", "has", "had not", "would have"], 1.0),
                    self.pick(_PARTICIPLES, 0.9)]
        if self.chance(0.45):
            verb.extend([self.pick(_PREPOSITIONS, 1.2), self.place()])
        words = [subject, *verb]
        if self.chance(0.25):
            adverb = self.pick(_ADVERBS, 1.0) if self.chance(0.6) else \
                _ly(self.pick(_ADJECTIVES, 0.8))
            if self.chance(0.5):
                words.insert(1, adverb)
            else:
                words.append(adverb)
        return " ".join(words)

    def sentence(self) -> str:
        r = self.rng.random()
        if r < 0.14:  # dialogue
            spoken = self.clause()
            end = self.pick([",", "?", "!"], 1.4)
            speaker = self.pick(_NAMES, 1.1) if self.chance(0.6) else self.pick(_PRONOUNS[0][:3])
            said = self.pick(_SPEECH, 1.2) if end == "," else self.pick(_SPEECH[1:4], 1.0)
            tail = f"{said} {speaker}" if self.chance(0.5) and speaker[0].isupper() \
                else f"{speaker} {said}"
            return f'"{_capital(spoken)}{end}" {tail}.'
        parts = [self.clause()]
        if self.chance(0.08):
            parts[0] = self.pick(_ABSTRACT_OPENERS, 1.0) + " " + parts[0]
        elif self.chance(0.05):
            parts[0] = self.pick(_CONTRACTIONS, 1.0) + " " + parts[0]
        while self.chance(0.38) and len(parts) < 4:
            if self.chance(0.5):
                parts.append(", " + self.pick(_CONJUNCTIONS, 1.2) + " " + self.clause())
            else:
                parts.append((", " if self.chance(0.5) else " ")
                             + self.pick(_SUBORDINATORS, 1.1) + " " + self.clause())
        if self.chance(0.1):
            parts.append(self.pick(["; ", " -- ", ": ", " (", ", "], 1.0) + self.clause())
            if parts[-1].startswith(" ("):
                parts[-1] += ")"
        end = "." if r < 0.9 else self.pick(["?", "!"], 1.0)
        return _capital("".join(parts)) + end


def _ing(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye")):
        return verb[:-1] + "ing"
    return verb + "ing"


def _ly(adjective: str) -> str:
    if adjective.endswith("y"):
        return adjective[:-1] + "ily"
    if adjective.endswith("le"):
        return adjective[:-1] + "y"
    return adjective + "ly"


def _capital(text: str) -> str:
    text = re.sub(r"\bi\b", "I", text)
    return text[:1].upper() + text[1:]


def _wrap(paragraph: str, width: int = 72) -> str:
    lines, line = [], ""
    for word in paragraph.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


def _english_make(n: int, seed: int) -> bytes:
    """Paragraphs of English-like sentences (no exact truth: parses are ambiguous)."""
    prose = _Prose(np.random.default_rng([seed, 19]))
    out: list[str] = []
    size = 0
    while size < n:
        if prose.chance(0.03):  # a chapter heading
            title = " ".join(w.upper() for w in prose.noun_phrase().split())
            out.append(f"\n\n\t\tCHAPTER {prose.pick(_ROMAN, 0.2)}\n\n\t{title}\n\n\n")
        count = 1 + int(prose.rng.integers(7))
        paragraph = _wrap(" ".join(prose.sentence() for _ in range(count))) + "\n\n"
        out.append(paragraph)
        size += len(paragraph)
    return "".join(out).encode("ascii")[:n]


register(Generator("english", _english_make, None,
                   "English-like prose: grammar, built-in vocabulary, punctuation, dialogue, "
                   "paragraphs (bzip2 -9 near alice29.txt's 2.27 bpc)"))


# --- a structured binary file -------------------------------------------------------------------
#
# Binary data for `seqzip bench`: what executables and spreadsheets hold, with their statistics
# (checked against sum and kennedy.xls of the Canterbury corpus; see tests/corpora): a header,
# then sections of machine-code-like instructions (a skewed opcode table, register bytes,
# little-endian offsets full of 0x00 and 0xff, padding to 16 bytes), tables of fixed-width
# records (counters, timestamps, categories, a random walk, float32 amounts, ASCII codes,
# flags), and string tables of null-terminated identifiers.

# (opcode bytes, operand kinds): r = register/mode byte, i = small immediate byte,
# o = 32-bit relative offset, a = 32-bit address in the data segment
_OPCODES = [
    (b"\x48\x89", "r"), (b"\x48\x8b", "r"), (b"\xe8", "o"), (b"\x89", "r"), (b"\x8b", "r"),
    (b"\x48\x83\xc4", "i"), (b"\x48\x83\xec", "i"), (b"\x74", "i"), (b"\x75", "i"),
    (b"\x0f\x84", "o"), (b"\x0f\x85", "o"), (b"\xe9", "o"), (b"\xeb", "i"), (b"\x31", "r"),
    (b"\x85", "r"), (b"\x39", "r"), (b"\x48\x8d", "ra"), (b"\x8b\x05", "a"), (b"\x89\x05", "a"),
    (b"\xb8", "a"), (b"\x50", ""), (b"\x53", ""), (b"\x5b", ""), (b"\x58", ""),
    (b"\x41\x54", ""), (b"\x41\x5c", ""), (b"\x48\x01", "r"), (b"\x48\x29", "r"),
    (b"\x0f\xb6", "r"), (b"\x48\x63", "r"), (b"\xc1\xe0", "i"), (b"\x83\xf8", "i"),
    (b"\x80\x3d", "ai"), (b"\xf3\x0f\x10", "r"), (b"\xf2\x0f\x59", "r"), (b"\xff\x15", "a"),
]
_REGISTER_BYTES = bytes([0xc0, 0xc3, 0xc7, 0xd8, 0xe5, 0x45, 0x7d, 0x55, 0x04, 0x44, 0x0c,
                         0xf8, 0xc1, 0xd0, 0x75, 0x5d])
_RECORD_CODES = [b"GB-LON", b"FR-PAR", b"DE-BER", b"US-NYC", b"JP-TYO", b"IT-ROM", b"ES-MAD",
                 b"NL-AMS", b"BE-BRU", b"SE-STO", b"CA-TOR", b"AU-SYD"]


_PRICES = [0.0, 1.0, 2.5, 5.0, 9.99, 10.0, 12.5, 19.99, 20.0, 25.0, 49.99, 50.0, 75.0, 99.99,
           100.0, 120.0, 150.0, 199.0, 250.0, 499.0, 1000.0, 0.5, 0.25, 3.75, 7.2, 14.4]


def _zipf_choice(rng: np.random.Generator, n: int, exponent: float = 1.0) -> int:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return int(rng.choice(n, p=weights / weights.sum()))


def _code_section(rng: np.random.Generator, out: bytearray, data_base: int) -> None:
    import struct

    for _ in range(int(rng.integers(3, 12))):  # functions
        out += b"\x55\x48\x89\xe5" + (b"\x48\x83\xec" + bytes([8 * int(rng.integers(1, 9))])
                                      if rng.random() < 0.7 else b"")
        for _ in range(int(rng.geometric(1 / 30))):
            opcode, operands = _OPCODES[_zipf_choice(rng, len(_OPCODES), 1.1)]
            out += opcode
            for kind in operands:
                if kind == "r":
                    out.append(_REGISTER_BYTES[_zipf_choice(rng, len(_REGISTER_BYTES), 0.9)])
                elif kind == "i":
                    out.append(int(rng.choice([0, 1, 4, 8, 16, 24, 32, 0xff, 0xf8]))
                               if rng.random() < 0.9 else int(rng.integers(256)))
                elif kind == "o":
                    out += struct.pack("<i", int(rng.normal(0, 400)))
                else:
                    out += struct.pack("<I", data_base + 8 * _zipf_choice(rng, 512, 1.0))
        out += b"\xc9\xc3"
        out += b"\xcc" * (-len(out) % 16)


def _table_section(rng: np.random.Generator, out: bytearray, state: dict) -> None:
    import struct

    for _ in range(int(rng.integers(40, 400))):
        state["id"] += 1
        state["time"] += int(rng.geometric(1 / 12))
        state["walk"] = max(-32768, min(32767, state["walk"] + int(rng.integers(-3, 4))))
        amount = np.float32(_PRICES[_zipf_choice(rng, len(_PRICES), 0.9)])
        out += struct.pack("<IIHhf", state["id"], state["time"],
                           _zipf_choice(rng, 12, 1.2), state["walk"], amount)
        out += _RECORD_CODES[_zipf_choice(rng, len(_RECORD_CODES), 1.0)]
        out += struct.pack("<H", int(rng.choice([0, 0, 0, 1, 2, 3, 0x10, 0x8000])))


def _string_section(rng: np.random.Generator, out: bytearray) -> None:
    for _ in range(int(rng.integers(20, 120))):
        words = [_BASE_VERBS[_zipf_choice(rng, len(_BASE_VERBS), 0.8)],
                 _NOUNS[_zipf_choice(rng, len(_NOUNS), 0.8)]]
        if rng.random() < 0.3:
            words.insert(0, rng.choice(["sys", "io", "str", "mem", "net", "gui"]))
        out += "_".join(words).encode("ascii") + b"\x00"
    out += b"\x00" * (-len(out) % 8)


def _binary_make(n: int, seed: int) -> bytes:
    """A header, then code, table and string sections in random order (no exact truth)."""
    import struct

    rng = np.random.default_rng([seed, 23])
    out = bytearray(b"\x7fSQB" + struct.pack("<HHIIQQ", 2, 62, 0x400000, 64, n, 0) + bytes(28))
    state = {"id": 1000, "time": 1_600_000_000, "walk": 0}
    while len(out) < n:
        kind = rng.random()
        if kind < 0.45:
            _code_section(rng, out, 0x600000)
        elif kind < 0.85:
            _table_section(rng, out, state)
        elif kind < 0.95:
            _string_section(rng, out)
        else:  # an uninitialised area, as executables and spreadsheets hold
            out += bytes(16 * int(rng.integers(8, 128)))
    return bytes(out[:n])


register(Generator("binary", _binary_make, None,
                   "structured binary: machine-code-like sections, tables of fixed-width "
                   "records, string tables (like an executable or a spreadsheet)"))
