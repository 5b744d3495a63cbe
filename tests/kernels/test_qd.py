"""Ollivier's quasi-diagonal reduction (``qd.pxd``, 000 eq. 17-21 and 34-35), written once and
used by every kernel: against its definition, the full solve it reduces, and Cholesky."""
import numpy as np
import pytest

from seqzip._kernels import testing as k


def test_quasi_diagonal_solve_is_the_2x2_systems():
    """Each coordinate i solves [[m00, c_i], [c_i, d_i]] (b, s_i) = (g0, g_i) jointly with the
    bias; the bias step is g0/m00 minus the coordinates' shares."""
    rng = np.random.default_rng(0)
    n = 6
    grad, diag, cross = rng.standard_normal(n), 5 + rng.random(n), rng.standard_normal(n) * 0.5
    cross[0] = diag[0]
    out = k.py_qd_solve(grad, diag, cross)
    bias = grad[0] / diag[0]
    for i in range(1, n):
        step = (grad[i] - grad[0] * cross[i] / diag[0]) / (diag[i] - cross[i] ** 2 / diag[0])
        assert out[i] == pytest.approx(step, rel=1e-14)
        bias -= cross[i] / diag[0] * step
        assert k.py_qd_coordinate(grad[i], diag[i], cross[i], grad[0], diag[0]) == out[i]
    assert out[0] == pytest.approx(bias, rel=1e-13)


def test_quasi_diagonal_is_exact_for_one_coordinate_and_diagonal_metrics():
    """The reduction is exact where it should be: a bias and one coordinate (a 2x2 metric),
    and a diagonal metric (no cross terms)."""
    rng = np.random.default_rng(1)
    M = np.array([[3.0, 0.8], [0.8, 2.0]])
    g = rng.standard_normal(2)
    out = k.py_qd_solve(g, np.diag(M).copy(), M[0].copy())
    np.testing.assert_allclose(M @ out, g, rtol=1e-13, atol=1e-14)
    d = 1 + rng.random(6)
    g = rng.standard_normal(6)
    cross = np.zeros(6)
    cross[0] = d[0]
    np.testing.assert_allclose(k.py_qd_solve(g, d, cross), g / d, rtol=1e-15)


def test_row_step_accumulates_the_running_hessian_then_solves():
    rng = np.random.default_rng(2)
    a = np.concatenate([[1.0], rng.standard_normal(4)])
    hd, hc, w = 1 + rng.random(5), rng.standard_normal(5) * 0.1, rng.standard_normal(5)
    hd0, hc0, w0 = hd.copy(), hc.copy(), w.copy()
    var, target, gamma, eps, rate = 0.2, 0.7, 0.99, 0.5, 0.3
    k.py_qd_row_step(a, var, target, hd, hc, gamma, eps, rate, w)
    np.testing.assert_allclose(hd, gamma * hd0 + a * a * var, rtol=1e-15)
    np.testing.assert_allclose(hc, gamma * hc0 + a * var, rtol=1e-15)
    diag = hd + eps
    cross = hc.copy()
    cross[0] = diag[0]
    step = k.py_qd_solve(a * target, diag, cross)
    np.testing.assert_allclose(w, w0 + rate * step, rtol=1e-13)


def test_cholesky_solve_and_its_refusal():
    rng = np.random.default_rng(3)
    B = rng.standard_normal((4, 4))
    M = B @ B.T + 4 * np.eye(4)
    b = rng.standard_normal(4)
    np.testing.assert_allclose(k.py_cholesky_solve(M, b), np.linalg.solve(M, b), rtol=1e-12)
    assert k.py_cholesky_solve(-np.eye(3), np.ones(3)) is None
