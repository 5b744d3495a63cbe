"""The .sqz stream header: every version this build reads, and the one it writes.

A stream is a header followed by frames (``seqzip.container``).  All integers are
little-endian; varints are 7 bits a byte, low first, minimal.

Header (``VERSION`` 8; version 9 is version 8 with a ``dictionary`` field after the config,
written only for streams coded from a model file, ``--dict``; versions 10-27 are 8 and 9 for a
config that is a preset of a higher band of ids: 10 and 11 for ids 16-30, 12 and 13 for ids
31-45, 14 and 15 for ids 46-60, 16 and 17 for ids 61-75, 18 and 19 for ids 76-90, 20 and 21
for ids 91-105, 22 and 23 for ids 106-120, 24 and 25 for ids 121-135, 26 and 27 for ids
136-150, named by the flags' level bits as the id less 15 times the band,
``terse_version``: a preset
added after the four bits ran out costs no header byte, and a build that reads fewer bands
says the version is new instead of misreading the id; versions 72-91 are 8-27 for a lean
stream, one frame of 1 to ``LEAN_MAX`` symbols of cm, order2 or ctw (``LEAN_MODEL_IDS``) whose
frame holds no checks and whose payload ends at its last byte, ``seqzip.container``: every
such stream is written lean, so a small file's stream is 11-20 bytes shorter, and the version
follows from the fields below)::

    magic        4  b"\\xb7SQZ"
    version      1  format version
    flags        1  bits 0-3: the preset id of a preset config (versions 10-27: the id less
                    15 * band, ``preset_band``), 0 when the config follows;
                    bits 4-5: the alphabet's code (below); bit 6: a model id follows (else
                    the model is cm, ``FOLDED_MODEL_ID``); bit 7: an options byte follows
    model_id     1  when flagged: the model family (see seqzip.models), never cm's
    options      1  when flagged, never zero: bit 0 a seed follows, bit 1 a frame size
                    follows, bit 2 an escape count follows; bits 3-7 zero
    config       *  level 0 only: varint length (at most MAX_CONFIG_BYTES), then a zero byte
                    and the config's typed, named fields (``models.base.config_to_fields``)
    dictionary  16  version 9 only: the first 16 bytes of the SHA-256 of the model file the
                    coding started from (``seqzip.predictor.file_hash``)
    seed         *  varint, when flagged (else 0)
    length       *  varint: bytes of original data, at most MAX_LENGTH
    frame_size   *  varint, when flagged (else DEFAULT_FRAME), at most MAX_FRAME
    escapes      *  varint, when flagged (else 0), at most length: the symbols the model codes
                    beyond the data's bytes, when it codes a reversible form of them longer
                    than they are (cm's case-folded presets, ``seqzip.textcase``); the frames
                    hold length + escapes symbols, and the CRC-32 is the data's
    alphabet     *  the values the model codes over (none when length is 0): flags bits
                    4-5 say how: 0, all 256 values (no field); 1, the values 0 to a top
                    value below 255 (one byte, the top); 2, the runs code of
                    ``alphabet_codes`` (text); 3, a byte naming another of its codes (0 the
                    window, 1 the list, 3 the gaps) and that code.  A header keeps the
                    shortest (ties: the lower code).  Version 9: its model file's alphabet
    crc32        4  CRC-32 of the original data (none when length is 0: it is 0)
    header_check 2  low 16 bits of the CRC-32 of every header byte before it

A flag or field is present only when it differs from its default, and only that spelling is
accepted.  A preset stream of cm is 12 bytes plus the length's varint (2 bytes up to 16 KB, 3
up to 2 MiB) and its alphabet field (a text: one byte, its top value; all 256 values: none):
15 bytes for a 4 KB text, 16 for alice29.txt or 1 MB of text, 14-15 for a binary holding
every value, 9 for an empty stream (version 6: 25-29 for a text).  The alphabet is the coding
session's choice (``seqzip.session.coding_alphabet``): cm codes a text over the values 0 to
its top one, its bits then those of the byte, which its bit predictions learn better than
those of an index into the values present (0.3-1.2% fewer payload bytes on the Canterbury
texts at level 6), so the values present need not be listed.

The header check is 16 bits because the frame checks, the block checks of the decoded
symbols and the CRC-32 of the data stand behind it; every field is range-checked before use
and a header decoding to a spelling other than its own is refused (``CorruptError``).

Version 6 (still read; 7 is 6 with the dictionary field): magic 4, version 1, model_id 1,
flags 1 (bits 0-3 the level, bits 4-5 the tag of the alphabet's shortest code, bit 6 a seed
follows, bit 7 a frame size follows), config (level 0), dictionary (7), seed, length,
frame_size, the alphabet in its shortest code (``alphabet_codes``), crc32 4, header_check 2:
25-29 bytes for a text.

Versions 2-5 (still read): magic 4, version 1, model_id 1, config_len 2, config (one byte,
the level, for a preset, else a zero byte and the JSON array of its values by sorted field
name; version 2: the array alone), dictionary 16 (version 5 only), seed 8, length 8,
frame_size 4, alphabet 32 (a 256-bit map), crc32 4, header_crc 4 (CRC-32): 69 bytes for a
preset.

Every field is checked before it is used, so no allocation is ever sized by an unchecked field.

    >>> h = StreamHeader(1, b'[255,1.0,2]', seed=7, length=3, frame_size=16,
    ...                  alphabet=b"abc", crc32=0)
    >>> packed = h.pack()
    >>> parse_header(packed) == (h, len(packed))
    True
    >>> len(StreamHeader(7, b"\\x0b", 0, 4096, DEFAULT_FRAME, bytes(range(123)), 1).pack())
    15
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Callable

from .errors import CorruptError, NotSeqzipError, UnsupportedVersionError

MAGIC = b"\xb7SQZ"
VERSION = 8
DICTIONARY_VERSION = 9  # a stream coded from a model file (its hash follows the config)
COMPACT = 6  # the first version with compact headers and frame heads (6 and later)
TERSE = 8  # the first version with the header above (8-27)
# Versions 8 + 2 * band (and one more with a dictionary) name a preset of id 15 * band + k by
# the flags' level k (1-15): band 0 ids 1-15, band 1 ids 16-30 (versions 10, 11), band 2 ids
# 31-45 (12, 13), band 3 ids 46-60 (14, 15), band 4 ids 61-75 (16, 17), band 5 ids 76-90
# (18, 19), band 6 ids 91-105 (20, 21), band 7 ids 106-120 (22, 23), band 8 ids 121-135 (24,
# 25), band 9 ids 136-150 (26, 27).  A band is added when the ids run out; a build refuses a
# version whose band it does not know by its number.
MAX_BAND = 9
_BAND = 15  # preset ids per band
_TOP_ID = _BAND * (MAX_BAND + 1)  # the highest preset id a header names (150)
# A lean stream (versions LEAN_SHIFT + 8-27, ``StreamHeader.lean``) is a terse one of at most
# LEAN_MAX coded symbols in one frame, whose frame holds no checks (the data's CRC-32 covers it
# and the decoder returns nothing before that verifies) and its payload to the byte
# (``seqzip.container``): 11-20 bytes less for a file of a few KB (benchmarks/lean.py).
LEAN_SHIFT = 64
LEAN_MAX = 1 << 16
# The families whose streams may be lean: cm (7), order2 (1) and ctw (2), whose slowest configs
# decode LEAN_MAX forged symbols in under 3 s of CPU (benchmarks/hostile.py's lean case); the
# online networks' slowest take 8 s to minutes, so their streams keep every block check.
LEAN_MODEL_IDS = (1, 2, 7)
_TERSE_VERSIONS = tuple(range(TERSE, TERSE + 2 * MAX_BAND + 2))
LEAN_VERSIONS = tuple(v + LEAN_SHIFT for v in _TERSE_VERSIONS)
READABLE = tuple(range(2, TERSE)) + _TERSE_VERSIONS + LEAN_VERSIONS  # versions this build decodes
# the terse versions with a dictionary are the odd ones (TERSE and LEAN_SHIFT are even)
WITH_DICTIONARY = (5, 7) + tuple(v for v in _TERSE_VERSIONS + LEAN_VERSIONS if v % 2)
DICTIONARY_BYTES = 16
FOLDED_MODEL_ID = 7  # cm: the model a version-8 header names without a model id byte
MAX_CONFIG_BYTES = 4096
MAX_LENGTH = 1 << 48  # 256 TiB: anything larger is a corrupt field, not a file
MAX_FRAME = 1 << 24
DEFAULT_FRAME = 1 << 20

_FIXED = struct.Struct("<4sBBH")  # magic, version, model_id, config_len
_TAIL = struct.Struct("<QQI32sI")  # seed, length, frame_size, alphabet, crc32
_CRC = struct.Struct("<I")


def _varints():
    """The varint functions (``seqzip.models.base``), imported when a compact stream is first
    read or written: ``seqzip --version`` imports this module and must not load the models."""
    from .models import base
    return base


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
        >>> h.version, h.lean, len(h.pack())  # order2, one frame of two symbols: lean
        (72, True, 19)
        >>> StreamHeader(1, b"\\x05", 0, 2, 8, b"ab", 0, lean=False).version
        8
        >>> StreamHeader(4, b"\\x05", 0, 2, 8, b"ab", 0).lean  # lstm: never lean
        False
    """
    model_id: int  # model family id (seqzip.models maps ids and names)
    config: bytes  # the config as seqzip.models.base.config_to_header gives it
    seed: int
    length: int  # bytes of original data
    frame_size: int  # symbols per frame
    alphabet: bytes  # the byte values the model codes over (those present and maybe more), sorted
    crc32: int  # CRC-32 of the original data
    version: int = VERSION  # format version (the config's encoding depends on it)
    dictionary: bytes = b""  # versions 5, 7, 9, 11, 13: hash of the model file coding started from
    escapes: int = 0  # symbols coded beyond ``length`` (a case-folded text's escapes)
    lean: bool = True  # a terse stream's lean layout where it applies (``is_lean``): a header
    # made to be written asks for it, a parsed one says whether its version is lean

    @property
    def coded(self) -> int:
        """Symbols the frames hold: the data's bytes and the escapes of its coded form."""
        return self.length + self.escapes

    def __post_init__(self) -> None:
        # versions 8-27 are one layout: which of them is the config's (its preset id's band,
        # one more with a dictionary), so a header has one spelling
        lean = self.lean and self.version >= TERSE and self.model_id in LEAN_MODEL_IDS and \
            lean_fits(self.coded, self.frame_size)
        object.__setattr__(self, "lean", lean)
        if self.version >= TERSE:
            object.__setattr__(self, "version", terse_version(
                self.config, self.version in WITH_DICTIONARY) + (LEAN_SHIFT if lean else 0))

    def pack(self) -> bytes:
        if (self.version in WITH_DICTIONARY) != bool(self.dictionary) or \
                len(self.dictionary) not in (0, DICTIONARY_BYTES):
            raise ValueError("a dictionary hash of 16 bytes goes with format versions "
                             f"{', '.join(map(str, WITH_DICTIONARY))} only")
        if self.version >= TERSE:
            return _pack_terse(self)
        if self.escapes:
            raise ValueError("an escape count goes with format versions 8 and later only")
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




