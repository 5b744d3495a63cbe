"""The last mix (CMConfig.post, post.pxd): after the final stage, one row of weights over that
stage's log-odds and every mixer input, trained by plain gradient steps of rate post / 100000.
Checked against a plain-Python mix of the same kernel's inputs, round trips and deterministic
streams for several rates, the state restored mid-symbol and bad states refused, bounds and
memory."""
import dataclasses
import random

import numpy as np
import pytest

import seqzip
from seqzip._kernels.cm import py_squash, py_stretch
from seqzip.models.cm import CMConfig, CMModel
from tests.helpers import canterbury_file
from tests.kernels.test_cm import kernel
from tests.kernels.test_cm_runs import TEXT, body_sizes, compress, refused_then_restored


def test_bounds_are_refused():
    for bad in (-1, 1001):
        with pytest.raises(ValueError, match="post"):
            CMConfig(post=bad)


@pytest.mark.parametrize("post", [1, 10, 50, 1000])
def test_round_trips(post):
    rng = random.Random(post)
    cases = [b"", b"x", bytes(rng.getrandbits(8) for _ in range(3000)), TEXT,
             bytes(rng.choice(b"ab") for _ in range(2000)), bytes(range(256)) * 4]
    for data in cases:
        stream = compress(data, post=post)
        assert seqzip.decompress(stream) == data
        assert compress(data, post=post) == stream  # deterministic


def test_the_mix_is_the_final_stage_and_the_inputs_weighted_as_documented():
    """A kernel without the last mix gives the final stage's probability (to 2^-16) and the
    inputs, which the last mix does not change; the mix computed from them in Python (w
    from (1, 0, ...), w += rate (bit - p) y, p = squash(w . y) clamped to 16) matches the
    kernel with it, bit for bit to the coder's 2^-16 steps."""
    rate = 50
    plain, mixed = kernel(apm=2), kernel(apm=2, post=rate)
    data = TEXT[:600]
    w = None
    worst = 0.0
    for x in data:
        for depth in range(8):
            q0, q1 = plain.predict_bit(), mixed.predict_bit()
            inputs = plain.mixer_inputs()
            assert np.array_equal(inputs, mixed.mixer_inputs())
            y = np.concatenate([[py_stretch(q0 / 65536.0)], inputs])
            if w is None:
                w = np.zeros(len(y))
                w[0] = 1.0
            dot = min(max(float(sum(wi * yi for wi, yi in zip(w, y))), -16.0), 16.0)
            p = py_squash(dot)
            worst = max(worst, abs(p - q1 / 65536.0))
            bit = (x >> (7 - depth)) & 1
            w += rate / 100000.0 * (bit - p) * y
            plain.update_bit(bit)
            mixed.update_bit(bit)
    # the Python mix reads the final stage rounded to 2^-16: its log-odds differ by < 1e-3
    assert worst < 2e-3
    assert not np.isclose(worst, 0.0)  # the last mix did move away from the final stage


@pytest.fixture
def kennedy() -> bytes:
    return canterbury_file("kennedy.xls")


def test_it_pays_on_binary_data(kennedy):
    """30 KB of kennedy.xls at level 6's binary variant: the stream body is smaller."""
    sizes = body_sizes(kennedy[:30000], 34, "post", (0, 30), table_bits=16)
    assert sizes[1] < sizes[0] * 0.995


def mid_symbol(**fields):
    """Two kernels of ``fields``, the first after 1,500 symbols and one bit of the next, and
    its state there."""
    a, b = kernel(**fields), kernel(**fields)
    for x in TEXT[:1500]:
        a.update(x)
    a.predict_bit()
    a.update_bit(1)
    return a, b, a.get_state()


def test_state_restores_mid_symbol_and_bad_states_are_refused():
    a, b, state = mid_symbol(post=40)
    n = len(a.mixer_inputs()) + 1
    refused_then_restored(a, b, state, (
        ("post.selected", np.array(3), r"post\.selected"),
        ("post.w", np.full(n, np.nan), r"post\.w"),
        ("post.y", np.full(n, np.inf), r"post\.y")))


def test_memory_bounded_and_default_leaves_the_state_alone():
    config = CMConfig(**dict(dataclasses.asdict(CMConfig.for_preset_id(31)), post=10,
                             table_bits=18))
    k = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel
    without = CMModel(dataclasses.replace(config, post=0), alphabet=bytes(range(256)),
                      seed=0).kernel
    n = config._n_inputs  # the mixer's inputs
    assert k.memory_allocated() - without.memory_allocated() == 4 * 8 * (n + 1)
    assert k.memory_allocated() <= config.memory_bytes(256)
    assert config.memory_bytes(256) - dataclasses.replace(config, post=0).memory_bytes(256) \
        == 4 * 8 * (n + 1)
    assert not any(name.startswith("post") for name in kernel().get_state())


