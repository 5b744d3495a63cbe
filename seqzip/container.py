"""The .sqz container: streams of a header and frames.

A stream is a header (``seqzip.header``, whose names this module also exports) followed by
frames; streams may be concatenated.  All integers are little-endian.

Frame (versions 6 and later), repeated until ``length`` symbols are coded: its symbol count
is not stored (every frame but the last holds ``frame_size`` symbols)::

    payload_words *  varint: payload bytes / 4, bounded by the coder's worst case
    frame_check  2  low 16 bits of the CRC-32 of payload_words, the checks and the payload
    checks     2*k  a 16-bit check of each block of decoded symbols (below)
    payload      *  range coder words

Lean frame (versions 72-91, ``header.is_lean``: a stream of 1 to ``LEAN_MAX`` symbols in one
frame, written for every such stream)::

    payload_len  *  varint: payload bytes, bounded by the coder's worst case
    payload      *  the range coder's words, each big-endian, the zero bytes that end the last
                    one left out (the decoder puts them back; ``seqzip.coder``)

It holds no checks: the decoder returns none of a lean stream's output before the CRC-32 of the
data verifies, and decodes at most ``LEAN_MAX`` symbols of a forged one.  Without the frame
check (2 bytes), the block checks (2 per block) and the coder's seal cut to the bytes it needs
(1-4, not 4-8), a file of a few KB takes 11-20 bytes less (``benchmarks/lean.py``).

Versions 2-5 (still read): n_symbols 4, payload_len 4, frame_crc 4 (CRC-32), the checks
(versions 4, 5), the payload.

Block checks (versions 4 and later).  A frame's symbols fall in blocks of 256, 512, 1,024, ...
symbols (each twice the last; ``block_bounds``), and the frame stores the low 16 bits of the
CRC-32 of each block's symbol indices.  The decoder checks each block as soon as it is decoded,
so a damaged or forged payload fails within the first block it breaks, not after the 2^24
symbols a frame may declare: the work a hostile frame can cost is bounded by the work of the
valid symbols before it plus one block (at most as many again).  A frame of 2^20 symbols
carries 13 checks (26 bytes).  Versions 2 and 3 have no checks; their frames are decoded whole.

What protects the data: a damaged payload fails its frame check (16 bits) or, past it, the
block check of the first block it changes (16 bits, and every later block of the frame is
decoded from a diverged model); the header's fields are under its own check (16 bits); and
the CRC-32 of the original data, checked at the end of the stream, is the one check over the
output bytes themselves (the block checks see symbol indices, so it alone catches a wrong
map from symbols to bytes: an explicit alphabet damaged past the header check decodes to
indices that pass every block check).  It stays 32 bits in format 8 for that reason.

    >>> frame = pack_frame(3, b"\\x01\\x02\\x03\\x04", b"\\xaa\\xbb")
    >>> parse_frame(frame, 0, 3, 0)[0]
    b'\\x01\\x02\\x03\\x04'
"""
from __future__ import annotations

import struct
import zlib

from .errors import CorruptError, LimitError
from .header import (COMPACT, DEFAULT_FRAME, DICTIONARY_BYTES, DICTIONARY_VERSION,  # noqa: F401
                     FOLDED_MODEL_ID, MAGIC, MAX_CONFIG_BYTES, MAX_FRAME,
                     LEAN_MAX, LEAN_MODEL_IDS, MAX_LENGTH, READABLE, TERSE, VERSION, WITH_DICTIONARY,
                     NeedMoreData, StreamHeader, checked_version, is_lean, lean_fits,
                     _varints, alphabet_codes, alphabet_field, parse_header)

CHECKED = 4  # the first version with block checks in its frames
FIRST_BLOCK = 1 << 8  # symbols in a frame's first checked block; each next one is twice as long
# Default limits of a decoder (seqzip.api.Limits): every level of every model fits in them.
DEFAULT_MAX_LENGTH = 256 << 30  # decoded bytes
DEFAULT_MAX_MEMORY = 3 << 30  # bytes a stream's model(s) may allocate (the config's bound; a piece
# set's decoder holds two models: glnn -9 over 256 values needs 2 x 1,062 MiB)

