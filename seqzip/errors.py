"""Exceptions raised by seqzip.

Bad settings raise ``ValueError``; problems with compressed data raise a ``SeqzipError``
subclass that names what is wrong.  Truncated data is also an ``EOFError``, as in ``bz2``.
"""


class SeqzipError(Exception):
    """Base class of errors about seqzip streams."""


class NotSeqzipError(SeqzipError):
    """The data does not start with the seqzip magic bytes."""


class UnsupportedVersionError(SeqzipError):
    """The stream uses a format version this build cannot read."""


class CorruptError(SeqzipError):
    """A checksum failed or a header or frame field is impossible."""


class TruncatedError(SeqzipError, EOFError):
    """The compressed data ended before the end of the stream."""


class DictionaryError(SeqzipError):
    """The stream was coded from a model file (``--dict``) that was not given, or another one
    was given."""
