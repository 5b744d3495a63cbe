"""The .sqz container: stream header and frames.

A stream is a header followed by frames; streams may be concatenated.  All integers are
little-endian.

Header (``VERSION`` 6; version 7 is version 6 with a ``dictionary`` field after the config,
written only for streams coded from a model file, ``--dict``).  Varints are 7 bits a byte,
low first, minimal::

    magic        4  b"\\xb7SQZ"
    version      1  format version
    model_id     1  model family (see seqzip.models)
    flags        1  bits 0-3: the level of a preset config, 0 when the config follows;
                    bits 4-5: the alphabet's code; bit 6: a seed follows; bit 7: a frame size
                    follows; a flag is set only when its field differs from the default
    config       *  level 0 only: varint length (at most MAX_CONFIG_BYTES), then a zero byte
                    and the config's typed, named fields (``models.base.config_to_fields``)
    dictionary  16  version 7 only: the first 16 bytes of the SHA-256 of the model file the
                    coding started from (``seqzip.predictor.file_hash``)
    seed         *  varint, when flagged (else 0)
    length       *  varint: bytes of original data, at most MAX_LENGTH
    frame_size   *  varint, when flagged (else DEFAULT_FRAME), at most MAX_FRAME
    alphabet     *  the byte values present, in the shortest of four codes
                    (``alphabet_codes``; none when length is 0)
    crc32        4  CRC-32 of the original data
    header_check 2  low 16 bits of the CRC-32 of every header byte before it

A preset stream's header is 13 bytes, plus the length's varint (1-3 bytes up to 2 MiB) and
the alphabet's code (1 byte for all 256 values, 9-14 for a text's 70-90 values, 34 at most):
25-29 bytes for a text (28 for a 4 KB one and for alice29.txt), where version 4 took 69.  The
header check is 16 bits where the block checks and the CRC-32 of the data stand behind it:
every field is range-checked before use and only the canonical spelling of a header is
accepted.

Frame (versions 6, 7), repeated until ``length`` symbols are coded: its symbol count is not
stored (every frame but the last holds ``frame_size`` symbols)::

    payload_words *  varint: payload bytes / 4, bounded by the coder's worst case
    frame_check  2  low 16 bits of the CRC-32 of payload_words, the checks and the payload
    checks     2*k  a 16-bit check of each block of decoded symbols (below)
    payload      *  range coder words

Versions 2-5 (still read).  Header: magic 4, version 1, model_id 1, config_len 2, config
(one byte, the level, for a preset, else a zero byte and the JSON array of its values by
sorted field name; version 2: the array alone), dictionary 16 (version 5 only), seed 8,
length 8, frame_size 4, alphabet 32 (a 256-bit map), crc32 4, header_crc 4 (CRC-32): 69
bytes for a preset.  Frame: n_symbols 4, payload_len 4, frame_crc 4 (CRC-32), the checks
(versions 4, 5), the payload.

Block checks (versions 4 and later).  A frame's symbols fall in blocks of 256, 512, 1,024, ...
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
VERSION = 6
DICTIONARY_VERSION = 7  # a stream coded from a model file (its hash follows the config)
COMPACT = 6  # the first version with the compact header and frame heads (6 and 7)
READABLE = (2, 3, 4, 5, 6, 7)  # format versions this build decodes
WITH_DICTIONARY = (5, 7)
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


def _varints():
    """The varint functions (``seqzip.models.base``), imported when a compact stream is first
    read or written: ``seqzip --version`` imports this module and must not load the models."""
    from .models import base
    return base


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
        (6, 18)
    """
    model_id: int  # model family id (seqzip.models maps ids and names)
    config: bytes  # the config as seqzip.models.base.config_to_header gives it
    seed: int
    length: int  # bytes of original data
    frame_size: int  # symbols per frame
    alphabet: bytes  # the byte values present, sorted
    crc32: int  # CRC-32 of the original data
    version: int = VERSION  # format version (the config's encoding depends on it)
    dictionary: bytes = b""  # versions 5 and 7: hash of the model file coding started from

    def pack(self) -> bytes:
        if (self.version in WITH_DICTIONARY) != bool(self.dictionary) or \
                len(self.dictionary) not in (0, DICTIONARY_BYTES):
            raise ValueError("a dictionary hash of 16 bytes goes with format versions 5 and 7 "
                             "only")
        if self.version >= COMPACT:
            return _pack_compact(self)
        bitmap = _bitmap(self.alphabet)
        head = (_FIXED.pack(MAGIC, self.version, self.model_id, len(self.config))
                + self.config + self.dictionary
                + _TAIL.pack(self.seed, self.length, self.frame_size, bitmap, self.crc32))
        return head + _CRC.pack(zlib.crc32(head))


