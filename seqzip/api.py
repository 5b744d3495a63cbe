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
import collections
import dataclasses
import io
import os
import signal
import tempfile
import zlib
from typing import IO, Any, BinaryIO, Callable, Iterator

import numpy as np

from . import coder
from .container import (DEFAULT_FRAME, DEFAULT_MAX_LENGTH, DEFAULT_MAX_MEMORY,
                        DICTIONARY_VERSION, FRAME_HEAD, MAX_FRAME, NeedMoreData, StreamHeader,
                        block_bounds, block_check, check_one_symbol_length, frame_checks,
                        frame_size_on_disk, next_frame_symbols, pack_frame, parse_frame,
                        parse_frame_head, parse_header)
from .errors import (CorruptError, DictionaryError, LimitError, NotSeqzipError, SeqzipError,
                     TruncatedError)
from .models import (DEFAULT_LEVEL, DEFAULT_MODEL, Model, ModelSpec, check_level,
                     config_from_header, config_to_header, create, make_config, spec_by_id,
                     spec_by_name)
from .predictor import Predictor

CHUNK = 1 << 16
SPOOL_MEMORY = 8 << 20  # spooled input stays in memory up to this size, then goes to disk
# Independent pieces (``processes`` > 1): at least MIN_PIECE bytes, so that a model restart is
# paid on enough data, and at most MAX_PIECE, which bounds the memory of the pieces in flight.
MIN_PIECE = 64 << 10
MAX_PIECE = 8 << 20
Progress = Callable[[int], None]


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return seed


def _check_frame_size(frame_size: int) -> int:
    if isinstance(frame_size, bool) or not isinstance(frame_size, int) \
            or not 1 <= frame_size <= MAX_FRAME:
        raise ValueError(f"frame_size must be an integer in [1, {MAX_FRAME}], got {frame_size!r}")
    return frame_size


def spec_for_header(header: StreamHeader) -> ModelSpec:
    """The model family a stream header names.

    Raises:
        CorruptError: the header names no model this build knows.

        >>> header, _ = parse_header(compress(b"hi", model="ctw"))
        >>> spec_for_header(header).name
        'ctw'
    """
    spec = spec_by_id(header.model_id)
    if spec is None:
        raise CorruptError(f"unknown model id {header.model_id} in header")
    return spec


def config_for_header(header: StreamHeader) -> Any:
    """The model config stored in a stream header.

    Raises:
        CorruptError: the stored config does not describe a valid model.

        >>> header, _ = parse_header(compress(b"hi", 2, model="order2"))
        >>> config_for_header(header) == make_config("order2", 2)
        True
    """
    spec = spec_for_header(header)
    try:
        return config_from_header(spec.config_class, header.config, header.version)
    except (ValueError, TypeError) as exc:
        raise CorruptError(f"header holds an invalid {spec.name} config: {exc}") from None


def model_for_header(header: StreamHeader, dictionary: Predictor | None = None,
                     config: Any = None) -> Model | None:
    """Build the model a stream was coded with, from its header alone (None for empty data),
    or, for a stream coded from a model file, from that file's state (``dictionary``);
    ``config``, when given, is the header's already parsed.

    Raises:
        CorruptError: the stored config does not describe a valid model.
        DictionaryError: the stream needs a model file and ``dictionary`` is not that one.

        >>> header, _ = parse_header(compress(b"hi", model="order2"))
        >>> model_for_header(header).alphabet
        b'hi'
    """
    if header.dictionary:
        return _dictionary_model(header, dictionary)
    if config is None:
        config = config_for_header(header)
    if not header.alphabet:
        return None
    return create(spec_for_header(header).name, config, alphabet=header.alphabet,
                  seed=header.seed)


def load_dictionary(dictionary: Predictor | str | os.PathLike | None) -> Predictor | None:
    """A model file (path) as a :class:`~seqzip.predictor.Predictor`; a Predictor or None as
    given.

    Raises:
        ValueError: not a readable model file.
        OSError: the file cannot be read.

        >>> d = Predictor("order2", 1)
        >>> load_dictionary(d) is d, load_dictionary(None)
        (True, None)
    """
    if dictionary is None or isinstance(dictionary, Predictor):
        return dictionary
    return Predictor.load(dictionary)


