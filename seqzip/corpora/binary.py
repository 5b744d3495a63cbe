"""A structured binary file like an executable: code sections of x86-like opcodes, tables of
fixed-size records and string sections.

    >>> from seqzip.corpora import generate
    >>> len(generate("binary", 4096, seed=0).data)
    4096
"""
from __future__ import annotations

import numpy as np

from .registry import Generator, register
from .english import _BASE_VERBS, _NOUNS


# --- a structured binary file -------------------------------------------------------------------
#
# Binary data for `seqzip bench`: what executables and spreadsheets hold, with their statistics
# (checked against sum and kennedy.xls of the Canterbury corpus; see tests/corpora): a header,
# then sections of machine-code-like instructions (a skewed opcode table, register bytes,
# little-endian offsets full of 0x00 and 0xff, padding to 16 bytes), tables of fixed-width
# records (counters, timestamps, categories, a random walk, float32 amounts, ASCII codes,
# flags), and string tables of null-terminated identifiers.

# (opcode bytes, operand kinds): r = register/mode byte, i = small immediate byte,
# o = 32-bit relative offset, a = 32-bit address in the data segment
_OPCODES = [
    (b"\x48\x89", "r"), (b"\x48\x8b", "r"), (b"\xe8", "o"), (b"\x89", "r"), (b"\x8b", "r"),
    (b"\x48\x83\xc4", "i"), (b"\x48\x83\xec", "i"), (b"\x74", "i"), (b"\x75", "i"),
    (b"\x0f\x84", "o"), (b"\x0f\x85", "o"), (b"\xe9", "o"), (b"\xeb", "i"), (b"\x31", "r"),
    (b"\x85", "r"), (b"\x39", "r"), (b"\x48\x8d", "ra"), (b"\x8b\x05", "a"), (b"\x89\x05", "a"),
    (b"\xb8", "a"), (b"\x50", ""), (b"\x53", ""), (b"\x5b", ""), (b"\x58", ""),
    (b"\x41\x54", ""), (b"\x41\x5c", ""), (b"\x48\x01", "r"), (b"\x48\x29", "r"),
    (b"\x0f\xb6", "r"), (b"\x48\x63", "r"), (b"\xc1\xe0", "i"), (b"\x83\xf8", "i"),
    (b"\x80\x3d", "ai"), (b"\xf3\x0f\x10", "r"), (b"\xf2\x0f\x59", "r"), (b"\xff\x15", "a"),
]
_REGISTER_BYTES = bytes([0xc0, 0xc3, 0xc7, 0xd8, 0xe5, 0x45, 0x7d, 0x55, 0x04, 0x44, 0x0c,
                         0xf8, 0xc1, 0xd0, 0x75, 0x5d])
_RECORD_CODES = [b"GB-LON", b"FR-PAR", b"DE-BER", b"US-NYC", b"JP-TYO", b"IT-ROM", b"ES-MAD",
                 b"NL-AMS", b"BE-BRU", b"SE-STO", b"CA-TOR", b"AU-SYD"]


_PRICES = [0.0, 1.0, 2.5, 5.0, 9.99, 10.0, 12.5, 19.99, 20.0, 25.0, 49.99, 50.0, 75.0, 99.99,
           100.0, 120.0, 150.0, 199.0, 250.0, 499.0, 1000.0, 0.5, 0.25, 3.75, 7.2, 14.4]


def _zipf_choice(rng: np.random.Generator, n: int, exponent: float = 1.0) -> int:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return int(rng.choice(n, p=weights / weights.sum()))


def _code_section(rng: np.random.Generator, out: bytearray, data_base: int) -> None:
    import struct

    for _ in range(int(rng.integers(3, 12))):  # functions
        out += b"\x55\x48\x89\xe5" + (b"\x48\x83\xec" + bytes([8 * int(rng.integers(1, 9))])
                                      if rng.random() < 0.7 else b"")
        for _ in range(int(rng.geometric(1 / 30))):
            opcode, operands = _OPCODES[_zipf_choice(rng, len(_OPCODES), 1.1)]
            out += opcode
            for kind in operands:
                if kind == "r":
                    out.append(_REGISTER_BYTES[_zipf_choice(rng, len(_REGISTER_BYTES), 0.9)])
                elif kind == "i":
                    out.append(int(rng.choice([0, 1, 4, 8, 16, 24, 32, 0xff, 0xf8]))
                               if rng.random() < 0.9 else int(rng.integers(256)))
                elif kind == "o":
                    out += struct.pack("<i", int(rng.normal(0, 400)))
                else:
                    out += struct.pack("<I", data_base + 8 * _zipf_choice(rng, 512, 1.0))
        out += b"\xc9\xc3"
        out += b"\xcc" * (-len(out) % 16)


def _table_section(rng: np.random.Generator, out: bytearray, state: dict) -> None:
    import struct

    for _ in range(int(rng.integers(40, 400))):
        state["id"] += 1
        state["time"] += int(rng.geometric(1 / 12))
        state["walk"] = max(-32768, min(32767, state["walk"] + int(rng.integers(-3, 4))))
        amount = np.float32(_PRICES[_zipf_choice(rng, len(_PRICES), 0.9)])
        out += struct.pack("<IIHhf", state["id"], state["time"],
                           _zipf_choice(rng, 12, 1.2), state["walk"], amount)
        out += _RECORD_CODES[_zipf_choice(rng, len(_RECORD_CODES), 1.0)]
        out += struct.pack("<H", int(rng.choice([0, 0, 0, 1, 2, 3, 0x10, 0x8000])))


def _string_section(rng: np.random.Generator, out: bytearray) -> None:
    for _ in range(int(rng.integers(20, 120))):
        words = [_BASE_VERBS[_zipf_choice(rng, len(_BASE_VERBS), 0.8)],
                 _NOUNS[_zipf_choice(rng, len(_NOUNS), 0.8)]]
        if rng.random() < 0.3:
            words.insert(0, rng.choice(["sys", "io", "str", "mem", "net", "gui"]))
        out += "_".join(words).encode("ascii") + b"\x00"
    out += b"\x00" * (-len(out) % 8)


def _binary_make(n: int, seed: int) -> bytes:
    """A header, then code, table and string sections in random order (no exact truth)."""
    import struct

    rng = np.random.default_rng([seed, 23])
    out = bytearray(b"\x7fSQB" + struct.pack("<HHIIQQ", 2, 62, 0x400000, 64, n, 0) + bytes(28))
    state = {"id": 1000, "time": 1_600_000_000, "walk": 0}
    while len(out) < n:
        kind = rng.random()
        if kind < 0.45:
            _code_section(rng, out, 0x600000)
        elif kind < 0.85:
            _table_section(rng, out, state)
        elif kind < 0.95:
            _string_section(rng, out)
        else:  # an uninitialised area, as executables and spreadsheets hold
            out += bytes(16 * int(rng.integers(8, 128)))
    return bytes(out[:n])


register(Generator("binary", _binary_make, None,
                   "structured binary: machine-code-like sections, tables of fixed-width "
                   "records, string tables (like an executable or a spreadsheet)"))
