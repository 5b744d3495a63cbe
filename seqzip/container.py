"""The .sqz container: stream header and frames.

A stream is a header followed by frames; streams may be concatenated.  All integers are
little-endian.

Header (``VERSION`` 4; version 5 is version 4 with a ``dictionary`` field after the config,
written only for streams coded from a model file, ``--dict``; versions 2 and 3 are still read:
they have no block checks, and version 2 stored every config as its JSON array)::

    magic        4  b"\\xb7SQZ"
    version      1  format version
    model_id     1  model family (see seqzip.models)
    config_len   2  length of the model config, at most MAX_CONFIG_BYTES
    config       *  the model's frozen config: one byte, the level, for a level's preset;
                    else a zero byte and a JSON array of its values by sorted field name
                    (``seqzip.models.base.config_to_header``; version 2: the array alone)
    dictionary  16  version 5 only: the first 16 bytes of the SHA-256 of the model file the
                    coding started from (``seqzip.predictor.file_hash``)
    seed         8  seed of the model's PRNG
    length       8  length of the original data in bytes, at most MAX_LENGTH
    frame_size   4  symbols per frame (every frame but the last is full), at most MAX_FRAME
    alphabet    32  256-bit map of the byte values present (bit b of byte b//8)
    crc32        4  CRC-32 of the original data
    header_crc   4  CRC-32 of every header byte before it

Frame, repeated until ``length`` symbols are coded::

    n_symbols    4  symbols in this frame, min(frame_size, remaining)
    payload_len  4  payload bytes, a multiple of 4, bounded by the coder's worst case
    frame_crc    4  CRC-32 of n_symbols, payload_len, the checks and the payload
    checks     2*k  versions 4, 5: a 16-bit check of each block of decoded symbols (below)
    payload      *  range coder words

Block checks (version 4).  A frame's symbols fall in blocks of 256, 512, 1,024, ...
symbols (each twice the last; ``block_bounds``), and the frame stores the low 16 bits of the
CRC-32 of each block's symbol indices.  The decoder checks each block as soon as it is decoded,
so a damaged or forged payload fails within the first block it breaks, not after the 2^24
symbols a frame may declare: the work a hostile frame can cost is bounded by the work of the
valid symbols before it plus one block (at most as many again).  A frame of 2^20 symbols
carries 13 checks (26 bytes).  Versions 2 and 3 have no checks; their frames are decoded whole.

Every field is checked before it is used, so no allocation is ever sized by an unchecked field.

    >>> h = StreamHeader(1, b'[255,1.0,2]', seed=7, length=3, frame_size=16,
    ...                  alphabet=b"abc", crc32=0)
    >>> packed = h.pack()
    >>> parse_header(packed) == (h, len(packed))
    True
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from .errors import CorruptError, LimitError, NotSeqzipError, UnsupportedVersionError

MAGIC = b"\xb7SQZ"
VERSION = 4
DICTIONARY_VERSION = 5  # a stream coded from a model file (its hash follows the config)
READABLE = (2, 3, 4, 5)  # format versions this build decodes
DICTIONARY_BYTES = 16
CHECKED = 4  # the first version with block checks in its frames
FIRST_BLOCK = 1 << 8  # symbols in a frame's first checked block; each next one is twice as long
MAX_CONFIG_BYTES = 4096
MAX_LENGTH = 1 << 48  # 256 TiB: anything larger is a corrupt field, not a file
MAX_FRAME = 1 << 24
DEFAULT_FRAME = 1 << 20
# Default limits of a decoder (seqzip.api.Limits): every level of every model fits in them.
DEFAULT_MAX_LENGTH = 256 << 30  # decoded bytes
DEFAULT_MAX_MEMORY = 2 << 30  # bytes a stream's model may allocate (its config's bound)

# The coder never spends more than 24 bits on one coded decision (constriction's precision) and
# codes at most 8 decisions per symbol (bit mode over 256 symbols), so a frame of n symbols fits
# in n * 192 bits plus the coder's final flush: a bound for checking frame fields, not a size.
MAX_BITS_PER_SYMBOL = 192
FLUSH_WORDS = 2

_FIXED = struct.Struct("<4sBBH")  # magic, version, model_id, config_len
_TAIL = struct.Struct("<QQI32sI")  # seed, length, frame_size, alphabet, crc32
_CRC = struct.Struct("<I")
FRAME_HEAD = struct.Struct("<III")  # n_symbols, payload_len, frame_crc


def max_payload_bytes(n_symbols: int) -> int:
    """Upper bound on the payload of a frame of ``n_symbols`` symbols (a header sanity check).

        >>> max_payload_bytes(1)
        32
    """
    return 4 * ((n_symbols * MAX_BITS_PER_SYMBOL + 31) // 32 + FLUSH_WORDS)


class NeedMoreData(Exception):
    """Internal: the buffer ends inside a header or frame (not an error while streaming).

        >>> try:
        ...     parse_header(MAGIC)
        ... except NeedMoreData:
        ...     print("wait for more")
        wait for more
    """


@dataclass(frozen=True)
class StreamHeader:
    """A stream header, its fields in the order the module docstring lays them out.

        >>> h = StreamHeader(1, b"\\x05", seed=0, length=2, frame_size=8, alphabet=b"ab", crc32=0)
        >>> h.version, len(h.pack())
        (4, 69)
    """
    model_id: int  # model family id (seqzip.models maps ids and names)
    config: bytes  # canonical JSON of the model config
    seed: int
    length: int  # bytes of original data
    frame_size: int  # symbols per frame
    alphabet: bytes  # the byte values present, sorted
    crc32: int  # CRC-32 of the original data
    version: int = VERSION  # format version (the config's encoding depends on it)
    dictionary: bytes = b""  # version 5: hash of the model file coding started from

    def pack(self) -> bytes:
        if (self.version == DICTIONARY_VERSION) != bool(self.dictionary) or \
                len(self.dictionary) not in (0, DICTIONARY_BYTES):
            raise ValueError("a dictionary hash of 16 bytes goes with format version 5 only")
        bitmap = bytearray(32)
        for b in self.alphabet:
            bitmap[b >> 3] |= 1 << (b & 7)
        head = (_FIXED.pack(MAGIC, self.version, self.model_id, len(self.config))
                + self.config + self.dictionary
                + _TAIL.pack(self.seed, self.length, self.frame_size, bytes(bitmap), self.crc32))
        return head + _CRC.pack(zlib.crc32(head))


def _alphabet_from_bitmap(bitmap: bytes) -> bytes:
    return bytes(b for b in range(256) if bitmap[b >> 3] >> (b & 7) & 1)


def parse_header(buf: bytes | bytearray, offset: int = 0) -> tuple[StreamHeader, int]:
    """Parse a stream header at ``buf[offset:]``; return it and the offset just past it.

    Works on offsets and copies, never on views, so the caller may grow ``buf`` afterwards.

    Raises:
        NeedMoreData: ``buf`` ends inside the header (the caller decides if that is truncation).
        NotSeqzipError: bad magic.
        UnsupportedVersionError: a format version this build does not read.
        CorruptError: header checksum mismatch or an impossible field.

        >>> h = StreamHeader(1, b"\\x05", seed=0, length=2, frame_size=8, alphabet=b"ab", crc32=0)
        >>> parse_header(b"junk" + h.pack(), offset=4)[0].alphabet
        b'ab'
    """
    available = len(buf) - offset
    start = bytes(buf[offset:offset + len(MAGIC)])
    if start != MAGIC[:len(start)]:
        raise NotSeqzipError("not a seqzip stream (bad magic bytes)")
    if available < _FIXED.size:
        raise NeedMoreData
    _, version, model_id, config_len = _FIXED.unpack_from(buf, offset)
    if version not in READABLE:
        raise UnsupportedVersionError(
            f"stream has format version {version}; this seqzip reads versions "
            f"{', '.join(map(str, READABLE))}")
    if config_len > MAX_CONFIG_BYTES:
        raise CorruptError(f"header declares a {config_len}-byte model config (corrupt header)")
    extra = DICTIONARY_BYTES if version == DICTIONARY_VERSION else 0
    end = _FIXED.size + config_len + extra + _TAIL.size
    if available < end + _CRC.size:
        raise NeedMoreData
    (header_crc,) = _CRC.unpack_from(buf, offset + end)
    if zlib.crc32(bytes(buf[offset:offset + end])) != header_crc:
        raise CorruptError("header checksum mismatch (corrupt header)")
    config = bytes(buf[offset + _FIXED.size:offset + _FIXED.size + config_len])
    at = offset + _FIXED.size + config_len
    dictionary = bytes(buf[at:at + extra])
    seed, length, frame_size, bitmap, crc = _TAIL.unpack_from(buf, at + extra)
    if length > MAX_LENGTH:
        raise CorruptError(f"header declares an absurd length of {length} bytes")
    if not 1 <= frame_size <= MAX_FRAME:
        raise CorruptError(f"header declares a frame size of {frame_size} symbols")
    alphabet = _alphabet_from_bitmap(bitmap)
    if (length == 0) != (len(alphabet) == 0):
        raise CorruptError("header alphabet does not match its length")
    header = StreamHeader(model_id, config, seed, length, frame_size, alphabet, crc, version,
                          dictionary)
    return header, offset + end + _CRC.size


def next_frame_symbols(header: StreamHeader, done: int) -> int:
    """Symbols in the next frame after ``done`` symbols: every frame but the last is full.

        >>> h = StreamHeader(1, b"\\x05", seed=0, length=20, frame_size=8, alphabet=b"a", crc32=0)
        >>> [next_frame_symbols(h, done) for done in (0, 8, 16)]
        [8, 8, 4]
    """
    return min(header.frame_size, header.length - done)


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
    return 2 * len(block_bounds(n_symbols)) if version >= CHECKED else 0


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


def pack_frame(n_symbols: int, payload: bytes, checks: bytes = b"") -> bytes:
    """A frame: its head, the block checks (versions 4 and 5; empty for older versions), the
    payload.

        >>> frame = pack_frame(3, b"\\x01\\x02\\x03\\x04", b"\\xaa\\xbb")
        >>> parse_frame(frame, 0, 3, 0)
        (b'\\x01\\x02\\x03\\x04', [48042], 18)
    """
    head = struct.pack("<II", n_symbols, len(payload))
    body = checks + payload
    return head + _CRC.pack(zlib.crc32(body, zlib.crc32(head))) + body


def parse_frame_head(buf: bytes | bytearray, offset: int, expected_symbols: int,
                     index: int) -> tuple[int, int]:
    """Check the head of the frame at ``buf[offset:]``; return its payload length and CRC-32
    (the payload itself is not read: ``parse_frame`` checks it, a seeking reader skips it).

    Raises:
        NeedMoreData: ``buf`` ends inside the head.
        CorruptError: wrong symbol count or impossible payload length.

        >>> parse_frame_head(pack_frame(3, bytes(8)), 0, 3, 0)[0]
        8
    """
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

        >>> frame_size_on_disk(4, 5000, 100), frame_size_on_disk(3, 5000, 100)
        (122, 112)
    """
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
        (b'\\x00\\x00\\x00\\x00', [0], 18)
        >>> frame[-1] ^= 1
        >>> parse_frame(frame, 0, 2, 0)
        Traceback (most recent call last):
        ...
        seqzip.errors.CorruptError: frame 0 checksum mismatch (corrupt data)
    """
    payload_len, frame_crc = parse_frame_head(buf, offset, expected_symbols, index)
    start = offset + FRAME_HEAD.size
    n_checks = check_bytes(version, expected_symbols)
    end = start + n_checks + payload_len
    if len(buf) < end:
        raise NeedMoreData
    body = bytes(buf[start:end])
    if zlib.crc32(body, zlib.crc32(bytes(buf[offset:offset + 8]))) != frame_crc:
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
