"""The float-sample expert (CMConfig.floats, floats.pxd): its word functions checked against
plain-Python decoders of IBM hexadecimal and IEEE (struct) floats, the order-preserving key
monotonic on crafted words, round trips of every format bit on empty, short, random and float
data, deterministic streams, the state restored mid-symbol and bad states and bounds refused,
memory counted, and the detector (models.detect) on crafted samples."""
import dataclasses
import io
import math
import random
import struct

import numpy as np
import pytest

import seqzip
from seqzip._kernels.cm import LIMITS, py_float_codec
from seqzip.models.cm import CMConfig, CMModel
from seqzip.models.detect import float_formats, float_kind, lane_counts
from tests.kernels.test_cm import kernel
from tests.kernels.test_cm_runs import TEXT, feed_one, refused_then_restored


def ibm_value(w: int) -> float:
    """An IBM hexadecimal float's value: sign, 7-bit excess-64 base-16 exponent, 24-bit
    fraction (normalised or not)."""
    v = (w & 0xFFFFFF) / 2.0 ** 24 * 16.0 ** (((w >> 24) & 0x7F) - 64)
    return -v if w >> 31 else v


def ibm_word(v: float) -> int:
    """The normalised IBM word of |v| truncated (0 below 16^-65), by repeated division."""
    sign, m, e = (0x80000000 if v < 0 else 0), abs(v), 64
    if m < 16.0 ** -65:
        return 0
    while m >= 1:
        m, e = m / 16, e + 1
    while m < 1 / 16:
        m, e = m * 16, e - 1
    return sign | e << 24 | int(m * 2 ** 24)


def ieee_value(w: int) -> float:
    return struct.unpack(">f", w.to_bytes(4, "big"))[0]


def wave(n: int, seed: int = 1) -> list[float]:
    """A decaying wavelet with noise, one value a sample."""
    rng = random.Random(seed)
    return [300 * math.exp(-i / 200) * math.sin(i / 5) + rng.gauss(0, 3) for i in range(n)]


def pack(values, fmt: int) -> bytes:
    if fmt == 1:
        return b"".join(ibm_word(v).to_bytes(4, "big") for v in values)
    return b"".join(struct.pack(">f" if fmt == 2 else "<f", v) for v in values)


def crafted_words(rng: random.Random) -> list[int]:
    words = [0, 0x80000000, 0x00000001, 0x3F800000, 0xBF800000, 0x41100000, 0xC1100000,
             0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x40100000, 0x00100000, 0x7FFFFFFF]
    return words + [rng.getrandbits(32) for _ in range(2000)]


def test_ibm_words_decode_exactly_and_their_keys_order_their_values():
    rng = random.Random(3)
    normal = []
    for w in crafted_words(rng):
        value, key, norm, _ = py_float_codec(w, 0.0, 0)
        assert value == ibm_value(w)
        assert ibm_value(norm) == value  # the normal form keeps the value ...
        if w & 0xFFFFFF:  # ... with a first hex digit not 0 (unless the exponent ran out)
            assert norm & 0xF00000 or (norm >> 24) & 0x7F == 0
            normal.append(norm)
        else:
            assert norm == 0
    by_key = sorted(set(normal), key=lambda w: py_float_codec(w, 0.0, 0)[1])
    values = [ibm_value(w) for w in by_key]
    assert values == sorted(values) and len(set(values)) == len(values)


def test_ieee_words_decode_exactly_and_their_keys_order_their_values():
    rng = random.Random(4)
    finite = [w for w in crafted_words(rng) if (w >> 23) & 0xFF != 0xFF]
    for w in finite:
        assert py_float_codec(w, 0.0, 1)[0] == ieee_value(w) == py_float_codec(w, 0.0, 2)[0]
    assert py_float_codec(0x7F800000, 0.0, 1)[0] == 0.0  # infinity and NaN read as 0
    assert py_float_codec(0x7FC00001, 0.0, 1)[0] == 0.0
    by_key = sorted(finite, key=lambda w: py_float_codec(w, 0.0, 1)[1])
    values = [ieee_value(w) for w in by_key]
    assert values == sorted(values)
    assert [py_float_codec(w, 0.0, 1)[1] for w in (0x80000001, 0x80000000, 0, 1)] == \
        [0x7FFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001]


def test_values_encode_to_their_words():
    rng = random.Random(5)
    for _ in range(2000):
        v = rng.choice((-1, 1)) * rng.random() * 10.0 ** rng.randint(-30, 30)
        assert py_float_codec(0, v, 0)[3] == ibm_word(v)
        assert py_float_codec(0, v, 1)[3] == int.from_bytes(struct.pack(">f", v), "big")
    for v in (0.0, -0.0, 1.0, -1.0, 16.0, 1 / 16, 7650.0, -2230.0):
        assert ibm_value(py_float_codec(0, v, 0)[3]) == v
    assert py_float_codec(0, 1e80, 0)[3] == 0x7FFFFFFF  # saturated
    assert py_float_codec(0, -1e300, 1)[3] == 0xFF7FFFFF
    assert py_float_codec(0, 1e-90, 0)[3] == 0 and py_float_codec(0, math.nan, 1)[3] == 0


