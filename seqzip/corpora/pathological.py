"""The pathological synthetic problems of Manchev & Spratling 002, Sect. III-A (temporal order,
3-bit temporal order, adding, random permutation), with exact truth.

    >>> from seqzip.corpora import generate
    >>> generate("adding", 2, seed=0).true_bits > 0
    True
"""
from __future__ import annotations

import math

import numpy as np

from .registry import Generator, register
from .ollivier import Sampler


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
