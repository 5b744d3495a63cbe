"""The deterministic exp / log / tanh / softmax of ``detmath.pxd`` against numpy (accuracy) and
at their edges; the output-layer helpers of ``mixing.pxd`` against their definitions."""
import numpy as np
import pytest

from seqzip._kernels import testing as k


@pytest.mark.parametrize("func, ref, lo, hi", [
    (k.py_exp, np.exp, -700, 700), (k.py_exp, np.exp, -1, 1),
    (k.py_log, np.log, 1e-300, 1e300), (k.py_log, np.log, 0.5, 2.0),
    (k.py_tanh, np.tanh, -25, 25), (k.py_tanh, np.tanh, -1e-3, 1e-3),
    (k.py_logistic, lambda v: 1 / (1 + np.exp(-v)), -30, 30),
])
def test_accuracy(func, ref, lo, hi):
    rng = np.random.default_rng(0)
    if func is k.py_log and hi / lo > 1e6:
        xs = np.exp(rng.uniform(np.log(lo), np.log(hi), 20000))
    else:
        xs = rng.uniform(lo, hi, 20000)
    ours = np.array([func(float(v)) for v in xs])
    want = ref(xs)
    scale = np.maximum(np.abs(want), 1e-300)
    assert np.max(np.abs(ours - want) / scale) < 8 * np.finfo(float).eps


def test_edges():
    assert k.py_exp(0.0) == 1.0 and k.py_exp(-1000.0) == 0.0
    assert np.isfinite(k.py_exp(1000.0))
    assert k.py_log(1.0) == 0.0 and k.py_log(0.0) == -745.0
    assert k.py_log(5e-324) == pytest.approx(np.log(5e-324), rel=1e-12)  # subnormal
    assert k.py_tanh(30.0) == 1.0 and k.py_tanh(-30.0) == -1.0
    assert np.isnan(k.py_exp(float("nan")))


def test_softmax_is_the_definition_with_and_without_offset():
    rng = np.random.default_rng(1)
    a, w, off = rng.standard_normal(5), rng.standard_normal((5, 9)), rng.standard_normal(9)
    for offset in (None, off):
        logits = a @ w + (0 if offset is None else offset)
        want = np.exp(logits - logits.max())
        np.testing.assert_allclose(k.py_softmax(a, w, offset), want / want.sum(), rtol=1e-13)
    big = k.py_softmax(np.ones(1), np.array([[1e4, -1e4, 0.0]]))
    assert big[0] == 1.0 and big[1] == 0.0 and np.isfinite(big).all()


def test_mixed_softmax_adds_gated_expert_logs():
    rng = np.random.default_rng(2)
    a = np.concatenate([[1.0], rng.standard_normal(3)])
    w, lexp, U = rng.standard_normal((4, 6)), rng.standard_normal((2, 6)), rng.standard_normal((4, 2))
    out, beta = k.py_mixed_softmax(a, w, lexp, U)
    np.testing.assert_allclose(beta, a @ U, rtol=1e-14)
    logits = a @ w + beta @ lexp
    want = np.exp(logits - logits.max())
    np.testing.assert_allclose(out, want / want.sum(), rtol=1e-13)


def test_expert_logs_floor_and_uniform_floor():
    logs = k.py_expert_logs(np.array([0.5, 0.0, 1e-320, 0.25]))
    assert logs[0] == pytest.approx(np.log(0.5), rel=1e-15)
    assert logs[1] == logs[2] == pytest.approx(np.log(1e-300), rel=1e-12)
    p = k.py_floor_mix(np.array([1.0, 0.0, 0.0, 0.0]))
    assert p.sum() == pytest.approx(1.0, abs=1e-15) and p.min() == 2.0 ** -16 / 4
