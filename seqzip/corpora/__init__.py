"""Generated corpora with exact truth (installed as ``seqzip.corpora``).

Every generator is seeded and returns a :class:`Sample`: the bytes and, where the generating
model is known, the exact log2-probability of those bytes under it, so that a report can show
regret = model bits - true bits.  Third-party corpora are never stored here: see
``corpora/fetch.py`` and the ``SEQZIP_CORPORA`` directory.  One module per family of
generators (``markov``, ``ollivier``, ``pathological``, ``english``, ``binary``), each
registering its generators in ``registry``.

    >>> s = generate("markov2", 1000, seed=1)
    >>> len(s.data), round(s.true_bits - true_log2_loss("markov2", s.data, seed=1), 9)
    (1000, 0.0)
"""
from __future__ import annotations

# each module registers its generators; imported in this order, which is the order of the list
from . import markov  # noqa: F401  isort: skip
from . import ollivier  # noqa: F401  isort: skip
from . import pathological  # noqa: F401  isort: skip
from . import english  # noqa: F401  isort: skip
from . import binary  # noqa: F401  isort: skip
from .ollivier import (InsertionsParams, MusicParams, Sampler, anbn_bits, anbn_program,
                       insertions_bits, insertions_program, music_bits, music_program,
                       xor_bits, xor_program, xor_scored_positions)
from .pathological import (PATHOLOGICAL, pathological_bits, pathological_line,
                           pathological_program, pathological_target_class)
from .registry import GENERATORS, Generator, Sample, generate, register, true_log2_loss

__all__ = ["GENERATORS", "Generator", "Sample", "generate", "register", "true_log2_loss",
           "InsertionsParams", "MusicParams", "Sampler", "anbn_bits", "anbn_program",
           "insertions_bits", "insertions_program", "music_bits", "music_program", "xor_bits",
           "xor_program", "xor_scored_positions", "PATHOLOGICAL", "pathological_bits",
           "pathological_line", "pathological_program", "pathological_target_class"]
