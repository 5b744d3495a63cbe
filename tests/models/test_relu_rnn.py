"""ReLU RNN trained online by path-SGD or SGD: the kernel against the NumPy reference and
finite differences, kappa, the steps of eq. 8, OINIT and OPEN in the kernel, round trips."""
import dataclasses
import io

import numpy as np
import pytest

import seqzip
from seqzip import api, corpora
from seqzip._kernels import relu_rnn as kernels
from seqzip.models import make_config
from seqzip.models.relu_rnn import ReLURNNConfig, ReLURNNModel, initial_theta
from seqzip.reference import relu_rnn as ref


def trained_kernel(experts="", n=5, window=12, symbols=200, seed=0, **kw):
    """A kernel after ``symbols`` symbols of music (25+ training steps)."""
    data = corpora.generate("music", 20, seed=seed).data[:symbols]
    alphabet = sorted(set(data))
    kw.setdefault("lr", 0.02)
    kw.setdefault("sgd_lr", 0.02)
    config = ReLURNNConfig(hidden=n, window=window, interval=7, experts=experts, init_std=0.5,
                           init_radius=1.2, **kw)
    model = ReLURNNModel(config, bytes(range(len(alphabet))), seed)
    for b in data:
        model.predict()
        model.update(alphabet.index(b))
    return model.kernel


@pytest.mark.parametrize("experts", ["", "ctw3+order2"])
@pytest.mark.parametrize("optimizer", ["path-sgd", "sgd"])
def test_forward_and_gradient_equal_reference(experts, optimizer):
    kernel = trained_kernel(experts, optimizer=optimizer)
    assert kernel.steps > 20
    x, h0, offset = kernel.py_window()
    params = kernel.parameters()
    loglik, cache = ref.forward(params, h0, x, offset if experts else None)
    assert kernel.py_window_objective() == pytest.approx(loglik, rel=1e-12, abs=1e-12)
    expected = ref.flatten(ref.backward(params, cache))
    np.testing.assert_allclose(kernel.py_window_gradient(), expected, rtol=1e-10, atol=1e-12)


def test_gradient_against_finite_differences():
    kernel = trained_kernel("order2")
    grad = kernel.py_window_gradient()
    theta = kernel.flat_parameters()
    h = 1e-6
    for i in np.random.default_rng(1).choice(len(theta), 60, replace=False):
        up, down = theta.copy(), theta.copy()
        up[i] += h
        down[i] -= h
        numeric = (kernel.py_window_objective(up) - kernel.py_window_objective(down)) / (2 * h)
        assert grad[i] == pytest.approx(numeric, rel=1e-5, abs=1e-8), i


def test_kernel_kappa_is_the_references_kappa1():
    kernel = trained_kernel()
    k1, _ = ref.kappa(kernel.parameters(), kernel.window)
    np.testing.assert_allclose(kernel.py_kappa(), ref.flatten(k1), rtol=1e-12)


@pytest.mark.parametrize("optimizer, penalty", [("path-sgd", 0.0), ("sgd", 0.0),
                                                ("path-sgd", 0.3), ("sgd", 0.3)])
def test_training_step_is_eq8_or_sgd(optimizer, penalty):
    """One step: the clipped gradient, OPEN's penalty, then eq. 8 (divided by kappa(1)) or
    plain SGD, against the reference."""
    kernel = trained_kernel(optimizer=optimizer, open_penalty=penalty, clip=0.5)
    params = kernel.parameters()
    x, h0, _ = kernel.py_window()
    _, cache = ref.forward(params, h0, x)
    grads = ref.backward(params, cache)
    norm = np.sqrt(sum((g ** 2).sum() for g in grads.values()))
    grads = {k: g * min(1.0, 0.5 / norm) for k, g in grads.items()}
    assert norm > 0.5  # the clip acts
    grads["R"] = grads["R"] - penalty * ref.orthogonality_gradient(params["R"])
    if optimizer == "path-sgd":
        want = ref.path_sgd_step(params, grads, kernel.window, 0.02, floor=1e-6)
    else:
        want = {k: params[k] + 0.02 * grads[k] for k in params}
    kernel.py_train()
    np.testing.assert_allclose(kernel.flat_parameters(), ref.flatten(want), rtol=1e-11,
                               atol=1e-13)


