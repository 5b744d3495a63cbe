"""Run information per hashed context (CMConfig.runs, runs.pxd): each context's last symbol
and run checked against a plain-Python dictionary, its input present exactly where that
symbol agrees with the bits so far, round trips of every input mask on text, random, short
and small-alphabet data, deterministic streams, the state restored mid-stream and bad states
and bounds refused, memory bounded."""
import dataclasses
import io
import random

import numpy as np
import pytest

import seqzip
from seqzip.models.cm import CMConfig, CMModel
from tests.kernels.test_cm import kernel

TEXT = b"the cat sat on the mat; the dog sat on the log. " * 20 + \
    b"a cat is not a dog, and a dog is not a log.\n" * 10


def compress(data: bytes, **fields) -> bytes:
    config = CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **fields))
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=config)
    return out.getvalue()


def test_bounds_are_refused_and_inputs_counted():
    for bad in (-1, 32):
        with pytest.raises(ValueError, match="runs"):
            CMConfig(runs=bad)
    base = dict(orders="2,3,4", match=0, word=1, experts="")
    sizes = {runs: len(feed_one(kernel(runs=runs, **base))) for runs in (0, 1, 3, 7, 8, 16)}
    # bits 0-2 one input each, bit 3 one per order context, bit 4 one per hashed context
    assert [sizes[r] - sizes[0] for r in (1, 3, 7, 8, 16)] == [1, 2, 3, 3, 5]


def feed_one(k) -> np.ndarray:
    k.update(ord("a"))
    k.predict_bit()
    return k.mixer_inputs()


@pytest.mark.parametrize("runs", [1, 2, 4, 7, 8, 16, 31])
def test_round_trips(runs):
    rng = random.Random(runs)
    cases = [b"", b"x", bytes(rng.getrandbits(8) for _ in range(3000)), TEXT,
             bytes(rng.choice(b"ab") for _ in range(2000))]
    for data in cases:
        stream = compress(data, runs=runs)
        assert seqzip.decompress(stream) == data
        assert compress(data, runs=runs) == stream  # deterministic


def body_sizes(data: bytes, preset_id: int, field: str, values, **fixed) -> list[int]:
    """The stream bodies (header left out) of ``data`` under preset ``preset_id`` with
    ``field`` at each of ``values`` (and the ``fixed`` fields)."""
    from seqzip.header import parse_header
    base = dataclasses.asdict(CMConfig.for_preset_id(preset_id))
    sizes = []
    for value in values:
        out = io.BytesIO()
        seqzip.compress_file(io.BytesIO(data), out, model="cm",
                             config=CMConfig(**dict(base, **fixed, **{field: value})))
        sizes.append(len(out.getvalue()) - parse_header(out.getvalue())[1])
    return sizes


def test_runs_pay_on_text(alice):
    """On prose (alice29.txt's first 40 KB) at level 6 the stream body is smaller."""
    sizes = body_sizes(alice[:40000], 27, "runs", (0, 7), table_bits=20)
    assert sizes[1] < sizes[0]


def reference_runs(data: bytes, order: int):
    """For each position: the order-``order`` context's (last symbol, run, whether another
    symbol ever came after it) before it, from a dictionary (what the table holds when
    nothing collides)."""
    table, out = {}, []
    for i, x in enumerate(data):
        key = data[max(0, i - order):i]
        out.append(table.get(key, (0, 0, 0)))
        sym, run, changed = table.get(key, (None, 0, 0))
        table[key] = (x, min(run + 1, 127), changed) if sym == x else \
            (x, 1, int(sym is not None))
    return out


def test_last_symbol_and_run_match_a_dictionary_and_the_input_follows_agreement():
    """One order-2 context (the hashed ones of orders below 2 are the direct tables): at each
    symbol's start the component holds the reference's symbol and run, and the top-order
    input (runs=4) is nonzero exactly at the bits where that symbol agrees with the bits so
    far (a learnt probability's stretch is never 0: the table's bins straddle 1/2)."""
    data = TEXT[:1200] + bytes(range(40)) * 3 + TEXT[:300]
    k = kernel(orders="2", word=0, match=0, runs=4, table_bits=20)
    ref = reference_runs(data, 2)
    for i, x in enumerate(data):
        k.predict_bit()  # the entries are read when first needed
        state = k.get_state()
        sym, run, changed = ref[i]
        if i >= 2:  # the first two contexts are shorter than two bytes: hashed all the same
            assert (int(state["runs.sym"][0]), int(state["runs.run"][0]),
                    int(state["runs.changed"][0])) == (sym, run, changed), i
        node = 1
        for depth in range(8):
            k.predict_bit()
            agrees = run > 0 and (sym >> (8 - depth)) == node - (1 << depth)
            if i >= 2:
                assert (k.mixer_inputs()[-1] != 0.0) == agrees, (i, depth)
            bit = (x >> (7 - depth)) & 1
            k.update_bit(bit)
            node = node * 2 + bit


def test_state_restores_mid_symbol_and_bad_states_are_refused():
    fields = dict(runs=31, table_bits=16)
    a, b = kernel(**fields), kernel(**fields)
    for x in TEXT[:1500]:
        a.update(x)
    a.predict_bit()
    a.update_bit(0)  # inside a symbol: the live contexts and the maps' indices matter
    state = a.get_state()
    refused_then_restored(a, b, state, (
        ("runs.where", np.full(48, 2 ** 31, "=u4"), "runs.where"),
        ("runs0.index", np.array(10 ** 6), "runs0.index"),
        ("runs.n_live", np.array(99), "runs.n_live"),
        ("runs.live", np.full(48, 200, "u1"), "runs.live"),
        ("runs1.n", np.full(4096, 5000, "=u2"), "runs1.n")))


def refused_then_restored(a, b, state, bad_fields):
    """Kernel ``b`` refuses ``state`` with each (name, value, message) of ``bad_fields`` put
    in, then takes ``state`` (kernel ``a``'s, one bit into a symbol) and codes on exactly as
    ``a``: the symbol finished the same way in both (as 0), then 1,000 bytes of TEXT."""
    for name, value, what in bad_fields:
        bad = dict(state)
        bad[name] = value.view(np.uint8) if value.ndim else value
        with pytest.raises(ValueError, match=what):
            b.set_state(bad)
    b.set_state(state)
    for depth in range(1, 8):  # the symbol finished the same way in both (as 0), then on
        assert a.predict_bit() == b.predict_bit()
        a.update_bit(0)
        b.update_bit(0)
    for x in TEXT[1500:2500]:
        assert a.predict_bit() == b.predict_bit()
        a.update(x)
        b.update(x)


def test_memory_bounded_and_default_leaves_the_state_alone():
    config = CMConfig(**dict(dataclasses.asdict(CMConfig.for_preset_id(27)), runs=31,
                             table_bits=18))
    k = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel
    assert k.memory_allocated() <= config.memory_bytes(256)
    assert not any(name.startswith("runs") for name in kernel().get_state())
