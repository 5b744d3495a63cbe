"""More sparse and indirect contexts (CMConfig.sparse2, indirect2; bin2.pxd): every new hash
equal to a plain-Python reference on crafted and random bytes, round trips of the new
values (empty, one byte, random, text, small alphabet), deterministic streams, bad values
refused, the contexts each bit adds, memory counted."""
import io
import random

import pytest

import seqzip
from seqzip._kernels.cm import LIMITS, probes
from seqzip.models.cm import CMConfig, KINDS
from tests.kernels.test_cm import kernel

SPARSE, INDIRECT = KINDS["sparse"], KINDS["indirect"]
M64 = (1 << 64) - 1
TEXT = b"the cat sat on the mat; the dog sat on the log. " * 20 + \
    b"a cat is not a dog, and a dog is not a log.\n" * 10


def hash2(a: int, b: int) -> int:
    z = (a + (b + 0x9E3779B97F4A7C15) * 0xD6E8FEB86659FD93) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def tag(kind: int, j: int) -> int:
    return (kind * 64 + j + 1) << 48


def back(data: bytes, k: int) -> int:
    return data[-k] if k <= len(data) else 0


def c8(data: bytes) -> int:
    return sum(back(data, k) << (8 * (k - 1)) for k in range(1, 9))


def sparse_value(data: bytes, j: int) -> int:
    """What sparse context j >= 6 hashes (bin2.pxd's list)."""
    b = [0] + [back(data, k) for k in range(1, 9)]  # b[k]: k bytes back
    return {6: b[1] | b[4] << 8, 7: b[2] | b[4] << 8, 8: b[4],
            9: sum((b[k] & 0xF0) << (8 * (k - 1)) for k in range(1, 5)),
            10: b[1] >> 4 | b[2] << 4, 11: b[2] << 8 | b[3] << 16 | b[4] << 24,
            12: b[2] << 8 | b[4] << 24 | b[6] << 40, 13: b[1] | b[3] << 16 | b[5] << 32,
            14: sum((b[k] & 0x0F) << (8 * (k - 1)) for k in range(1, 5)),
            15: b[1] | (b[2] & 0xF0) << 8 | (b[3] & 0xF0) << 16, 16: b[1] | b[8] << 8,
            17: b[1] | b[2] << 8 | b[5] << 32 | b[6] << 40}[j]


def quantise(d: int) -> int:
    if d < 8:
        return d
    n = d.bit_length()
    return min(47, 8 + 2 * (n - 4) + ((d >> (n - 2)) & 1))


def slot3(x: int) -> int:
    return ((x & 0xFFFFFF) * 0x9E3779B1 & 0xFFFFFFFF) >> 16


def indirect_value(data: bytes, j: int) -> int:
    """What indirect context j >= 3 hashes, from the whole history (no tables)."""
    n = len(data)
    c = c8(data)

    def followers(match, count: int) -> int:
        """The last ``count`` bytes that followed a position where ``match`` held."""
        out = [data[i] for i in range(n) if match(i)][-count:]
        return sum(v << (8 * (len(out) - 1 - k)) for k, v in enumerate(out))

    def before(i: int) -> int:  # c8 before byte i
        return c8(data[:i])

    if j in (3, 9):
        s = slot3(c)
        f = followers(lambda i: slot3(before(i)) == s, 2)
        return (c & 0xFFFF) | f << 16 if j == 3 else (c & 0xFFFFFF) | f << 24
    if j == 4:
        return (c & 0xFF) | followers(lambda i: before(i) & 0xFFFF == c & 0xFFFF, 3) << 8
    if j == 10:
        return (c & 0xFF) | followers(lambda i: before(i) & 0xFF == c & 0xFF, 3) << 8
    if j == 5:  # the last byte's distance to its time before
        prev = [i for i in range(n - 1) if n and data[i] == data[-1]]
        return (c & 0xFF) | quantise(n - 1 - prev[-1] if prev else 0) << 8
    if j == 6:  # the last two bytes' (the first byte's pair: a zero byte and it)
        pairs = [(c8(data[:i + 1]) & 0xFFFF) for i in range(n)]
        prev = [i for i in range(n - 1) if pairs[i] == pairs[-1]]
        return (c & 0xFFFF) | quantise(n - 1 - prev[-1] if n > 1 and prev else 0) << 16

    def mark(v: int) -> int:
        last = [i for i in range(n) if data[i] == v]
        return quantise(n - 1 - last[-1]) if last else 47
    if j == 7:
        return (c & 0xFF) | mark(0) << 8
    if j == 11:
        return (c & 0xFF) | mark(10) << 8 | mark(32) << 16
    return (c & 0xFF) | (mark(0) >> 2) << 8 | (mark(32) >> 2) << 16 | \
        (mark(10) >> 2) << 24 | (mark(255) >> 2) << 32


