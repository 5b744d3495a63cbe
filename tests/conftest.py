import os
import pathlib

import pytest

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


@pytest.fixture
def alice() -> bytes:
    return canterbury_file("alice29.txt")