# ---------------------------------------------------------------- post_mode (its structure)

STRETCH = [py_stretch((i + 0.5) / 4096.0) for i in range(4096)]  # stretch_p's table


def stretch_fine(p):
    """sse.pxd's interpolated stretch, in the same double operations."""
    pos = p * 4096.0 - 0.5
    if not pos > 0.0:
        return STRETCH[0]
    if pos >= 4095.0:
        return STRETCH[4095]
    i = int(pos)
    return STRETCH[i] + (STRETCH[i + 1] - STRETCH[i]) * (pos - i)


class PyMix:
    """One mix of post.pxd in Python: rows of weights from (1, 0, ...), plain gradient steps
    or the mixer's QDH step (prior curvature 4), the same double operations in the same
    order."""

    def __init__(self, n, rows, qdh, decay, eps):
        self.w = [[1.0] + [0.0] * (n - 1) for _ in range(rows)]
        self.hd = [[4.0 if qdh else 0.0] * n for _ in range(rows)]
        self.hc = [[0.0] * n for _ in range(rows)]
        self.qdh, self.decay, self.eps = qdh, decay, eps

    def predict(self, row, y):
        self.row = row
        dot = 0.0
        for wi, yi in zip(self.w[row], y):
            dot = dot + wi * yi
        self.dot = min(max(dot, -16.0), 16.0)
        self.p = py_squash(self.dot)
        return self.dot

    def train(self, y, rate, bit):
        w, hd, hc = self.w[self.row], self.hd[self.row], self.hc[self.row]
        err, var = bit - self.p, self.p * (1.0 - self.p)
        if not self.qdh:
            for i in range(len(y)):
                w[i] = w[i] + rate * err * y[i]
            return
        for i in range(len(y)):
            hd[i] = self.decay * hd[i] + y[i] * y[i] * var
            hc[i] = self.decay * hc[i] + y[i] * var
        inv = 1.0 / (hd[0] + self.eps)
        bias = err * inv
        for i in range(1, len(y)):
            c = hc[i]
            ci = c * inv
            step = (y[i] * err - err * ci) / (hd[i] + self.eps - c * ci)
            w[i] = w[i] + rate * step
            bias = bias - ci * step
        w[0] = w[0] + rate * bias


def f64(state, name):
    return np.frombuffer(state[name].tobytes(), dtype="=f8")


def post_inputs(state, mode, n_sets, apm, sse, inputs):
    """The last mix's inputs, from a kernel without it (which the mix does not change)."""
    y = [py_stretch(float(state["out.p_final"]))]
    if not mode & 1:
        return y + list(inputs)
    y += [1.0, float(state["final.dot"])] + [float(state[f"set{k}.dot"]) for k in range(n_sets)]
    y += [stretch_fine(o) for o in f64(state, "apm_out")[:apm]]
    if sse:
        if sse & 60:
            y += [stretch_fine(o) for o in f64(state, "sse.out")[:bin(sse & 60).count("1")]]
        if sse & 2:
            y.append(stretch_fine(float(state["sse.p"])))
    return y + (list(inputs) if mode & 64 else [])


def _long(*case):
    return pytest.param(*case, marks=pytest.mark.long)


# CI runs one mode of each row selection (0, 3, 5, and 127 with every bit), the QDH step alone
# (8) and the levels' mode (65); the other six, about 90 s, are ``pytest -m long``
@pytest.mark.parametrize("mode, post, sse", [(0, 50, 0), _long(1, 50, 3), (3, 100, 0),
                                             (5, 100, 3), _long(7, 100, 0), _long(9, 20, 3),
                                             (8, 5, 0), _long(17, 30, 0), _long(33, 30, 0),
                                             _long(2, 50, 0), (65, 30, 3), (127, 20, 19)])
