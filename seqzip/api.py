"""The library interface, shaped like ``bz2`` / ``lzma``.

    >>> import seqzip
    >>> data = b"abracadabra " * 50
    >>> packed = seqzip.compress(data, model="order2", level=6)
    >>> assert seqzip.decompress(packed) == data
    >>> assert seqzip.decompress(packed + packed) == data + data  # concatenated streams

A stream's header holds the alphabet, the length and a checksum of the whole input, so the
compressor reads its input twice: a seekable input is scanned and rewound, anything else is first
spooled to a temporary file (memory stays bounded; disk holds the copy).
"""
from __future__ import annotations

import builtins
import dataclasses
import io
import os
import tempfile
from typing import IO, Any, BinaryIO

from .container import DEFAULT_FRAME, DEFAULT_MAX_LENGTH, DEFAULT_MAX_MEMORY
from .decoder import (SeqzipDecompressor, decompress_cold, decompress_first,
                      decompress_piece)
from .errors import CorruptError, NotSeqzipError, TruncatedError
from .models import DEFAULT_LEVEL, DEFAULT_MODEL, check_level, make_config, spec_by_name
from .pieces import (MAX_PIECE, MIN_PIECE, LocalEngine, StreamSpan, compress_first,
                     compress_warm, compress_warm_piece, compress_whole, decompress_spans,
                     piece_size, stream_spans, warm_layout)
from .predictor import Predictor
from .session import (CHUNK, SPOOL_MEMORY, Limits, Progress, _check_frame_size,
                      _check_positive, _check_processes, _check_seed,
                      _scan, _seekable, compress_stream, compress_with_dictionary,
                      config_for_header, load_dictionary, model_for_header,
                      spec_for_header, spooled, symbols_of)

__all__ = ["compress", "decompress", "open", "compress_file", "decompress_file",
           "SeqzipCompressor", "SeqzipDecompressor", "SeqzipFile", "Limits", "StreamSpan",
           "stream_spans", "piece_size", "symbols_of", "spec_for_header", "config_for_header",
           "model_for_header", "load_dictionary", "MIN_PIECE", "MAX_PIECE"]


def compress_file(src: IO[bytes], dst: IO[bytes], *, model: str = DEFAULT_MODEL,
                  level: int = DEFAULT_LEVEL, seed: int = 0, frame_size: int = DEFAULT_FRAME,
                  config: Any = None, progress: Progress | None = None,
                  processes: int = 1, dictionary: Predictor | str | os.PathLike | None = None,
                  scheduler: Any = None) -> int:
    """Compress everything ``src`` yields into one stream written to ``dst``.

    Memory holds one frame of input and its payload.  A non-seekable ``src`` is spooled to a
    temporary file first.  ``config`` (a config dataclass of ``model``) overrides ``level``.
    ``progress(n)`` is called with the number of input bytes coded after each frame.

    With ``processes`` > 1 the input is written as a piece set: a prefix (1/8 of it, at most
    1 MiB) coded here, then pieces of 64 KiB to 8 MiB coded by that many worker processes,
    each starting from the model's state after the prefix (see README, ``-T``).  With
    ``scheduler`` (a Dask scheduler's address or a ``distributed.Client``) the pieces are
    Dask tasks on that cluster (``processes``: pieces side by side; 1: one per worker
    thread), and an input too small to cut is one task.  The output is the same whatever
    ran it.

    With ``dictionary`` (a model file's path, or a :class:`~seqzip.predictor.Predictor`), the
    model is that file's, and coding starts from its trained state and keeps adapting;
    ``model``, ``level``, ``config`` and ``seed`` are the file's, and the input is one stream
    (``processes`` is not used).  The header names the file by its hash: decoding needs the
    same file.

    Returns:
        The number of bytes written.
    Raises:
        ValueError: unknown model, bad level, seed, frame size or process count; a model file
            that cannot be read or an input byte outside its alphabet.
        SeqzipError: the input changed while it was being compressed.

        >>> src, dst = io.BytesIO(b"to be or not to be " * 20), io.BytesIO()
        >>> written = compress_file(src, dst, model="ctw", level=2)
        >>> written == len(dst.getvalue()), decompress(dst.getvalue())[:9]
        (True, b'to be or ')
    """
    if dictionary is not None:
        return compress_with_dictionary(src, dst, load_dictionary(dictionary), frame_size,
                                        progress)
    spec = spec_by_name(model)
    if config is None:
        config = make_config(model, level)
    elif not isinstance(config, spec.config_class):
        raise ValueError(f"config must be a {spec.config_class.__name__} for model {model!r}")
    _check_seed(seed)
    _check_frame_size(frame_size)
    _check_processes(processes)
    if not _seekable(src):
        with spooled(src) as spool:
            return compress_file(spool, dst, model=model, seed=seed, frame_size=frame_size,
                                 config=config, progress=progress, processes=processes,
                                 scheduler=scheduler)
    if processes > 1 or scheduler is not None:
        start = src.tell()
        length, alphabet, _ = _scan(src)
        src.seek(start)
        with _engine(processes, scheduler) as engine:
            lengths = warm_layout(length, engine.processes)
            if len(lengths) > 1:
                args = (model, config, seed, frame_size, alphabet)
                return compress_warm(src, dst, lengths, engine,
                                     lambda d: compress_first(d, *args), compress_warm_piece,
                                     args, progress)
            if scheduler is not None:  # a small input: one stream, as one task
                job = (src.read(), model, config, seed, frame_size)
                return dst.write(next(engine.map(compress_whole, [job]))) or 0
    return compress_stream(src, dst, spec, config, seed, frame_size, progress)


