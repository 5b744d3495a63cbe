"""Capital letters as an escape and the lowercase letter: a reversible form of a text that a
context model learns from better (cm's case-folded presets, ``CMConfig.case``).

The folded form writes an upper-case ASCII letter as ``UPPER`` (1) and its lower-case letter,
and a run of two or more capitals not followed by a lower-case letter (a word in capitals) as
``CAPS`` (2) and the run in lower case.  The model then sees every word in one spelling
whatever its case (the contexts after "The" and "the" are one), and codes the capital as one
cheap symbol in the context that predicts it (after ". ", at a line's start).  In exact
streams at level 6, alice29.txt -0.38%, cp.html -1.05%, fields.c -0.95%; verse whose every line
starts with a capital (plrabn12.txt) +0.21%, so the encoder decides per stream
(``seqzip.session.fold_pays``).

A text holding byte 1 or 2 is never folded.  Only the canonical form unfolds (``Unfolder``
folds what it unfolds again and compares): an escape not followed by a lower-case letter, or a
spelling ``fold`` would not write ("\\x02a" for "A"), is damage (``CorruptError``), so a stream
decodes only from the one folded form of its data.

    >>> fold(b"The BBC said: OK, McDonald")
    b'\\x01the \\x02bbc said: \\x02ok, \\x01mc\\x01donald'
    >>> unfold(fold(b"The BBC said: OK, McDonald"))
    b'The BBC said: OK, McDonald'
"""
from __future__ import annotations

import re

from .errors import CorruptError

UPPER = 1  # the next letter is a capital
CAPS = 2  # the lower-case letters that follow are capitals
ESCAPES = bytes((UPPER, CAPS))
SAMPLE = 32 << 10  # bytes of a stream's start the encoder's choice reads (``fold_pays``)
# The longest input the encoder folds: the gain falls with the length, as the model learns each
# case's statistics apart (cm -6, exact streams: 24 texts of 3-20 KB, man pages, C, HTML and
# Python, -2.0% in all; alice29.txt, 152 KB, -0.38%; asyoulik.txt -0.02%; lcet10.txt, 427 KB,
# +0.09%; plrabn12.txt +0.21%).
MAX_FOLDED = 256 << 10


def foldable(present: bytes) -> bool:
    """Whether data holding the byte values ``present`` has capitals to fold and no escape
    byte (which would make its folded form ambiguous).

        >>> foldable(b" Aab"), foldable(b" ab"), foldable(b"\\x01Aa")
        (True, False, False)
    """
    return any(65 <= b <= 90 for b in present) and not any(b in present for b in ESCAPES)


def coded_values(present: bytes) -> bytes:
    """The byte values the folded form of data holding ``present`` may hold: those, the
    lower-case letters of its capitals and the escapes (the capitals stay listed: the values
    a stream codes over may be more than it holds).

        >>> coded_values(b" Aab"), coded_values(b" ab")
        (b'\\x01\\x02 Aab', b' ab')
    """
    capitals = {b for b in present if 65 <= b <= 90}
    if not capitals:
        return present
    return bytes(sorted(set(present) | {b + 32 for b in capitals} | set(ESCAPES)))

_CAPS = re.compile(rb"[A-Z]{2,}+(?![a-z])")
_UPPER = re.compile(rb"[A-Z]")
_TOKEN = re.compile(rb"\x02([a-z]+)|\x01([a-z])|[\x01\x02]")
_TAIL = re.compile(rb"(?:\x02[a-z]*|\x01)\Z")
_CAPS_END = re.compile(rb"[A-Z]+\Z")


def _caps(m: re.Match) -> bytes:
    return b"\x02" + m.group().lower()


def _upper(m: re.Match) -> bytes:
    return b"\x01" + m.group().lower()


def fold(data: bytes) -> bytes:
    """The folded form of ``data`` (which holds neither escape)."""
    return _UPPER.sub(_upper, _CAPS.sub(_caps, data))


def _unescape(m: re.Match) -> bytes:
    if m.group(1) is not None:
        return m.group(1).upper()
    if m.group(2) is not None:
        return m.group(2).upper()
    raise CorruptError("case-folded text holds an escape without its letter (corrupt stream)")


def unfold(folded: bytes) -> bytes:
    """``data`` from ``fold(data)``.

    Raises:
        CorruptError: an escape not followed by a lower-case letter.
    """
    return _TOKEN.sub(_unescape, folded)


class Folder:
    """``fold`` over a stream given in chunks: a run of capitals at a chunk's end waits for
    the next (whether a lower-case letter follows decides its form).

        >>> f = Folder()
        >>> f.feed(b"NASA A") + f.feed(b"ND nasa") + f.close() == fold(b"NASA AND nasa")
        True
    """

    def __init__(self) -> None:
        self._carry = b""

    def feed(self, chunk: bytes) -> bytes:
        data = self._carry + bytes(chunk)
        end = _CAPS_END.search(data)
        cut = end.start() if end else len(data)
        self._carry = data[cut:]
        return fold(data[:cut])

    def close(self) -> bytes:
        out, self._carry = fold(self._carry), b""
        return out


class Unfolder:
    """``unfold`` over a stream decoded in chunks (an escape, or a run of capitals, at a
    chunk's end waits for the next), refusing any spelling but ``fold``'s: what it returns is
    folded again and must give back what it was given.

        >>> u = Unfolder()
        >>> u.feed(b"\\x02na") + u.feed(b"sa \\x01") + u.feed(b"x") + u.close()
        b'NASA X'
        >>> Unfolder().feed(b"\\x02a ")
        Traceback (most recent call last):
        ...
        seqzip.errors.CorruptError: case-folded text is not in its one spelling (corrupt stream)
    """

    def __init__(self) -> None:
        self._carry = b""
        self._refold = Folder()
        self._given = bytearray()  # folded bytes unfolded whose refolding is still held back

    def _check(self, given: bytes, again: bytes) -> None:
        self._given += given
        if not self._given.startswith(again):
            raise CorruptError("case-folded text is not in its one spelling (corrupt stream)")
        del self._given[:len(again)]

    def feed(self, chunk: bytes) -> bytes:
        data = self._carry + bytes(chunk)
        tail = _TAIL.search(data)
        cut = tail.start() if tail else len(data)
        self._carry = data[cut:]
        out = unfold(data[:cut])
        self._check(data[:cut], self._refold.feed(out))
        return out

    def close(self) -> bytes:
        """The rest.

        Raises:
            CorruptError: the stream ends with an escape without its letter, or is not in
                ``fold``'s spelling.
        """
        given, self._carry = self._carry, b""
        out = unfold(given)
        self._check(given, self._refold.feed(out) + self._refold.close())
        if self._given:
            raise CorruptError("case-folded text is not in its one spelling (corrupt stream)")
        return out