# -- the compact header (versions 6 and 7)  ---------------------------------------------------
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
    config = h.config
    level = config[0] if len(config) == 1 and 1 <= config[0] <= _LEVEL_MASK else 0
    tag, alphabet = _shortest(h.alphabet) if h.alphabet else (0, b"")
    flags = level | tag << 4 | (_SEED if h.seed else 0) | \
        (_FRAME if h.frame_size != DEFAULT_FRAME else 0)
    head = bytearray(MAGIC + bytes([h.version, h.model_id, flags]))
    head += _middle_fields(h, level) + alphabet + _CRC.pack(h.crc32)
    return _sealed(head)


def _middle_fields(h: StreamHeader, level: int) -> bytes:
    """The fields both compact layouts write alike: the config (when no level names it), the
    dictionary's hash, the seed, the length and the frame size (each when not its default)."""
    pack_varint = _varints().pack_varint
    out = b"" if level else pack_varint(len(h.config)) + h.config
    out += h.dictionary + (pack_varint(h.seed) if h.seed else b"") + pack_varint(h.length)
    return out + (pack_varint(h.frame_size) if h.frame_size != DEFAULT_FRAME else b"")


def _sealed(head: bytearray) -> bytes:
    """A compact header's bytes followed by their 16-bit check."""
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
    config = _read_config(r, level)
    dictionary = r.take(DICTIONARY_BYTES) if version in WITH_DICTIONARY else b""
    seed = r.varint("seed", (1 << 64) - 1) if flags & _SEED else 0
    length = r.varint("length", MAX_LENGTH)
    frame_size = r.varint("frame size", MAX_FRAME) if flags & _FRAME else DEFAULT_FRAME
    tag = flags >> 4 & 3
    code_start = r.at
    alphabet = _read_alphabet(r, tag) if length else b""
    code = bytes(buf[code_start:r.at])
    (crc,) = _CRC.unpack(r.take(4))
    end = _read_check(r, buf, offset)
    # Only the canonical form is a header: one spelling per stream, so no field is ignored.
    if (flags & _SEED and not seed) or (flags & _FRAME and frame_size == DEFAULT_FRAME) or \
            (not length and tag):
        raise CorruptError("header flags are not canonical (corrupt header)")
    _check_frame_and_alphabet(frame_size, length, alphabet,
                              lambda: _shortest(alphabet) == (tag, code))
    header = StreamHeader(model_id, config, seed, length, frame_size, alphabet, crc, version,
                          dictionary)
    return header, end + _CHECK.size