def _engine(processes: int, scheduler: Any) -> Any:
    """Where pieces run: a Dask cluster (``scheduler``: its address or a Client) or local
    worker processes."""
    if scheduler is not None:
        from .cluster import DaskEngine
        return DaskEngine(scheduler, processes)
    return LocalEngine(processes)


def compress(data: bytes, level: int = DEFAULT_LEVEL, *, model: str = DEFAULT_MODEL,
             seed: int = 0, dictionary: Predictor | str | os.PathLike | None = None) -> bytes:
    """Compress ``data`` into one seqzip stream (the level may be given by position, as with
    ``bz2.compress(data, 9)``).

    Args:
        data: bytes-like input.
        level: 1 (fast) ... 9 (strong).
        model: model family (``seqzip.models.MODELS``).
        seed: seed of the model's PRNG, stored in the header.
        dictionary: a model file (path or :class:`~seqzip.predictor.Predictor`) to start from
            (see :func:`compress_file`); decompress with the same one.
    Raises:
        ValueError: unknown model, bad level or seed.

        >>> from seqzip.predictor import Predictor
        >>> import random
        >>> words, r = b"the cat sat on a mat".split(), random.Random(1)
        >>> d = Predictor("order2", 6); _ = d.feed(b" ".join(r.choice(words) for _ in range(2000)))
        >>> text = b" ".join(r.choice(words) for _ in range(1000))
        >>> packed = compress(text, dictionary=d)
        >>> decompress(packed, dictionary=d) == text
        True
    """
    out = io.BytesIO()
    compress_file(io.BytesIO(memoryview(data).tobytes()), out, model=model, level=level,
                  seed=seed, dictionary=dictionary)
    return out.getvalue()



