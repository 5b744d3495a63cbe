"""LSTM, mLSTM and mRNN trained online: the Cython kernel against the NumPy reference and
finite differences, the optimisers, the initialisations, and coding round trips."""
import dataclasses

import numpy as np
import pytest

import seqzip
from tests.helpers import compress_in_frames
from seqzip import corpora
from seqzip.reference import lstm as ref
from seqzip.models import make_config
from seqzip.models.lstm import RNNConfig, initial_theta, model_for_cell

CELLS = ["lstm", "mlstm", "mrnn"]


def trained_kernel(cell, experts="", n=5, window=12, symbols=200, seed=0, **kw):
    """A kernel after ``symbols`` symbols of music, so that its window, state and weights
    (large initial weights, 25+ training steps) are far from trivial."""
    data = corpora.generate("music", 20, seed=seed).data[:symbols]
    alphabet = sorted(set(data))
    kw.setdefault("lr", 0.02)
    config = RNNConfig(hidden=n, window=window, interval=7, experts=experts, init_std=0.5, **kw)
    model = model_for_cell(cell, config, bytes(range(len(alphabet))), seed=seed)
    for b in data:
        model.predict()
        model.update(alphabet.index(b))
    return model.kernel


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("experts", ["", "ctw3+order2"])
def test_cython_forward_equals_numpy_reference(cell, experts):
    kernel = trained_kernel(cell, experts)
    x, h0, c0, offset = kernel.py_window()
    params = kernel.parameters()
    loglik, cache = ref.forward(cell, params, h0, c0, x, offset)
    assert kernel.py_window_objective() == pytest.approx(loglik, rel=1e-12, abs=1e-12)
    # and every state along the way, one cell step at a time
    h, c = h0, c0
    for j in range(len(x) - 1):
        h, c = kernel.py_step(h, c, int(x[j]))
        np.testing.assert_allclose(h, cache["hs"][j + 1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cell", CELLS)
def test_cython_gradient_equals_reference_and_finite_differences(cell):
    kernel = trained_kernel(cell, "ctw3")
    x, h0, c0, offset = kernel.py_window()
    params = kernel.parameters()
    _, cache = ref.forward(cell, params, h0, c0, x, offset)
    expected = ref.backward(cell, params, cache)
    flat = np.concatenate([expected[name].ravel() for name in kernel.layout()])
    grad = kernel.py_window_gradient()
    np.testing.assert_allclose(grad, flat, rtol=1e-10, atol=1e-12)
    theta = kernel.flat_parameters()
    rng = np.random.default_rng(1)
    h = 1e-6
    for i in rng.choice(len(theta), 60, replace=False):
        up, down = theta.copy(), theta.copy()
        up[i] += h
        down[i] -= h
        numeric = (kernel.py_window_objective(up) - kernel.py_window_objective(down)) / (2 * h)
        assert grad[i] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (i, grad[i], numeric)


@pytest.mark.parametrize("cell", CELLS)
def test_reference_gradient_matches_finite_differences(cell):
    rng = np.random.default_rng(2)
    n, A, L = 3, 4, 6
    params = ref.initial_parameters(cell, n, A, rng, std=0.6)
    params["Wo"] = 0.5 * rng.standard_normal(params["Wo"].shape)
    params["b"] = 0.3 * rng.standard_normal(params["b"].shape)
    x = rng.integers(0, A, L)
    h0, c0, offset = rng.standard_normal(n) * 0.5, rng.standard_normal(n), rng.standard_normal((L, A))
    _, cache = ref.forward(cell, params, h0, c0, x, offset)
    grads = ref.backward(cell, params, cache)
    for name, value in params.items():
        for index in np.ndindex(value.shape):
            shifted = {k: v.copy() for k, v in params.items()}
            shifted[name][index] += 1e-6
            up = ref.forward(cell, shifted, h0, c0, x, offset)[0]
            shifted[name][index] -= 2e-6
            down = ref.forward(cell, shifted, h0, c0, x, offset)[0]
            assert grads[name][index] == pytest.approx((up - down) / 2e-6, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("optimizer", ["adam", "riemannian"])
@pytest.mark.parametrize("cell", CELLS)
def test_a_small_training_step_raises_the_window_likelihood(cell, optimizer):
    """Both steps are ascent directions (Adam's first step is sign-like; M^-1 g with M
    positive definite), so a small one must raise the window's log-likelihood."""
    kernel = trained_kernel(cell, "", optimizer=optimizer, lr=1e-5)
    before = kernel.py_window_objective()
    kernel.py_train()
    after = kernel.py_window_objective()
    assert after > before


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("experts", ["", "ctw3+order2"])
def test_training_reuses_the_coding_pass_bit_for_bit(cell, experts):
    """With window == interval and Adam a training step takes the window's activations from
    the coding pass (the weights have not moved since the last step) instead of a second
    forward pass: every prediction and the weights stay exactly those of the recomputation."""
    data = corpora.generate("music", 20, seed=5).data[:300]
    alphabet = sorted(set(data))
    config = RNNConfig(hidden=5, window=7, interval=7, experts=experts, init_std=0.5, lr=0.02)
    models = [model_for_cell(cell, config, bytes(range(len(alphabet))), seed=1) for _ in "ab"]
    assert models[0].kernel.reuse
    models[1].kernel.reuse = False
    for b in data:
        a, b_ = (m.predict() for m in models)
        assert np.array_equal(a, b_)
        for m in models:
            m.update(alphabet.index(b))
    assert models[0].kernel.steps == len(data) // 7
    assert np.array_equal(models[0].kernel.flat_parameters(), models[1].kernel.flat_parameters())
    windowed = model_for_cell(cell, dataclasses.replace(config, window=8), b"ab", 1).kernel
    riemannian = model_for_cell(cell, dataclasses.replace(config, optimizer="riemannian"), b"ab", 1)
    assert not windowed.reuse and not riemannian.kernel.reuse


@pytest.mark.parametrize("cell", ["lstm", "mlstm"])
def test_orthogonal_initialisation(cell):
    config = RNNConfig(hidden=6, init="orthogonal", experts="")
    model = model_for_cell(cell, config, bytes(range(5)), seed=3)
    params = model.kernel.parameters()
    blocks = [params["R"][:, k * 6:(k + 1) * 6] for k in range(4)]
    if cell == "mlstm":
        blocks.append(params["Wmh"])
    for block in blocks:
        np.testing.assert_allclose(block @ block.T, np.eye(6), atol=1e-12)
    assert not params["b"].any() and not params["Wo"].any()
    normal = model_for_cell(cell, RNNConfig(hidden=6, experts=""), bytes(range(5)),
                            seed=3).kernel.parameters()
    assert 0.07 < normal["E"].std() < 0.13  # the thesis's N(0, 0.1)


def test_initialisation_depends_on_the_seed_only():
    config = RNNConfig(hidden=4, experts="")
    a = initial_theta("mlstm", config, 3, 9)
    assert np.array_equal(a, initial_theta("mlstm", config, 3, 9))
    assert not np.array_equal(a, initial_theta("mlstm", config, 3, 10))
    model = model_for_cell("mlstm", config, bytes(range(3)), seed=9)
    assert np.array_equal(a, model.kernel.flat_parameters())


@pytest.mark.parametrize("cell", CELLS)
def test_kernel_layout_is_the_references(cell):
    """The kernel's flat parameter layout and the reference's are written separately (the
    reference is an independent definition): they must agree."""
    from seqzip._kernels.lstm import layout
    assert list(layout(cell, 7, 11).items()) == list(ref.shapes(cell, 7, 11).items())


def test_levels_have_matched_parameter_counts():
    """At each level the three cells have the same number of parameters within 3% (for 90
    symbols), so that comparisons between them are fair."""
    for level in range(1, 10):
        counts = [ref.count_parameters(cell, make_config(cell, level).hidden, 90)
                  for cell in CELLS]
        assert max(counts) < 1.03 * min(counts), (level, counts)


# levels 1-5 of every cell and 9 of the mLSTM (cm's level 9 runs one) in CI; the rest, about
# 80 s, are ``pytest -m long``
@pytest.mark.parametrize("cell, level", [
    pytest.param(cell, level, marks=pytest.mark.long) if level > 5 and (cell, level) != ("mlstm", 9)
    else (cell, level) for level in range(1, 10) for cell in CELLS])
def test_round_trip_every_level(cell, level):
    data = corpora.generate("text", 2500, seed=level).data + bytes(range(256))
    packed = seqzip.compress(data, model=cell, level=level)
    assert seqzip.decompress(packed) == data


@pytest.mark.parametrize("cell", CELLS)
def test_round_trip_riemannian_and_orthogonal_with_frames(cell):
    import io
    data = corpora.generate("insertions", 30, seed=2).data
    config = dataclasses.replace(make_config(cell, 1), hidden=6, window=10, interval=5,
                                 optimizer="riemannian", init="orthogonal")
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model=cell, config=config, frame_size=777)
    assert seqzip.decompress(out.getvalue()) == data


def megabyte(kind):
    from tests.models.test_glnn import one_megabyte
    return one_megabyte(kind)


@pytest.mark.parametrize("kind", ["text", "binary"])
def test_round_trip_across_frames_mlstm_fastest_level(kind):
    """64 KB over four frames; 1 MB at every level of every cell is ``pytest -m long``."""
    data = megabyte(kind)[:1 << 16]
    packed = compress_in_frames(data, "mlstm", 1, 1 << 14)
    assert seqzip.decompress(packed) == data


@pytest.mark.long
@pytest.mark.parametrize("kind", ["text", "binary"])
def test_megabyte_round_trip_mlstm_fastest_level(kind):
    data = megabyte(kind)
    assert seqzip.decompress(seqzip.compress(data, model="mlstm", level=1)) == data


@pytest.mark.long
@pytest.mark.parametrize("kind", ["text", "binary"])
@pytest.mark.parametrize("level", range(1, 10))
@pytest.mark.parametrize("cell", CELLS)
def test_megabyte_round_trip_every_level(cell, level, kind):
    """Hours on two cores: ``pytest -m long``, not CI."""
    data = megabyte(kind)
    assert seqzip.decompress(seqzip.compress(data, model=cell, level=level)) == data


@pytest.mark.parametrize("bad", [dict(optimizer="sgd"), dict(init="zeros"), dict(hidden=0),
                                 dict(window=1), dict(experts="ppm")])
def test_bad_configs_are_rejected(bad):
    with pytest.raises(ValueError):
        RNNConfig(**bad)


# --- OINIT and OPEN (002 Sect. II) --------------------------------------------------------------

def test_new_fields_keep_old_headers_and_serialisations():
    """Configs that leave OINIT and OPEN at their defaults serialise as before the fields
    existed, and such headers parse back to the old behaviour."""
    from seqzip.models import config_from_bytes, config_to_bytes
    from seqzip.models.lstm import MLSTMConfig

    custom = MLSTMConfig(hidden=12, optimizer="riemannian", experts="order2")
    data = config_to_bytes(custom)
    names = [f.name for f in dataclasses.fields(MLSTMConfig)]
    assert len(eval(data)) == len(names) - 3  # the JSON array of the old field set
    assert config_from_bytes(MLSTMConfig, data) == custom
    with_oinit = dataclasses.replace(custom, oinit=True, open_penalty=0.5)
    data = config_to_bytes(with_oinit)
    assert len(eval(data.replace(b"true", b"True"))) == len(names)
    assert config_from_bytes(MLSTMConfig, data) == with_oinit
    with pytest.raises(ValueError):
        config_from_bytes(MLSTMConfig, b"[1,2]")


@pytest.mark.parametrize("cell", CELLS)
def test_oinit_makes_every_recurrent_block_orthogonal(cell):
    from seqzip.models.lstm import recurrent_blocks
    from seqzip.reference.relu_rnn import orthogonality_loss

    config = RNNConfig(hidden=16, oinit=True, experts="")
    model = model_for_cell(cell, config, bytes(range(7)), seed=2)
    blocks = recurrent_blocks(cell, model.kernel.parameters())
    assert len(blocks) == {"lstm": 4, "mlstm": 5, "mrnn": 2}[cell]
    assert all(orthogonality_loss(W) < 1e-6 for W in blocks.values())
    plain = model_for_cell(cell, dataclasses.replace(config, oinit=False), bytes(range(7)), 2)
    assert all(orthogonality_loss(W) > 1.0 for W in plain.recurrent_matrices().values())


@pytest.mark.parametrize("cell", CELLS)
def test_open_penalty_joins_the_gradient(cell):
    from seqzip.models.lstm import recurrent_blocks
    from seqzip.reference.relu_rnn import orthogonality_gradient

    kernel = trained_kernel(cell, open_penalty=0.7)
    params = kernel.parameters()
    plain = kernel.py_window_gradient()
    penalised = kernel.py_penalised_gradient()
    want = {name: np.zeros_like(v) for name, v in params.items()}
    n = params["R"].shape[0]
    for name, W in recurrent_blocks(cell, params).items():
        if name == "Wmh":
            want["Wmh"] -= 0.7 * orthogonality_gradient(W)
        else:
            k = list(recurrent_blocks(cell, params)).index(name)
            want["R"][:, k * n:(k + 1) * n] -= 0.7 * orthogonality_gradient(W)
    flat = np.concatenate([want[name].ravel() for name in kernel.layout()])
    np.testing.assert_allclose(penalised - plain, flat, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cell", CELLS)
def test_round_trip_with_oinit_and_open(cell):
    data = corpora.generate("english", 3000, seed=4).data
    config = dataclasses.replace(make_config(cell, 1), oinit=True, open_penalty=0.01)
    import io

    from seqzip import api
    out = io.BytesIO()
    api.compress_file(io.BytesIO(data), out, model=cell, config=config)
    assert seqzip.decompress(out.getvalue()) == data
