"""The context-mixing kernel's parts, each on its own: bit histories, stretch and squash, the
hash table's budget, the match, word and record models, forced bits, determinism."""
import dataclasses
import math

import numpy as np
import pytest

from seqzip._kernels import cm
from seqzip.models.cm import CMConfig


def kernel(alphabet=bytes(range(256)), **fields):
    base = dict(orders="2,3,4", match=4, match2=0, word=1, sparse=0, record=0, indirect=0,
                experts="", sets="node,match", layer2=True, apm=2, table_bits=14,
                history_bits=16)
    base.update(fields)
    return cm.CMKernel(CMConfig(**base).spec, bytes(alphabet))


def feed(k, data: bytes, alphabet=bytes(range(256))):
    index = {b: i for i, b in enumerate(alphabet)}
    for b in data:
        k.update(index[b])


def resumes(a, b, state, rest: bytes) -> bool:
    """Whether kernel ``b``, given kernel ``a``'s ``state``, goes on as ``a`` does over
    ``rest`` (the same prediction after it)."""
    b.set_state(state)
    feed(a, rest)
    feed(b, rest)
    return a.predict_bit() == b.predict_bit()


def test_bit_histories_count_and_forget():
    states = cm.bit_history_states()
    assert len(states) <= 256 and states[0][:2] == (0, 0)
    for n0, n1, last, nxt0, nxt1 in states:
        m0, m1 = states[nxt1][:2]  # a 1: n1 grows, a large n0 is halved
        assert m1 == min(n1 + 1, 30) and m0 == (n0 // 2 + 1 if n0 > 2 else n0)
        m0, m1 = states[nxt0][:2]
        assert m0 == min(n0 + 1, 30) and m1 == (n1 // 2 + 1 if n1 > 2 else n1)
        if last:  # short mixed histories remember their last bit
            assert n0 and n1 and n0 + n1 <= 8
            assert states[nxt1][2] in (0, 2) and states[nxt0][2] in (0, 1)
    s = 0
    for _ in range(100):
        s = states[s][4]
    assert states[s][:2] == (0, 30)  # a long run of ones saturates
    for _ in range(3):
        s = states[s][3]
    assert states[s][:2] == (3, 5)  # three zeros: 30 -> 16 -> 9 -> 5: the ones fade fast


@pytest.mark.parametrize("x", [-20.0, -7.3, -1.0, 0.0, 0.004, 2.5, 9.9, 30.0])
def test_squash_and_stretch(x):
    assert cm.py_squash(x) == pytest.approx(1 / (1 + math.exp(-max(min(x, 16), -16))),
                                           abs=2e-5)
    p = 1 / (1 + math.exp(-x))
    if 1e-3 < p < 1 - 1e-3:
        assert cm.py_stretch(p) == pytest.approx(x, abs=0.02)


def test_the_hash_table_never_grows_past_its_budget():
    k = kernel(table_bits=12)
    before = k.memory_allocated()
    rng = np.random.default_rng(0)
    feed(k, rng.integers(0, 256, 30000, dtype=np.uint8).tobytes())
    assert k.memory_allocated() == before
    assert 0 < k.table_slots_used() <= 1 << 12  # full, and still within its 2^12 slots
    assert k.table_slots_used() > (1 << 12) * 0.9


def test_match_model_follows_a_long_repeat_with_rising_confidence():
    rng = np.random.default_rng(1)
    block = rng.integers(0, 256, 4000, dtype=np.uint8).tobytes()
    k = kernel()
    feed(k, block + block[:3000])
    length, predicted = k.match_state()
    assert length >= 2900 and predicted == block[3000]
    k.predict_bit()
    assert k.match_probability() > 0.995  # the continuation is almost certain
    # and the coder's probability of the continuation's first bit follows it
    bit = block[3000] >> 7
    p1 = k.predict_bit() / 65536
    assert (p1 if bit else 1 - p1) > 0.99


def test_match_model_drops_a_broken_match():
    block = bytes(range(200)) * 3
    k = kernel()
    feed(k, block + b"\xff")
    assert k.match_state()[0] == 0


def test_word_model_sees_words_case_folded():
    alphabet = bytes(sorted(set(b"Hello hello, world. ")))
    a, b = kernel(alphabet), kernel(alphabet)
    feed(a, b"Hello", alphabet)
    feed(b, b"hello", alphabet)
    assert a.word_hashes()[0] == b.word_hashes()[0] != 0
    feed(a, b" world", alphabet)
    current, previous, _ = a.word_hashes()
    assert previous == b.word_hashes()[0] and current not in (0, previous)
    feed(a, b". ", alphabet)
    assert a.word_hashes()[0] == 0  # between words


def test_record_length_is_detected():
    rng = np.random.default_rng(2)
    rows = b"".join(bytes([7, i % 5]) + rng.integers(0, 4, 11, dtype=np.uint8).tobytes()
                    for i in range(400))
    k = kernel(record=1)
    feed(k, rows)
    assert k.record_length() == 13


def test_forced_bits_cost_nothing():
    k = kernel(b"abcde")  # 5 symbols: 3 bits, the 1-branch of "1xx" holds only "e" (100)
    k.update(4)
    assert k.bits == 3
    feed(k, b"e" * 5, b"abcde")
    k.predict_bit()
    k.update_bit(1)  # "1..": the next two bits are forced to 0
    assert k.predict_bit() == 0
    k.update_bit(0)
    assert k.predict_bit() == 0
    with pytest.raises(ValueError):
        k.update_bit(1)


def test_same_config_same_predictions_and_bad_configs():
    data = b"the cat sat on the mat; the cat ate the rat. " * 20
    a, b = kernel(), kernel()
    for byte in data:
        for j in range(7, -1, -1):
            pa, pb = a.predict_bit(), b.predict_bit()
            assert pa == pb and 0 <= pa <= 65536
            bit = (byte >> j) & 1
            a.update_bit(bit)
            b.update_bit(bit)
    for bad in [dict(sets="node,bogus"), dict(table_bits=40), dict(orders="1,2"),
                dict(word=7)]:
        with pytest.raises(ValueError):
            config = dataclasses.replace(CMConfig(), **bad) if "table_bits" not in bad \
                else CMConfig(**bad)
            cm.CMKernel(config.spec, bytes(range(256)))


def test_full_distribution_matches_the_first_bit_and_learns_nothing():
    alphabet = bytes(sorted(set(b"the cat sat on the mat; a dog ate a log.\n")))
    k = kernel(alphabet, table_bits=16)
    feed(k, b"the cat sat on the mat; a dog ate a log.\n" * 20, alphabet)
    p = k.predict().copy()
    assert p.shape == (len(alphabet),) and abs(p.sum() - 1.0) < 1e-9 and (p > 0).all()
    assert np.array_equal(k.predict(), p)  # evaluating it changed nothing
    top = [x for x in range(len(alphabet)) if x >> (k.bits - 1)]
    assert p[top].sum() == pytest.approx(k.predict_bit() / 65536, abs=1e-12)
    assert alphabet[int(np.argmax(p))] == ord("t")  # "...log.\n" is followed by "the"


# ---------------------------------------------------------------- the components on their own

def test_state_map_rule_is_the_integer_reference():
    """p += (bit - p) / (n + 1.5) in 16-bit fixed point, the count capped at 1023."""
    states = cm.bit_history_states()
    steps = [(5, 1), (5, 1), (5, 0), (0, 1)] + [(7, i % 3 == 0) for i in range(1200)]
    got = cm.py_state_map([(s, int(b)) for s, b in steps])
    p = {s: int((n1 + 0.5) / (n0 + n1 + 1.0) * 4294967295.0)
         for s, (n0, n1, *_) in enumerate(states)}
    p.update({s: int(0.5 * 4294967295.0) for s in range(len(states), 256)})  # unused states
    n = {}
    for (s, bit), value in zip(steps, got):
        rate = int(65536.0 / (n.get(s, 0) + 1.5))
        target = 4294967295 if bit else 0
        p[s] = p[s] + (((target - p[s]) * rate) >> 16)
        n[s] = min(n.get(s, 0) + 1, 1023)
        assert value == p[s] / 4294967296.0
    assert got[-1] == pytest.approx(1 / 3, abs=0.02)  # the rate stops falling: it tracks


def _mixer_reference(w, hd, hc, x, bit, optimizer, rate, decay, eps, b1t, b2t):
    dot = float(np.clip(sum(wi * xi for wi, xi in zip(w, x)), -16, 16))
    p = cm.py_squash(dot)
    err, var = bit - p, p * (1 - p)
    w, hd, hc = w.copy(), hd.copy(), hc.copy()
    if optimizer == "qdh":
        hd = decay * hd + x * x * var
        hc = decay * hc + x * var
        inv = 1.0 / (hd[0] + eps)
        bias = err * inv
        for i in range(1, len(x)):
            ci = hc[i] * inv
            step = (x[i] * err - err * ci) / (hd[i] + eps - hc[i] * ci)
            w[i] += rate * step
            bias -= ci * step
        w[0] += rate * bias
    elif optimizer == "sgd":
        w += rate * err * x
    else:
        g = err * x
        hd = 0.9 * hd + (1 - 0.9) * g
        hc = 0.999 * hc + (1 - 0.999) * g * g
        w += rate * (hd / (1 - b1t)) / (np.sqrt(hc / (1 - b2t)) + 1e-8)
    return dot, p, w, hd, hc


@pytest.mark.parametrize("optimizer", ["qdh", "sgd", "adam"])
def test_mixer_step_is_the_numpy_reference(optimizer):
    rng = np.random.default_rng(1)
    n = 7
    w = rng.normal(size=n) * 0.3
    hd = np.full(n, 4.0) if optimizer == "qdh" else np.zeros(n)
    hc = np.zeros(n)
    b1t, b2t = 1.0, 1.0
    for t in range(50):
        x = np.concatenate([[1.0], rng.normal(size=n - 1) * 2])
        bit = int(rng.random() < 0.7)
        b1t, b2t = b1t * 0.9, b2t * 0.999
        ref = _mixer_reference(w, hd, hc, x, bit, optimizer, 0.5, 0.999, 10.0, b1t, b2t)
        dot, p = cm.py_mixer_step(w, hd, hc, x, bit, optimizer, 0.5, 0.999, 10.0, b1t, b2t)
        assert (dot, p) == pytest.approx(ref[:2], rel=1e-12)
        np.testing.assert_allclose(w, ref[2], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hd, ref[3], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hc, ref[4], rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError):
        cm.py_mixer_step(w, hd, hc, x[:3], 1)


def test_context_kinds_hash_stably_and_read_their_own_context():
    """The kinds' hashes are part of the streams: pinned values, and each kind sees only its
    context (order 2: the last two bytes; a word context: not the bytes before the word)."""
    K = cm.KINDS
    kinds = [(K["order"], 2), (K["order"], 12), (K["word"], 1), (K["word"], 3),
             (K["sparse"], 5), (K["record"], 2), (K["indirect"], 1)]
    assert cm.py_context_hashes(b"the cat sat on the mat.\nthe dog", kinds) == [
        11179491483308004641, 2062632370745236765, 6201975890102479293, 10085287660569074913,
        9940012466807518072, 3128315944709248582, 11319972756915575715]
    order2, word0 = [(K["order"], 2)], [(K["word"], 0)]
    assert cm.py_context_hashes(b"xyzab", order2) == cm.py_context_hashes(b"qab", order2)
    assert cm.py_context_hashes(b"xyzab", order2) != cm.py_context_hashes(b"xyzba", order2)
    assert cm.py_context_hashes(b"one Word", word0) == cm.py_context_hashes(b"two word", word0)
    assert cm.py_context_hashes(b"a", order2) != cm.py_context_hashes(b"a", [(K["sparse"], 0)])
    with pytest.raises(ValueError):
        cm.py_context_hashes(b"a", [(99, 0)])


def test_memory_is_the_sum_of_the_components_accounts():
    k = kernel(table_bits=16, history_bits=16, apm=3)
    # history, slots, o0 + o1, 7 state maps, match (table + map), experts' buffers, mixer
    # sets (node: 256 rows, match: 384) and final layer (256 rows of 3), APMs
    n = 1 + 3 + 2 + 1 + 2  # bias, orders 2-4, o0/o1, match, 2 word contexts
    expected = (1 << 16) + (16 << 16) + 256 + 256 * 256 + 7 * 256 * 6 + \
        ((1 << 16) * 4 + 128 * 6) + (256 * 8 + 512 * 8) + \
        3 * 8 * (256 + 384) * n + 3 * 8 * 256 * 3 + (256 + 256 * 256 + (1 << 14)) * 33 * 2
    assert k.context_count() == 5 and k.memory_allocated() == expected
