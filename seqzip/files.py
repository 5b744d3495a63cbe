"""Seqzip files, shaped like ``bz2.BZ2File`` / ``bz2.open``.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> with open(buffer, "wb", model="order2") as f:
    ...     _ = f.write(b"line one\\nline two\\n")
    >>> _ = buffer.seek(0)
    >>> with open(buffer) as f:
    ...     f.readlines()
    [b'line one\\n', b'line two\\n']
"""
from __future__ import annotations

import builtins
import io
import os
from typing import IO, Any, BinaryIO

from .container import DEFAULT_MAX_LENGTH, DEFAULT_MAX_MEMORY
from .errors import CorruptError, NotSeqzipError, TruncatedError
from .incremental import DEFAULT_BLOCK, SeqzipDecompressor
from .predictor import Predictor
from .session import CHUNK, Limits, _check_positive, _seekable, load_dictionary, stream_settings

__all__ = ["SeqzipFile", "open"]


class _DecompressReader(io.RawIOBase):
    """Raw reader over concatenated streams in a binary file object: one decompressor goes
    from stream to stream over one buffer (linear time however many streams there are)."""

    def __init__(self, fp: IO[bytes], dictionary: Predictor | None = None,
                 limits: Limits | None = None) -> None:
        self._fp = fp
        self._decompressor = SeqzipDecompressor(dictionary, limits)
        self.started = False  # some input was read
        self._streams = 0  # streams finished before the current one

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        with memoryview(buffer) as view, view.cast("B") as out:
            data = self.read(len(out))
            out[:len(data)] = data
        return len(data)

    def _input(self) -> bytes:
        data = self._fp.read(CHUNK)
        self.started = self.started or bool(data)
        return data

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            return self.readall()
        if size == 0:
            return b""
        d = self._decompressor
        while True:
            data = b""
            if d.eof:
                if not d.next_stream():
                    data = self._input()
                    if not data:
                        return b""
                    d.next_stream(data)
                    data = b""
                self._streams += 1
            elif d.needs_input:
                data = self._input()
                if not data:
                    if not self.started:
                        return b""  # an empty file reads as nothing, as with gzip
                    raise TruncatedError("compressed data ended before the end of the stream")
            try:
                out = d.decompress(data, size)
            except NotSeqzipError:
                if not self._streams:
                    raise
                raise CorruptError("data after the end of the last stream is not a seqzip "
                                   "stream") from None
            if out:
                return out


