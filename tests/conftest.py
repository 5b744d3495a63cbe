import pytest

from tests.helpers import canterbury_file


@pytest.fixture
def alice() -> bytes:
    return canterbury_file("alice29.txt")


@pytest.fixture
def checked_streams(monkeypatch):
    """Streams written as builds before lean streams (format 72) wrote them: every frame
    checked, payloads in whole words.  The goldens of the modules that use it pin those
    streams (still written with ``session.LEAN`` off, still read); ``test_lean`` pins the lean
    ones."""
    import seqzip.session
    monkeypatch.setattr(seqzip.session, "LEAN", False)