# -- the terse header (versions 8 and 9) -----------------------------------------------------
_ALPHABET_SHIFT, _MODEL, _OPTIONS = 4, 0x40, 0x80
_ALL, _TOP, _RUNS_CODE, _TAGGED = range(4)  # the alphabet's code in flags bits 4-5
_OPTION_SEED, _OPTION_FRAME, _OPTION_ESCAPES = 0x01, 0x02, 0x04
_FULL = bytes(range(256))


def alphabet_field(alphabet: bytes) -> tuple[int, bytes]:
    """The code (flags bits 4-5) and field of a non-empty alphabet in a version-8 header: the
    shortest spelling, ties to the lower code.

        >>> alphabet_field(bytes(range(256))), alphabet_field(bytes(range(123)))
        ((0, b''), (1, b'z'))
        >>> alphabet_field(b"abcdefxyz")
        (2, b'a\\x190E\\x80')
        >>> alphabet_field(b"\\x00\\x01\\xff")
        (3, b'\\x03\\x01\\x02\\xfc')
    """
    if alphabet == _FULL:
        return _ALL, b""
    if alphabet == _FULL[:len(alphabet)]:
        return _TOP, alphabet[-1:]
    codes = alphabet_codes(alphabet)
    spellings = [(len(codes[_RUNS]), _RUNS_CODE, codes[_RUNS])]
    spellings += [(1 + len(codes[tag]), _TAGGED, bytes([tag]) + codes[tag])
                  for tag in (_WINDOW, _LIST, _GAPS)]
    return min(spellings)[1:]


