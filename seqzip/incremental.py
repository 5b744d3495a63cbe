"""The incremental objects, shaped like ``bz2.BZ2Compressor`` / ``bz2.BZ2Decompressor``.

    >>> c = SeqzipCompressor(model="order2", block_size=64)
    >>> parts = [c.compress(b"abracadabra " * 10), c.compress(b"!"), c.flush()]
    >>> [len(part) > 0 for part in parts]          # a stream per block, as blocks fill
    [True, False, True]
    >>> d = SeqzipDecompressor()
    >>> out = [d.decompress(b"".join(parts))]
    >>> while d.next_stream():                     # the streams concatenate
    ...     out.append(d.decompress(b""))
    >>> b"".join(out) == b"abracadabra " * 10 + b"!"
    True

A stream's header holds the length, the alphabet and the checksum of everything it codes, so a
stream can be written only once its input is complete.  The compressor therefore codes every
``block_size`` bytes of input (1 MiB by default) as a stream of its own, returned by the
:meth:`SeqzipCompressor.compress` call that fills the block, as ``bz2`` returns its 900 kB
blocks; :meth:`~SeqzipCompressor.flush` codes the rest.  Each block's model starts afresh (or
from the dictionary): ``block_size=None`` codes the whole input as one stream, the best ratio,
returned by ``flush()``.
"""
from __future__ import annotations

import io
import os
import tempfile
import zlib
from typing import IO, Any

import numpy as np

from . import coder
from .container import (DEFAULT_FRAME, NeedMoreData, StreamHeader, block_bounds, block_check,
                        check_one_symbol_length, next_frame_symbols, parse_frame, parse_header)
from .errors import CorruptError
from .models import Model
from .pieces import warm_model
from .pieceset import PieceSet, check_piece, parse_piece_set, starts_piece_set
from .predictor import Predictor
from .textcase import Unfolder
from .session import (SPOOL_MEMORY, Limits, Progress, _check_positive, _model_alphabet,
                      _SymbolMap, config_for_header, load_dictionary, model_for_header,
                      model_from_state, stream_settings)

DEFAULT_BLOCK = DEFAULT_FRAME  # 1 MiB: the compressor's and the file writer's block


class SeqzipCompressor:
    """Incremental compressor, like ``bz2.BZ2Compressor``: ``compress()`` returns the streams
    of the blocks it completes (``b""`` until one is full), ``flush()`` the last one.

    Args:
        level, compresslevel: 1 (fast) ... 9 (strong), default 6 (``compresslevel`` is
            ``bz2``'s name; give one, or both equal).
        model: model family, default cm.
        seed: seed of the model's PRNG (default 0).
        dictionary: a model file (path or Predictor) every block starts from; model, level
            and seed then are the file's (see :func:`seqzip.session.stream_settings`).
        block_size: input bytes per stream (default 1 MiB); None: one stream for the whole
            input, spooled (in memory up to 8 MiB, then in a temporary file) until
            ``flush()``.

    Raises:
        ValueError: bad settings, or settings contradicting the dictionary;
            :meth:`compress` after :meth:`flush`; a second :meth:`flush` (as ``bz2``).

        >>> c = SeqzipCompressor(model="order2", level=6)
        >>> c.compress(b"hello "), c.compress(b"world")
        (b'', b'')
        >>> from seqzip.api import decompress
        >>> decompress(c.flush())
        b'hello world'
    """

    def __init__(self, level: int | None = None, *, model: str | None = None,
                 seed: int | None = None, compresslevel: int | None = None,
                 dictionary: Predictor | str | os.PathLike | None = None,
                 block_size: int | None = DEFAULT_BLOCK, config: Any = None) -> None:
        self._settings = stream_settings(model, level, seed, config=config,
                                         compresslevel=compresslevel, dictionary=dictionary)
        if block_size is not None:
            _check_positive("block_size", block_size)
        self._block_size = block_size
        self._pending: bytearray | None = bytearray()
        self._spool: IO[bytes] | None = None
        if block_size is None:
            self._spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)
        self._streams = 0

    def _code(self, data: bytes) -> bytes:
        out = io.BytesIO()
        self._settings.write(io.BytesIO(data), out)
        self._streams += 1
        return out.getvalue()

    def compress(self, data: bytes) -> bytes:
        """Take ``data``; return the streams of the blocks it completes (often ``b""``)."""
        if self._pending is None:
            raise ValueError("compressor has been flushed")
        if self._spool is not None:
            self._spool.write(data)
            return b""
        view, size, out = memoryview(data).cast("B"), self._block_size, []
        if self._pending:  # complete the block begun by earlier calls
            need = size - len(self._pending)
            self._pending += view[:need]
            view = view[need:]
            if len(self._pending) < size:
                return b""
            out.append(self._code(bytes(self._pending)))
            self._pending.clear()
        while len(view) >= size:  # whole blocks straight from the input: one copy each
            out.append(self._code(view[:size].tobytes()))
            view = view[size:]
        self._pending += view
        return b"".join(out)

    def flush_to(self, dst: IO[bytes], progress: Progress | None = None) -> int:
        """Finish, writing what is left (as :meth:`flush` returns it) to ``dst``; return the
        bytes written.  With ``block_size=None`` the stream goes to ``dst`` frame by frame.

            >>> c, out = SeqzipCompressor(model="order2", block_size=None), io.BytesIO()
            >>> _ = c.compress(b"abc"); c.flush_to(out) == len(out.getvalue())
            True
        """
        if self._pending is None:
            raise ValueError("repeated call to flush()")
        pending, self._pending = bytes(self._pending), None
        if self._spool is not None:
            spool, self._spool = self._spool, None
            with spool:
                spool.seek(0)
                return self._settings.write(spool, dst, progress=progress)
        if not pending and self._streams:
            return 0
        written = dst.write(self._code(pending)) or 0
        if progress:
            progress(len(pending))
        return written

    def flush(self) -> bytes:
        """Finish: return the stream of what is buffered (an empty input gives one empty
        stream).  The compressor cannot be used after it (``ValueError``, as ``bz2``)."""
        out = io.BytesIO()
        self.flush_to(out)
        return out.getvalue()