def decompress(data: bytes, *, dictionary: Predictor | str | os.PathLike | None = None,
               max_length: int | None = DEFAULT_MAX_LENGTH,
               max_memory: int | None = DEFAULT_MAX_MEMORY) -> bytes:
    """Decompress ``data``: one or more concatenated seqzip streams (``dictionary``: the
    model file streams coded with ``--dict`` need; other streams ignore it).

    ``max_length`` bounds the decoded bytes and ``max_memory`` the memory of a stream's model
    (see :class:`Limits`; ``None``: no limit); streams asking for more are refused before
    anything is decoded.

    Raises:
        DictionaryError: a stream needs a model file that was not given, or another one.
        TruncatedError (also an EOFError): the data ends inside a stream.
        NotSeqzipError: not a seqzip stream.
        CorruptError: a damaged stream, or data that is not a stream after the last one.
        UnsupportedVersionError: see :mod:`seqzip.errors`.
        LimitError: a stream asks for more than the limits.
        DictionaryError: a stream needs a model file (``dictionary``) not given.

        >>> decompress(compress(b"one ") + compress(b"two", model="order2"))
        b'one two'
    """
    d = SeqzipDecompressor(dictionary, Limits(max_length, max_memory))
    d._buffer += memoryview(data).cast("B")
    results, streams = [], 0
    while True:
        try:
            d._run(None)
        except NotSeqzipError:
            if not streams:
                raise
            raise CorruptError(f"{len(d._buffer):,} bytes after the end of the last stream "
                               "are not a seqzip stream") from None
        results.append(d._take(-1))
        if not d._eof:
            raise TruncatedError("compressed data ended before the end of the stream")
        if not d._buffer:
            return b"".join(results)
        d._next_stream()
        streams += 1


class SeqzipCompressor:
    """Incremental compressor, like ``bz2.BZ2Compressor``.

    The header needs the alphabet, length and checksum of the whole input, so ``compress()``
    spools its input (in memory up to 8 MiB, then in a temporary file) and returns ``b""``;
    ``flush()`` codes the stream and returns it.  To keep the output out of memory too, use
    :func:`seqzip.open` or :func:`compress_file`, which write frames as they are made.

        >>> c = SeqzipCompressor(model="order2", level=6)
        >>> c.compress(b"hello "), c.compress(b"world")
        (b'', b'')
        >>> decompress(c.flush())
        b'hello world'
    """

    def __init__(self, level: int = DEFAULT_LEVEL, *, model: str = DEFAULT_MODEL,
                 seed: int = 0) -> None:
        self._config = make_config(model, level)  # validates model and level now
        self._model = model
        self._seed = _check_seed(seed)
        self._spool: IO[bytes] | None = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)

    def compress(self, data: bytes) -> bytes:
        if self._spool is None:
            raise ValueError("compressor has been flushed")
        self._spool.write(data)
        return b""

    def flush_to(self, dst: IO[bytes], progress: Progress | None = None) -> int:
        """Finish the stream, writing it to ``dst``; return the bytes written."""
        if self._spool is None:
            raise ValueError("repeated call to flush()")
        spool, self._spool = self._spool, None
        with spool:
            spool.seek(0)
            return compress_file(spool, dst, model=self._model, seed=self._seed,
                                 config=self._config, progress=progress)

    def flush(self) -> bytes:
        """Finish the stream and return it."""
        out = io.BytesIO()
        self.flush_to(out)
        return out.getvalue()


class _DecompressReader(io.RawIOBase):
    """Raw reader over concatenated streams in a binary file object: one decompressor goes
    from stream to stream over one buffer (linear time however many streams there are)."""

    def __init__(self, fp: IO[bytes], dictionary: Predictor | None = None,
                 limits: Limits | None = None) -> None:
        self._fp = fp
        self._decompressor = SeqzipDecompressor(dictionary, limits)
        self._started = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        with memoryview(buffer) as view, view.cast("B") as out:
            data = self.read(len(out))
            out[:len(data)] = data
        return len(data)

    def _fill(self) -> bool:
        data = self._fp.read(CHUNK)
        if data:
            self._started = True
            self._decompressor._buffer += data
        return bool(data)

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            return self.readall()
        if size == 0:
            return b""
        d = self._decompressor
        while not d._pending:
            if d._eof:
                if not d._buffer and not self._fill():
                    return b""
                d._next_stream()
                self._streams += 1
            try:
                d._run(size)
            except NotSeqzipError:
                if not self._streams:
                    raise
                raise CorruptError("data after the end of the last stream is not a seqzip "
                                   "stream") from None
            if not d._pending and not d._eof and not self._fill():
                if not self._started:
                    return b""  # an empty file holds no stream, as with bz2
                raise TruncatedError("compressed data ended before the end of the stream")
        return d._take(size)

    _streams = 0  # streams finished before the current one


