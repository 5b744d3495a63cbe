"""The EM-trained HMM of 000 footnote 16: forward-backward against brute-force enumeration of
the state paths, EM's monotonicity, the initialisation, and its place in fit / model files / CLI."""
import itertools

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from seqzip import corpora
from seqzip.cli import cli
from seqzip.research import hmm as hmm_module, training
from seqzip.research.glnn import score_bits
from seqzip.research.hmm import HMM, EMTrainer, em_step, forward_backward


def random_hmm(rng, N, A, edges=None):
    x = rng.integers(0, A, 50)
    return HMM.initial(N, x, A, seed=int(rng.integers(1 << 30)), edges=edges)


def brute_force(hmm, x):
    """P(x), P(state_t = s | x) and sum_t P(s_t = i, s_t+1 = j | x) by summing over all paths."""
    N, T = hmm.n_units, len(x)
    total, gamma, xi = 0.0, np.zeros((T, N)), np.zeros((N, N))
    for path in itertools.product(range(N), repeat=T):
        p = hmm.initial_distribution[path[0]] * hmm.emission[path[0], x[0]]
        for t in range(1, T):
            p *= hmm.transition[path[t - 1], path[t]] * hmm.emission[path[t], x[t]]
        total += p
        for t in range(T):
            gamma[t, path[t]] += p
        for t in range(T - 1):
            xi[path[t], path[t + 1]] += p
    return total, gamma / total, xi / total


@pytest.mark.parametrize("N,A,T,edges", [(2, 2, 5, None), (3, 3, 4, 2), (3, 2, 6, 3)])
def test_forward_backward_matches_enumeration(N, A, T, edges):
    rng = np.random.default_rng(N * 100 + T)
    hmm = random_hmm(rng, N, A, edges)
    hmm.initial_distribution = rng.dirichlet(np.ones(N))
    x = rng.integers(0, A, T)
    total, gamma_bf, xi_bf = brute_force(hmm, x)
    gamma, xi, loglik = forward_backward(hmm, x)
    assert loglik == pytest.approx(np.log(total), abs=1e-12)
    assert np.allclose(gamma, gamma_bf, atol=1e-12)
    assert np.allclose(xi, xi_bf, atol=1e-12)
    # The predictions multiply out to the likelihood: prod_t pi_t(x_t) = P(x).
    pi = hmm.forward(x).pi
    assert np.log(pi[np.arange(T), x]).sum() == pytest.approx(np.log(total), abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), N=st.integers(1, 6), A=st.integers(2, 5),
       T=st.integers(2, 60), edges=st.integers(1, 6))
def test_em_never_decreases_the_likelihood(seed, N, A, T, edges):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, A, T)
    hmm = HMM.initial(N, x, A, seed=seed, edges=edges)
    previous = hmm.log_likelihood(x)
    for _ in range(6):
        hmm, before = em_step(hmm, x)
        assert before == pytest.approx(previous, abs=1e-9)
        now = hmm.log_likelihood(x)
        assert now >= previous - 1e-9 * max(1.0, abs(previous))
        for rows in (hmm.transition, hmm.emission):
            assert np.allclose(rows.sum(axis=1), 1.0)
        previous = now


def test_initialisation_follows_footnote_16():
    x = np.array([0, 0, 0, 1, 1, 2] * 10)
    hmm = HMM.initial(6, x, 4, seed=3, edges=3)
    support = hmm.transition > 0
    assert (support.sum(axis=1) == 3).all() and support.diagonal().all()  # self-loops
    assert (hmm.emission[:, 3] == 0).all()  # a symbol never seen is never produced
    assert np.allclose(hmm.emission.sum(axis=1), 1.0)
    # The support (the graph) survives EM: transitions off the graph stay at zero.
    trained, _ = em_step(hmm, x)
    assert ((trained.transition > 0) <= support).all()
    with pytest.raises(ValueError):
        HMM.initial(0, x, 4)


def test_em_learns_a_deterministic_cycle():
    x = np.array([0, 1, 2] * 100)
    trainer = EMTrainer(HMM.initial(3, x, 3, seed=0), x)
    for _ in range(60):
        trainer.step()
    # Chance is 3 log2 3 = 4.75 bits per period; a learned cycle costs far less.
    assert -trainer.log_likelihood / np.log(2) < 0.1 * len(x) * np.log2(3)
    assert trainer.history == sorted(trainer.history)


def test_fit_model_file_and_cli(tmp_path):
    data = corpora.generate("music", 80, seed=2).data
    alphabet = sorted(set(data))
    x = training.encode(data, alphabet)
    cut = len(x) * 4 // 5
    result = training.fit("hmm-em", x[:cut], x[cut:], len(alphabet), budget=1.0, sizes=[4])
    assert result.network.kind == "hmm" and result.best.d == 4  # #A edges, capped at N
    assert score_bits(result.network, x[cut:]) == pytest.approx(result.validation_bits)
    digest = training.save_model(tmp_path / "h.sqm", result.network, alphabet, {"a": 2})
    net, loaded, info = training.load_model(tmp_path / "h.sqm")
    assert len(digest) == 64 and loaded == alphabet and info == {"a": 2}
    assert score_bits(net, x[cut:]) == result.validation_bits
    path = tmp_path / "music.txt"
    path.write_bytes(data)
    out = tmp_path / "cli.sqm"
    run = CliRunner().invoke(cli, ["train", str(path), "-o", str(out), "--budget", "0.5",
                                   "--units", "4", "--method", "hmm-em"])
    assert run.exit_code == 0, run.output
    assert training.load_model(out)[0].kind == "hmm"


def test_zero_probability_symbol_is_a_clear_error():
    hmm = HMM.initial(2, np.array([0, 0]), 2, seed=0)
    with pytest.raises(ValueError, match="probability 0"):
        hmm_module.forward_backward(hmm, np.array([0, 1]))
    # Scoring a validation sequence with a symbol unseen in training still works (mixing).
    run = hmm.forward(np.array([0, 1, 0]))
    assert run.pi[1, 1] == 0.0 and run.log_likelihood == -np.inf
    assert np.isfinite(score_bits(hmm, np.array([0, 1, 0])))
