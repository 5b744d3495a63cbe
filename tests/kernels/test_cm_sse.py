"""The final stage's newer behaviours (CMConfig.sse, sse.pxd): round trips of every bit over
empty, short, random and text inputs, deterministic streams, the counted learning rule and the
fixed-weight average checked against plain Python, the state's check on load, the field's
bounds and memory."""
import dataclasses
import io
import random

import numpy as np
import pytest

import seqzip
from seqzip._kernels import cm
from seqzip.models.base import config_from_bytes, config_to_bytes
from seqzip.models.cm import CMConfig, CMModel
from tests.kernels.test_cm import feed, kernel

TEXT = (b"Alice was beginning to get very tired of sitting by her sister on the bank, and of "
        b"having nothing to do: once or twice she had peeped into the book her sister was "
        b"reading, but it had no pictures or conversations in it.\n") * 3
RANDOM = random.Random(5).randbytes(3000)
VALUES = (1, 2, 3, 4, 8, 16, 32, 60, 63, 64, 128, 255, 256, 259, 307)


def small(**fields) -> CMConfig:
    return CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16, apm=4),
                           **fields))


def compress(data: bytes, **fields) -> bytes:
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=small(**fields), seed=1)
    return out.getvalue()


@pytest.mark.parametrize("sse", VALUES)
@pytest.mark.parametrize("data", [b"", b"x", b"\x00", RANDOM, TEXT, TEXT[:40] + RANDOM[:200]])
def test_round_trips(sse, data):
    z = compress(data, sse=sse)
    assert seqzip.decompress(z) == data
    assert compress(data, sse=sse) == z  # deterministic


def test_streams_differ_and_the_default_is_the_old_stream():
    streams = {sse: compress(TEXT, sse=sse) for sse in VALUES}
    assert len(set(streams.values())) == len(VALUES)
    assert compress(TEXT) == compress(TEXT, sse=0)
    # a config at sse=0 serialises as the builds before the field did (models.base)
    assert b"sse" not in config_to_bytes(small())
    c = small(sse=61)
    assert config_from_bytes(CMConfig, config_to_bytes(c)) == c


def test_bad_values_are_refused():
    for bad in (-1, 1024, 5000, 4 | 8 | 16 | 32 | 256):  # five extra stages: at most four
        with pytest.raises(ValueError, match="sse"):
            small(sse=bad)


def test_extra_stages_and_memory():
    plain = kernel().memory_allocated()
    assert kernel(sse=4).memory_allocated() == plain + 33 * 2 * 65536
    assert kernel(sse=60).memory_allocated() == plain + 4 * 33 * 2 * 65536
    names = set(kernel(sse=63).get_state())
    assert {"sse.apm3", "sse.count5", "sse.w"} <= names and "sse.apm4" not in names
    assert kernel(sse=256).memory_allocated() == plain + 33 * 2 * 65536
    assert {"sse.apm3", "sse.w"} <= set(kernel(sse=2 | 4 | 8 | 16 | 256).get_state())
    for sse in (1, 2, 63, 275):
        config = CMConfig(**dict(dataclasses.asdict(CMConfig.for_preset_id(27)), sse=sse))
        model = CMModel(config, alphabet=bytes(range(256)), seed=0)
        assert model.kernel.memory_allocated() <= config.memory_bytes(256)


def _word_row(text: bytes) -> int:
    k = kernel(sse=256)
    feed(k, text)
    k.predict_bit()
    return int(k.get_state()["sse.ctx"].view("=i4")[0])


def test_the_word_stage_is_keyed_by_the_word_and_the_one_before():
    """sse bit 8: the stage's row is the word so far with the previous word (between words
    the last byte with the last word), whatever came before them."""
    assert _word_row(b"a big cat sat. the ca") == _word_row(b"one the ca")
    assert _word_row(b"the ca") != _word_row(b"a ca")
    assert _word_row(b"the ca") != _word_row(b"the co")
    assert _word_row(b"x the cat ") == _word_row(b"cat ")
    assert _word_row(b"the cat ") != _word_row(b"the cat,")


def _apm_rows(k) -> np.ndarray:
    return np.frombuffer(k.get_state()["apm0"].tobytes(), dtype="=u2").reshape(-1, 33)


def test_counted_cells_follow_the_reference_rule():
    """sse=1: a cell moves (target - cell) x its weight / (n + 1.5), truncated, n counting
    from 12 the bits whose position was nearer to it, the rate's floor 2^-apm_rate."""
    k = kernel(sse=1, apm=1, apm_rate=6)
    node_rows = _apm_rows(k).astype(np.int64)
    counts = np.full_like(node_rows, 12)  # SSE_COUNT_START
    for b in TEXT[:300]:
        for depth in range(8):
            k.predict_bit()
            s = k.get_state()
            row, (bin_,), (frac,) = s["apm_ctx"].view("=i4")[0], \
                s["apm_bin"].view("=i4")[:1], s["apm_frac"].view("=f8")[:1]
            bit = (b >> (7 - depth)) & 1
            target = 65535 if bit else 0
            for j, w in ((bin_, 1.0 - frac), (bin_ + 1, frac)):
                r = max(1.0 / (counts[row, j] + 1.5), 1.0 / 64)
                node_rows[row, j] += int((target - node_rows[row, j]) * w * r)
            near = bin_ if frac < 0.5 else bin_ + 1
            counts[row, near] = min(counts[row, near] + 1, 255)
            k.update_bit(bit)
    assert (_apm_rows(k) == node_rows).all()
    assert (k.get_state()["sse.count0"].view("u1").reshape(-1, 33) == counts).all()


def test_fixed_weights_average_every_stage():
    """Without the mix (bit 1), the extra stages join the average with the next weights:
    p = (p_mix + 1 x out0 + 2 x out1 + ...) / (1 + 1 + 2 + ...)."""
    k = kernel(sse=4 | 8, apm=2)
    feed(k, TEXT[:200])
    q = k.predict_bit()
    s = k.get_state()
    outs = list(s["apm_out"].view("=f8")[:2]) + list(s["sse.out"].view("=f8")[:2])
    p_mix = float(s["out.p_mix"])
    p = (p_mix + sum((i + 1) * o for i, o in enumerate(outs))) / 11
    assert float(s["out.p_final"]) == pytest.approx(p, abs=1e-12)
    assert q == min(max(int(p * 65536.0 + 0.5), 16), 65520)


def test_a_bad_state_is_refused_and_leaves_the_kernel():
    k = kernel(sse=63)
    feed(k, TEXT[:100])
    good = k.get_state()
    for name, value in (("sse.ctx", np.array([70000, 0, 0, 0, 0], "=i4")),
                        ("sse.bin", np.array([40, 0, 0, 0, 0], "=i4"))):
        state = dict(good)
        state[name] = np.frombuffer(value.tobytes(), dtype=np.uint8).copy()
        with pytest.raises(ValueError, match="sse.ctx"):
            k.set_state(state)
    state = dict(good, **{"sse.p": np.array(2.0)})
    with pytest.raises(ValueError, match="sse.p"):
        k.set_state(state)
    w = good["sse.w"].view("=f8").copy()
    w[3] = np.nan
    with pytest.raises(ValueError, match="sse.w"):
        k.set_state(dict(good, **{"sse.w": w.view(np.uint8)}))
    assert k.get_state()["sse.ctx"].tobytes() == good["sse.ctx"].tobytes()
    k.set_state(good)
