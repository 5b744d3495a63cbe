"""Hessian-free optimisation (001 Sect. 3.3): the batched models against the reference,
gradients and Gauss-Newton products against finite differences, conjugate gradient, damping."""
import numpy as np
import pytest

from seqzip.reference import lstm as ref
from seqzip.research import hf

KINDS = hf.KINDS


def setup(kind, n=3, A=4, B=3, L=6, seed=0):
    rng = np.random.default_rng(seed)
    theta = hf.initial_parameters(kind, n, A, seed, std=0.5)
    theta += 0.3 * rng.standard_normal(theta.size)  # non-zero biases and output weights too
    X = rng.integers(0, A, (B, L))
    return theta, X, n, A, rng


@pytest.mark.parametrize("kind", KINDS)
def test_batched_forward_matches_the_reference(kind):
    theta, X, n, A, _ = setup(kind)
    p = hf.unflatten(theta, kind, n, A)
    cache = hf.forward(kind, p, X)
    expected = sum(ref.forward(kind, p, np.zeros(n), np.zeros(n), row)[0] for row in X)
    assert -cache.loss == pytest.approx(expected, rel=1e-12)
    # and the reference's gradient (of log-likelihood) is minus ours
    g_ref = sum(hf.flatten(ref.backward(kind, p, ref.forward(kind, p, np.zeros(n),
                                                              np.zeros(n), row)[1]), kind)
                for row in X)
    assert np.allclose(hf.loss_and_gradient(kind, p, X)[1], -g_ref, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_gradient_against_finite_differences(kind):
    theta, X, n, A, rng = setup(kind)
    total, grad = hf.loss_and_gradient(kind, hf.unflatten(theta, kind, n, A), X, chunk=2)
    assert total == pytest.approx(hf.loss(kind, hf.unflatten(theta, kind, n, A), X))
    eps = 1e-6
    for i in rng.choice(theta.size, 25, replace=False):
        e = np.zeros_like(theta)
        e[i] = eps
        fd = (hf.loss(kind, hf.unflatten(theta + e, kind, n, A), X)
              - hf.loss(kind, hf.unflatten(theta - e, kind, n, A), X)) / (2 * eps)
        assert grad[i] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def outputs(kind, theta, X, n, A):
    cache = hf.forward(kind, hf.unflatten(theta, kind, n, A), X)
    return np.log(cache.probs), cache.H


def jacobian_product(kind, theta, X, n, A, v, eps=1e-5):
    plus, minus = outputs(kind, theta + eps * v, X, n, A), outputs(kind, theta - eps * v, X, n, A)
    return [(a - b) / (2 * eps) for a, b in zip(plus, minus)]


@pytest.mark.parametrize("kind", KINDS)
def test_r_forward_is_the_directional_derivative(kind):
    theta, X, n, A, rng = setup(kind)
    v = rng.standard_normal(theta.size)
    p = hf.unflatten(theta, kind, n, A)
    Rlogits, RH = hf.r_forward(kind, p, hf.unflatten(v, kind, n, A), hf.forward(kind, p, X))
    J_logp, J_h = jacobian_product(kind, theta, X, n, A, v)
    q = hf.forward(kind, p, X).probs
    Rlogp = Rlogits - (q * Rlogits).sum(axis=-1, keepdims=True)  # d log-softmax
    assert np.allclose(Rlogp, J_logp, atol=1e-7)
    assert np.allclose(RH, J_h, atol=1e-7)


@pytest.mark.parametrize("kind", KINDS)
def test_gauss_newton_product_against_finite_differences(kind):
    """u.(G + mu G_s)v = (Ju)^T H_L (Jv) + mu (J_h u).(J_h v), every J by finite differences
    (log-softmax outputs suffice: H_L annihilates the constant shift)."""
    theta, X, n, A, rng = setup(kind)
    p = hf.unflatten(theta, kind, n, A)
    cache = hf.forward(kind, p, X)
    u, v = rng.standard_normal(theta.size), rng.standard_normal(theta.size)
    mu = 0.7
    Gv = hf.flatten(hf.gauss_newton_product(kind, p, cache, hf.unflatten(v, kind, n, A), mu),
                    kind)
    Ju, Jhu = jacobian_product(kind, theta, X, n, A, u)
    Jv, Jhv = jacobian_product(kind, theta, X, n, A, v)
    q = cache.probs
    HJv = q * (Jv - (q * Jv).sum(axis=-1, keepdims=True))
    expected = float((Ju * HJv).sum() + mu * (Jhu * Jhv).sum())
    assert float(u @ Gv) == pytest.approx(expected, rel=1e-6)
    # symmetric and positive semi-definite
    Gu = hf.flatten(hf.gauss_newton_product(kind, p, cache, hf.unflatten(u, kind, n, A), mu),
                    kind)
    assert float(u @ Gv) == pytest.approx(float(v @ Gu), rel=1e-9)
    assert float(u @ Gu) >= 0


def test_conjugate_gradient_is_exact_on_a_small_spd_system():
    rng = np.random.default_rng(4)
    M = rng.standard_normal((6, 6))
    A = M @ M.T + 0.1 * np.eye(6)
    b = rng.standard_normal(6)
    result = hf.conjugate_gradient(lambda v: A @ v, b, max_iterations=50, eps=0.0)
    assert np.allclose(result.x, np.linalg.solve(A, b), atol=1e-8)
    assert result.iterations <= 7
    # q(x_i) decreases at every iteration and is reported correctly
    q = np.array(result.q)
    assert (np.diff(q) <= 1e-12).all()
    assert q[-1] == pytest.approx(0.5 * result.x @ A @ result.x - b @ result.x)
    # a warm start from the solution stops at once
    again = hf.conjugate_gradient(lambda v: A @ v, b, np.linalg.solve(A, b))
    assert again.q[0] == pytest.approx(q[-1]) and again.iterations <= 1


def test_conjugate_gradient_progress_rule_and_kept_iterates():
    rng = np.random.default_rng(5)
    d = np.logspace(0, 3, 300)  # the progress rule stops CG long before it converges
    b = rng.standard_normal(300)
    result = hf.conjugate_gradient(lambda v: d * v, b, max_iterations=250, k=10, eps=5e-4)
    assert result.stopped_by == "progress" and 10 < result.iterations < 250
    i, q = result.iterations, result.q
    span = max(10, int(0.1 * i))
    assert (q[i] - q[i - span]) / q[i] < span * 5e-4
    kept = [k for k, _ in result.iterates]
    assert kept[:4] == [1, 2, 3, 4] and kept[-1] == i and kept == sorted(set(kept))
    assert len(kept) < 20  # geometric spacing (1.3^j)


def test_levenberg_marquardt_rules():
    assert hf.levenberg_marquardt(2.0, 0.2) == 3.0
    assert hf.levenberg_marquardt(2.0, float("-inf")) == 3.0
    assert hf.levenberg_marquardt(2.0, float("nan")) == 3.0
    assert hf.levenberg_marquardt(2.0, 0.25) == 2.0 and hf.levenberg_marquardt(2.0, 0.75) == 2.0
    assert hf.levenberg_marquardt(3.0, 0.9) == pytest.approx(2.0)
    assert hf.levenberg_marquardt(1e-9, 0.9) == 1e-8  # floor


@pytest.mark.parametrize("damping", hf.DAMPINGS)
def test_hf_iterations_lower_the_training_loss(damping):
    rng = np.random.default_rng(2)
    x = np.tile(rng.integers(0, 4, 7), 60)  # a period-7 sequence
    X = hf.sequences(x, 20)
    trainer = hf.HFTrainer("mlstm", hf.initial_parameters("mlstm", 6, 4), 6, 4, X,
                           hf.HFConfig(damping=damping))
    f0 = trainer.f
    lam0 = trainer.lam
    for _ in range(4):
        info = trainer.step()
        assert info["cg_iterations"] >= 1
    f = hf.loss("mlstm", hf.unflatten(trainer.theta, "mlstm", 6, 4), X) / X.size
    assert f < 0.8 * f0
    if damping != "line-search":  # LM moved the damping in the direction rho asked for
        rhos = [entry["rho"] for entry in trainer.log]
        assert trainer.lam != lam0 or all(0.25 <= r <= 0.75 for r in rhos)


def test_fit_hf_and_adam_return_reference_parameters():
    rng = np.random.default_rng(3)
    x = np.tile(rng.integers(0, 5, 9), 50)
    for optimizer in ("hf", "adam"):
        result = hf.fit("mrnn", x, x[:90], alphabet_size=5, n_units=5, budget=1.0,
                        seq_len=30, optimizer=optimizer)
        assert result.history[0][0] == 0.0 and len(result.history) >= 2
        assert result.validation_bpc == min(bpc for _, bpc in result.history)
        assert result.validation_bpc < result.history[0][1]
        theta = hf.flatten(result.params, "mrnn")
        assert hf.validation_bits("mrnn", theta, 5, 5, x[:90]) / 90 == result.validation_bpc
        # one stream is the reference's window, scored continuously
        loglik = ref.forward("mrnn", result.params, np.zeros(5), np.zeros(5), x[:90])[0]
        assert hf.validation_bits("mrnn", theta, 5, 5, x[:90], streams=1) == pytest.approx(
            -loglik / np.log(2))
    with pytest.raises(ValueError):
        hf.fit("gru", x, x, alphabet_size=5, n_units=3, budget=1)
    with pytest.raises(ValueError):
        hf.sequences(x[:5], 30)


@pytest.mark.parametrize("optimizer,kind", [("hf", "mlstm"), ("adam", "rnn")])
def test_cli_train_recurrent(tmp_path, optimizer, kind):
    from click.testing import CliRunner

    from seqzip.cli import cli
    from seqzip.research import training

    path = tmp_path / "text.txt"
    path.write_bytes(b"the cat sat on the mat. " * 40)
    out = tmp_path / "m.sqm"
    result = CliRunner().invoke(cli, ["train", str(path), "-o", str(out), "--method", kind,
                                      "--optimizer", optimizer, "--units", "4", "--budget",
                                      "0.5"])
    assert result.exit_code == 0, result.output
    model, alphabet, info = training.load_model(out)
    # a plain "rnn" file loads as the recurrent family, not as Ollivier's RNN
    assert isinstance(model, hf.Recurrent) and model.kind == kind and model.n_units == 4
    assert info["optimizer"] == optimizer
    valid = training.encode(path.read_bytes()[-96:], alphabet)
    assert model.bits(valid, streams=4) / len(valid) == pytest.approx(
        info["validation_bits_per_symbol"])
    bad = CliRunner().invoke(cli, ["train", str(path), "-o", str(tmp_path / "x.sqm"),
                                   "--method", "glnn-qdh-rbpm", "--optimizer", "hf"])
    assert bad.exit_code == 1 and "--optimizer hf applies to" in bad.output
