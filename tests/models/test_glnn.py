"""The online GLNN: coding round trips, the window gradient, and its pieces."""
import io

import numpy as np
import pytest

import seqzip
from tests.helpers import compress_in_frames
from seqzip import corpora
from seqzip.models.glnn import GLNNConfig, GLNNModel, initial_parameters


# levels 8 and 9 (about 45 s) are ``pytest -m long``
@pytest.mark.parametrize("level", [level if level < 8 else pytest.param(level, marks=pytest.mark.long)
                                   for level in range(1, 10)])
def test_round_trip_every_level(level):
    data = corpora.generate("text", 6_000, seed=level).data + bytes(range(256)) * 4
    packed = seqzip.compress(data, model="glnn", level=level)
    assert seqzip.decompress(packed) == data


@pytest.mark.parametrize("metric", ["qdrbpm", "qdruop", "rbpm", "ruop"])
def test_round_trip_every_metric_with_frames(metric):
    data = corpora.generate("insertions", 60, seed=2).data
    config = GLNNConfig(n_units=6, window=16, interval=8, metric=metric)
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="glnn", config=config, frame_size=999)
    assert seqzip.decompress(out.getvalue()) == data


def test_window_gradient_matches_finite_differences():
    data = corpora.generate("music", 40, seed=1).data
    alphabet = sorted(set(data))
    model = GLNNModel(GLNNConfig(n_units=5, window=24, interval=1000), bytes(alphabet), seed=3)
    for b in data[:300]:
        model.predict()
        model.update(alphabet.index(b))
    kernel = model.kernel
    G = kernel.py_window_gradient()
    _, tau, _, _ = kernel.parameters()
    rng = np.random.default_rng(0)
    h = 1e-6
    for _ in range(40):
        j = int(rng.integers(1, tau.shape[0]))
        k = int(rng.integers(tau.shape[1]))
        y = int(rng.integers(tau.shape[2]))
        up, down = tau.copy(), tau.copy()
        up[j, k, y] += h
        down[j, k, y] -= h
        numeric = (kernel.py_window_objective(up) - kernel.py_window_objective(down)) / (2 * h)
        assert G[j, k, y] == pytest.approx(numeric, rel=1e-5, abs=1e-9)


def test_initialisation_is_the_papers_and_seeded():
    config = GLNNConfig(n_units=6, connectivity=3)
    incoming, w, tau, V0 = initial_parameters(config, 5, seed=7)
    again = initial_parameters(config, 5, seed=7)
    assert all(np.array_equal(p, q) for p, q in zip((incoming, w, tau, V0), again))
    assert not np.array_equal(incoming, initial_parameters(config, 5, seed=8)[0])
    for j in range(1, 7):
        assert incoming[j, 0] == 0 and incoming[j, 1] == j  # bias, then the self-loop
        assert len(set(incoming[j, 1:])) == 3
        assert np.all(tau[j, 1] == -0.5)  # eq. 31
        mu = 1 / (j + 1)
        beta = -np.sqrt(0.5 * (0.5 - mu)) if mu < 0.5 else 0.0
        assert np.allclose(tau[j, 0].mean(), beta)  # eq. 32: centred around beta_j
        assert np.tanh(V0[j]) == pytest.approx(beta / 0.5, abs=1e-12)  # s(V0) = beta / alpha
    assert not w.any()


def test_learns_text_better_than_uniform():
    data = corpora.generate("text", 30_000, seed=4).data
    packed = seqzip.compress(data, model="glnn", level=3)
    assert 8 * len(packed) / len(data) < np.log2(len(set(data))) - 1.0


def one_megabyte(kind: str) -> bytes:
    if kind == "text":
        return corpora.generate("text", 1 << 20, seed=11).data
    rng = np.random.default_rng(11)  # binary: structured records, noise, and a jump in statistics
    records = b"".join(int(v).to_bytes(4, "little") + bytes([i % 7, 0, 255])
                       for i, v in enumerate(rng.integers(0, 1 << 20, 1 << 16)))
    return (records + rng.integers(0, 256, 1 << 20, dtype=np.uint8).tobytes())[:1 << 20]