# The coder never spends more than 24 bits on one coded decision (constriction's precision) and
# codes at most 8 decisions per symbol (bit mode over 256 symbols), so a frame of n symbols fits
# in n * 192 bits plus the coder's final flush: a bound for checking frame fields, not a size.
MAX_BITS_PER_SYMBOL = 192
FLUSH_WORDS = 2


_CRC = struct.Struct("<I")
_CHECK = struct.Struct("<H")  # a compact frame's check: the low 16 bits of a CRC-32
FRAME_HEAD = struct.Struct("<III")  # n_symbols, payload_len, frame_crc


def max_payload_bytes(n_symbols: int) -> int:
    """Upper bound on the payload of a frame of ``n_symbols`` symbols (a header sanity check).

        >>> max_payload_bytes(1)
        32
    """
    return 4 * ((n_symbols * MAX_BITS_PER_SYMBOL + 31) // 32 + FLUSH_WORDS)


def next_frame_symbols(header: StreamHeader, done: int) -> int:
    """Symbols in the next frame after ``done`` symbols: every frame but the last is full
    (a stream holds ``header.coded`` symbols: its length and its escapes).

        >>> h = StreamHeader(1, b"\\x05", seed=0, length=20, frame_size=8, alphabet=b"a", crc32=0)
        >>> [next_frame_symbols(h, done) for done in (0, 8, 16)]
        [8, 8, 4]
    """
    return min(header.frame_size, header.coded - done)


def block_bounds(n_symbols: int) -> list[tuple[int, int]]:
    """The checked blocks of a frame of ``n_symbols`` symbols: (start, end) pairs, the first
    ``FIRST_BLOCK`` long and each next one twice the last, the final one cut at the end.

        >>> block_bounds(5000)
        [(0, 256), (256, 768), (768, 1792), (1792, 3840), (3840, 5000)]
        >>> len(block_bounds(1 << 20)), block_bounds(0)
        (13, [])
    """
    bounds, start, size = [], 0, FIRST_BLOCK
    while start < n_symbols:
        bounds.append((start, min(start + size, n_symbols)))
        start += size
        size *= 2
    return bounds


def check_bytes(version: int, n_symbols: int) -> int:
    """Bytes of block checks in a frame of ``n_symbols`` symbols in format ``version``.

        >>> check_bytes(4, 5000), check_bytes(3, 5000)
        (10, 0)
    """
    return 2 * len(block_bounds(n_symbols)) if version >= CHECKED and not is_lean(version) \
        else 0


def block_check(symbols) -> int:
    """The 16-bit check of one block of symbol indices (a buffer of uint8).

        >>> block_check(b"\\x00\\x01\\x02") == zlib.crc32(b"\\x00\\x01\\x02") & 0xFFFF
        True
    """
    return zlib.crc32(symbols) & 0xFFFF


def frame_checks(symbols) -> bytes:
    """The block checks of a frame's symbol indices (``symbols``: a uint8 numpy array).

        >>> import numpy as np
        >>> len(frame_checks(np.zeros(5000, dtype=np.uint8)))  # five blocks, two bytes each
        10
    """
    return b"".join(struct.pack("<H", block_check(symbols[a:b]))
                    for a, b in block_bounds(len(symbols)))


def pack_frame(n_symbols: int, payload: bytes, checks: bytes = b"",
               version: int = VERSION) -> bytes:
    """A frame: its head, the block checks (versions 4 and later; empty for older ones), the
    payload.  Versions 6 and 7 store no symbol count (the header's length and frame size give
    it), the payload's length in words as a varint and a 16-bit frame check; a lean frame
    (versions 72-91) the payload's length in bytes and the payload alone.

        >>> frame = pack_frame(3, b"\\x01\\x02\\x03\\x04", b"\\xaa\\xbb")
        >>> parse_frame(frame, 0, 3, 0)
        (b'\\x01\\x02\\x03\\x04', [48042], 9)
        >>> len(pack_frame(3, b"\\x01\\x02\\x03\\x04", b"\\xaa\\xbb", version=4))
        18
        >>> lean = pack_frame(3, b"\\x01\\x02\\x03", version=72)
        >>> lean, parse_frame(lean, 0, 3, 0, 72)
        (b'\\x03\\x01\\x02\\x03', (b'\\x01\\x02\\x03', [], 4))
    """
    if is_lean(version):
        if checks:
            raise ValueError("a lean frame holds no block checks")
        return _varints().pack_varint(len(payload)) + payload
    body = checks + payload
    if version >= COMPACT:
        head = _varints().pack_varint(len(payload) // 4)
        return head + _CHECK.pack(zlib.crc32(body, zlib.crc32(head)) & 0xFFFF) + body
    head = struct.pack("<II", n_symbols, len(payload))
    return head + _CRC.pack(zlib.crc32(body, zlib.crc32(head))) + body


def _payload_varint(buf, offset: int, bound: int, index: int) -> tuple[int, int]:
    """A frame head's varint (at most ``bound``) and the offset past it."""
    varints = _varints()
    try:
        return varints.read_varint(buf, offset, bound)
    except varints.ShortVarint:
        raise NeedMoreData from None
    except ValueError:
        raise CorruptError(f"frame {index} declares an impossible payload length") from None


def _compact_head(buf, offset: int, expected_symbols: int, index: int,
                  lean: bool = False) -> tuple[int, int, int]:
    """payload_len, frame check (0 in a lean frame, which has none) and the offset past the
    head of a version-6 or lean frame."""
    if lean:
        size, at = _payload_varint(buf, offset, max_payload_bytes(expected_symbols), index)
        return size, 0, at
    words, at = _payload_varint(buf, offset, max_payload_bytes(expected_symbols) // 4, index)
    if len(buf) < at + _CHECK.size:
        raise NeedMoreData
    (check,) = _CHECK.unpack_from(buf, at)
    return 4 * words, check, at + _CHECK.size


def parse_frame_head(buf: bytes | bytearray, offset: int, expected_symbols: int,
                     index: int, version: int = VERSION) -> tuple[int, int]:
    """Check the head of the frame at ``buf[offset:]``; return its payload length and check
    (the payload itself is not read: ``parse_frame`` checks it, a seeking reader skips it).

    Raises:
        NeedMoreData: ``buf`` ends inside the head.
        CorruptError: wrong symbol count or impossible payload length.

        >>> parse_frame_head(pack_frame(3, bytes(8)), 0, 3, 0)[0]
        8
    """
    if version >= COMPACT:
        return _compact_head(buf, offset, expected_symbols, index, is_lean(version))[:2]
    if len(buf) - offset < FRAME_HEAD.size:
        raise NeedMoreData
    n_symbols, payload_len, frame_crc = FRAME_HEAD.unpack_from(buf, offset)
    if n_symbols != expected_symbols:
        raise CorruptError(
            f"frame {index} declares {n_symbols} symbols, expected {expected_symbols}")
    if payload_len % 4 or payload_len > max_payload_bytes(n_symbols):
        raise CorruptError(f"frame {index} declares an impossible payload of {payload_len} bytes")
    return payload_len, frame_crc


def frame_size_on_disk(version: int, n_symbols: int, payload_len: int) -> int:
    """Bytes of a frame of ``n_symbols`` symbols with a payload of ``payload_len`` bytes.

        >>> [frame_size_on_disk(v, 5000, 100) for v in (72, 6, 4, 3)]
        [101, 113, 122, 112]
    """
    if is_lean(version):
        return len(_varints().pack_varint(payload_len)) + payload_len
    if version >= COMPACT:
        return len(_varints().pack_varint(payload_len // 4)) + _CHECK.size + \
            check_bytes(version, n_symbols) + payload_len
    return FRAME_HEAD.size + check_bytes(version, n_symbols) + payload_len


def parse_frame(buf: bytes | bytearray, offset: int, expected_symbols: int,
                index: int, version: int = VERSION) -> tuple[bytes, list[int], int]:
    """Check the frame at ``buf[offset:]``; return a copy of its payload, its block checks
    (empty before version 4) and the offset past it.

    Raises:
        NeedMoreData: ``buf`` ends inside the frame.
        CorruptError: wrong symbol count, impossible payload length, or checksum mismatch.

        >>> frame = bytearray(pack_frame(2, bytes(4), b"\\x00\\x00"))
        >>> parse_frame(frame, 0, 2, 0)
        (b'\\x00\\x00\\x00\\x00', [0], 9)
        >>> frame[-1] ^= 1
        >>> parse_frame(frame, 0, 2, 0)
        Traceback (most recent call last):
        ...
        seqzip.errors.CorruptError: frame 0 checksum mismatch (corrupt data)
    """
    if is_lean(version):
        payload_len, _, start = _compact_head(buf, offset, expected_symbols, index, True)
        if len(buf) < start + payload_len:
            raise NeedMoreData
        return bytes(buf[start:start + payload_len]), [], start + payload_len
    if version >= COMPACT:
        payload_len, frame_check, start = _compact_head(buf, offset, expected_symbols, index)
        head_end, mask = start - _CHECK.size, 0xFFFF
    else:
        payload_len, frame_check = parse_frame_head(buf, offset, expected_symbols, index,
                                                    version)
        head_end, start, mask = offset + 8, offset + FRAME_HEAD.size, 0xFFFFFFFF
    n_checks = check_bytes(version, expected_symbols)
    end = start + n_checks + payload_len
    if len(buf) < end:
        raise NeedMoreData
    body = bytes(buf[start:end])
    if zlib.crc32(body, zlib.crc32(bytes(buf[offset:head_end]))) & mask != frame_check:
        raise CorruptError(f"frame {index} checksum mismatch (corrupt data)")
    checks = list(struct.unpack_from(f"<{n_checks // 2}H", body))
    return body[n_checks:], checks, end


# Streams whose payloads cannot pay for their length (issue 23): over a one-symbol alphabet
# every frame's payload is empty (the data is the header's length times one byte), so ~12 KB
# of frames used to decode to 4 GiB in 14 s and ~740 KB to the default max_length of 256 GiB.
# Under the default limits a one-symbol stream may bring the decoded output of a call to at
# most ONE_SYMBOL_LENGTH bytes; a caller that sets max_length (or None) has asked for more.
ONE_SYMBOL_LENGTH = 1 << 30


def check_one_symbol_length(header: StreamHeader, done: int, max_length: int | None) -> None:
    """Refuse a stream over a one-symbol alphabet that would bring the decoded bytes of a call
    (``done`` before it) past :data:`ONE_SYMBOL_LENGTH`, when ``max_length`` is the default.

    Raises:
        LimitError: the stream may be fine: pass a ``max_length`` (``--max-length``) to
            decode it.

        >>> h = StreamHeader(1, b"[]", 0, 2 << 30, 1 << 20, b"a", 0)
        >>> check_one_symbol_length(h, 0, 4 << 30)    # an explicit limit: the caller asked
        >>> check_one_symbol_length(h, 0, DEFAULT_MAX_LENGTH)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqzip.errors.LimitError: stream repeats one byte value 2,147,483,648 times, ...
    """
    if len(header.alphabet) == 1 and max_length == DEFAULT_MAX_LENGTH and \
            done + header.length > ONE_SYMBOL_LENGTH:
        raise LimitError(
            f"stream repeats one byte value {header.length:,} times, over the "
            f"{ONE_SYMBOL_LENGTH:,} bytes the default limits decode from such streams (their "
            "frames are empty: nothing pays for the length); give max_length (--max-length) "
            "to decode it")
