"""Cython GLNN/GNN/RNN kernels against the NumPy reference, and the deterministic math."""
import numpy as np
import pytest

from seqzip import _glnn, corpora
from seqzip.glnn import FastNetwork, TrainConfig, train
from seqzip.glnn_reference import Network, transition_step, writing_step


@pytest.mark.parametrize("func, ref, lo, hi", [
    (_glnn.py_exp, np.exp, -700, 700), (_glnn.py_exp, np.exp, -1, 1),
    (_glnn.py_log, np.log, 1e-300, 1e300), (_glnn.py_log, np.log, 0.5, 2.0),
    (_glnn.py_tanh, np.tanh, -25, 25), (_glnn.py_tanh, np.tanh, -1e-3, 1e-3),
])
def test_deterministic_math_accuracy(func, ref, lo, hi):
    rng = np.random.default_rng(0)
    if func is _glnn.py_log and hi / lo > 1e6:
        xs = np.exp(rng.uniform(np.log(lo), np.log(hi), 20000))
    else:
        xs = rng.uniform(lo, hi, 20000)
    ours = np.array([func(float(v)) for v in xs])
    want = ref(xs)
    scale = np.maximum(np.abs(want), 1e-300)
    assert np.max(np.abs(ours - want) / scale) < 8 * np.finfo(float).eps


def test_deterministic_math_edges():
    assert _glnn.py_exp(0.0) == 1.0 and _glnn.py_exp(-1000.0) == 0.0
    assert np.isfinite(_glnn.py_exp(1000.0))
    assert _glnn.py_log(1.0) == 0.0 and _glnn.py_log(0.0) == -745.0
    assert _glnn.py_log(5e-324) == pytest.approx(np.log(5e-324), rel=1e-12)  # subnormal
    assert _glnn.py_tanh(30.0) == 1.0 and _glnn.py_tanh(-30.0) == -1.0


def pair(kind, activation="tanh", seed=0):
    data = corpora.generate("insertions", 2, seed=seed).data[:120]
    alphabet = sorted(set(data))
    x = np.array([alphabet.index(b) for b in data], dtype=np.int64)
    ref = Network.initial(kind, n_units=5, d=3, x=x, alphabet_size=len(alphabet), seed=seed,
                          activation=activation)
    rng = np.random.default_rng(seed)
    ref.w += 0.2 * rng.standard_normal(ref.w.shape)
    ref.tau[1:] += 0.2 * rng.standard_normal(ref.tau[1:].shape)
    if ref.rho is not None:
        ref.rho[1:] += 0.2 * rng.standard_normal(ref.rho[1:].shape)
    fast = FastNetwork(**{f: getattr(ref, f) for f in
                          ("kind", "sources", "w", "tau", "V0", "rho", "activation")})
    chi = (np.arange(len(x)) % 2).astype(float)
    return ref, fast, x, chi


@pytest.mark.parametrize("kind", ["glnn", "gnn", "rnn"])
@pytest.mark.parametrize("activation", ["tanh", "logistic"])
def test_kernels_equal_reference(kind, activation):
    ref, fast, x, chi = pair(kind, activation)
    r_run, f_run = ref.forward(x, chi), fast.forward(x, chi)
    assert f_run.log_likelihood == pytest.approx(r_run.log_likelihood, rel=1e-12)
    np.testing.assert_allclose(f_run.pi, r_run.pi, rtol=1e-12, atol=1e-300)
    r_g, f_g = ref.backward(x, r_run, chi), fast.backward(x, f_run, chi)
    for name in ("B", "W", "tau", "V0") + (("rho",) if kind == "rnn" else ()):
        np.testing.assert_allclose(getattr(f_g, name), getattr(r_g, name), rtol=1e-10,
                                   atol=1e-12, err_msg=name)
    for method in ("ruop", "rbpm"):
        np.testing.assert_allclose(fast.modulus(x, f_run, f_g, method, chi),
                                   ref.modulus(x, r_run, r_g, method, chi), rtol=1e-10,
                                   atol=1e-14)
    for method in ("qdh", "dh"):
        np.testing.assert_allclose(writing_step(fast, x, f_run, f_g, method, chi),
                                   writing_step(ref, x, r_run, r_g, method, chi), rtol=1e-9,
                                   atol=1e-12)
    for method in ("rbpm", "ruop", "qdrbpm", "qdruop"):
        f_step = transition_step(fast, x, f_run, f_g, method, chi)
        r_step = transition_step(ref, x, r_run, r_g, method, chi)
        for f_part, r_part in zip(f_step, r_step):
            if r_part is not None:
                np.testing.assert_allclose(f_part, r_part, rtol=1e-8, atol=1e-11)


def test_fast_training_follows_the_reference():
    ref, fast, x, _ = pair("glnn")
    config = TrainConfig(writing="qdh", transition="rbpm", iterations=4)
    r_hist = train(ref, x, config).history
    f_hist = train(fast, x, config).history
    np.testing.assert_allclose(f_hist, r_hist, rtol=1e-9)
