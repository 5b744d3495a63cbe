"""What binary data is, for the context mixer's variants (``CMConfig.DATA_VARIANTS``): a
1-bit image, 68000, x86 or big-endian RISC code, 32-bit float samples, or none of them
(``data_kinds``).  Each test reads only a ``seqzip.session.DataProfile`` (byte counts, 16-bit
word counts, the first bytes, the byte counts per offset modulo 4) and answers in integers, the
same everywhere, so the encoder's choice (written in the stream as the preset id) never depends
on the machine.

Float samples (the float-sample expert's formats, ``CMConfig.floats``: 1 IBM hexadecimal
big-endian, 2 IEEE binary32 big-endian, 4 IEEE binary32 little-endian), from the counts of the
byte values at each offset modulo 4 (``lane_counts``; ``DataProfile.lanes``).  A float's sign-and-exponent byte takes few values in a stream of samples of one scale: its 7
bits below the sign (IBM: the base-16 exponent; IEEE: the top 7 of the 8 exponent bits) lie
in a window of ``WINDOW`` values around the middle of their range (``EXPONENTS``) for at least
``SHARE`` of the words that are not zero.  IBM's normalised fraction begins with a nonzero hex
digit, so its second byte is below 16 only where the word is zero; IEEE's second byte is the
exponent's low bit and 7 fraction bits, below 16 in about 1 word of 16.  Integers (their high
bytes 00 and FF), text, code and tables do not gather in the window.
"""
from __future__ import annotations

import numpy as np

# bytes (of 256 values) whose eight pixels hold at most two changes (00111000, 11111110 ...)
_SMOOTH = [b not in (0, 255) and bin((b ^ (b >> 1)) & 0x7F).count("1") <= 2
           for b in range(256)]


def looks_like_bitmap(counts) -> bool:
    """Whether data with ``counts[b]`` bytes of each value ``b`` looks like a 1-bit image:
    at least half its bytes blank (0x00 or 0xFF) and nine in ten of the others with at most
    two changes among their eight pixels (a scanned page is long runs; text, code and tables
    are not: of random bytes 23% are so).  Integers only: the same answer everywhere.

        >>> counts = [0] * 256
        >>> counts[0], counts[0x0F], counts[0xF0], counts[0x41] = 900, 40, 40, 5
        >>> looks_like_bitmap(counts), looks_like_bitmap([1] * 256)
        (True, False)
    """
    counts = [int(c) for c in counts]
    n = sum(counts)
    other = n - counts[0] - counts[255]
    smooth = sum(c for c, s in zip(counts, _SMOOTH) if s)
    return n > 0 and 2 * other <= n and 10 * smooth >= 9 * other


# 68000 instruction words that compiled code is full of: RTS, LINK A6, UNLK A6, JSR abs.l,
# JSR d16(A5) (the Macintosh jump table), MOVEM.L to and from the stack, JSR d16(PC)
M68K_WORDS = (0x4E75, 0x4E56, 0x4E5E, 0x4EB9, 0x4EAD, 0x48E7, 0x4CDF, 0x4EBA)


def looks_like_68000(words) -> bool:
    """Whether data with ``words[w]`` big-endian 16-bit words ``w`` at even offsets looks
    like 68000 code: at least one of ``M68K_WORDS`` per KiB (and 8 in all).  Measured
    (benchmarks/code_contexts.py): 11.3 per KiB in 99 KB of 68000 objects, 0.00-0.02 in an
    x86-64 object, sum (SPARC), kennedy.xls, ptt5 and the Canterbury texts.

        >>> words = [0] * 65536
        >>> words[0x4E75], words[0x1234] = 40, 10_000
        >>> looks_like_68000(words), looks_like_68000([1] * 65536)
        (True, False)
    """
    words = np.asarray(words, dtype=np.int64)
    n = 2 * int(words.sum())  # bytes in whole words
    hits = int(words[list(M68K_WORDS)].sum())
    return hits >= 8 and hits * 1024 >= n


