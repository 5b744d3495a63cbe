"""Batch training of the ReLU RNN (path-SGD, SGD), the LSTM (+ OINIT) and the tanh RNN on the
pathological problems: gradients against finite differences, the protocol, model files."""
import numpy as np
import pytest

from seqzip.research import recurrent
from seqzip.reference import relu_rnn as ref


def _numeric(f, p, name, index, h=1e-6):
    up = {k: v.copy() for k, v in p.items()}
    down = {k: v.copy() for k, v in p.items()}
    up[name][index] += h
    down[name][index] -= h
    return (f(up) - f(down)) / (2 * h)


@pytest.mark.parametrize("kind", ["relu", "lstm"])
def test_window_gradient_against_finite_differences(kind):
    rng = np.random.default_rng(0)
    n, A, B, L = 4, 5, 3, 6
    p = recurrent._init(kind, n, A, rng, oinit=False)
    p["Wo"] = 0.4 * rng.standard_normal(p["Wo"].shape)
    p["b"] = p["b"] + 0.1 * rng.standard_normal(p["b"].shape)
    X, Y = rng.integers(0, A, (B, L)), rng.integers(0, A, (B, L))
    h0, c0 = np.abs(rng.standard_normal((B, n))), rng.standard_normal((B, n))
    grads, _, _ = recurrent._window_gradient(kind, p, h0, c0, X, Y)

    def objective(q):
        return recurrent._window_gradient(kind, q, h0, c0, X, Y)[1]

    for name in p:
        for index in [tuple(0 for _ in p[name].shape), tuple(s - 1 for s in p[name].shape)]:
            assert grads[name][index] == pytest.approx(_numeric(objective, p, name, index),
                                                       rel=1e-5, abs=1e-8), (name, index)


@pytest.mark.parametrize("penalty", [0.0, 0.5])
def test_srnn_gradient_and_open_penalty_against_finite_differences(penalty):
    rng = np.random.default_rng(1)
    p = recurrent.srnn_initial(6, 5, 4, rng)
    X, y = rng.integers(0, 6, (4, 7)), rng.integers(0, 4, 4)
    _, g = recurrent.srnn_gradient(p, X, y, penalty)

    def objective(q):
        return recurrent.srnn_gradient(q, X, y)[0] + penalty * ref.orthogonality_loss(q["Whh"])

    for name in p:
        for index in [tuple(0 for _ in p[name].shape), tuple(s - 1 for s in p[name].shape)]:
            assert g[name][index] == pytest.approx(_numeric(objective, p, name, index),
                                                   rel=1e-5, abs=1e-9), (name, index)


def test_oinit_initialisations_are_orthogonal():
    rng = np.random.default_rng(2)
    p = recurrent.srnn_initial(6, 64, 4, rng, oinit=True)
    assert ref.orthogonality_loss(p["Whh"]) < 1e-6
    q = recurrent._init("lstm", 8, 5, rng, oinit=True)
    for k in range(4):
        assert ref.orthogonality_loss(q["R"][:, 8 * k:8 * (k + 1)]) < 1e-6


@pytest.mark.parametrize("method", sorted(recurrent.METHODS))
def test_fit_learns_a_cycle(method):
    x = np.array([0, 1, 2, 3, 1, 2] * 80, dtype=np.int64)
    result = recurrent.fit(method, x, x[:60], 4, budget=1.0, sizes=[8], eval_every=20)
    uniform = 60 * np.log2(4)
    assert result.validation_bits < 0.7 * uniform, result.trajectory
    assert result.trajectory[0][1] > result.validation_bits


def test_pathological_batches_are_the_corpus_lines():
    X, y = recurrent.pathological_batch("temporal-order", 30, 50, np.random.default_rng(3))
    for row, cls in zip(X, y):
        relevant = [s for s in row if s >= 4]  # X = 4, Y = 5
        assert len(relevant) == 2 and cls == 2 * (relevant[0] - 4) + (relevant[1] - 4)


def test_short_temporal_order_is_solved_and_the_protocol_stops_at_a_failure():
    r = recurrent.solve_pathological("temporal-order", 10, "srnn-oinit", iterations=400,
                                     hidden=16, test_size=200, rate=0.05)
    assert r["solved"] and r["best_error"] < 0.01
    best, runs = recurrent.longest_solved("temporal-order", "srnn", start=10, step=10,
                                          limit=30, iterations=1, hidden=4, test_size=50,
                                          check_every=1)
    assert best == 0 and len(runs) == 1 and not runs[0]["solved"]


def test_model_file_round_trip(tmp_path):
    x = bytes([97, 98, 99, 98] * 100)
    result, alphabet, n = recurrent.train_bytes(x, method="relu-rnn-sgd", budget=0.5, units=6)
    path = tmp_path / "m.sqm"
    recurrent.save_model(str(path), result, alphabet, {"n": n})
    method, params, alphabet2, info = recurrent.load_model(str(path))
    assert method == "relu-rnn-sgd" and alphabet2 == alphabet == [97, 98, 99] and info == {"n": n}
    for k, v in result.params.items():
        np.testing.assert_array_equal(params[k], v)
    with pytest.raises(ValueError):
        recurrent.fit("nope", np.zeros(10, dtype=np.int64), np.zeros(3, dtype=np.int64), 2, 1.0)