class SeqzipDecompressor:
    """Incremental decompressor of one stream, like ``bz2.BZ2Decompressor``.

    Holds at most one frame of input and one frame of output beyond what the caller passes and
    asks for.  After the stream ends, ``eof`` is true and ``unused_data`` holds what followed;
    :meth:`next_stream` goes on with the stream that follows (concatenated streams) without
    copying it.  ``dictionary``: the model file streams coded from one need; ``limits``
    (:class:`~seqzip.session.Limits`) bounds what a stream may ask for.

        >>> from seqzip.api import compress
        >>> d = SeqzipDecompressor()
        >>> packed = compress(b"hello hello")
        >>> d.decompress(packed[:5]) + d.decompress(packed[5:]), d.eof
        (b'hello hello', True)
    """

    def __init__(self, dictionary: Predictor | str | os.PathLike | None = None,
                 limits: Limits | None = None) -> None:
        self._limits = limits if limits is not None else Limits()
        # for streams coded from a model file; one asking too much is refused before it is built
        self._dictionary = load_dictionary(dictionary, self._limits.max_memory)
        self._buffer = bytearray()
        self._pending = bytearray()  # decoded output not yet returned
        self._before = 0  # bytes decoded by the streams before this one (next_stream)
        self._after = bytearray()  # input given after the end while output was pending
        self._warm, self._start = False, None  # a worker's piece: starts warm (warm_model)
        self._keep = False  # keep the model at the end (piece 0 of a piece set, decoded alone)
        self._start_stream()

    def _start_stream(self) -> None:
        self._set: PieceSet | None = None  # the piece set being read, its next piece's index,
        self._piece, self._first, self._kept = 0, None, None  # piece 0's header and model
        self._start_piece()

    def _start_piece(self) -> None:
        self._header: StreamHeader | None = None
        self._model: Model | None = None
        self._symbol_map: _SymbolMap | None = None
        self._done = 0  # symbols decoded
        self._out = 0  # bytes they decoded to
        self._frames = 0
        self._crc = 0
        self._unfolder: Unfolder | None = None  # a case-folded stream's (``textcase``)
        self._eof = False

    @property
    def eof(self) -> bool:
        """True once the end of the stream has been decoded, verified and returned."""
        return self._eof and not self._pending

    @property
    def unused_data(self) -> bytes:
        """The input given after the end of the stream (``b""`` before the end)."""
        return bytes(self._buffer) + bytes(self._after) if self._eof else b""

    @property
    def needs_input(self) -> bool:
        """False while :meth:`decompress` can return more data without new input."""
        return not self._eof and not self._pending and not self._frame_ready()

    @property
    def header(self) -> StreamHeader | None:
        """The stream header, once parsed.

            >>> d = SeqzipDecompressor(); _ = d.decompress(__import__("seqzip").compress(b"hi"))
            >>> d.header.length
            2
        """
        return self._header

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
            DictionaryError: the stream needs a model file not given (or another one).

            >>> from seqzip.api import compress
            >>> SeqzipDecompressor().decompress(compress(b"abcdef"), 4)
            b'abcd'
        """
        if self.eof:
            raise EOFError("end of stream already reached")
        if self._eof:
            self._after += memoryview(data).cast("B")  # after the end, while output is pending
        else:
            self._buffer += memoryview(data).cast("B")
        limit = max_length if max_length >= 0 else None
        while not self._eof:
            # The header and the end-of-stream check produce no output: do them even when
            # the caller asked for no bytes; decode a frame only while more output is wanted.
            if self._header is not None and limit is not None and len(self._pending) >= limit:
                break
            if not self._advance():
                break
        take = len(self._pending) if limit is None else min(limit, len(self._pending))
        out = bytes(self._pending[:take])
        del self._pending[:take]
        return out

    def next_stream(self, data: bytes = b"") -> bool:
        """After the end of a stream (``eof``), go on with the stream that follows it in the
        input already given (and ``data``, input that follows it), as a fresh decompressor
        given ``unused_data`` would, without copying it; False (and nothing changes) when no
        input follows.  Call :meth:`decompress` (with ``b""`` or more input) to decode it.
        The limits count the output of every stream since this decompressor was made.

        Raises:
            ValueError: the stream has not ended (or its output is still pending).

            >>> from seqzip.api import compress
            >>> d = SeqzipDecompressor()
            >>> d.decompress(compress(b"one ") + compress(b"two")), d.next_stream()
            (b'one ', True)
            >>> d.decompress(b""), d.next_stream()
            (b'two', False)
        """
        if not self.eof:
            raise ValueError("next_stream() before the end of the stream")
        self._buffer += self._after
        self._buffer += memoryview(data).cast("B")
        self._after.clear()
        if not self._buffer:
            return False
        self._before += self._header.length if self._header is not None else 0
        for model in (self._model, self._kept):
            if model is not None:
                model.close()
        self._start_stream()
        return True

    def _advance(self) -> bool:
        """Parse the header or decode one frame; False when more input is needed."""
        try:
            if self._header is None:
                if self._set is None and starts_piece_set(self._buffer):
                    self._set, used = parse_piece_set(self._buffer)
                    del self._buffer[:used]
                    return True
                header, used = parse_header(self._buffer)
                if self._set is not None:
                    check_piece(self._set, self._piece, header, self._first)
                self._limits.check_length(self._before, header)
                check_one_symbol_length(header, self._before, self._limits.max_length)
                config = config_for_header(header)
                # a warm piece set's decoder holds the prefix's model and a piece's at once
                two = header.alphabet and (self._keep or self._warm or self._piece or (
                    self._set is not None and len(self._set.lengths) > 1))
                self._limits.check_memory(header, config, None if self._dictionary is None
                                          else _model_alphabet(header, self._dictionary),
                                          models=2 if two else 1)
                if self._piece and header.alphabet:  # a later piece of a warm piece set:
                    if self._piece + 1 < len(self._set.lengths):  # a copy of the kept model,
                        self._model = model_from_state(header, self._kept)
                    else:  # or, for the last piece, that model itself
                        self._model, self._kept = self._kept, None
                elif self._warm and header.alphabet:  # a worker's piece of a piece set
                    self._model = warm_model(header, self._start)
                else:  # piece 0 of a warm piece set unsized: later pieces take its state
                    self._model = model_for_header(header, self._dictionary, config,
                                                   sized=self._set is None and not self._keep)
                self._symbol_map = _SymbolMap(_model_alphabet(header, self._dictionary))
                # a folded text (unfolding one without escapes would change nothing)
                self._unfolder = Unfolder() if header.escapes else None
                if header.escapes and not getattr(config, "fold_case", 0):
                    raise CorruptError("header counts escapes for a model config that codes "
                                       "none (corrupt header)")
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
        # A lean stream's one frame has no checks: its output waits in _pending, and
        # _check_end (the CRC-32) raises before any of it is returned (test_lean).
        header, index = self._header, self._frames
        expected = next_frame_symbols(header, self._done)
        payload, checks, used = parse_frame(self._buffer, 0, expected, index, header.version)

        def check(block: int, symbols: np.ndarray) -> None:
            if block_check(symbols) != checks[block]:
                raise CorruptError(f"frame {index} block {block} does not decode to what was "
                                   "coded (corrupt data)")

        symbols = coder.decode(self._model, payload, expected,
                               block_bounds(expected) if checks else None,
                               check if checks else None, header.lean)
        del self._buffer[:used]
        self._done += expected
        self._frames += 1
        self._emit(self._symbol_map.data(symbols))
        self._check_end()

    def _emit(self, chunk: bytes) -> None:
        """Output decoded symbols' bytes (a folded stream's unfolded, its last with the
        rest the unfolder held)."""
        if self._unfolder is not None:
            chunk = self._unfolder.feed(chunk) + \
                (self._unfolder.close() if self._done == self._header.coded else b"")
        self._crc = zlib.crc32(chunk, self._crc)
        self._out += len(chunk)
        if self._out > self._header.length:
            raise CorruptError("stream decodes to more bytes than its header declares "
                               "(corrupt stream)")
        self._pending += chunk

    def _check_end(self) -> None:
        if self._done == self._header.coded:
            if self._out != self._header.length:
                raise CorruptError("stream decodes to fewer bytes than its header declares "
                                   "(corrupt stream)")
            if self._crc != self._header.crc32:
                raise CorruptError("checksum of the decompressed data does not match (corrupt "
                                   "stream)")
            if self._keep or (self._set is not None and not self._piece):
                self._kept, self._model = self._model, None  # later pieces start from it
            if self._model is not None:
                self._model.close()
            if self._set is not None and self._piece + 1 < len(self._set.lengths):
                self._before += self._header.length
                self._first = self._first or self._header
                self._piece += 1
                self._start_piece()
                return
            self._eof = True
