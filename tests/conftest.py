import pytest

from tests.helpers import canterbury_file


@pytest.fixture
def alice() -> bytes:
    return canterbury_file("alice29.txt")