class SeqzipFile(io.BufferedIOBase):
    """A seqzip file opened for reading or writing, like ``bz2.BZ2File``.

    Reading decodes concatenated streams frame by frame; ``tell()`` counts uncompressed bytes
    and ``seek()`` moves forward by decoding and backward by decoding again from the start, as
    ``bz2`` does (so ``tarfile.open(fileobj=f, mode="r:")`` works).  Writing codes every
    ``block_size`` bytes of input (1 MiB by default) as a stream of its own and writes it at
    once: a file being written holds every completed block, ``flush()`` codes what is buffered
    so that the file decodes up to there, and a crash loses at most one block.  Each block's
    model starts afresh (or from ``dictionary``): larger blocks compress better, and
    :func:`~seqzip.api.compress_file` codes a whole input as one stream.  Mode ``"a"``
    appends streams.

    ``level`` (or ``bz2``'s ``compresslevel``), ``model``, ``seed`` and ``dictionary`` are
    the writer's settings, as for :class:`~seqzip.incremental.SeqzipCompressor` (with a
    dictionary, the others are the file's: leave them unset or give the file's).  Reading
    takes ``dictionary`` (the model file streams coded from one need) and the limits
    (:class:`~seqzip.session.Limits`).

        >>> buffer = io.BytesIO()
        >>> with SeqzipFile(buffer, "wb", model="order2") as f:
        ...     _ = f.write(b"line one\\nline two\\n")
        >>> _ = buffer.seek(0)
        >>> with SeqzipFile(buffer) as f:
        ...     f.readline(), f.tell()
        (b'line one\\n', 9)
    """

    def __init__(self, filename: str | bytes | os.PathLike | BinaryIO, mode: str = "r",
                 level: int | None = None, *, model: str | None = None,
                 seed: int | None = None, compresslevel: int | None = None,
                 dictionary: Predictor | str | os.PathLike | None = None,
                 block_size: int = DEFAULT_BLOCK, max_length: int | None = DEFAULT_MAX_LENGTH,
                 max_memory: int | None = DEFAULT_MAX_MEMORY) -> None:
        self._limits = Limits(max_length, max_memory)
        if mode not in ("r", "rb", "w", "wb", "x", "xb", "a", "ab"):
            raise ValueError(f"invalid mode {mode!r}")
        self._reading = mode.startswith("r")
        self._dictionary = load_dictionary(dictionary, max_memory if self._reading else None)
        if not self._reading:  # ValueError for bad settings before the file is made
            self._settings = stream_settings(model, level, seed, compresslevel=compresslevel,
                                             dictionary=self._dictionary)
            _check_positive("block_size", block_size)
        self._block_size = block_size
        self._pending = bytearray()  # written, not yet coded
        self._streams = 0  # streams written
        if isinstance(filename, (str, bytes, os.PathLike)):
            self._fp = builtins.open(filename, mode[0] + "b")
            self._close_fp = True
        elif hasattr(filename, "read") or hasattr(filename, "write"):
            self._fp = filename
            self._close_fp = False
        else:
            raise TypeError("filename must be a str, bytes, path or file object")
        self._start = 0  # where the compressed data starts in the file object
        if self._reading and _seekable(self._fp):
            self._start = self._fp.tell()
        self._pos = 0  # uncompressed bytes read or written
        self._buffer = self._new_reader() if self._reading else None
        self._closed = False

    def _new_reader(self) -> io.BufferedReader:
        return io.BufferedReader(_DecompressReader(self._fp, self._dictionary, self._limits))

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._closed:
            return
        try:
            if not self._reading:
                if self._pending or not self._streams:  # an empty file is an empty stream
                    self._write_block()
                self._fp.flush()
        finally:
            self._closed = True
            if self._close_fp:
                self._fp.close()

    def _write_block(self, block: Any = None) -> None:
        """Code ``block`` (default: the buffered input, which is emptied) as one stream."""
        if block is None:
            block, self._pending = self._pending, bytearray()
        self._settings.write(io.BytesIO(block), self._fp)
        self._fp.flush()  # the block reaches the file now, not when a buffer fills
        self._streams += 1

    def flush(self) -> None:
        """Writing: code the buffered input as a stream and flush the file object."""
        if self._closed:
            raise ValueError("I/O operation on closed file")
        if not self._reading:
            if self._pending:
                self._write_block()
            self._fp.flush()

    def _check(self, reading: bool) -> None:
        if self._closed:
            raise ValueError("I/O operation on closed file")
        if reading != self._reading:
            raise io.UnsupportedOperation("file not open for " + ("reading" if reading else
                                                                  "writing"))

    def readable(self) -> bool:
        return not self._closed and self._reading

    def writable(self) -> bool:
        return not self._closed and not self._reading

    def seekable(self) -> bool:
        return not self._closed and self._reading and _seekable(self._fp)

    def fileno(self) -> int:
        return self._fp.fileno()

    def tell(self) -> int:
        """The position in the uncompressed data."""
        if self._closed:
            raise ValueError("I/O operation on closed file")
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move to ``offset`` in the uncompressed data (reading only; may decode a lot).

        Forward moves decode and discard; backward moves start again from the beginning.
        ``SEEK_END`` decodes to the end to learn the length.
        """
        self._check(True)
        if not _seekable(self._fp):
            raise io.UnsupportedOperation("the underlying file is not seekable")
        if whence == io.SEEK_SET:
            target = offset
        elif whence == io.SEEK_CUR:
            target = self._pos + offset
        elif whence == io.SEEK_END:
            while self.read(CHUNK * 16):
                pass
            target = self._pos + offset
        else:
            raise ValueError(f"invalid whence ({whence!r})")
        if target < self._pos:
            self._fp.seek(self._start)
            self._buffer = self._new_reader()
            self._pos = 0
        target = max(target, 0)
        while self._pos < target and self.read(min(CHUNK * 16, target - self._pos)):
            pass
        return self._pos

    def _moved(self, data: bytes) -> bytes:
        self._pos += len(data)
        return data

    def read(self, size: int | None = -1) -> bytes:
        self._check(True)
        return self._moved(self._buffer.read(-1 if size is None else size))

    def read1(self, size: int = -1) -> bytes:
        self._check(True)
        return self._moved(self._buffer.read1(size))

    def readinto(self, b: Any) -> int:
        self._check(True)
        n = self._buffer.readinto(b)
        self._pos += n
        return n

    def readline(self, size: int | None = -1) -> bytes:
        self._check(True)
        return self._moved(self._buffer.readline(-1 if size is None else size))

    def peek(self, n: int = 0) -> bytes:
        self._check(True)
        return self._buffer.peek(n)

    def write(self, data: Any) -> int:
        """Buffer ``data``; every full block is coded and written at once.

        Linear in ``len(data)``: whole blocks are coded straight from ``data`` (one copy
        each, as the coder reads them), and the buffer never holds more than one block."""
        self._check(False)
        view = memoryview(data).cast("B")
        length, size = len(view), self._block_size
        self._pos += length
        if self._pending:  # complete the block begun by earlier writes
            need = size - len(self._pending)
            self._pending += view[:need]
            view = view[need:]
            if len(self._pending) == size:
                self._write_block()
        while len(view) >= size:
            self._write_block(view[:size])
            view = view[size:]
        self._pending += view
        return length


def open(filename: str | bytes | os.PathLike | BinaryIO, mode: str = "rb",
         level: int | None = None, *, model: str | None = None, seed: int | None = None,
         compresslevel: int | None = None,
         dictionary: Predictor | str | os.PathLike | None = None,
         encoding: str | None = None, errors: str | None = None,
         newline: str | None = None, block_size: int = DEFAULT_BLOCK,
         max_length: int | None = DEFAULT_MAX_LENGTH,
         max_memory: int | None = DEFAULT_MAX_MEMORY) -> SeqzipFile | io.TextIOWrapper:
    """Open a seqzip file in binary (``"rb"``, ``"wb"``, ``"xb"``, ``"ab"``) or text mode (the
    same with ``"t"``), like ``bz2.open``.  See :class:`SeqzipFile` for the settings
    (``level`` / ``compresslevel``, ``model``, ``seed``, ``dictionary``, ``block_size``) and
    :class:`~seqzip.session.Limits` for the limits of reading.  A stream coded from a model
    file is read with ``open(path, dictionary=that_file)``.

        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "notes.sqz")
        >>> with open(path, "wt", encoding="utf-8") as f:
        ...     _ = f.write("line one\\nline two\\n")
        >>> with open(path, "rt", encoding="utf-8") as f:
        ...     f.readlines()
        ['line one\\n', 'line two\\n']
    """
    if "t" in mode:
        if "b" in mode:
            raise ValueError(f"invalid mode {mode!r}")
    else:
        if encoding is not None or errors is not None or newline is not None:
            raise ValueError("encoding, errors and newline are for text mode only")
    binary = SeqzipFile(filename, mode.replace("t", ""), level, model=model, seed=seed,
                        compresslevel=compresslevel, dictionary=dictionary,
                        block_size=block_size, max_length=max_length, max_memory=max_memory)
    if "t" in mode:
        return io.TextIOWrapper(binary, encoding=io.text_encoding(encoding), errors=errors,
                                newline=newline)
    return binary