def _bitmap(alphabet: bytes) -> bytes:
    bitmap = bytearray(32)
    for b in alphabet:
        bitmap[b >> 3] |= 1 << (b & 7)
    return bytes(bitmap)


def _alphabet_from_bitmap(bitmap: bytes) -> bytes:
    return bytes(b for b in range(256) if bitmap[b >> 3] >> (b & 7) & 1)


# -- the compact header (versions 6 and 7) ---------------------------------------------------
# flags: bits 0-3 the level of a preset config (0: the config follows, its length a varint),
# bits 4-5 the alphabet's code, bit 6 a seed follows (else 0), bit 7 a frame size follows
# (else DEFAULT_FRAME).
_LEVEL_MASK, _SEED, _FRAME = 0x0F, 0x40, 0x80
_WINDOW, _LIST, _RUNS, _GAPS = range(4)  # alphabet codes
_CHECK = struct.Struct("<H")  # the compact header's check: the low 16 bits of a CRC-32


def _ranges(values: list[int]) -> bytes:
    """Maximal runs of ``values`` (sorted, distinct): per run, a byte for its start (the
    first run's from 0, each next one's from the previous run's end plus two) and a byte for
    its length minus one."""
    out, base, i = bytearray(), 0, 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out += bytes([values[i] - base, values[j] - values[i]])
        base, i = values[j] + 2, j + 1
    return bytes(out)


def _gamma_runs(present: list[int]) -> bytes:
    """The runs from the lowest value present to the highest, present and absent in turn (the
    first present), each length n as Elias's gamma code: n's bit length less one zero bits,
    then n's bits, high first; the bits packed high first, zeros to the byte's end."""
    runs, n = [], 1
    for a, b in zip(present, present[1:]):
        if b == a + 1:
            n += 1
        else:
            runs += [n, b - a - 1]
            n = 1
    runs.append(n)
    bits = "".join("0" * (r.bit_length() - 1) + format(r, "b") for r in runs)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def _read_gamma_runs(r: "_Reader", low: int, span: int) -> bytes:
    bits: list[int] = []

    def bit() -> int:
        if not bits:
            byte = r.take(1)[0]
            bits.extend((byte >> k) & 1 for k in range(8))  # popped from the end: high first
        return bits.pop()

    values, at, present = [], low, True
    while at <= low + span:
        zeros = 0
        while not bit():
            zeros += 1
            if zeros > 8:
                raise CorruptError("header alphabet run is too long (corrupt header)")
        n = 1
        for _ in range(zeros):
            n = n << 1 | bit()
        if present:
            values.extend(range(at, at + n))
        at, present = at + n, not present
    if at != low + span + 1 or present or any(bits):
        raise CorruptError("header alphabet runs do not end at its highest value (corrupt "
                           "header)")
    return bytes(v for v in values if v < 256)