def _read_alphabet_field(r: _Reader, code: int) -> bytes:
    if code == _ALL:
        return _FULL
    if code == _TOP:
        return _FULL[:r.take(1)[0] + 1]
    if code == _RUNS_CODE:
        return _read_alphabet(r, _RUNS)
    tag = r.take(1)[0]
    if tag not in (_WINDOW, _LIST, _GAPS):
        raise CorruptError(f"header names alphabet code {tag} (corrupt header)")
    return _read_alphabet(r, tag)


def lean_fits(coded: int, frame_size: int) -> bool:
    """Whether a stream of ``coded`` symbols takes the lean layout: one frame of 1 to
    ``LEAN_MAX`` symbols (a decoder holds its output until the CRC-32 verifies).

        >>> [lean_fits(n, DEFAULT_FRAME) for n in (4227, 0, LEAN_MAX + 1)]
        [True, False, False]
        >>> lean_fits(100, 64)  # two frames
        False
    """
    return 1 <= coded <= min(LEAN_MAX, frame_size)


def is_lean(version: int) -> bool:
    """Whether format ``version`` is a lean stream's (no frame or block checks, payloads to the
    byte: ``seqzip.container``).

        >>> is_lean(8), is_lean(72), is_lean(91), is_lean(6)
        (False, True, True, False)
    """
    return version in LEAN_VERSIONS