def test_each_mode_mixes_as_a_python_mix_of_the_same_inputs(mode, post, sse):
    """The kernel with the last mix in each mode, bit for bit against a Python mix of the
    inputs a kernel without it computes (its final stage, mixer, sets and stages), the row by
    the depth, the match state or the order-1 byte as the mode says, the rate decaying or
    not, one mix or two averaged in the log-odds."""
    fields = dict(apm=2, sse=sse)
    plain, mixed = kernel(**fields), kernel(post=post, post_mode=mode, **fields)
    config = CMConfig(post=post, post_mode=mode)
    qdh, n_sets = bool(mode & 8), 2
    rate = post / (1000.0 if qdh else 100000.0)
    boost = 15 * rate if mode & 16 else 0.0
    mixes, rows = None, {0: 1, 2: 8, 4: 48, 6: 8}[mode & 6]
    last = 0
    for x in TEXT[:160]:
        for depth in range(8):
            plain.predict_bit()
            mixed.predict_bit()
            state, out = plain.get_state(), mixed.get_state()
            y = post_inputs(state, mode, n_sets, 2, sse, plain.mixer_inputs())
            if mixes is None:
                mixes = [PyMix(len(y), rows, qdh, config.decay, config.eps)
                         for _ in range(2 if mode & 32 else 1)]
            row = (0, depth, int(out["post.selected"]), last >> 5)[(mode & 6) // 2]
            if mode & 6 == 4:  # the match state: 0 none, 1 missed, else 2 + ... (match.pxd)
                length, predicted = mixed.match_state()
                assert (row == 0) == (predicted < 0) and (row < 2 or length > 0)
            dots = [m.predict(row, y) for m in mixes]
            p = mixes[0].p if len(mixes) == 1 else py_squash((dots[0] + dots[1]) * 0.5)
            assert float(out["out.p_final"]) == p
            assert len(f64(out, "post.y")) == len(y)
            bit = (x >> (7 - depth)) & 1
            for m, r in zip(mixes, (rate + boost, (rate + boost) * 4)):
                m.train(y, r, bit)
            boost = boost * 0.9999
            plain.update_bit(bit)
            mixed.update_bit(bit)
        last = x


@pytest.mark.parametrize("mode", [1, 3, 5, 7, 9, 17, 33, 65, 127, 2])
def test_every_mode_round_trips(mode):
    rng = random.Random(mode)
    cases = [b"", b"x", bytes(rng.getrandbits(8) for _ in range(2000)), TEXT,
             bytes(rng.choice(b"ab") for _ in range(1500))]
    for data in cases:
        stream = compress(data, post=30, post_mode=mode, apm=4, sse=19, sets="c12n,match")
        assert seqzip.decompress(stream) == data
        assert compress(data, post=30, post_mode=mode, apm=4, sse=19,
                        sets="c12n,match") == stream  # deterministic


def test_mode_bounds_are_refused_and_mode_0_is_today():
    for bad in (-1, 128):
        with pytest.raises(ValueError, match="post_mode"):
            CMConfig(post_mode=bad)
    # mode 0 is the default, so the streams pinned before the field (tests/test_container.py:
    # presets 46-60, their last mix at post_mode 0) hold today's mix; another mode is another
    # stream
    assert CMConfig().post_mode == 0 and CMConfig.for_preset_id(49).post_mode == 0
    assert compress(TEXT, post=30, post_mode=65) != compress(TEXT, post=30)


def test_mode_state_restores_mid_symbol_and_bad_states_are_refused():
    a, b, state = mid_symbol(post=40, post_mode=127, apm=2, sse=19)
    n = len(f64(state, "post.y"))
    hd = np.full(8 * n, 4.0)
    hd[5] = -1.0
    refused_then_restored(a, b, state, (
        ("post.selected", np.array(8), r"post\.selected"),
        ("post2.selected", np.array(-1), r"post2\.selected"),
        ("post2.w", np.full(8 * n, np.nan), r"post2\.w"),
        ("post.hd", hd, r"post\.hd"),
        ("post.boost", np.array([np.inf]), r"post\.boost"),
        ("post.boost", np.array([-1.0]), r"post\.boost")))


@pytest.mark.parametrize("mode", [0, 1, 3, 5, 7, 33, 63, 65])
def test_mode_memory_is_counted_exactly(mode):
    base = dict(dataclasses.asdict(CMConfig.for_preset_id(46)), table_bits=18)
    config = CMConfig(**dict(base, post=10, post_mode=mode))
    without = CMConfig(**dict(base, post=0))
    k = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel
    k0 = CMModel(without, alphabet=bytes(range(256)), seed=0).kernel
    # inputs: mode 0 the final stage and the mixer's; else the final stage, a bias, the
    # mixer, its 6 sets, 4 APM stages, sse 19's one stage and its mix
    n = config._n_inputs + 1 if not mode & 1 else \
        3 + 6 + 4 + 1 + 1 + (config._n_inputs if mode & 64 else 0)
    rows = {0: 1, 2: 8, 4: 48, 6: 8}[mode & 6]
    expected = 8 * n + 3 * 8 * rows * n * (2 if mode & 32 else 1)
    assert k.memory_allocated() - k0.memory_allocated() == expected
    assert config.memory_bytes(256) - without.memory_bytes(256) == expected