def _megabyte_round_trip(kind: str, level: int, size: int = 1 << 20) -> None:
    data = one_megabyte(kind)[:size]
    packed = compress_in_frames(data, "glnn", level, size // 3)
    assert seqzip.decompress(packed) == data


@pytest.mark.parametrize("kind", ["text", pytest.param("binary", marks=pytest.mark.long)])
def test_quarter_megabyte_round_trip_fastest_level(kind):
    """256 KB over three frames (the model carries across frames); 1 MB at every level is
    ``pytest -m long``."""
    _megabyte_round_trip(kind, 1, 1 << 18)


@pytest.mark.long
@pytest.mark.parametrize("kind", ["text", "binary"])
@pytest.mark.parametrize("level", range(1, 10))
def test_megabyte_round_trip_every_level(kind, level):
    """1 MB at every level: about an hour on two cores, so ``pytest -m long``, not CI."""
    _megabyte_round_trip(kind, level)


def test_mixture_starts_as_the_first_expert():
    """With zero writing weights and gates (1, 0), the first prediction is CTW's own."""
    from seqzip.models.ctw import CTWConfig, CTWModel
    data = corpora.generate("text", 3000, seed=5).data
    alphabet = sorted(set(data))
    model = GLNNModel(GLNNConfig(experts="ctw4+order2", n_units=4), bytes(alphabet), seed=0)
    ctw = CTWModel(CTWConfig(depth=4), bytes(alphabet), seed=0)
    floor = 2.0 ** -16
    expected = (1 - floor) * ctw.predict() + floor / len(alphabet)
    np.testing.assert_allclose(model.predict(), expected, rtol=1e-13)
    for b in data:  # and it then learns: better than CTW alone on the same text
        model.predict()
        model.update(alphabet.index(b))
    beta, gates = model.kernel.expert_weights()
    assert gates.shape == (5, 2) and beta.shape == (2,)
    assert np.all(np.isfinite(gates)) and not np.array_equal(gates[0], [1.0, 0.0])


def test_experts_beat_each_expert_alone():
    """The mixture codes generated text in fewer bits than either of its experts alone."""
    from seqzip.coder import log_loss_bits
    from seqzip.models import create
    from seqzip.models.ctw import CTWConfig
    symbols, alphabet = seqzip.api.symbols_of(corpora.generate("text", 40_000, seed=6).data)
    A = len(alphabet)
    config = GLNNConfig.for_level(4)
    assert config.experts == "ctw6+order2"
    hybrid = log_loss_bits(GLNNModel(config, bytes(range(A)), seed=0), symbols).sum()
    ctw = log_loss_bits(create("ctw", CTWConfig(depth=6), alphabet_size=A, seed=0), symbols).sum()
    order2 = log_loss_bits(create("order2", None, alphabet_size=A, seed=0), symbols).sum()
    assert hybrid < min(ctw, order2), (hybrid, ctw, order2)


@pytest.mark.parametrize("text", ["ctw", "ctw99", "order3", "ctw8+", "+order2", "ctw-1"])
def test_bad_expert_specs_are_rejected(text):
    with pytest.raises(ValueError, match="expert"):
        GLNNConfig(experts=text)


def test_rate_of_transition_steps_is_capped():
    """A saturated network ties every window; the rate must not grow without bound (it once
    overflowed to inf, then NaN, on plrabn12.txt)."""
    data = b"ab" * 3000
    model = GLNNModel(GLNNConfig(n_units=3, window=8, interval=8, rate_tau_max=0.5), b"ab",
                      seed=0)
    for b in data:
        model.predict()
        model.update(b - ord("a"))
    assert model.kernel.rate_tau <= 0.5
    assert np.all(np.isfinite(model.predict()))
