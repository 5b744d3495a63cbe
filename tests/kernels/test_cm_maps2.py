"""More inputs per hashed context (CMConfig.cx_inputs, cxinputs.pxd): the inputs counted, each
input on every bit of a text checked against a plain-Python reference (the linear
probability, the deterministic histories' log-odds, the second maps learnt by the StateMap
rule with their own cap, the share of contexts never seen), round trips of every mask,
deterministic streams, the state restored mid-symbol and bad states and bounds refused,
memory counted."""
import dataclasses
import io
import random

import numpy as np
import pytest

import seqzip
from seqzip._kernels.cm import CMKernel, probes
from seqzip.models.cm import CMConfig, CMModel, CMSpec
from tests.kernels.test_cm import kernel
from tests.kernels.test_cm_runs import refused_then_restored

TEXT = b"the cat sat on the mat; the dog sat on the log. " * 20 + \
    b"a cat is not a dog, and a dog is not a log.\n" * 10
SMALL = dict(orders="2,3,4", match=0, word=1, experts="", table_bits=16)
MAP2_LIMIT, ROW = 127, 256


def compress(data: bytes, **fields) -> bytes:
    config = CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **fields))
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=config)
    return out.getvalue()


def count(mask: int, n: int) -> int:
    return n * bin(mask & 7).count("1") + (mask >> 3 & 1)


def test_bounds_refused_and_inputs_counted():
    for bad in (-1, 16):
        with pytest.raises(ValueError, match="cx_inputs"):
            CMConfig(cx_inputs=bad)
    spec = dataclasses.replace(CMConfig(**SMALL).spec, cx_inputs=16)
    with pytest.raises(ValueError, match="cx_inputs"):
        CMKernel(spec, bytes(range(256)))
    n = len(CMConfig(**SMALL).spec.contexts)
    sizes = {m: len(first_inputs(kernel(cx_inputs=m, **SMALL))) for m in range(16)}
    assert all(sizes[m] - sizes[0] == count(m, n) for m in range(16))
    assert all(CMConfig(cx_inputs=m, **SMALL)._n_inputs == sizes[m] for m in range(16))
    # level 9's 45 contexts with every input fit the kernel (256 inputs)
    base = dataclasses.asdict(CMConfig.for_preset_id(47))
    assert CMConfig(**dict(base, cx_inputs=15))._n_inputs == 56 + 3 * 45 + 1


def first_inputs(k) -> np.ndarray:
    k.update(ord("a"))
    k.predict_bit()
    return k.mixer_inputs()


@pytest.mark.parametrize("mask", range(16))
def test_round_trips_and_deterministic(mask):
    rng = random.Random(mask)
    cases = [b"", b"x", bytes(rng.getrandbits(8) for _ in range(3000)), TEXT,
             bytes(rng.choice(b"ab") for _ in range(2000))]
    for data in cases:
        stream = compress(data, cx_inputs=mask)
        assert seqzip.decompress(stream) == data
        assert compress(data, cx_inputs=mask) == stream