class SeqzipFile(io.BufferedIOBase):
    """A seqzip file opened for reading or writing, like ``bz2.BZ2File``.

    Reading decodes concatenated streams frame by frame; ``tell()`` counts uncompressed bytes
    and ``seek()`` moves forward by decoding and backward by decoding again from the start, as
    ``bz2`` does (so ``tarfile.open(fileobj=f, mode="r:")`` works).  Writing codes every
    ``block_size`` bytes of input (1 MiB by default) as a stream of its own and writes it at
    once: a file being written holds every completed block, ``flush()`` codes what is buffered
    so that the file decodes up to there, and a crash loses at most one block.  Each block's
    model starts afresh: larger blocks compress better, and :func:`compress_file` codes a whole
    input as one stream.  Mode ``"a"`` appends streams.

        >>> buffer = io.BytesIO()
        >>> with SeqzipFile(buffer, "wb", model="order2") as f:
        ...     _ = f.write(b"line one\\nline two\\n")
        >>> _ = buffer.seek(0)
        >>> with SeqzipFile(buffer) as f:
        ...     f.readline(), f.tell()
        (b'line one\\n', 9)
    """

    def __init__(self, filename: str | bytes | os.PathLike | BinaryIO, mode: str = "r",
                 level: int = DEFAULT_LEVEL, *, model: str = DEFAULT_MODEL, seed: int = 0,
                 block_size: int = DEFAULT_FRAME, max_length: int | None = DEFAULT_MAX_LENGTH,
                 max_memory: int | None = DEFAULT_MAX_MEMORY) -> None:
        self._limits = Limits(max_length, max_memory)
        if mode not in ("r", "rb", "w", "wb", "x", "xb", "a", "ab"):
            raise ValueError(f"invalid mode {mode!r}")
        self._reading = mode.startswith("r")
        if not self._reading:
            make_config(model, level)  # ValueError for bad settings before the file is made
            _check_seed(seed)
            _check_positive("block_size", block_size)
        self._settings = dict(model=model, level=level, seed=seed)
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
        return io.BufferedReader(_DecompressReader(self._fp, None, self._limits))

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

    def _write_block(self) -> None:
        data, self._pending = bytes(self._pending), bytearray()
        self._fp.write(compress(data, self._settings["level"], model=self._settings["model"],
                                seed=self._settings["seed"]))
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
        """Buffer ``data``; every full block is coded and written at once."""
        self._check(False)
        data = memoryview(data).cast("B")
        self._pending += data
        self._pos += len(data)
        while len(self._pending) >= self._block_size:
            rest = self._pending[self._block_size:]
            del self._pending[self._block_size:]
            self._write_block()
            self._pending = rest
        return len(data)


