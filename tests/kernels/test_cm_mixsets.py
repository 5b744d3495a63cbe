"""The mixer's sets run together (mixer.pxd's ``mixer_predict_sets`` and ``mixer_train_sets``:
the dot products and the QDH bias sums interleaved across sets, for speed) give the bits of
each set run alone (``mixer_predict`` then ``mixer_train``, checked against a numpy reference
in test_cm.py): the streams depend on it."""
import numpy as np
import pytest

from seqzip._kernels import cm


def _sets(rng, m, rows, n, optimizer):
    w = rng.normal(size=(m, rows, n)) * 0.4
    hd = np.full((m, rows, n), 4.0) if optimizer == "qdh" else rng.random((m, rows, n))
    hc = rng.normal(size=(m, rows, n)) * 0.1 if optimizer == "qdh" else rng.random((m, rows, n))
    return w, hd, hc


@pytest.mark.parametrize("optimizer", ["qdh", "sgd", "adam"])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 6, 7, 8])
@pytest.mark.parametrize("n", [1, 2, 7, 54, 96])
def test_sets_together_are_the_sets_one_by_one(optimizer, m, n):
    rng = np.random.default_rng(100 * m + n)
    rows = 3
    w, hd, hc = _sets(rng, m, rows, n, optimizer)
    w1, hd1, hc1 = w.copy(), hd.copy(), hc.copy()
    skip = -1 if m < 3 else 1  # a gated set's place: predicted, not trained
    for t in range(40):
        x = np.concatenate([[1.0], rng.normal(size=n - 1) * 3])[:n]
        if t % 7 == 3:  # clamped dot products (and squash's ends)
            x = x * 1e3
        bit = int(rng.random() < 0.6)
        sel = rng.integers(0, rows, size=m).astype(np.int32)
        b1t, b2t = 0.9 ** (t + 1), 0.999 ** (t + 1)
        dots, ps = cm.py_mixer_sets_step(w, hd, hc, sel, x, bit, optimizer, 0.5, 0.999, 10.0,
                                         b1t, b2t, skip)
        for k in range(m):
            if k == skip:
                wk, hdk, hck = w1[k, sel[k]].copy(), hd1[k, sel[k]].copy(), hc1[k, sel[k]].copy()
                dot, p = cm.py_mixer_step(wk, hdk, hck, x, bit, optimizer, 0.5, 0.999, 10.0,
                                          b1t, b2t)  # its prediction; the step thrown away
            else:
                dot, p = cm.py_mixer_step(w1[k, sel[k]], hd1[k, sel[k]], hc1[k, sel[k]], x, bit,
                                          optimizer, 0.5, 0.999, 10.0, b1t, b2t)
            assert dots[k] == dot and ps[k] == p  # the same bits
        assert np.array_equal(w, w1) and np.array_equal(hd, hd1) and np.array_equal(hc, hc1)
    assert not np.array_equal(w[0], _sets(np.random.default_rng(100 * m + n), m, rows, n,
                                          optimizer)[0][0])  # the weights did move


def test_sets_step_refuses_bad_shapes():
    rng = np.random.default_rng(0)
    w, hd, hc = _sets(rng, 2, 3, 4, "qdh")
    x = np.ones(4)
    with pytest.raises(ValueError):
        cm.py_mixer_sets_step(w, hd, hc, np.zeros(2, np.int32), x[:3], 1)
    with pytest.raises(ValueError):
        cm.py_mixer_sets_step(w, hd, hc, np.array([0, 3], np.int32), x, 1)
    with pytest.raises(ValueError):
        cm.py_mixer_sets_step(w, hd, hc, np.zeros(3, np.int32), x, 1)
    w9, hd9, hc9 = _sets(rng, 9, 1, 4, "qdh")
    with pytest.raises(ValueError):
        cm.py_mixer_sets_step(w9, hd9, hc9, np.zeros(9, np.int32), x, 1)
