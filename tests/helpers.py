"""Helpers the tests share: corpus files (skipped when absent) and alphabet indices."""
import os
import pathlib

import pytest

from seqzip.api import symbols_of as _symbols_of

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED_CORPORA = pathlib.Path(os.environ.get("SEQZIP_CORPORA",
                                             ROOT.parent / "shared" / "corpora"))
CANTERBURY = SHARED_CORPORA / "canterbury"


def canterbury_file(name: str) -> bytes:
    """Read a Canterbury corpus file, skipping the test when the corpus is absent."""
    path = CANTERBURY / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path.read_bytes()


def symbols_of(data: bytes):
    """(alphabet indices, alphabet size) of ``data``."""
    symbols, alphabet = _symbols_of(data)
    return symbols, len(alphabet)
