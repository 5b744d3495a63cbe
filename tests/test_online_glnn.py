"""The online GLNN: coding round trips, the window gradient, and its pieces."""
import io

import numpy as np
import pytest

import seqzip
from seqzip import corpora
from seqzip.models.glnn import GLNNConfig, GLNNModel, initial_parameters


@pytest.mark.parametrize("level", range(1, 10))
def test_round_trip_every_level(level):
    data = corpora.generate("text", 12_000, seed=level).data + bytes(range(256)) * 8
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
    model = GLNNModel(GLNNConfig(n_units=5, window=24, interval=1000), len(alphabet), seed=3)
    for b in data[:300]:
        model.predict()
        model.update(alphabet.index(b))
    kernel = model._kernel
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