def test_inputs_match_a_python_reference():
    """Every bit of 500 bytes of text with all four bits: the inputs from the maps' state as
    get_state shows it, the second maps learnt beside in Python (p moves (bit - p) * r >> 16
    with r = 2^16 / (n + 1.5) as an integer, n capped at MAP2_LIMIT), equal to the kernel's
    after the text."""
    k = kernel(cx_inputs=15, **SMALL)
    states = probes.bit_history_states()
    n = len(CMConfig(**SMALL).spec.contexts)
    first = np.array(k.get_state()["map0.p"].view("=u4"))  # the states' own estimates
    ref_p = [np.tile(first, 8).astype(np.int64) for _ in range(n)]
    ref_n = [np.zeros(8 * ROW, np.int64) for _ in range(n)]
    r = [int(65536.0 / (i + 1.5)) for i in range(1024)]
    seen_det = seen_miss = 0
    for x in TEXT[:500]:
        for depth in range(8):
            k.predict_bit()
            x_all = k.mixer_inputs()
            ours = x_all[len(x_all) - count(15, n):]
            state = k.get_state()
            map_state = state["map_state"].view("=i4")
            for i in range(n):
                st = int(map_state[i])
                p = int(state[f"map{i}.p"].view("=u4")[st])
                lin, det, two = ours[3 * i:3 * i + 3]
                if st == 0:
                    assert (lin, det, two) == (0.0, 0.0, 0.0)
                    seen_miss += 1
                    continue
                assert lin == (p * (1.0 / 4294967296.0) - 0.5) * 4.0
                deterministic = states[st][0] == 0 or states[st][1] == 0
                seen_det += deterministic
                assert det == (x_all[1 + i] if deterministic else 0.0)
                j = depth << 8 | st
                assert two == probes.py_stretch(ref_p[i][j] / 4294967296.0)
                bit = (x >> (7 - depth)) & 1
                ref_p[i][j] += ((4294967295 if bit else 0) - ref_p[i][j]) * r[ref_n[i][j]] >> 16
                ref_n[i][j] = min(ref_n[i][j] + 1, MAP2_LIMIT)
            assert ours[-1] == (n - int(np.count_nonzero(map_state[:n]))) * (1.0 / n)
            k.update_bit((x >> (7 - depth)) & 1)
    state = k.get_state()
    for i in range(n):
        assert (state[f"cxmap{i}.p"].view("=u4") == ref_p[i]).all()
        assert (state[f"cxmap{i}.n"].view("=u2") == ref_n[i]).all()
    assert seen_det > 100 and seen_miss > 100


def test_state_restores_mid_symbol_and_bad_states_are_refused():
    fields = dict(cx_inputs=15, table_bits=16)
    a, b = kernel(**fields), kernel(**fields)
    for x in TEXT[:1500]:
        a.update(x)
    a.predict_bit()
    a.update_bit(0)  # inside a symbol: the second maps' indices matter
    state = a.get_state()
    refused_then_restored(a, b, state, (
        ("cxmap0.n", np.full(8 * ROW, 5000, "=u2"), "cxmap0.n"),
        ("cxmap.index", np.full(len(state["cxmap.index"]) // 4, 10 ** 6, "=i4"),
         "cxmap.index")))


def test_memory_counted_and_default_leaves_the_state_alone():
    base = dataclasses.asdict(CMConfig.for_preset_id(61))
    sizes = {}
    for mask in (0, 4, 15):
        config = CMConfig(**dict(base, cx_inputs=mask, table_bits=18))
        k = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel
        assert k.memory_allocated() <= config.memory_bytes(256)
        sizes[mask] = k.memory_allocated()
    n = len(CMConfig(**base).spec.contexts)
    assert sizes[4] - sizes[0] >= n * 8 * ROW * 6  # the second maps, and wider mixer rows
    state = kernel().get_state()
    assert not any(name.startswith("cxmap") for name in state)
    assert len(state["inputs"]) == 96 * 8  # the states of before: 96 inputs
    assert CMSpec.__dataclass_fields__["cx_inputs"].default == 0


@pytest.mark.parametrize("mask", [1, 4, 11, 15])
def test_rows_start_as_a_mean_of_the_log_odds_inputs(mask):
    """mix_init=1: each row's weights sum to 2 over the inputs of before and the second
    maps', the linear, deterministic and share inputs at 0; mix_init=0 leaves every weight
    at 0."""
    k = kernel(cx_inputs=mask, mix_init=1, **SMALL)
    n = len(CMConfig(**SMALL).spec.contexts)
    width = len(first_inputs(kernel(cx_inputs=mask, **SMALL)))
    per = bin(mask & 7).count("1")
    first = width - count(mask, n)
    zero = [first + j * per + b for j in range(n) for b in range((mask & 1) + (mask >> 1 & 1))]
    zero += [width - 1] if mask & 8 else []
    w = k.get_state()["set0.w"].view("=f8").reshape(-1, width)
    assert (w[:, zero] == 0.0).all() and (w[:, 0] == 0.0).all()
    assert np.allclose(w.sum(axis=1), 2.0)
    assert not kernel(cx_inputs=mask, **SMALL).get_state()["set0.w"].view("=f8").any()