def compress(data: bytes, **fields) -> bytes:
    config = CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **fields))
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=config)
    return out.getvalue()


@pytest.mark.parametrize("floats", range(1, 8))
def test_round_trips(floats):
    rng = random.Random(floats)
    cases = [b"", b"x", b"\x42\x11\x00\x00\xc1", bytes(rng.getrandbits(8) for _ in range(3000)),
             TEXT[:2000], pack(wave(600), 1), pack(wave(600), 2), pack(wave(600), 3)]
    for data in cases:
        stream = compress(data, floats=floats)
        assert seqzip.decompress(stream) == data
        assert compress(data, floats=floats) == stream  # deterministic


def test_floats_pay_on_float_samples():
    """Each format's expert makes a stream of its samples smaller (a decaying noisy wavelet,
    2,400 samples) than the integer sample expert alone."""
    values = wave(2400, seed=9)
    for fmt, bit in ((1, 1), (2, 2), (3, 4)):
        data = pack(values, fmt)
        assert len(compress(data, samples=1, floats=bit)) < len(compress(data, samples=1))


def test_bounds_are_refused_and_inputs_and_memory_counted():
    for bad in (-1, 8):
        with pytest.raises(ValueError, match="floats"):
            CMConfig(floats=bad)
    base = dict(orders="2,3,4", match=0, word=1, experts="")
    sizes = {f: len(feed_one(kernel(floats=f, **base))) for f in (0, 1, 2, 5, 7)}
    per = LIMITS["float_maps"]
    assert [sizes[f] - sizes[0] for f in (1, 2, 5, 7)] == [per, per, 2 * per, 3 * per]
    config = CMConfig(**dict(dataclasses.asdict(CMConfig.for_preset_id(49)), floats=7,
                             table_bits=18))
    k = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel
    assert k.memory_allocated() <= config.memory_bytes(256)
    assert config.memory_bytes(256) - dataclasses.replace(config, floats=0).memory_bytes(256) \
        >= 3 * LIMITS["float_bytes"]  # its tables and the mixer's weights of its inputs
    assert not any(name.startswith("floats") for name in kernel().get_state())


def test_state_restores_mid_symbol_and_bad_states_are_refused():
    config = dict(orders="2,3,4", table_bits=16, history_bits=16, floats=7)
    a, b = kernel(**config), kernel(**config)
    for x in pack(wave(300), 1)[:1001]:  # a sample's second byte next
        a.update(x)
    a.predict_bit()
    a.update_bit(0)
    state = a.get_state()
    bad_index = np.array(1 << 17, dtype=np.int64)
    bad_pred = np.frombuffer(state["floats2.pred"], dtype="=i8").copy()
    bad_pred[0] = 1 << 32
    bad_count = np.zeros(32 * 32 * 32, dtype="=u2") + 1024
    refused_then_restored(a, b, state, [
        ("floats0.3.index", bad_index, "floats0.3.index"),
        ("floats2.pred", bad_pred, "floats2.pred"),
        ("floats1.0.n", bad_count, "floats1.0.n")])


def test_detector_names_formats_and_none_elsewhere():
    values = wave(1000)
    assert [float_formats(lane_counts(pack(values, fmt))) for fmt in (1, 2, 3)] == [1, 2, 4]
    rng = random.Random(2)
    ints16 = b"".join(int(v * 50).to_bytes(2, "big", signed=True) for v in values)
    ints32 = b"".join(int(v * 50).to_bytes(4, "big", signed=True) for v in values)
    for data in (TEXT, ints16, ints32, bytes(rng.getrandbits(8) for _ in range(4000)),
                 bytes(4000)):
        assert float_formats(lane_counts(data)) == 0


def test_profile_lanes_follow_the_offsets_across_reads():
    """DataProfile.lanes counts by the offset in the whole input, reads of any length."""
    from seqzip.session import _scan_profile

    class Dribble(io.BytesIO):
        def read(self, n=-1):
            return super().read(3)

    data = pack(wave(500), 1)
    for src in (io.BytesIO(data), Dribble(data)):
        profile = _scan_profile(src)[1]
        assert (profile.lanes == lane_counts(data)).all()
        assert float_kind(profile) == "floats1"


def test_detector_says_none_on_the_canterbury_files():
    """No Canterbury file is float samples (the corpus from where every test reads it:
    ``../shared/corpora`` or ``$SEQZIP_CORPORA``; skipped when absent)."""
    from tests.helpers import CANTERBURY
    if not CANTERBURY.is_dir():
        pytest.skip(f"{CANTERBURY} not present")
    for path in sorted(CANTERBURY.iterdir()):
        assert float_formats(lane_counts(path.read_bytes())) == 0, path.name