# ELF files' machines (e_machine, in the header's byte order): x86 (3: Intel 80386, 62:
# x86-64) and 32-bit big-endian RISC (2, 18, 43: SPARC; 8: MIPS; 20, 21: PowerPC)
ELF_X86 = (3, 62)
ELF_RISC = (2, 8, 18, 20, 21, 43)
# Byte pairs compiled x86 code is full of (at even offsets, so half of those in the data):
# REX.W MOV/LEA/ADD/TEST, MOV to and from [rbp+d8] and [rsp+d8], NOP 0F 1F, Jcc rel32,
# MOVZX, SUB/ADD ESP, POP EBP + RET, RET + NOP, XOR EAX EAX, TEST EAX EAX
X86_WORDS = (0x488B, 0x4889, 0x4883, 0x488D, 0x4C8B, 0x4C89, 0x0F1F, 0x0F84, 0x0F85, 0x0FB6,
             0x8B45, 0x8945, 0x83EC, 0x83C4, 0x5DC3, 0x8B44, 0x8944, 0x8D76, 0xC390, 0x4885,
             0x31C0, 0x85C0)
# the first halves of SPARC's SAVE, RET (81C7 E008), RETL, RESTORE; MIPS's JR RA, ADDIU SP,
# SW RA, LW RA; PowerPC's BLR, MFLR/MTLR R0, STWU R1, ADDI R1
RISC_WORDS = (0x9DE3, 0x81C7, 0xE008, 0x81C3, 0x81E8, 0x03E0, 0x27BD, 0xAFBF, 0x8FBF, 0x4E80,
              0x7C08, 0x9421, 0x3821)


def elf_machine(head: bytes) -> int:
    r"""The machine an ELF file's header names (0: not an ELF header).

        >>> elf_machine(bytes.fromhex("7f454c46020101") + bytes(9) + b"\x01\x00\x3e\x00")
        62
    """
    if len(head) < 20 or head[:4] != b"\x7fELF" or head[5] not in (1, 2):
        return 0
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


def _per_kib(words, table, per_kib: int) -> bool:
    """At least ``per_kib`` of the words ``table`` names per KiB (and 16 in all)."""
    words = np.asarray(words, dtype=np.int64)
    hits = int(words[list(table)].sum())
    return hits >= 16 and hits * 1024 >= per_kib * 2 * int(words.sum())


def code_kind(profile) -> str:
    """"x86", "risc" or "" for data with ``profile``: by the ELF header's machine, or for
    data without one by the instruction pairs per KiB (x86: 4, ``X86_WORDS``; RISC: 1,
    ``RISC_WORDS``).  Measured: x86-64 objects and executables 26-32 x86 pairs per KiB, sum
    (SPARC) 2.0 RISC words per KiB; kennedy.xls, ptt5, the texts and samples at most 0.05
    and 0.38 (68000 objects 0.05 and 0.02).

        >>> import io
        >>> from seqzip.session import _scan_profile
        >>> code_kind(_scan_profile(io.BytesIO(bytes.fromhex("4889e5488b45f8c390") * 64))[1])
        'x86'
        >>> code_kind(_scan_profile(io.BytesIO(bytes.fromhex("81c7e00881e80000") * 64))[1])
        'risc'
        >>> code_kind(_scan_profile(io.BytesIO(bytes(1000)))[1])
        ''
    """
    machine = elf_machine(getattr(profile, "head", b""))
    if machine:
        return "x86" if machine in ELF_X86 else "risc" if machine in ELF_RISC and \
            profile.head[5] == 2 else ""
    if _per_kib(profile.words, X86_WORDS, 4):
        return "x86"
    return "risc" if _per_kib(profile.words, RISC_WORDS, 1) else ""


