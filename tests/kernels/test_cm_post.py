"""The last mix (CMConfig.post, post.pxd): after the final stage, one row of weights over that
stage's log-odds and every mixer input, trained by plain gradient steps of rate post / 100000.
Checked against a plain-Python mix of the same kernel's inputs, round trips and deterministic
streams for several rates, the state restored mid-symbol and bad states refused, bounds and
memory."""
import dataclasses
import io
import random

import numpy as np
import pytest

import seqzip
from seqzip._kernels.cm import py_squash, py_stretch
from seqzip.models.cm import CMConfig, CMModel
from tests.helpers import canterbury_file
from tests.kernels.test_cm import kernel
from tests.kernels.test_cm_runs import TEXT, compress, refused_then_restored


def test_bounds_are_refused():
    for bad in (-1, 1001):
        with pytest.raises(ValueError, match="post"):
            CMConfig(post=bad)


@pytest.mark.parametrize("post", [1, 10, 50, 1000])
def test_round_trips(post):
    rng = random.Random(post)
    cases = [b"", b"x", bytes(rng.getrandbits(8) for _ in range(3000)), TEXT,
             bytes(rng.choice(b"ab") for _ in range(2000)), bytes(range(256)) * 4]
    for data in cases:
        stream = compress(data, post=post)
        assert seqzip.decompress(stream) == data
        assert compress(data, post=post) == stream  # deterministic


def test_the_mix_is_the_final_stage_and_the_inputs_weighted_as_documented():
    """A kernel without the last mix gives the final stage's probability (to 2^-16) and the
    inputs, which the last mix does not change; the mix computed from them in Python (w
    from (1, 0, ...), w += rate (bit - p) y, p = squash(w . y) clamped to 16) matches the
    kernel with it, bit for bit to the coder's 2^-16 steps."""
    rate = 50
    plain, mixed = kernel(apm=2), kernel(apm=2, post=rate)
    data = TEXT[:600]
    w = None
    worst = 0.0
    for x in data:
        for depth in range(8):
            q0, q1 = plain.predict_bit(), mixed.predict_bit()
            inputs = plain.mixer_inputs()
            assert np.array_equal(inputs, mixed.mixer_inputs())
            y = np.concatenate([[py_stretch(q0 / 65536.0)], inputs])
            if w is None:
                w = np.zeros(len(y))
                w[0] = 1.0
            dot = min(max(float(sum(wi * yi for wi, yi in zip(w, y))), -16.0), 16.0)
            p = py_squash(dot)
            worst = max(worst, abs(p - q1 / 65536.0))
            bit = (x >> (7 - depth)) & 1
            w += rate / 100000.0 * (bit - p) * y
            plain.update_bit(bit)
            mixed.update_bit(bit)
    # the Python mix reads the final stage rounded to 2^-16: its log-odds differ by < 1e-3
    assert worst < 2e-3
    assert not np.isclose(worst, 0.0)  # the last mix did move away from the final stage


@pytest.fixture
def kennedy() -> bytes:
    return canterbury_file("kennedy.xls")


def test_it_pays_on_binary_data(kennedy):
    """30 KB of kennedy.xls at level 6's binary variant: the stream body is smaller."""
    from seqzip.header import parse_header
    base = dataclasses.asdict(CMConfig.for_preset_id(34))
    sizes = []
    for post in (0, 30):
        out = io.BytesIO()
        seqzip.compress_file(io.BytesIO(kennedy[:30000]), out, model="cm",
                             config=CMConfig(**dict(base, post=post, table_bits=16)))
        sizes.append(len(out.getvalue()) - parse_header(out.getvalue())[1])
    assert sizes[1] < sizes[0] * 0.995


def test_state_restores_mid_symbol_and_bad_states_are_refused():
    fields = dict(post=40)
    a, b = kernel(**fields), kernel(**fields)
    for x in TEXT[:1500]:
        a.update(x)
    a.predict_bit()
    a.update_bit(1)
    state = a.get_state()
    n = len(a.mixer_inputs()) + 1
    refused_then_restored(a, b, state, (
        ("post.selected", np.array(3), r"post\.selected"),
        ("post.w", np.full(n, np.nan), r"post\.w"),
        ("post.y", np.full(n, np.inf), r"post\.y")))


def test_memory_bounded_and_default_leaves_the_state_alone():
    config = CMConfig(**dict(dataclasses.asdict(CMConfig.for_preset_id(31)), post=10,
                             table_bits=18))
    k = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel
    without = CMModel(dataclasses.replace(config, post=0), alphabet=bytes(range(256)),
                      seed=0).kernel
    n = config._n_inputs  # the mixer's inputs
    assert k.memory_allocated() - without.memory_allocated() == 4 * 8 * (n + 1)
    assert k.memory_allocated() <= config.memory_bytes(256)
    assert config.memory_bytes(256) - dataclasses.replace(config, post=0).memory_bytes(256) \
        == 4 * 8 * (n + 1)
    assert not any(name.startswith("post") for name in kernel().get_state())
