"""CTW: the kernel equals the recursive definition, codes what it predicts, respects its budget."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import seqzip
from seqzip import coder, corpora
from seqzip.models import create
from seqzip.models.ctw import CTWConfig, CTWModel
from seqzip.reference.context import CTWReference

from tests.helpers import symbols_of




@pytest.mark.parametrize("alphabet_size, depth, estimator, alpha", [
    (2, 0, "kt", 0.5), (2, 3, "kt", 0.5), (3, 2, "kt", 0.5), (4, 3, "kt", 0.5),
    (5, 2, "kt", 0.5), (4, 2, "zr", 0.5), (3, 3, "zr", 0.5), (4, 2, "kt", 0.125),
])
def test_kernel_equals_recursive_definition(alphabet_size, depth, estimator, alpha):
    rng = np.random.default_rng(alphabet_size * 10 + depth)
    # A source with structure, so that deep contexts matter and betas move.
    symbols = [int(rng.integers(alphabet_size))]
    while len(symbols) < 150:
        symbols.append((symbols[-1] + int(rng.integers(2))) % alphabet_size
                       if rng.random() < 0.8 else int(rng.integers(alphabet_size)))
    config = CTWConfig(depth=depth, alpha=alpha, estimator=estimator, count_limit=65535)
    model = create("ctw", config, alphabet_size=alphabet_size, seed=0)
    ref = CTWReference(alphabet_size, depth, alpha, estimator == "zr")
    for t, s in enumerate(symbols):
        p = model.predict()
        if t % 7 == 0 or t < 12:  # the exact reference is slow; check a spread of steps
            np.testing.assert_allclose(p, ref.predict(), rtol=1e-9, atol=1e-15)
        model.update(s)
        ref.update(s)


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=2000), st.integers(0, 12), st.sampled_from(["kt", "zr"]))
def test_distribution_is_proper(data, depth, estimator):
    symbols, size = symbols_of(data) if data else (np.zeros(0, np.uint8), 1)
    model = create("ctw", CTWConfig(depth=depth, estimator=estimator), alphabet_size=size,
                   seed=0)
    for s in symbols.tolist():
        p = model.predict()
        assert p.shape == (size,) and (p > 0).all() and abs(p.sum() - 1) < 1e-12
        model.update(s)


@pytest.mark.parametrize("level", [1, 6, 9])
def test_round_trip_text_and_binary(level):
    data = corpora.generate("text", 100_000, seed=5).data + bytes(range(256)) * 20
    packed = seqzip.compress(data, model="ctw", level=level)
    assert seqzip.decompress(packed) == data


def test_payload_bits_match_log_loss():
    data = corpora.generate("markov2", 300_000, seed=2).data
    symbols, size = symbols_of(data)
    config = CTWConfig(depth=4)
    payload = coder.encode(create("ctw", config, alphabet_size=size, seed=0), symbols)
    ideal = coder.log_loss_bits(create("ctw", config, alphabet_size=size, seed=0),
                                symbols).sum()
    assert abs(8 * len(payload) - ideal) / len(symbols) < 0.01


@pytest.mark.parametrize("when_full", ["freeze", "reset"])
def test_memory_cap_is_respected(when_full):
    data = np.random.default_rng(1).integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    symbols, size = symbols_of(data)
    config = CTWConfig(depth=8, memory_mb=2, when_full=when_full)
    model = CTWModel(config, bytes(range(size)), seed=0)
    for s in symbols.tolist():
        model.predict()
        model.update(s)
    stats = model.stats()
    assert model.memory_used() <= 2 << 20
    assert stats["entries"] <= stats["entries_max"] and stats["nodes"] <= stats["nodes_max"]
    if when_full == "reset":
        assert stats["resets"] >= 1
    packed = seqzip.compress(data[:60_000], model="ctw", level=6)  # the default budget
    assert seqzip.decompress(packed) == data[:60_000]


@pytest.mark.parametrize("when_full", ["freeze", "reset"])
def test_full_tree_still_round_trips(when_full):
    import io

    data = corpora.generate("text", 150_000, seed=8).data
    config = CTWConfig(depth=10, memory_mb=1, when_full=when_full)
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="ctw", config=config)
    assert seqzip.decompress(out.getvalue()) == data


def test_deep_contexts_on_long_input_stay_finite():
    """Depth 16 on 2 MB of repetitive data: betas saturate, nothing under- or overflows."""
    data = (corpora.generate("text", 20_000, seed=3).data * 100)[:2_000_000]
    symbols, size = symbols_of(data)
    bits = coder.log_loss_bits(create("ctw", CTWConfig(depth=16), alphabet_size=size,
                                      seed=0), symbols)
    assert np.isfinite(bits).all()
    assert bits[-200_000:].mean() < 0.15  # it has learned the repeat (KT measured 0.109)


def test_beats_order2_on_english(alice):
    symbols, size = symbols_of(alice)
    ctw = coder.log_loss_bits(create("ctw", None, alphabet_size=size, seed=0), symbols).mean()
    order2 = coder.log_loss_bits(create("order2", None, alphabet_size=size, seed=0),
                                 symbols).mean()
    assert ctw < order2 - 0.4, (ctw, order2)


def test_validation_protocol_for_models_and_bzip2():
    import bz2

    from seqzip.research.protocol import run_validation, validation_bits

    sample = corpora.generate("markov2", 40_000, seed=6)
    train, valid = sample.data[:30_000], sample.data[30_000:]
    expected_bz = 8 * (len(bz2.compress(train + valid, 9)) - len(bz2.compress(train, 9)))
    assert validation_bits("bzip2-9", train, valid) == expected_bz
    symbols, size = symbols_of(train + valid)
    full = coder.log_loss_bits(create("ctw", None, alphabet_size=size, seed=0), symbols).sum()
    head = coder.log_loss_bits(create("ctw", None, alphabet_size=size, seed=0),
                               symbols[:len(train)]).sum()
    assert validation_bits("ctw", train, valid) == pytest.approx(full - head, rel=1e-12)
    truth = corpora.true_log2_loss("markov2", sample.data, seed=6) - \
        corpora.true_log2_loss("markov2", train, seed=6)
    rows = {r["method"]: r for r in run_validation(train, valid, models=["ctw", "order2"],
                                                    true_bits=truth)}
    assert rows["ctw"]["regret_bits"] == pytest.approx(rows["ctw"]["validation_bits"] - truth)
    assert 0 < rows["ctw"]["regret_bits"] < rows["bzip2-9"]["regret_bits"]


def test_cli_bench_train_validation(tmp_path):
    from click.testing import CliRunner

    from seqzip.cli import cli

    (tmp_path / "t").write_bytes(corpora.generate("text", 20_000, seed=1).data)
    (tmp_path / "v").write_bytes(corpora.generate("text", 5_000, seed=2).data)
    result = CliRunner().invoke(cli, ["bench", "--train", str(tmp_path / "t"), "--validation",
                                      str(tmp_path / "v"), "--models", "ctw"])
    assert result.exit_code == 0 and "ctw -6" in result.output and "bzip2-9" in result.output
    assert CliRunner().invoke(cli, ["bench", "--train", str(tmp_path / "t")]).exit_code == 1
