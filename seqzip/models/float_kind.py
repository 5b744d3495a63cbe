"""Whether data looks like 32-bit float samples, and of which format (the float-sample
expert's formats, ``CMConfig.floats``: 1 IBM hexadecimal big-endian, 2 IEEE binary32
big-endian, 4 IEEE binary32 little-endian), from the counts of the byte values at each offset
modulo 4 (``lane_counts``; ``seqzip.session.DataProfile.lanes``).

A float's sign-and-exponent byte takes few values in a stream of samples of one scale: its 7
bits below the sign (IBM: the base-16 exponent; IEEE: the top 7 of the 8 exponent bits) lie
in a window of ``WINDOW`` values around the middle of their range (``EXPONENTS``) for at least
``SHARE`` of the words that are not zero.  IBM's normalised fraction begins with a nonzero hex
digit, so its second byte is below 16 only where the word is zero; IEEE's second byte is the
exponent's low bit and 7 fraction bits, below 16 in about 1 word of 16.  Integers (their high
bytes 00 and FF), text, code and tables do not gather in the window.
"""
import numpy as np

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
    "" (a variant preset per kind is the lead's to add: ``CMConfig.DATA_VARIANTS``).

        >>> import io, struct
        >>> from seqzip.session import _scan_profile
        >>> data = b"".join(struct.pack(">f", 3.0 + (i % 7)) for i in range(300))
        >>> float_kind(_scan_profile(io.BytesIO(data))[1]), float_kind(None)
        ('floats2', '')
    """
    bits = float_formats(getattr(profile, "lanes", None))
    return f"floats{bits}" if bits else ""