def _dictionary_model(header: StreamHeader, dictionary: Predictor | None) -> Model | None:
    wanted = header.dictionary.hex()
    if dictionary is None:
        raise DictionaryError(f"stream was coded with model file {wanted} (sha256 prefix): "
                              "give that file as the dictionary (--dict)")
    if dictionary.file_hash != header.dictionary:
        raise DictionaryError(f"stream was coded with model file {wanted}, not with the "
                              f"given one ({dictionary.file_hash.hex()})")
    spec = spec_by_name(dictionary.model_name)
    if spec.model_id != header.model_id or \
            config_for_header(header) != dictionary.config or header.seed != dictionary.seed:
        raise CorruptError("stream header disagrees with its model file")
    if not header.alphabet:
        return None
    if header.alphabet.translate(None, dictionary.alphabet):
        raise CorruptError("stream holds bytes outside its model file's alphabet")
    return dictionary.copy()._model


def _model_alphabet(header: StreamHeader, dictionary: Predictor | None) -> bytes:
    """The alphabet the stream's model codes over: the data's, or its model file's."""
    return dictionary.alphabet if header.dictionary else header.alphabet


class _SymbolMap:
    """Bytes <-> alphabet indices for one stream."""

    def __init__(self, alphabet: bytes) -> None:
        self.to_symbol = np.zeros(256, dtype=np.uint8)
        self.to_symbol[np.frombuffer(alphabet, dtype=np.uint8)] = np.arange(len(alphabet))
        self.to_byte = np.frombuffer(alphabet, dtype=np.uint8).copy()

    def symbols(self, data: bytes) -> np.ndarray:
        return self.to_symbol[np.frombuffer(data, dtype=np.uint8)]

    def data(self, symbols: np.ndarray) -> bytes:
        return self.to_byte[symbols].tobytes()


def symbols_of(data: bytes) -> tuple[np.ndarray, bytes]:
    """The alphabet indices (uint8) of ``data`` and its alphabet (the byte values present).

        >>> symbols, alphabet = symbols_of(b"abca")
        >>> symbols.tolist(), alphabet
        ([0, 1, 2, 0], b'abc')
    """
    alphabet = bytes(sorted(set(data)))
    return _SymbolMap(alphabet).symbols(data), alphabet


