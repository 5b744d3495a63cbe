"""Offline training behind dictionaries: the batched BPTT is the reference's, summed over the
minibatch; fitted networks become online models that code."""
import numpy as np
import pytest

import seqzip
from seqzip.predictor import Predictor
from seqzip.reference import lstm as ref
from seqzip.research import dictionary


@pytest.mark.parametrize("cell", ["lstm", "mlstm", "mrnn"])
def test_batch_gradient_is_the_reference_summed_over_rows(cell):
    rng = np.random.default_rng(1)
    n, A, B, L = 4, 5, 3, 7
    p = ref.initial_parameters(cell, n, A, rng, std=0.5)
    p["Wo"] = 0.3 * rng.standard_normal(p["Wo"].shape)
    x = rng.integers(0, A, (B, L))
    h0, c0 = 0.3 * rng.standard_normal((B, n)), 0.3 * rng.standard_normal((B, n))
    loglik, cache, _, _ = dictionary.batch_forward(cell, p, h0, c0, x)
    grads = dictionary.batch_backward(cell, p, cache)
    want_ll, want = 0.0, {k: np.zeros_like(v) for k, v in p.items()}
    for b in range(B):
        ll, c = ref.forward(cell, p, h0[b], c0[b], x[b])
        want_ll += ll
        for k, g in ref.backward(cell, p, c).items():
            want[k] += g
    assert loglik == pytest.approx(want_ll, rel=1e-12)
    for k in p:
        np.testing.assert_allclose(grads[k], want[k], rtol=1e-10, atol=1e-12)


def test_window_objective_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    p = ref.initial_parameters("mlstm", 3, 4, rng, std=0.5)
    x = rng.integers(0, 4, (2, 6))
    objective = dictionary.WindowObjective("mlstm", x, np.zeros((2, 3)), np.zeros((2, 3)))
    _, grads = objective.loss_and_grad(p)
    for name in ("E", "Wmh", "R"):
        i = (1,) * p[name].ndim
        old = p[name][i]
        p[name][i] = old + 1e-6
        up = objective.loss(p)
        p[name][i] = old - 1e-6
        down = objective.loss(p)
        p[name][i] = old
        assert grads[name][i] == pytest.approx((up - down) / 2e-6, rel=1e-5, abs=1e-9)


def test_state_after_windows_carries_on():
    """Two windows read back to back end in the state one long window ends in."""
    rng = np.random.default_rng(3)
    p = ref.initial_parameters("lstm", 3, 4, rng, std=0.5)
    x = rng.integers(0, 4, (1, 10))
    z = np.zeros((1, 3))
    _, _, h_a, c_a = dictionary.batch_forward("lstm", p, z, z, x[:, :4])
    _, _, h_b, c_b = dictionary.batch_forward("lstm", p, h_a, c_a, x[:, 4:])
    _, _, h, c = dictionary.batch_forward("lstm", p, z, z, x)
    np.testing.assert_allclose(h_b, h, rtol=1e-13)
    np.testing.assert_allclose(c_b, c, rtol=1e-13)


def test_unknown_optimizer():
    with pytest.raises(ValueError, match="unknown optimizer"):
        dictionary.optimizer_factory("nope")


@pytest.mark.parametrize("model", ["mrnn", "glnn"])
def test_fitted_dictionaries_code(model):
    text = b"the quick brown fox jumps over the lazy dog; " * 60
    p, summary = dictionary.train_dictionary([text], model, 1, budget=1.0)
    assert summary["offline_validation_bpc"] is not None
    packed = seqzip.compress(text[:300], dictionary=p)
    assert seqzip.decompress(packed, dictionary=p) == text[:300]
    fresh = Predictor(model, 1).feed(text[:300]).mean()
    assert p.copy().feed(text[:300]).mean() < fresh