def test_kernel_oinit_converges_on_random_64x64():
    rng = np.random.default_rng(4)
    for std in (0.1, 0.3):  # 0.3: singular values near 4.8, where the plain rate 0.1 diverges
        M = std * rng.standard_normal((64, 64))
        steps = kernels.oinit_matrix(M)
        assert 0 < steps < 1000
        assert kernels.orthogonality_loss(M) < 1e-6
        assert ref.orthogonality_loss(M) < 1e-6


def test_kernel_oinit_follows_the_reference_descent():
    M = 0.1 * np.random.default_rng(5).standard_normal((16, 16))
    want, steps = ref.oinit(M.copy())
    got = M.copy()
    assert kernels.oinit_matrix(got) == steps
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def test_kernel_penalty_gradient_against_finite_differences():
    M = 0.5 * np.random.default_rng(6).standard_normal((6, 6))
    grad = kernels.orthogonality_penalty_gradient(M)
    np.testing.assert_allclose(grad, ref.orthogonality_gradient(M), rtol=1e-12)
    for index in np.ndindex(6, 6):
        up, down = M.copy(), M.copy()
        up[index] += 1e-6
        down[index] -= 1e-6
        numeric = (kernels.orthogonality_loss(up) - kernels.orthogonality_loss(down)) / 2e-6
        assert grad[index] == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_oinit_in_the_model_makes_r_orthogonal():
    config = ReLURNNConfig(hidden=24, oinit=True, experts="")
    theta = initial_theta(config, 5, seed=3)
    R = ref.unflatten(theta, 24, 5)["R"]
    assert ref.orthogonality_loss(R) < 1e-6
    plain = ref.unflatten(initial_theta(dataclasses.replace(config, oinit=False), 5, 3), 24, 5)
    assert ref.orthogonality_loss(plain["R"]) > 1.0


@pytest.mark.parametrize("changes", [{}, {"optimizer": "sgd"}, {"oinit": True},
                                     {"open_penalty": 0.1}])
def test_round_trip(changes):
    data = corpora.generate("english", 6000, seed=2).data
    config = dataclasses.replace(make_config("relu-rnn", 2), **changes)
    out = io.BytesIO()
    api.compress_file(io.BytesIO(data), out, model="relu-rnn", config=config, seed=4)
    packed = out.getvalue()
    assert seqzip.decompress(packed) == data
    assert len(packed) < 0.5 * len(data)


def test_level_round_trip_and_learning():
    data = corpora.generate("english", 20_000, seed=1).data
    packed = seqzip.compress(data, model="relu-rnn", level=1)
    assert seqzip.decompress(packed) == data


def test_network_alone_learns_with_both_optimizers():
    """Without experts, the network beats the uniform code on text, under either optimizer."""
    data = corpora.generate("english", 8000, seed=3).data
    alphabet = sorted(set(data))
    for optimizer in ("path-sgd", "sgd"):
        model = ReLURNNModel(ReLURNNConfig(hidden=32, experts="", optimizer=optimizer,
                                           lr=10.0, sgd_lr=0.1), bytes(alphabet), 0)
        bits = 0.0
        for b in data:
            bits -= np.log2(model.predict()[alphabet.index(b)])
            model.update(alphabet.index(b))
        assert bits / len(data) < 0.75 * np.log2(len(alphabet)), optimizer


@pytest.mark.parametrize("bad", [{"optimizer": "adam"}, {"hidden": 0}, {"open_penalty": -1.0},
                                 {"oinit": True, "init_radius": 0.0}, {"kappa_floor": 0.0}])
def test_bad_config(bad):
    with pytest.raises(ValueError):
        ReLURNNConfig(**bad)