def crafted() -> list[bytes]:
    rng = random.Random(7)
    return [b"", b"\x00", b"ab", b"\x12\x34\x56\x78\x9a\xbc\xde\xf0\x11",
            b"\x00\x20\x0a\xff\x41\x00\x41", b"abcabcabdabc", TEXT[:300],
            bytes(rng.getrandbits(8) for _ in range(200)),
            bytes(rng.choice(b"\x00\x01\x20") for _ in range(150)) + b"\x00\x01",
            b"\x41" + b"\x00" * 300 + b"\x41"]


@pytest.mark.parametrize("j", range(6, 18))
def test_sparse_hashes_match_the_reference(j):
    for data in crafted():
        got = probes.py_context_hashes(data, [(SPARSE, j)], False)[0]
        assert got == hash2(tag(SPARSE, j), sparse_value(data, j)), data


@pytest.mark.parametrize("j", range(3, 12))
def test_indirect_hashes_match_the_reference(j):
    for data in crafted():
        got = probes.py_context_hashes(data, [(INDIRECT, j)], False, bin2=True)[0]
        assert got == hash2(tag(INDIRECT, j), indirect_value(data, j)), (j, data)


def test_quantiser_is_monotone_and_bounded():
    values = [quantise(d) for d in range(1 << 16)]
    assert values == sorted(values) and values[:8] == list(range(8))
    assert quantise(8) == 8 and quantise(12) == 9 and quantise(16) == 10
    assert quantise(1 << 40) == 47


def test_old_contexts_keep_their_hashes():
    data = TEXT[:200]
    old = [(SPARSE, j) for j in range(6)] + [(INDIRECT, j) for j in range(3)]
    assert probes.py_context_hashes(data, old, False) == \
        probes.py_context_hashes(data, old, False, bin2=True)


def test_bounds_are_refused_and_bits_choose_contexts():
    for name, bad in (("sparse2", -1), ("sparse2", 4096), ("indirect2", -1),
                      ("indirect2", 512)):
        with pytest.raises(ValueError, match=name):
            CMConfig(**{name: bad})
    c = CMConfig(sparse=0, indirect=0, sparse2=0b100000000101, indirect2=0b10000010)
    new = [x for x in c.spec.contexts if x[0] in (SPARSE, INDIRECT)]
    assert new == [(SPARSE, 6), (SPARSE, 8), (SPARSE, 17), (INDIRECT, 4), (INDIRECT, 10)]
    with pytest.raises(ValueError, match="hashed contexts"):
        CMConfig(orders="2,3,4,5,6,7,8,12,16,24", word=3, sparse=2, sparse2=4095,
                 indirect=1, indirect2=511, record=1, columns=1, markup=1023)  # 64 at most
    assert CMConfig() == CMConfig(sparse2=0, indirect2=0)


def test_memory_is_counted():
    base = dict(orders="2,3", word=0, match=0, table_bits=14, history_bits=16)
    plain, sparse, indirect = (CMConfig(**base, **f).memory_bytes(256)
                               for f in ({}, {"sparse2": 1}, {"indirect2": 1}))
    assert indirect - sparse == LIMITS["bin2_bytes"] > 3 * 65536 * 4
    k0, k1 = kernel(indirect2=1), kernel(sparse2=1)
    assert k0.memory_allocated() - k1.memory_allocated() == LIMITS["bin2_bytes"]
    assert sparse > plain


def compress(data: bytes, **fields) -> bytes:
    config = CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **fields))
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=config)
    return out.getvalue()


@pytest.mark.parametrize("fields", [dict(sparse2=4095), dict(indirect2=511),
                                    dict(sparse2=0x111, indirect2=0x21)])
def test_round_trips_and_determinism(fields):
    rng = random.Random(3)
    cases = [b"", b"x", bytes(rng.getrandbits(8) for _ in range(3000)), TEXT,
             bytes(rng.choice(b"ab") for _ in range(2000))]
    for data in cases:
        stream = compress(data, **fields)
        assert seqzip.decompress(stream) == data
        assert compress(data, **fields) == stream
    assert compress(TEXT, **fields) != compress(TEXT)