def checked_version(version: int) -> int:
    """The version a lean stream's header would have in the checked layout (others' own).

        >>> checked_version(72), checked_version(91), checked_version(27)
        (8, 27, 27)
    """
    return version - LEAN_SHIFT if is_lean(version) else version


def preset_band(version: int) -> int:
    """The band of preset ids a terse header of ``version`` (8-27) names: its flags' level k
    is the preset id ``15 * band + k``.

        >>> [preset_band(v) for v in (8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 22, 24, 26, 27)]
        [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 9, 9]
    """
    return (checked_version(version) - TERSE) // 2


def terse_version(config: bytes, dictionary: bool) -> int:
    """The version of a header of versions 8-27 (one layout): 8 + 2 * the band of a preset
    config's id (``preset_band``; a config spelled in full is band 0), one more with a
    dictionary.

        >>> terse_version(b"\x0b", False), terse_version(b"\x10", False), terse_version(b"\x10", True)
        (8, 10, 11)
        >>> terse_version(b"\x1f", False), terse_version(b"\x2d", True), terse_version(b"\x2e", False)
        (12, 13, 14)
        >>> terse_version(b"\x3c", True), terse_version(b"\x79", False)
        (15, 24)
        >>> terse_version(bytes([136]), False), terse_version(bytes([150]), True)
        (26, 27)
        >>> terse_version(bytes([151]), False)  # an id above the bands: spelled in full
        8
    """
    band = (config[0] - 1) // _BAND if len(config) == 1 and 1 <= config[0] <= _TOP_ID else 0
    return VERSION + 2 * band + bool(dictionary)


def _pack_terse(h: StreamHeader) -> bytes:
    if bool(h.length) != bool(h.alphabet) or (not h.length and h.crc32):
        raise ValueError("an alphabet and a CRC-32 go with a non-empty stream only")
    config = h.config
    base = _BAND * preset_band(h.version)
    level = config[0] - base if len(config) == 1 and 1 <= config[0] - base <= _LEVEL_MASK \
        else 0
    code, field = alphabet_field(h.alphabet) if h.length else (_ALL, b"")
    if not 0 <= h.escapes <= h.length:
        raise ValueError("a stream's escapes are at most its length")
    options = (_OPTION_SEED if h.seed else 0) | \
        (_OPTION_FRAME if h.frame_size != DEFAULT_FRAME else 0) | \
        (_OPTION_ESCAPES if h.escapes else 0)
    flags = level | code << _ALPHABET_SHIFT | (_MODEL if h.model_id != FOLDED_MODEL_ID else 0) \
        | (_OPTIONS if options else 0)
    head = bytearray(MAGIC + bytes([h.version, flags]))
    if flags & _MODEL:
        head.append(h.model_id)
    if options:
        head.append(options)
    head += _middle_fields(h, level)
    if h.escapes:
        head += _varints().pack_varint(h.escapes)
    if h.length:
        head += field + _CRC.pack(h.crc32)
    return _sealed(head)


