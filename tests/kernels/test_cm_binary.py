"""The context mixer's options for binaries (aligned16, numeric, samples), each on its own:
doing what it is for on data made for it, round trips, its hashes and a stream pinned, its
state saved, restored and checked mid-stream, its bounds refused."""
import hashlib
import io

import numpy as np
import pytest

import seqzip
from seqzip.header import parse_header
from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS, LIMITS
from seqzip.models.cm import CMConfig
from tests.kernels.test_cm import feed, kernel
from tests.kernels.test_cm_options import round_trip


def ar2_samples(n: int = 3000, width: int = 2, seed: int = 2) -> bytes:
    """Big-endian signed samples of an AR(2) process with Gaussian noise."""
    rng = np.random.default_rng(seed)
    x1 = x2 = 0.0
    out = np.zeros(n, dtype=np.int64)
    for i in range(n):
        x = 1.6 * x1 - 0.7 * x2 + rng.normal(0, 40)
        x2, x1 = x1, x
        out[i] = int(x)
    return out.astype(">i2" if width == 2 else ">i4").tobytes()


def test_new_bounds_are_refused():
    for field, bad in (("aligned16", 32), ("numeric", 128), ("samples", 2)):
        with pytest.raises(ValueError):
            CMConfig(**{field: bad})
        with pytest.raises(ValueError):
            CMConfig(**{field: -1})


def test_masks_choose_the_contexts_and_samples_adds_its_inputs():
    assert kernel(aligned16=31).context_count() == kernel().context_count() + 5
    assert kernel(numeric=5).context_count() == kernel().context_count() + 2
    assert CMConfig(numeric=5).spec.contexts[-2:] == ((KINDS["numeric"], 0),
                                                     (KINDS["numeric"], 2))
    n = len(kernel().mixer_inputs())
    assert len(kernel(samples=1).mixer_inputs()) == n + LIMITS["sample_maps"]
    assert CMConfig(samples=1).memory_bytes(256) > CMConfig().memory_bytes(256)


@pytest.mark.parametrize("width", [2, 4])
def test_sample_expert_and_numeric_contexts_pay_on_samples(width):
    data = ar2_samples(6000 // width, width)
    plain = round_trip(data)
    assert round_trip(data, samples=1) < plain * 0.97
    assert round_trip(data, numeric=15) < plain


def test_aligned16_contexts_pay_on_16_bit_code():
    rng = np.random.default_rng(4)  # 16-bit words: an opcode of eight, a byte it fixes
    code = b"".join(bytes([op, op ^ 0x3C]) + rng.integers(0, 256, 2, dtype=np.uint8).tobytes()
                    for op in rng.integers(0, 8, 2000) * 16 + 5)
    assert round_trip(code, aligned16=31) < round_trip(code)


PINNED = [3172816170139481494, 63653477979929877, 7609434304974619887, 6914864181468309657,
          6726319486241774149, 8401676077750803278, 2741148591946799069, 3603311452053314169,
          16868324618161784189, 17129007893716163275, 2753218393845778652,
          17304461770577628360]


def test_new_kinds_hashes_are_pinned():
    """The hashes are part of the streams: a change here changes every stream using them."""
    data = ar2_samples(41, 2) + b"\x4e\x75\x4e\x56\xff\xf8"
    kinds = [(KINDS["aligned16"], j) for j in range(5)] + \
        [(KINDS["numeric"], j) for j in range(7)]
    assert cm.py_context_hashes(data, kinds, False, False, False) == PINNED


# a stream of a config with every new field on: the size and SHA-256 of its frames (its header
# lists every field of the config, so it grows when a field is added)
GOLDEN = (3032, "ce9173b49591f120aa1af86d749e9a043734cc743a3964b7a22db2577be8316e")


def test_golden_stream_with_the_new_fields(checked_streams):
    data = ar2_samples(2000, 2) + ar2_samples(1000, 4, seed=3)
    config = CMConfig(orders="2,3,4", table_bits=16, history_bits=16, aligned16=31,
                      numeric=127, samples=1)
    assert frames_digest(data, config) == GOLDEN


def frames_digest(data: bytes, config: CMConfig) -> tuple[int, str]:
    """The size and SHA-256 of the frames (the header left out) ``config`` codes ``data``
    to; the stream decodes to ``data``."""
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=config)
    packed = out.getvalue()
    assert seqzip.decompress(packed) == data
    frames = packed[parse_header(packed)[1]:]
    return len(frames), hashlib.sha256(frames).hexdigest()


def test_sample_state_restores_mid_stream_and_is_checked():
    data = ar2_samples(2000, 2)
    a, b = kernel(samples=1), kernel(samples=1)
    feed(a, data[:1001])  # inside a sample
    state = a.get_state()
    assert {"samples.pred", "samples.err", "samples.w", "samples0.index"} <= set(state)
    b.set_state(state)
    feed(a, data[1001:])
    feed(b, data[1001:])
    assert a.predict_bit() == b.predict_bit()
    assert "samples.w" not in kernel().get_state()
    c = kernel(samples=1)
    bad = dict(state, **{"samples1.index": np.array(LIMITS["sample_size"], dtype=np.int32)})
    with pytest.raises(ValueError, match="samples1.index"):
        c.set_state(bad)
    counts = np.frombuffer(state["samples2.n"], dtype="=u2").copy()
    counts[7] = 65535
    with pytest.raises(ValueError, match="samples2.n"):
        c.set_state(dict(state, **{"samples2.n": counts.view(np.uint8)}))
    pred = np.frombuffer(state["samples.pred"], dtype="=i8").copy()
    pred[3] = -1
    with pytest.raises(ValueError, match="samples.pred"):
        c.set_state(dict(state, **{"samples.pred": pred.view(np.uint8)}))
    c.set_state(state)  # the good state is taken after the bad ones were refused
    feed(c, data[1001:])
    assert c.predict_bit() == a.predict_bit()