def _read_exact(src: IO[bytes], n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        part = src.read(n - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _scan(src: IO[bytes]) -> tuple[int, bytes, int]:
    """Length, alphabet and CRC-32 of everything ``src`` yields."""
    present = np.zeros(256, dtype=bool)
    length, crc = 0, 0
    while chunk := src.read(CHUNK * 16):
        present[np.frombuffer(chunk, dtype=np.uint8)] = True
        length += len(chunk)
        crc = zlib.crc32(chunk, crc)
    return length, bytes(np.flatnonzero(present).astype(np.uint8)), crc


def _seekable(src: IO[bytes]) -> bool:
    try:
        return src.seekable()
    except (AttributeError, ValueError, OSError):
        return False


def compress_file(src: IO[bytes], dst: IO[bytes], *, model: str = DEFAULT_MODEL,
                  level: int = DEFAULT_LEVEL, seed: int = 0, frame_size: int = DEFAULT_FRAME,
                  config: Any = None, progress: Progress | None = None,
                  processes: int = 1, dictionary: Predictor | str | os.PathLike | None = None
                  ) -> int:
    """Compress everything ``src`` yields into one stream written to ``dst``.

    Memory holds one frame of input and its payload.  A non-seekable ``src`` is spooled to a
    temporary file first.  ``config`` (a config dataclass of ``model``) overrides ``level``.
    ``progress(n)`` is called with the number of input bytes coded after each frame.

    With ``processes`` > 1 the input is cut into independent pieces (one per process, at
    least 64 KiB and at most 8 MiB each), coded as concatenated streams by that many worker
    processes: any seqzip decodes the result, and each piece's model starts afresh, which
    costs some ratio (see README, ``-T``).

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
        return _compress_with_dictionary(src, dst, load_dictionary(dictionary), frame_size,
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
        with tempfile.TemporaryFile() as spool:
            while chunk := src.read(CHUNK * 16):
                spool.write(chunk)
            spool.seek(0)
            return compress_file(spool, dst, model=model, seed=seed, frame_size=frame_size,
                                 config=config, progress=progress, processes=processes)
    if processes > 1:
        start = src.tell()
        length = src.seek(0, os.SEEK_END) - start
        src.seek(start)
        piece = piece_size(length, processes)
        if piece < length:
            return _compress_pieces(src, dst, length, piece, processes, model, config, seed,
                                    frame_size, progress)
    start = src.tell()
    length, alphabet, crc = _scan(src)
    src.seek(start)
    header = StreamHeader(spec.model_id, config_to_header(spec.config_class, config), seed,
                          length, frame_size,
                          alphabet, crc)
    written = dst.write(header.pack()) or 0
    written += sum(dst.write(frame) or 0 for frame in _encode_frames(header, src, progress))
    return written


def _check_positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _check_processes(processes: int) -> int:
    return _check_positive("processes", processes)


def piece_size(length: int, processes: int) -> int:
    """Bytes per independent piece when ``length`` bytes are coded on ``processes`` processes.

        >>> piece_size(152_089, 2), piece_size(10_000, 4), piece_size(10**9, 2) == MAX_PIECE
        (76045, 65536, True)
    """
    return max(MIN_PIECE, min(MAX_PIECE, -(-length // processes)))


def _pool(processes: int):
    """A pool of worker processes that end with their parent.

    A process with one thread (the command line) forks its workers: each asks the kernel to
    kill it when its parent dies (Linux), so nothing runs on after a signal.  A process with
    threads takes its workers from a fork server instead (a fresh interpreter that imported
    this module), since forking a process with threads risks deadlocks.
    """
    import multiprocessing
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        context = multiprocessing.get_context("fork")
        parent = os.getpid()
    elif "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        parent = None
    else:
        context = multiprocessing.get_context("spawn")
        parent = None
    return context.Pool(processes, initializer=_worker_init, initargs=(parent,))


def _worker_init(parent: int | None) -> None:
    # Ctrl-C reaches the whole process group: the parent decides, and its end ends the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # Linux: be killed when the parent ends, even by SIGKILL
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent ended before the line above took effect


def _wait(result) -> Any:
    """``result.get()`` in short waits, so that signal handlers, where installed, run promptly."""
    while not result.ready():
        result.wait(0.2)
    return result.get()


def _compress_piece(data: bytes, model: str, config: Any, seed: int, frame_size: int) -> bytes:
    out = io.BytesIO()
    compress_file(io.BytesIO(data), out, model=model, config=config, seed=seed,
                  frame_size=frame_size)
    return out.getvalue()


def _compress_pieces(src: IO[bytes], dst: IO[bytes], length: int, piece: int, processes: int,
                     model: str, config: Any, seed: int, frame_size: int,
                     progress: Progress | None) -> int:
    written, offset = 0, 0
    pending: collections.deque = collections.deque()
    with _pool(processes) as pool:  # leaving the block terminates the workers
        while offset < length or pending:
            while offset < length and len(pending) <= processes:
                chunk = _read_exact(src, min(piece, length - offset))
                if not chunk:
                    raise SeqzipError("input changed while it was being compressed")
                offset += len(chunk)
                pending.append((len(chunk), pool.apply_async(
                    _compress_piece, (chunk, model, config, seed, frame_size))))
            n, result = pending.popleft()
            written += dst.write(_wait(result)) or 0
            if progress:
                progress(n)
    if src.read(1):
        raise SeqzipError("input changed while it was being compressed")
    return written


def _compress_with_dictionary(src: IO[bytes], dst: IO[bytes], dictionary: Predictor,
                              frame_size: int, progress: Progress | None) -> int:
    _check_frame_size(frame_size)
    if not _seekable(src):
        with tempfile.TemporaryFile() as spool:
            while chunk := src.read(CHUNK * 16):
                spool.write(chunk)
            spool.seek(0)
            return _compress_with_dictionary(spool, dst, dictionary, frame_size, progress)
    spec = spec_by_name(dictionary.model_name)
    start = src.tell()
    length, alphabet, crc = _scan(src)
    src.seek(start)
    outside = alphabet.translate(None, dictionary.alphabet)
    if outside:
        raise ValueError(f"the input holds byte {outside[0]}, outside the model file's "
                         "alphabet")
    header = StreamHeader(spec.model_id, config_to_header(spec.config_class, dictionary.config),
                          dictionary.seed, length, frame_size, alphabet, crc,
                          DICTIONARY_VERSION, dictionary.file_hash)
    written = dst.write(header.pack()) or 0
    written += sum(dst.write(frame) or 0
                   for frame in _encode_frames(header, src, progress, dictionary))
    return written


def _encode_frames(header: StreamHeader, src: IO[bytes],
                   progress: Progress | None, dictionary: Predictor | None = None
                   ) -> Iterator[bytes]:
    model = model_for_header(header, dictionary)
    symbol_map = _SymbolMap(_model_alphabet(header, dictionary))
    done, crc = 0, 0
    while done < header.length:
        chunk = _read_exact(src, next_frame_symbols(header, done))
        if len(chunk) < next_frame_symbols(header, done) or \
                chunk.translate(None, header.alphabet):
            raise SeqzipError("input changed while it was being compressed")
        crc = zlib.crc32(chunk, crc)
        symbols = symbol_map.symbols(chunk)
        yield pack_frame(len(chunk), coder.encode(model, symbols), frame_checks(symbols))
        done += len(chunk)
        if progress:
            progress(len(chunk))
    if crc != header.crc32 or src.read(1):
        raise SeqzipError("input changed while it was being compressed")


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


@dataclasses.dataclass(frozen=True)
class Limits:
    """What a decoder may spend on a stream, checked from its header before anything is
    allocated or decoded (``None``: no limit).

    ``max_length`` bounds the decoded bytes of a call (all its concatenated streams together):
    a header declaring more is refused.  ``max_memory`` bounds the memory a stream's model
    may allocate, as its config's ``memory_bytes`` computes it (a bound: models that grow, as
    CTW does, start far smaller).  The defaults admit every level of every model on any
    alphabet (the largest, ``glnn -9``, needs up to 1,062 MiB) and refuse forged headers
    asking for more.

        >>> Limits().max_memory // 2**20, Limits().max_length // 2**30
        (2048, 256)
    """
    max_length: int | None = DEFAULT_MAX_LENGTH
    max_memory: int | None = DEFAULT_MAX_MEMORY

    def __post_init__(self) -> None:
        for name in ("max_length", "max_memory"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise ValueError(f"{name} must be a non-negative integer or None, "
                                 f"got {value!r}")

    def check_length(self, done: int, header: StreamHeader) -> None:
        if self.max_length is not None and done + header.length > self.max_length:
            raise LimitError(
                f"stream declares {header.length:,} bytes of output, over the limit of "
                f"{self.max_length:,} (max_length, --max-length)")

    def check_memory(self, header: StreamHeader, config: Any) -> None:
        need = config.memory_bytes(max(len(header.alphabet), 1))
        if self.max_memory is not None and need > self.max_memory:
            raise LimitError(
                f"stream's model may need {need / 2**20:,.1f} MiB of memory, over the limit of "
                f"{self.max_memory / 2**20:,.1f} MiB (max_memory, --max-memory)")


class SeqzipDecompressor:
    """Incremental decompressor of one stream, like ``bz2.BZ2Decompressor``.

    Holds at most one frame of input and one frame of output beyond what the caller passes and
    asks for.  After the stream ends, ``eof`` is true and ``unused_data`` holds what followed.
    ``limits`` (:class:`Limits`) bounds what a stream may ask for.

        >>> d = SeqzipDecompressor()
        >>> packed = compress(b"hello hello")
        >>> d.decompress(packed[:5]) + d.decompress(packed[5:]), d.eof
        (b'hello hello', True)
    """

    def __init__(self, dictionary: Predictor | str | os.PathLike | None = None,
                 limits: Limits | None = None) -> None:
        self._dictionary = load_dictionary(dictionary)  # for streams coded from a model file
        self._limits = limits if limits is not None else Limits()
        self._buffer = bytearray()
        self._pending = bytearray()  # decoded output not yet returned
        self._before = 0  # bytes decoded by earlier streams (of a multi-stream reader)
        self._start_stream()
        self.unused_data = b""

    def _start_stream(self) -> None:
        self._header: StreamHeader | None = None
        self._model: Model | None = None
        self._symbol_map: _SymbolMap | None = None
        self._done = 0  # symbols decoded
        self._frames = 0
        self._crc = 0
        self._eof = False

    def _next_stream(self) -> None:
        """Internal (readers of concatenated streams): go on with the stream that follows in
        the buffered input, without copying it."""
        self._before += self._header.length if self._header is not None else 0
        if self._model is not None:
            self._model.close()
        self._start_stream()

    @property
    def eof(self) -> bool:
        """True once the end of the stream has been decoded and verified."""
        return self._eof and not self._pending

    @property
    def needs_input(self) -> bool:
        """False while :meth:`decompress` can return more data without new input."""
        return not self._eof and not self._pending and not self._frame_ready()

    def _frame_ready(self) -> bool:
        if self._header is None:
            return False
        try:
            parse_frame(self._buffer, 0, next_frame_symbols(self._header, self._done),
                        self._frames, self._header.version)
        except NeedMoreData:
            return False
        except CorruptError:
            return True  # decompress() will raise it
        return True

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        """Decompress ``data``; return at most ``max_length`` bytes (all when negative).

        Raises:
            EOFError: called again after the end of the stream.
            NotSeqzipError, UnsupportedVersionError, CorruptError: bad input.
            LimitError: the stream asks for more than the decompressor's limits.
        """
        if self.eof:
            raise EOFError("end of stream already reached")
        if self._eof:
            self.unused_data += bytes(data)  # input after the end, while output is pending
        else:
            self._buffer += data
        self._run(max_length if max_length >= 0 else None)
        if self._eof and self._buffer:
            self.unused_data = bytes(self._buffer)
            self._buffer.clear()
        return self._take(max_length)

    def _run(self, limit: int | None) -> None:
        while not self._eof:
            # The header and the end-of-stream check produce no output: do them even when the
            # caller asked for no bytes; decode a frame only while more output is wanted.
            if self._header is not None and limit is not None and len(self._pending) >= limit:
                break
            if not self._advance():
                break

    def _take(self, max_length: int) -> bytes:
        take = len(self._pending) if max_length < 0 else min(max_length, len(self._pending))
        out = bytes(self._pending[:take])
        del self._pending[:take]
        return out

    def _advance(self) -> bool:
        """Parse the header or decode one frame; False when more input is needed."""
        try:
            if self._header is None:
                header, used = parse_header(self._buffer)
                self._limits.check_length(self._before, header)
                check_one_symbol_length(header, self._before, self._limits.max_length)
                config = config_for_header(header)
                self._limits.check_memory(header, config)
                self._model = model_for_header(header, self._dictionary, config)
                self._symbol_map = _SymbolMap(_model_alphabet(header, self._dictionary))
                self._header = header
            else:
                self._decode_frame()
                return True
        except NeedMoreData:
            return False
        del self._buffer[:used]
        self._check_end()
        return True

    def _decode_frame(self) -> None:
        header, index = self._header, self._frames
        expected = next_frame_symbols(header, self._done)
        payload, checks, used = parse_frame(self._buffer, 0, expected, index, header.version)

        def check(block: int, symbols: np.ndarray) -> None:
            if block_check(symbols) != checks[block]:
                raise CorruptError(f"frame {index} block {block} does not decode to what was "
                                   "coded (corrupt data)")

        symbols = coder.decode(self._model, payload, expected,
                               block_bounds(expected) if checks else None,
                               check if checks else None)
        del self._buffer[:used]
        chunk = self._symbol_map.data(symbols)
        self._crc = zlib.crc32(chunk, self._crc)
        self._pending += chunk
        self._done += expected
        self._frames += 1
        self._check_end()

    def _check_end(self) -> None:
        if self._done == self._header.length:
            if self._crc != self._header.crc32:
                raise CorruptError("checksum of the decompressed data does not match (corrupt "
                                   "stream)")
            self._eof = True
            if self._model is not None:
                self._model.close()

    @property
    def header(self) -> StreamHeader | None:
        """The stream header, once parsed."""
        return self._header


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
                    processes: int = 1,
                    dictionary: Predictor | str | os.PathLike | None = None,
                    max_length: int | None = DEFAULT_MAX_LENGTH,
                    max_memory: int | None = DEFAULT_MAX_MEMORY) -> int:
    """Decompress all streams in ``src`` into ``dst``, a frame at a time; return bytes written.

    ``progress(n)`` is called with the number of bytes decoded.  With ``processes`` > 1 and a
    seekable ``src`` holding several streams (as ``compress_file(..., processes=N)`` writes
    them), the streams are decoded by that many worker processes.  ``max_length`` and
    ``max_memory``: see :class:`Limits`.

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
    if processes > 1 and _seekable(src) and dictionary is None:
        start = src.tell()
        spans = stream_spans(src)
        src.seek(start)
        if len(spans) > 1 and all(s.length <= MAX_PIECE for s in spans):
            before = 0
            for span in spans:
                limits.check_length(before, span.header)
                check_one_symbol_length(span.header, before, limits.max_length)
                before += span.length
            return _decompress_pieces(src, dst, spans, processes, progress, limits)
    reader = _DecompressReader(src, dictionary, limits)
    written = 0
    while chunk := reader.read(CHUNK * 16):
        written += dst.write(chunk) or 0
        if progress:
            progress(len(chunk))
    if not reader._started:
        raise TruncatedError("empty input: not a seqzip stream")
    return written


class StreamSpan(collections.namedtuple("StreamSpan", "start end header")):
    """Where one stream lies in a file (``start``, ``end``: byte offsets) and its header.

        >>> span = stream_spans(io.BytesIO(compress(b"abc", model="order2")))[0]
        >>> span.start, span.length
        (0, 3)
    """

    @property
    def length(self) -> int:
        return self.header.length


def stream_spans(src: IO[bytes]) -> list[StreamSpan]:
    """The streams of a seekable ``src`` from its position on, found by reading headers and
    frame heads only (payloads are skipped by seeking, not read or checked).

    Raises:
        TruncatedError, NotSeqzipError, UnsupportedVersionError, CorruptError: bad input.

        >>> spans = stream_spans(io.BytesIO(compress(b"ab" * 50) + compress(b"")))
        >>> [(s.length, s.start) for s in spans][1][0], spans[0].end == spans[1].start
        (0, True)
    """
    spans = []
    origin = src.tell()
    size = src.seek(0, os.SEEK_END)
    src.seek(origin)
    while True:
        start = src.tell()
        head = src.read(CHUNK)
        if not head:
            break
        while True:
            try:
                header, used = parse_header(head)
                break
            except NeedMoreData:
                more = src.read(CHUNK)
                if not more:
                    raise TruncatedError("compressed data ended before the end of the stream"
                                         ) from None
                head += more
        position, done, frames = start + used, 0, 0
        while done < header.length:
            src.seek(position)
            expected = next_frame_symbols(header, done)
            try:
                payload_len, _ = parse_frame_head(src.read(FRAME_HEAD.size), 0, expected,
                                                  frames)
            except NeedMoreData:
                raise TruncatedError("compressed data ended before the end of the stream"
                                     ) from None
            position += frame_size_on_disk(header.version, expected, payload_len)
            done += expected
            frames += 1
        if position > size:
            raise TruncatedError("compressed data ended before the end of the stream")
        src.seek(position)
        spans.append(StreamSpan(start, position, header))
    if not spans:
        raise TruncatedError("empty input: not a seqzip stream")
    return spans


def _decompress_pieces(src: IO[bytes], dst: IO[bytes], spans: list[StreamSpan], processes: int,
                       progress: Progress | None, limits: Limits) -> int:
    written = 0
    queue = collections.deque(spans)
    pending: collections.deque = collections.deque()
    with _pool(processes) as pool:  # leaving the block terminates the workers
        while queue or pending:
            while queue and len(pending) <= processes:
                span = queue.popleft()
                src.seek(span.start)
                data = _read_exact(src, span.end - span.start)
                pending.append(pool.apply_async(decompress, (data,), dict(
                    max_length=None, max_memory=limits.max_memory)))
            data = _wait(pending.popleft())
            written += dst.write(data) or 0
            if progress:
                progress(len(data))
    return written
