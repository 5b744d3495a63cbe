"""The registry of generated corpora: every generator is registered here by the modules of
the package (``seqzip.corpora``).

Every generator is seeded and returns a :class:`Sample`: the bytes and, where the generating
model is known, the exact log2-probability of those bytes under it, so that a report can show
regret = model bits - true bits.  Third-party corpora are never stored here: see
``corpora/fetch.py`` and the ``SEQZIP_CORPORA`` directory.

    >>> import seqzip.corpora  # registers the generators
    >>> s = generate("markov2", 1000, seed=1)
    >>> len(s.data), round(s.true_bits - true_log2_loss("markov2", s.data, seed=1), 9)
    (1000, 0.0)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable



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
