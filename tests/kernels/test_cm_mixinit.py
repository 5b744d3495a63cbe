"""The mixer's start (CMConfig.mix_init): the initial weights and prior curvature against a
plain-Python reference, the first prediction they give, round trips, a stream pinned,
determinism, the bound refused, and a default that leaves every config's header as it was."""
import dataclasses
import io
import json

import numpy as np
import pytest

import seqzip
from seqzip.models.base import config_from_bytes, config_to_bytes
from seqzip.models.cm import CMConfig
from tests.kernels.test_cm import kernel
from tests.kernels.test_cm_binary import frames_digest
from tests.kernels.test_cm_options import round_trip

SETS = "node,match,c1"


def words_text(n_words: int, seed: int = 3) -> bytes:
    """Words of a small vocabulary in lines: text a model learns quickly."""
    rng = np.random.default_rng(seed)
    vocab = [b"the", b"mixer", b"starts", b"from", b"a", b"share", b"of", b"inputs", b"rare",
             b"rows", b"learn", b"slowly", b"weights", b"prior"]
    picks = rng.integers(0, len(vocab), n_words)
    return b"".join(vocab[i] + (b"\n" if k % 11 == 10 else b" ") for k, i in enumerate(picks))


def floats(state, name: str) -> np.ndarray:
    return np.frombuffer(np.asarray(state[name]).tobytes(), dtype=np.float64)


def reference_start(n_rows: int, n: int, mix_init: int):
    """What a first-layer weight set holds before any bit: (weights, QDH curvature)."""
    w = [[0.0] * n for _ in range(n_rows)]
    if mix_init and n > 1:
        w = [[0.0] + [2.0 / (n - 1)] * (n - 1) for _ in range(n_rows)]
    return np.array(w).ravel(), np.full(n_rows * n, 16.0 if mix_init == 1 else 4.0)


@pytest.mark.parametrize("mix_init", [0, 1, 2])
def test_the_start_matches_the_reference(mix_init):
    k = kernel(sets=SETS, mix_init=mix_init)
    state = k.get_state()
    n = len(k.mixer_inputs())
    for i in range(3):
        w, hd = floats(state, f"set{i}.w"), floats(state, f"set{i}.hd")
        ref_w, ref_hd = reference_start(len(w) // n, n, mix_init)
        assert np.array_equal(w, ref_w) and np.array_equal(hd, ref_hd)
    # the second layer starts as it did (a mean of the sets), with the same prior as the first
    final = floats(state, "final.w").reshape(-1, 4)
    assert np.array_equal(final, np.tile([0.0, 1 / 3, 1 / 3, 1 / 3], (len(final), 1)))
    assert np.all(floats(state, "final.hd") == (16.0 if mix_init == 1 else 4.0))


def test_the_first_prediction_is_the_mean_of_the_inputs():
    k0 = kernel(sets=SETS, mix_init=1)  # a fresh kernel: its first bit
    k0.predict_bit()
    x = k0.mixer_inputs()
    dot = float(np.clip(sum(2.0 / (len(x) - 1) * v for v in x[1:]), -16.0, 16.0))
    state = k0.get_state()
    for i in range(3):
        assert abs(float(state[f"set{i}.dot"]) - dot) < 1e-12
    assert abs(float(state["final.dot"]) - dot) < 1e-12
    # with zero weights the first prediction is 1/2 whatever the inputs say
    z = kernel(sets=SETS, mix_init=0)
    z.predict_bit()
    assert float(z.get_state()["out.p_mix"]) == 0.5


@pytest.mark.parametrize("data", [b"", b"x", bytes(np.random.default_rng(5).integers(
    0, 256, 3000, dtype=np.uint8)), words_text(600)])
def test_round_trips(data):
    for fields in (dict(mix_init=1), dict(mix_init=2), dict(mix_init=1, optimizer="adam"),
                   dict(mix_init=1, sets="c12n", layer2=False)):
        round_trip(data, **fields)


def test_level_presets_with_the_start_round_trip_and_are_deterministic():
    data = words_text(400) + bytes(range(40))
    for preset, mix_init in ((16, 1), (27, 1), (29, 2)):
        config = dataclasses.replace(CMConfig.for_preset_id(preset), mix_init=mix_init)
        first = frames_digest(data, config)
        assert frames_digest(data, config) == first
        assert first != frames_digest(data, CMConfig.for_preset_id(preset))


def test_stream_is_pinned(checked_streams):
    config = CMConfig(orders="2,3,4", table_bits=16, history_bits=16, sets="c12n",
                      layer2=False, mix_init=1)
    assert frames_digest(words_text(300), config) == GOLDEN


GOLDEN = (237, "ccabfc1072abab8fa9572e6469d55a15f94c974b2105d2d0c3342fa45df01677")


def test_a_share_codes_small_text_smaller():
    data = words_text(800)
    base = dict(sets="c12n", layer2=False, eps=10.0)
    assert round_trip(data, mix_init=1, **base) < round_trip(data, mix_init=0, **base)


def test_bound_is_refused_and_the_default_keeps_headers():
    for bad in (-1, 3):
        with pytest.raises(ValueError):
            CMConfig(mix_init=bad)
    old = CMConfig.for_preset_id(27)
    assert b"mix_init" not in config_to_bytes(old)
    assert config_to_bytes(old) == config_to_bytes(dataclasses.replace(old, mix_init=0))
    new = dataclasses.replace(old, mix_init=1)
    later = CMConfig.ADDED_FIELDS[CMConfig.ADDED_FIELDS.index("mix_init") + 1:]  # at defaults
    assert len(json.loads(config_to_bytes(new))) == len(dataclasses.fields(CMConfig)) - \
        len(later)
    assert len(json.loads(config_to_bytes(old))) < len(dataclasses.fields(CMConfig))
    assert config_from_bytes(CMConfig, config_to_bytes(new)) == new
    assert config_from_bytes(CMConfig, config_to_bytes(old)) == old
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(b"abc" * 50), out, model="cm", config=new)
    assert seqzip.decompress(out.getvalue()) == b"abc" * 50