def data_kinds(profile) -> tuple[str, ...]:
    """The kinds of ``CMConfig.DATA_VARIANTS`` that binary data with ``profile`` (None: not
    known) is, most specific first; "binary" is every such data's.  A bitmap, then 68000
    code, then (in a file that is not ELF) float samples, then x86 or RISC code.

        >>> import io
        >>> from seqzip.session import _scan_profile
        >>> data_kinds(_scan_profile(io.BytesIO(b"\\x00\\xff" * 100))[1]), data_kinds(None)
        (('bitmap', 'binary'), ('binary',))
    """
    if profile is None:
        return ("binary",)
    if looks_like_bitmap(profile.counts):
        return ("bitmap", "binary")
    if looks_like_68000(profile.words):
        return ("m68k", "binary")
    floats = "" if elf_machine(getattr(profile, "head", b"")) else float_kind(profile)
    if floats:
        return (floats, "binary")
    code = code_kind(profile)
    return (code, "binary") if code else ("binary",)

WINDOW = 8               # the exponents' window, 7-bit values
SHARE = 0.9              # of the nonzero words in it
EXPONENTS = (0x30, 0x4F)  # where the window may lie (IEEE 1e-7..1e9; IBM 16^-16..16^15)
MIN_WORDS = 256


def lane_counts(data: bytes) -> np.ndarray:
    """(4, 256) counts of the byte values at offsets 4k + j (the last partial word too).

        >>> int(lane_counts(bytes([1, 2, 3, 4, 1]))[0, 1])
        2
    """
    a = np.frombuffer(data, dtype=np.uint8)
    return np.stack([np.bincount(a[j::4], minlength=256) for j in range(4)]).astype(np.int64)


def _gathered(lane: np.ndarray) -> bool:
    """The lane's 7 bits below the sign gather in a window inside EXPONENTS (zero bytes, the
    zero words' mostly, left out) and not most words are zero."""
    low7 = lane[:128] + lane[128:]
    zero = int(lane[0])
    n = int(lane.sum())
    if n < MIN_WORDS or zero * 2 > n:
        return False
    low7 = low7.copy()
    low7[0] -= zero
    inside = max(int(low7[s:s + WINDOW].sum())
                 for s in range(EXPONENTS[0], EXPONENTS[1] - WINDOW + 2))
    return inside >= SHARE * (n - zero)


def float_formats(lanes: np.ndarray | None) -> int:
    """The formats (CMConfig.floats bits) the data with ``lanes`` (``lane_counts``) looks
    like: 1 IBM big-endian, 2 IEEE big-endian, 4 IEEE little-endian, 0 none.

        >>> import struct
        >>> wave = [(-1) ** i * (100.0 + 7 * i) for i in range(400)]
        >>> float_formats(lane_counts(b"".join(struct.pack("<f", v) for v in wave)))
        4
        >>> float_formats(lane_counts(b"".join(struct.pack(">f", v) for v in wave)))
        2
        >>> float_formats(lane_counts(bytes(range(256)) * 8)), float_formats(None)
        (0, 0)
    """
    if lanes is None:
        return 0
    lanes = np.asarray(lanes, dtype=np.int64)
    out = 0
    if _gathered(lanes[0]):
        zero = int(lanes[0][0] + lanes[0][128])
        small = int(lanes[1][:16].sum())  # a second byte below 16: IBM's zero words only
        out |= 1 if small <= zero + 0.01 * int(lanes[1].sum()) else 2
    if _gathered(lanes[3]):
        out |= 4
    return out


def float_kind(profile) -> str:
    """The ``data_kinds`` name of data with ``profile`` (``seqzip.session.DataProfile``) if it
    looks like float samples: "floats" and its formats' bits ("floats1": IBM big-endian), or
    "".

        >>> import io, struct
        >>> from seqzip.session import _scan_profile
        >>> data = b"".join(struct.pack(">f", 3.0 + (i % 7)) for i in range(300))
        >>> float_kind(_scan_profile(io.BytesIO(data))[1]), float_kind(None)
        ('floats2', '')
    """
    bits = float_formats(getattr(profile, "lanes", None))
    return f"floats{bits}" if bits else ""
