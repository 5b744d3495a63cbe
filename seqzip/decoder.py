"""The work of a worker decoding a piece set's pieces (local processes or Dask tasks): piece 0
decoded alone and its model kept, a later piece started warm from that model's state, and
pieces of old multi-stream files decoded cold.  The decoder itself is
:class:`seqzip.incremental.SeqzipDecompressor`, which reads a whole piece set serially.

    >>> from seqzip.api import compress
    >>> decompress_cold(compress(b"abc", model="order2"), None)
    b'abc'
"""
from __future__ import annotations

from .errors import TruncatedError
from .incremental import SeqzipDecompressor
from .models import Model
from .session import Limits


def _decoded(d: SeqzipDecompressor, data: bytes) -> bytes:
    output = d.decompress(data)
    if not d.eof:
        raise TruncatedError("compressed data ended before the end of the stream")
    return output


def decompress_first(data: bytes, max_memory: int | None) -> tuple[bytes, Model | None]:
    """Piece 0 of a piece set (the shared prefix): its output and its model at the end.

        >>> from seqzip.api import compress
        >>> output, model = decompress_first(compress(b"abcab", model="order2"), None)
        >>> output, model.alphabet
        (b'abcab', b'abc')
    """
    d = SeqzipDecompressor(limits=Limits(None, max_memory))
    d._keep = True
    return _decoded(d, data), d._kept


def decompress_piece(data: bytes, start: bytes | None, max_memory: int | None) -> bytes:
    """A later piece, its model started from ``start`` (the prefix's state as
    :func:`~seqzip.session.state_bytes` gives it; None: the model a forked worker inherited).

        >>> from seqzip.models import make_config
        >>> from seqzip.pieces import compress_first, compress_warm_piece
        >>> from seqzip.session import state_bytes
        >>> args = ("order2", make_config("order2", 1), 0, 1 << 20, b"abc")
        >>> first, model = compress_first(b"abcabc", *args)
        >>> piece = compress_warm_piece(b"cab", state_bytes(model), *args)
        >>> decompress_piece(piece, state_bytes(decompress_first(first, None)[1]), None)
        b'cab'
    """
    d = SeqzipDecompressor(limits=Limits(None, max_memory))
    d._warm, d._start = True, start
    return _decoded(d, data)


def decompress_cold(data: bytes, max_memory: int | None) -> bytes:
    """The concatenated independent streams of an old multi-stream file's piece.

        >>> from seqzip.api import compress
        >>> decompress_cold(compress(b"ab") + compress(b"cd"), None)
        b'abcd'
    """
    d, outputs = SeqzipDecompressor(limits=Limits(None, max_memory)), []
    while data:
        outputs.append(_decoded(d, data))
        data, d = d.unused_data, SeqzipDecompressor(limits=Limits(None, max_memory))
    return b"".join(outputs)
