"""Exceptions raised by seqzip.

Bad settings raise ``ValueError`` (an unknown model, a bad level, a model file that
contradicts the settings given with it).  Problems with compressed data raise a
``SeqzipError`` subclass that names what is wrong, and every one of them is caught as ``bz2``'s
are: ``SeqzipError`` is an ``OSError`` (what ``bz2`` raises for invalid data), and
``TruncatedError`` is also an ``EOFError`` (what ``BZ2File.read`` raises for a truncated
file) and a ``ValueError`` (what ``bz2.decompress`` raises for one)::

    OSError
     +-- SeqzipError                  bad compressed data, or a stream the decoder refuses
          +-- NotSeqzipError          no seqzip magic
          +-- UnsupportedVersionError a format version this build does not read
          +-- CorruptError            a failed checksum or an impossible field
          +-- TruncatedError          (also EOFError, ValueError) the data ends inside a stream
          +-- LimitError              the stream asks for more than the decoder's limits
          +-- DictionaryError         the stream needs a model file that was not given
     +-- ChildProcessError
          +-- WorkerError             a worker process (-T) ended before its piece was done

    >>> import bz2, seqzip
    >>> for module in (bz2, seqzip):
    ...     try:
    ...         module.decompress(b"definitely not compressed data")
    ...     except OSError:
    ...         print(module.__name__, "refused it")
    bz2 refused it
    seqzip refused it

A ``SeqzipError`` carries its message only (``errno`` and ``strerror`` are None).
"""


class SeqzipError(OSError):
    """Base class of errors about seqzip streams (an ``OSError``, as ``bz2``'s invalid data).

        >>> import seqzip
        >>> try:
        ...     seqzip.decompress(b"not a stream")
        ... except seqzip.SeqzipError as exc:
        ...     print(type(exc).__name__)
        NotSeqzipError
    """


class NotSeqzipError(SeqzipError):
    """The data does not start with the seqzip magic bytes.

        >>> import seqzip
        >>> seqzip.decompress(b"PK\\x03\\x04")
        Traceback (most recent call last):
        ...
        seqzip.errors.NotSeqzipError: not a seqzip stream (bad magic bytes)
    """


class UnsupportedVersionError(SeqzipError):
    """The stream uses a format version this build cannot read.

        >>> import seqzip
        >>> packed = bytearray(seqzip.compress(b"x", model="order2"))
        >>> packed[4] = 99
        >>> seqzip.decompress(bytes(packed))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqzip.errors.UnsupportedVersionError: stream has format version 99; ...
    """


class CorruptError(SeqzipError):
    """A checksum failed or a header or frame field is impossible.

        >>> import seqzip
        >>> packed = bytearray(seqzip.compress(b"hello", model="order2"))
        >>> packed[-1] ^= 0xFF
        >>> seqzip.decompress(bytes(packed))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqzip.errors.CorruptError: ...
    """


class TruncatedError(SeqzipError, EOFError, ValueError):
    """The compressed data ended before the end of the stream (also an ``EOFError`` and a
    ``ValueError``, as ``bz2`` raises for truncated data from a file and from ``decompress``).

        >>> import seqzip
        >>> seqzip.decompress(seqzip.compress(b"hello", model="order2")[:-3])
        Traceback (most recent call last):
        ...
        seqzip.errors.TruncatedError: compressed data ended before the end of the stream
    """


class DictionaryError(SeqzipError):
    """The stream was coded from a model file (``--dict``) that was not given, or another one
    was given; or a model file is not valid (:class:`ModelFileError`).

        >>> import seqzip
        >>> from seqzip.predictor import Predictor
        >>> packed = seqzip.compress(b"hello", dictionary=Predictor("order2", 1))
        >>> seqzip.decompress(packed)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqzip.errors.DictionaryError: stream was coded with model file ...
    """


class ModelFileError(DictionaryError, ValueError):
    """A model file (``.sqm``) is not one this build can load: not a model file, a checksum
    mismatch, malformed metadata, an array larger than declared, or a state no model could
    have reached (an index, count or link out of range).  Model files are untrusted input:
    loading one checks everything before using it.  Also a ``ValueError`` (a bad argument).

        >>> from seqzip.predictor import Predictor
        >>> Predictor.from_bytes(b"nope" + bytes(100))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqzip.errors.ModelFileError: not a seqzip model file
    """


class LimitError(SeqzipError):
    """The stream asks for more than the decoder's limits allow (its declared length or its
    model's memory): the data may be fine; raise the limit to decode it.

        >>> import seqzip
        >>> packed = seqzip.compress(b"hello" * 100, model="order2")
        >>> seqzip.decompress(packed, max_length=100)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqzip.errors.LimitError: stream declares 500 bytes of output, over the limit of 100 ...
    """


class WorkerError(ChildProcessError):
    """A worker process of ``processes`` > 1 (``-T``) ended before its piece was done (killed,
    e.g. by the out-of-memory killer): not a data error, the run cannot finish.  The pool's
    other workers are ended with it; nothing waits for a result that will not come.

        >>> issubclass(WorkerError, OSError)
        True
    """
