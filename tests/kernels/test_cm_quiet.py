"""``mix_skip``: a QDH weight set whose error on a bit is below the threshold learns its
running curvature from the bit and keeps its weights (mixer.pxd's ``mixer_curvature``); the
other sets take their full step.  Level 6 (preset 42) uses it."""
import io

import numpy as np
import pytest

import seqzip
from seqzip import corpora
from seqzip._kernels import cm
from seqzip.header import parse_header
from seqzip.models.base import config_from_bytes, config_to_bytes
from seqzip.models.cm import CMConfig

DECAY, EPS, RATE = 0.999, 10.0, 0.5


@pytest.mark.parametrize("m", [1, 2, 6])
@pytest.mark.parametrize("n", [1, 7, 54, 300])  # 300: wider than MAX_ROW, one set at a time
def test_quiet_sets_learn_their_curvature_only(m, n):
    rng = np.random.default_rng(7 * m + n)
    rows, mix_skip = 3, 0.45
    w = rng.normal(size=(m, rows, n)) * 0.4
    hd, hc = np.full((m, rows, n), 4.0), rng.normal(size=(m, rows, n)) * 0.1
    w1, hd1, hc1 = w.copy(), hd.copy(), hc.copy()
    skip = 1 if m > 2 else -1  # a gated set's place: predicted, not trained
    quiet = loud = 0
    for t in range(60):
        x = np.concatenate([[1.0], rng.normal(size=n - 1)])[:n]
        bit = int(rng.random() < 0.7)
        sel = rng.integers(0, rows, size=m).astype(np.int32)
        dots, ps = cm.py_mixer_sets_step(w, hd, hc, sel, x, bit, "qdh", RATE, DECAY, EPS,
                                         skip=skip, mix_skip=mix_skip)
        for k in range(m):
            r = sel[k]
            if k == skip:
                continue
            if (bit - ps[k]) ** 2 < mix_skip * mix_skip:
                quiet += 1
                var = ps[k] * (1.0 - ps[k])
                hd1[k, r] = DECAY * hd1[k, r] + x * x * var
                hc1[k, r] = DECAY * hc1[k, r] + x * var
            else:
                loud += 1
                dot, p = cm.py_mixer_step(w1[k, r], hd1[k, r], hc1[k, r], x, bit, "qdh", RATE,
                                          DECAY, EPS)
                assert dots[k] == dot and ps[k] == p
        assert np.array_equal(w, w1) and np.array_equal(hd, hd1) and np.array_equal(hc, hc1)
    assert quiet > 0 and loud > 0  # both kinds of step were taken


def test_no_threshold_is_the_full_step():
    rng = np.random.default_rng(3)
    w = rng.normal(size=(4, 2, 9)) * 0.4
    hd, hc = np.full(w.shape, 4.0), rng.normal(size=w.shape) * 0.1
    w0 = w.copy()
    x = np.concatenate([[1.0], rng.normal(size=8)])
    cm.py_mixer_sets_step(w, hd, hc, np.zeros(4, np.int32), x, 1, "qdh", mix_skip=0.0)
    assert not np.array_equal(w[:, 0], w0[:, 0])  # every set stepped
    assert np.array_equal(w[:, 1], w0[:, 1])  # the rows not selected stayed


def test_config_checks_and_serialises_mix_skip():
    with pytest.raises(ValueError, match="mix_skip"):
        CMConfig(mix_skip=0.6)
    with pytest.raises(ValueError, match="mix_skip"):
        CMConfig(mix_skip=-0.1)
    with pytest.raises(ValueError, match="QDH"):
        CMConfig(mix_skip=0.01, optimizer="sgd")
    c = CMConfig(mix_skip=0.005)
    assert config_from_bytes(CMConfig, config_to_bytes(c)) == c
    assert c.spec.mix_skip == 0.005
    # a config without it serialises as the builds before the field did (one value fewer)
    before = CMConfig(fold_case=1)  # the generation before mix_skip's
    assert config_to_bytes(before).count(b",") == \
        config_to_bytes(CMConfig(fold_case=1, mix_skip=0.005)).count(b",") - 1


def test_level_6_skips_and_round_trips():
    six = CMConfig.for_level(6)
    assert six.mix_skip == 0.005 and CMConfig.PRESET_IDS[6] == 42
    assert CMConfig.for_preset_id(43) == CMConfig(**dict(CMConfig.PRESETS[42], fold_case=1))
    data = corpora.generate("markov2", 6000, seed=3).data
    quiet = seqzip.compress(data, level=6)
    assert seqzip.decompress(quiet) == data
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out,
                         config=CMConfig(**dict(CMConfig.PRESETS[42], mix_skip=0.0)))
    loud = out.getvalue()
    # the payloads (what follows each header: the two headers differ anyway, a preset id
    # against a whole config) differ: the threshold changed the steps ...
    assert quiet[parse_header(quiet)[1]:] != loud[parse_header(loud)[1]:]
    assert abs(len(quiet) - len(loud)) <= 0.01 * len(loud)  # ... and cost little