def _parse_terse(buf, offset: int, version: int) -> tuple[StreamHeader, int]:
    r = _Reader(buf, offset + 5)
    flags = r.take(1)[0]
    model_id = r.take(1)[0] if flags & _MODEL else FOLDED_MODEL_ID
    options = r.take(1)[0] if flags & _OPTIONS else 0
    if options > _OPTION_SEED | _OPTION_FRAME | _OPTION_ESCAPES:
        raise CorruptError(f"header options {options:#04x} name no field (corrupt header)")
    level = flags & _LEVEL_MASK
    high = preset_band(version) > 0
    config = _read_config(r, level + _BAND * preset_band(version) if level else 0)
    dictionary = r.take(DICTIONARY_BYTES) if version in WITH_DICTIONARY else b""
    seed = r.varint("seed", (1 << 64) - 1) if options & _OPTION_SEED else 0
    length = r.varint("length", MAX_LENGTH)
    frame_size = r.varint("frame size", MAX_FRAME) if options & _OPTION_FRAME else \
        DEFAULT_FRAME
    escapes = r.varint("escape count", length) if options & _OPTION_ESCAPES else 0
    code = flags >> _ALPHABET_SHIFT & 3
    field_start = r.at
    alphabet = _read_alphabet_field(r, code) if length else b""
    field = bytes(buf[field_start:r.at])
    (crc,) = _CRC.unpack(r.take(4)) if length else (0,)
    end = _read_check(r, buf, offset)
    # Only the canonical form is a header: one spelling per stream, so no field is ignored.
    if (flags & _MODEL and model_id == FOLDED_MODEL_ID) or (flags & _OPTIONS and not options) \
            or (options & _OPTION_SEED and not seed) or \
            (options & _OPTION_FRAME and frame_size == DEFAULT_FRAME) or \
            (options & _OPTION_ESCAPES and not escapes) or \
            (not length and code) or (high and not level) or \
            (not level and len(config) == 1 and 1 <= config[0] <= _TOP_ID):
        raise CorruptError("header flags are not canonical (corrupt header)")
    _check_frame_and_alphabet(frame_size, length, alphabet,
                              lambda: alphabet_field(alphabet) == (code, field))
    header = StreamHeader(model_id, config, seed, length, frame_size, alphabet, crc, version,
                          dictionary, escapes, is_lean(version))
    if header.version != version:  # lean for a stream that cannot be
        raise CorruptError(f"header version {version} does not fit its stream's "
                           f"{header.coded:,} symbols (corrupt header)")
    return header, end + _CHECK.size


def _read_config(r: "_Reader", level: int) -> bytes:
    """A compact header's config: the preset's one byte when the flags name a level, else
    its length-prefixed fields."""
    if level:
        return bytes([level])
    return r.take(r.varint("config length", MAX_CONFIG_BYTES))


def _read_check(r: "_Reader", buf: bytes | bytearray, offset: int) -> int:
    """Read a compact header's 16-bit check of every byte from ``offset`` up to here, and
    return where the checked bytes end.  CorruptError on a mismatch."""
    end = r.at
    (check,) = _CHECK.unpack(r.take(2))
    if zlib.crc32(bytes(buf[offset:end])) & 0xFFFF != check:
        raise CorruptError("header checksum mismatch (corrupt header)")
    return end


def _check_frame_and_alphabet(frame_size: int, length: int, alphabet: bytes,
                              shortest: Callable[[], bool]) -> None:
    """The checks every compact header ends with: a frame size in range, and an alphabet
    sorted, without repeats and spelled in its version's shortest code (``shortest()``)."""
    if not 1 <= frame_size <= MAX_FRAME:
        raise CorruptError(f"header declares a frame size of {frame_size} symbols")
    if length and (not alphabet or alphabet != bytes(sorted(set(alphabet))) or
                   not shortest()):
        raise CorruptError("header alphabet is not in its shortest code (corrupt header)")


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
    version = buf[offset + 4]
    if version not in READABLE:
        raise UnsupportedVersionError(
            f"stream has format version {version}; this seqzip reads versions "
            f"2-{_TERSE_VERSIONS[-1]} and {LEAN_VERSIONS[0]}-{LEAN_VERSIONS[-1]}")
    if version >= TERSE:
        return _parse_terse(buf, offset, version)
    model_id = buf[offset + 5]
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