def alphabet_codes(alphabet: bytes) -> list[bytes]:
    """The four codes of a non-empty alphabet, indexed by their tag: the lowest value, the
    highest minus the lowest, and a bit map from the one to the other (bit i of byte i//8:
    value lowest + i); a count and the values; the lowest value, the highest minus the lowest,
    and the lengths of the runs between them in Elias's gamma code (``_gamma_runs``); a count
    and the runs of absent values, two bytes each (the full alphabet is one zero byte).  A
    header keeps the shortest (the lowest tag of equals).  Text takes 9-14 bytes (the runs),
    a binary file 1-5 (the gaps), ptt5's 159 scattered values 33.

        >>> [len(code) for code in alphabet_codes(b"abcdefxyz")]
        [6, 10, 5, 7]
        >>> alphabet_codes(bytes(range(256)))[_GAPS]
        b'\\x00'
    """
    present = list(alphabet)
    absent = sorted(set(range(256)) - set(present))
    gaps = _ranges(absent)
    low, span = present[0], present[-1] - present[0]
    window = bytearray((span >> 3) + 1)
    for b in present:
        window[(b - low) >> 3] |= 1 << ((b - low) & 7)
    return [bytes([low, span]) + window, bytes([len(present) - 1]) + bytes(present),
            bytes([low, span]) + _gamma_runs(present),
            bytes([len(gaps) // 2]) + gaps]


def _shortest(alphabet: bytes) -> tuple[int, bytes]:
    codes = alphabet_codes(alphabet)
    tag = min((len(c), t) for t, c in enumerate(codes))[1]
    return tag, codes[tag]


def _pack_compact(h: StreamHeader) -> bytes:
    pack_varint = _varints().pack_varint
    config = h.config
    level = config[0] if len(config) == 1 and 1 <= config[0] <= _LEVEL_MASK else 0
    tag, alphabet = _shortest(h.alphabet) if h.alphabet else (0, b"")
    flags = level | tag << 4 | (_SEED if h.seed else 0) | \
        (_FRAME if h.frame_size != DEFAULT_FRAME else 0)
    head = bytearray(MAGIC + bytes([h.version, h.model_id, flags]))
    if not level:
        head += pack_varint(len(config)) + config
    head += h.dictionary
    if h.seed:
        head += pack_varint(h.seed)
    head += pack_varint(h.length)
    if h.frame_size != DEFAULT_FRAME:
        head += pack_varint(h.frame_size)
    head += alphabet + _CRC.pack(h.crc32)
    return bytes(head + _CHECK.pack(zlib.crc32(head) & 0xFFFF))


class _Reader:
    """Reads a compact header field by field; NeedMoreData at the end of the buffer."""

    def __init__(self, buf, at: int) -> None:
        self.buf, self.at = buf, at

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.buf):
            raise NeedMoreData
        out = bytes(self.buf[self.at:self.at + n])
        self.at += n
        return out

    def varint(self, name: str, limit: int) -> int:
        varints = _varints()
        try:
            value, self.at = varints.read_varint(self.buf, self.at, limit)
        except varints.ShortVarint:
            raise NeedMoreData from None
        except ValueError as exc:
            raise CorruptError(f"header field {name}: {exc} (corrupt header)") from None
        return value


def _read_alphabet(r: _Reader, tag: int) -> bytes:
    if tag == _RUNS:
        low, span = r.take(2)
        return _read_gamma_runs(r, low, span)
    if tag == _WINDOW:
        low, span = r.take(2)
        window = r.take((span >> 3) + 1)
        return bytes(low + i for i in range(span + 1) if window[i >> 3] >> (i & 7) & 1
                     and low + i < 256)
    count = r.take(1)[0]
    if tag == _LIST:
        return r.take(count + 1)
    values, base = [], 0
    for _ in range(count):
        gap, size = r.take(2)
        values.extend(range(base + gap, base + gap + size + 1))
        base = base + gap + size + 2
    if tag == _GAPS:
        values = sorted(set(range(256)) - set(values))
    if not values or values[-1] > 255 or values[0] < 0:
        raise CorruptError("header alphabet is out of range (corrupt header)")
    return bytes(values)


def _parse_compact(buf, offset: int, version: int, model_id: int) -> tuple[StreamHeader, int]:
    r = _Reader(buf, offset + 6)
    flags = r.take(1)[0]
    level = flags & _LEVEL_MASK
    if level:
        config = bytes([level])
    else:
        config = r.take(r.varint("config length", MAX_CONFIG_BYTES))
    dictionary = r.take(DICTIONARY_BYTES) if version in WITH_DICTIONARY else b""
    seed = r.varint("seed", (1 << 64) - 1) if flags & _SEED else 0
    length = r.varint("length", MAX_LENGTH)
    frame_size = r.varint("frame size", MAX_FRAME) if flags & _FRAME else DEFAULT_FRAME
    tag = flags >> 4 & 3
    code_start = r.at
    alphabet = _read_alphabet(r, tag) if length else b""
    code = bytes(buf[code_start:r.at])
    (crc,) = _CRC.unpack(r.take(4))
    end = r.at
    (check,) = _CHECK.unpack(r.take(2))
    if zlib.crc32(bytes(buf[offset:end])) & 0xFFFF != check:
        raise CorruptError("header checksum mismatch (corrupt header)")
    # Only the canonical form is a header: one spelling per stream, so no field is ignored.
    if (flags & _SEED and not seed) or (flags & _FRAME and frame_size == DEFAULT_FRAME) or \
            (not length and tag):
        raise CorruptError("header flags are not canonical (corrupt header)")
    if not 1 <= frame_size <= MAX_FRAME:
        raise CorruptError(f"header declares a frame size of {frame_size} symbols")
    if length and (not alphabet or alphabet != bytes(sorted(set(alphabet))) or
                   _shortest(alphabet) != (tag, code)):
        raise CorruptError("header alphabet is not in its shortest code (corrupt header)")
    header = StreamHeader(model_id, config, seed, length, frame_size, alphabet, crc, version,
                          dictionary)
    return header, end + _CHECK.size


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
    if available < 6:
        raise NeedMoreData
    version, model_id = buf[offset + 4], buf[offset + 5]
    if version not in READABLE:
        raise UnsupportedVersionError(
            f"stream has format version {version}; this seqzip reads versions "
            f"{', '.join(map(str, READABLE))}")
    if version >= COMPACT:
        return _parse_compact(buf, offset, version, model_id)
    if available < _FIXED.size:
        raise NeedMoreData
    _, version, model_id, config_len = _FIXED.unpack_from(buf, offset)
    if config_len > MAX_CONFIG_BYTES:
        raise CorruptError(f"header declares a {config_len}-byte model config (corrupt header)")
    extra = DICTIONARY_BYTES if version in WITH_DICTIONARY else 0
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


def pack_frame(n_symbols: int, payload: bytes, checks: bytes = b"",
               version: int = VERSION) -> bytes:
    """A frame: its head, the block checks (versions 4 and later; empty for older ones), the
    payload.  Versions 6 and 7 store no symbol count (the header's length and frame size give
    it), the payload's length in words as a varint and a 16-bit frame check.

        >>> frame = pack_frame(3, b"\\x01\\x02\\x03\\x04", b"\\xaa\\xbb")
        >>> parse_frame(frame, 0, 3, 0)
        (b'\\x01\\x02\\x03\\x04', [48042], 9)
        >>> len(pack_frame(3, b"\\x01\\x02\\x03\\x04", b"\\xaa\\xbb", version=4))
        18
    """
    body = checks + payload
    if version >= COMPACT:
        head = _varints().pack_varint(len(payload) // 4)
        return head + _CHECK.pack(zlib.crc32(body, zlib.crc32(head)) & 0xFFFF) + body
    head = struct.pack("<II", n_symbols, len(payload))
    return head + _CRC.pack(zlib.crc32(body, zlib.crc32(head))) + body


def _compact_head(buf, offset: int, expected_symbols: int, index: int) -> tuple[int, int, int]:
    """payload_len, frame check and the offset past the head of a version-6 frame."""
    words_max, varints = max_payload_bytes(expected_symbols) // 4, _varints()
    try:
        words, at = varints.read_varint(buf, offset, words_max)
    except varints.ShortVarint:
        raise NeedMoreData from None
    except ValueError:
        raise CorruptError(f"frame {index} declares an impossible payload length") from None
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
        return _compact_head(buf, offset, expected_symbols, index)[:2]
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

        >>> [frame_size_on_disk(v, 5000, 100) for v in (6, 4, 3)]
        [113, 122, 112]
    """
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
