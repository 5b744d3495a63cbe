"""The batch GLNN/GNN/RNN kernels against the NumPy reference, and their initialisation."""
import numpy as np
import pytest

from seqzip import corpora
from seqzip._kernels import glnn as _glnn
from seqzip.research.glnn import FastNetwork, TrainConfig, train
from seqzip.reference.glnn import Network, transition_step, writing_step


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


def test_initial_parameters_follow_the_paper():
    """000 Sect. 2, eq. 30-33: bias row beta_j + mu_j/4 (u - mean u) with mu_j = 1/(j+1),
    self-loop -alpha, V0 = atanh(beta_j / alpha), edges drawn by the seed only."""
    incoming, w, tau, V0 = _glnn.initial_parameters(6, 3, 0.5, 5, 7)
    assert np.array_equal(incoming, _glnn.initial_parameters(6, 3, 0.5, 5, 7)[0])
    assert not np.array_equal(incoming, _glnn.initial_parameters(6, 3, 0.5, 5, 8)[0])
    assert not w.any()
    for j in range(1, 7):
        mu = 1.0 / (j + 1)
        beta = -np.sqrt(0.5 * (0.5 - mu))
        assert incoming[j, 0] == 0 and incoming[j, 1] == j
        assert sorted(incoming[j, 2:]) == list(incoming[j, 2:]) and j not in incoming[j, 2:]
        assert np.all(tau[j, 1] == -0.5)
        assert tau[j, 0].mean() == pytest.approx(beta, abs=1e-15)
        assert np.ptp(tau[j, 0]) <= mu / 4 + 1e-15
        assert V0[j] == pytest.approx(np.arctanh(beta / 0.5), rel=1e-14)