def open(filename: str | bytes | os.PathLike | BinaryIO, mode: str = "rb",
         level: int = DEFAULT_LEVEL, *, model: str = DEFAULT_MODEL, seed: int = 0,
         encoding: str | None = None, errors: str | None = None,
         newline: str | None = None, block_size: int = DEFAULT_FRAME,
         max_length: int | None = DEFAULT_MAX_LENGTH,
         max_memory: int | None = DEFAULT_MAX_MEMORY) -> SeqzipFile | io.TextIOWrapper:
    """Open a seqzip file in binary (``"rb"``, ``"wb"``, ``"xb"``, ``"ab"``) or text mode (the
    same with ``"t"``), like ``bz2.open``.  See :class:`SeqzipFile` for ``block_size`` and
    :class:`Limits` for the limits of reading.

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
    binary = SeqzipFile(filename, mode.replace("t", ""), check_level(level), model=model,
                        seed=seed, block_size=block_size, max_length=max_length,
                        max_memory=max_memory)
    if "t" in mode:
        return io.TextIOWrapper(binary, encoding=io.text_encoding(encoding), errors=errors,
                                newline=newline)
    return binary


def decompress_file(src: IO[bytes], dst: IO[bytes], progress: Progress | None = None, *,
                    processes: int = 1, scheduler: Any = None,
                    dictionary: Predictor | str | os.PathLike | None = None,
                    max_length: int | None = DEFAULT_MAX_LENGTH,
                    max_memory: int | None = DEFAULT_MAX_MEMORY) -> int:
    """Decompress all streams in ``src`` into ``dst``, a frame at a time; return bytes written.

    ``progress(n)`` is called with the number of bytes decoded.  With ``processes`` > 1 and a
    seekable ``src`` holding several streams or a piece set (as ``compress_file(...,
    processes=N)`` writes), they are decoded by that many worker processes (or, with
    ``scheduler``, as Dask tasks).  ``max_length`` and ``max_memory``: see :class:`Limits`.

    Raises:
        TruncatedError: ``src`` is empty or ends inside a stream.
        NotSeqzipError, UnsupportedVersionError, CorruptError: bad input.
        LimitError: a stream asks for more than the limits.
        DictionaryError: a stream needs a model file (``dictionary``) not given.

        >>> out = io.BytesIO()
        >>> decompress_file(io.BytesIO(compress(b"abc" * 50, model="order2")), out)
        150
    """
    _check_processes(processes)
    limits = Limits(max_length, max_memory)
    dictionary = load_dictionary(dictionary)
    if (processes > 1 or scheduler is not None) and _seekable(src) and dictionary is None:
        start = src.tell()
        spans = stream_spans(src)
        src.seek(start)
        if (len(spans) > 1 or scheduler is not None) and all(s.length <= MAX_PIECE
                                                             for s in spans):
            before = 0
            for span in spans:
                limits.check_length(before, span.header)
                before += span.length
            with _engine(processes, scheduler) as engine:
                return decompress_spans(src, dst, spans, engine, decompress_first,
                                        (decompress_piece, decompress_cold),
                                        (limits.max_memory,), progress)
    reader = _DecompressReader(src, dictionary, limits)
    written = 0
    while chunk := reader.read(CHUNK * 16):
        written += dst.write(chunk) or 0
        if progress:
            progress(len(chunk))
    if not reader._started:
        raise TruncatedError("empty input: not a seqzip stream")
    return written


def config_with(model: str, level: int = DEFAULT_LEVEL, **settings: Any) -> Any:
    """The config of ``model`` at ``level`` with some of its fields set (for ``config=`` of
    :func:`compress` and :func:`compress_file`), checked by the config itself.

        >>> config_with("lstm", 1, optimizer="riemannian").optimizer
        'riemannian'

    Raises:
        ValueError: an unknown model or level, a field the model's config does not have, or a
            value it refuses.
    """
    from .models import make_config

    config = make_config(model, level)
    unknown = sorted(set(settings) - {field.name for field in dataclasses.fields(config)})
    if unknown:
        raise ValueError(f"model {model} has no setting {', '.join(unknown)}")
    return dataclasses.replace(config, **settings)


def symbols_coded() -> int:
    """Symbols coded, decoded or scored by the models in this process so far: a counter that
    only grows, read while another thread codes to measure its progress and rate (the coding
    loop lets the interpreter go every few milliseconds).  Worker processes (``processes=``)
    count in their own.

        >>> before = symbols_coded()
        >>> _ = compress(b"abc" * 100, model="order2")
        >>> symbols_coded() - before
        300
    """
    from ._core import symbols_done

    return symbols_done()
