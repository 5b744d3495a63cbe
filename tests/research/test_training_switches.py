"""The training switches studied for the Table 1 gaps (issue 13): retrying a rejected step at
once, per-(j, y) damping of the transition metric, a prior on tau; all off by default."""
import numpy as np
import pytest

from seqzip import corpora
from seqzip.reference import glnn as ref
from seqzip.research import training
from seqzip.research.glnn import FastNetwork, TrainConfig, Trainer


def music(bars=40):
    data = corpora.generate("music", bars, seed=5).data
    alphabet = sorted(set(data))
    return training.encode(data, alphabet), len(alphabet)


def test_defaults_are_the_original_trainer():
    config = TrainConfig()
    assert (config.retry, config.relative_eps, config.tau_prior) == (0, 0.0, 0.0)


def test_retry_accepts_a_halved_step_within_the_same_iteration():
    x, A = music()
    results = {}
    for retry in (0, 40):
        net = FastNetwork.initial("glnn", n_units=5, d=3, x=x, alphabet_size=A, seed=1)
        trainer = Trainer(net, x, TrainConfig(retry=retry))
        trainer.rates = {"w": 1e6, "tau": 1e6}  # far too large: the first tries fail
        trainer.step()
        results[retry] = trainer
    assert len(results[0].history) == 1  # both parts rejected, nothing learnt
    assert len(results[40].history) == 3  # both parts accepted after halvings
    assert results[40].history[-1] > results[40].history[0]
    assert results[40].rates["w"] < 1e6 / 2 ** 5  # it did halve several times


@pytest.mark.parametrize("kind", ["glnn", "gnn"])
def test_relative_eps_damps_each_metric_by_its_own_scale(kind):
    x, A = music(12)
    net = ref.Network.initial(kind, n_units=4, d=2, x=x, alphabet_size=A, seed=2)
    run = net.forward(x)
    grads = net.backward(x, run)
    rel, eps = 0.3, 1.0
    tau, _, _ = ref.transition_step(net, x, run, grads, "rbpm", eps=eps, relative_eps=rel)
    m = net.modulus(x, run, grads, "rbpm")
    for j in range(1, 5):
        for y in range(A):
            undamped = ref.transition_metric(net, x, run, m, j, y, eps=0.0)
            K = undamped.shape[0]
            M = undamped + (eps + rel * np.trace(undamped) / K) * np.eye(K)
            assert np.allclose(tau[j, :, y], np.linalg.solve(M, grads.tau[j, :, y]))


def test_tau_prior_keeps_tau_near_its_start_and_raises_the_penalised_objective():
    x, A = music()
    moved = {}
    for kappa in (0.0, 1e4):
        net = FastNetwork.initial("glnn", n_units=5, d=3, x=x, alphabet_size=A, seed=3)
        trainer = Trainer(net, x, TrainConfig(tau_prior=kappa))
        values = [trainer.objective(trainer.net, trainer.run)]
        for _ in range(8):
            trainer.step()
            values.append(trainer.objective(trainer.net, trainer.run))
        assert values == sorted(values)  # the penalised objective never decreases
        moved[kappa] = np.abs(trainer.net.tau - net.tau).sum()
    assert moved[1e4] < 0.2 * moved[0.0]


def test_fit_passes_the_switches_through():
    x, A = music(60)
    cut = len(x) * 4 // 5
    result = training.fit("glnn-qdh-rbpm", x[:cut], x[cut:], A, budget=1.0, sizes=[4],
                          connectivity=[3], eval_every=1,
                          config_options={"retry": 5, "relative_eps": 0.1})
    assert result.best.trainer.config.retry == 5
    steps = [s for s, _ in result.best.trajectory]
    assert steps == list(range(len(steps)))  # a validation point after every step
    with pytest.raises(TypeError):
        training.fit("glnn-qdh-rbpm", x[:cut], x[cut:], A, budget=0.1, sizes=[4],
                     config_options={"nope": 1})
