"""The incremental decoder: one stream (or one piece set) at a time, like
``bz2.BZ2Decompressor``, and the work of a worker decoding one piece of a piece set.

    >>> from seqzip.api import compress
    >>> d = SeqzipDecompressor()
    >>> d.decompress(compress(b"abc", model="order2")), d.eof
    (b'abc', True)
"""
from __future__ import annotations

import os
import zlib
import numpy as np

from . import coder
from .container import (NeedMoreData, StreamHeader, block_bounds, block_check,
                        next_frame_symbols, parse_frame, parse_header)
from .errors import CorruptError, TruncatedError
from .models import Model
from .pieceset import PieceSet, check_piece, parse_piece_set, starts_piece_set
from .pieces import warm_model
from .predictor import Predictor
from .session import (Limits, _model_alphabet, _SymbolMap, config_for_header,
                      load_dictionary, model_for_header, model_from_state)


class SeqzipDecompressor:
    """Incremental decompressor of one stream, like ``bz2.BZ2Decompressor``.

    Holds at most one frame of input and one frame of output beyond what the caller passes and
    asks for.  After the stream ends, ``eof`` is true and ``unused_data`` holds what followed.
    ``limits`` (:class:`Limits`) bounds what a stream may ask for.

        >>> from seqzip.api import compress
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
        self._warm, self._start = False, None  # a worker's piece: starts warm (warm_model)
        self._keep = False  # keep the model at the end (piece 0 of a piece set, decoded alone)
        self._start_stream()
        self.unused_data = b""

    def _start_stream(self) -> None:
        self._set: PieceSet | None = None  # the piece set being read, its next piece's index,
        self._piece, self._first, self._kept = 0, None, None  # piece 0's header and model
        self._start_piece()

    def _start_piece(self) -> None:
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
        for model in (self._model, self._kept):
            if model is not None:
                model.close()
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
                if self._set is None and starts_piece_set(self._buffer):
                    self._set, used = parse_piece_set(self._buffer)
                    del self._buffer[:used]
                    return True
                header, used = parse_header(self._buffer)
                if self._set is not None:
                    check_piece(self._set, self._piece, header, self._first)
                self._limits.check_length(self._before, header)
                config = config_for_header(header)
                self._limits.check_memory(header, config)
                if self._piece and header.alphabet:  # a later piece of a warm piece set
                    self._model = model_from_state(header, self._kept)
                elif self._warm and header.alphabet:  # a worker's piece of a piece set
                    self._model = warm_model(header, self._start)
                else:
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

    @property
    def header(self) -> StreamHeader | None:
        """The stream header, once parsed."""
        return self._header



def _decoded(d: SeqzipDecompressor, data: bytes) -> bytes:
    output = d.decompress(data)
    if not d.eof:
        raise TruncatedError("compressed data ended before the end of the stream")
    return output


def decompress_first(data: bytes, max_memory: int | None) -> tuple[bytes, Model | None]:
    d = SeqzipDecompressor(limits=Limits(None, max_memory))
    d._keep = True
    return _decoded(d, data), d._kept


def decompress_piece(data: bytes, start: bytes | None, max_memory: int | None) -> bytes:
    d = SeqzipDecompressor(limits=Limits(None, max_memory))
    d._warm, d._start = True, start
    return _decoded(d, data)


def decompress_cold(data: bytes, max_memory: int | None) -> bytes:
    d, outputs = SeqzipDecompressor(limits=Limits(None, max_memory)), []
    while data:
        outputs.append(_decoded(d, data))
        data, d = d.unused_data, SeqzipDecompressor(limits=Limits(None, max_memory))
    return b"".join(outputs)
