"""Generated corpora: exact log-probabilities against brute-force enumeration of the generators."""
import math
from collections import defaultdict

import pytest

from seqzip import corpora
from seqzip.corpora import (InsertionsParams, MusicParams, anbn_bits, anbn_program,
                            insertions_bits, insertions_program, music_bits, music_program,
                            xor_bits, xor_program)


class _Branch(Exception):
    def __init__(self, probabilities):
        self.probabilities = probabilities


class _Replayer:
    """A ``choices`` object that replays a fixed prefix of choices and stops at the next one."""

    def __init__(self, prefix):
        self.prefix, self.i, self.probability = prefix, 0, 1.0

    def _choose(self, probabilities):
        if self.i == len(self.prefix):
            raise _Branch(probabilities)
        option = self.prefix[self.i]
        self.i += 1
        self.probability *= probabilities[option]
        return option

    def uniform(self, k):
        return self._choose([1.0 / k] * k)

    def bernoulli(self, p):
        return bool(self._choose([1.0 - p, p]))


def enumerate_program(program, *args):
    """Every output of ``program`` with its total probability (summed over hidden choices)."""
    outputs = defaultdict(float)
    stack = [[]]
    while stack:
        prefix = stack.pop()
        replay = _Replayer(prefix)
        try:
            text = program(replay, *args)
        except _Branch as branch:
            stack.extend(prefix + [o] for o, p in enumerate(branch.probabilities) if p > 0)
            continue
        outputs[text] += replay.probability
    return outputs


def check_exact(outputs, bits_function):
    assert sum(outputs.values()) == pytest.approx(1.0, abs=1e-12)
    for text, probability in outputs.items():
        assert bits_function(text) == pytest.approx(-math.log2(probability), abs=1e-9), text


def test_insertions_exact_on_tiny_instances():
    prm = InsertionsParams(letters="ab", digits="01", capitals="XY", n_random=1,
                           p_insert=0.3, p_sub=0.4)
    for lines in (1, 2):
        outputs = enumerate_program(insertions_program, lines, prm)
        assert len(outputs) > 20
        check_exact(outputs, lambda t: insertions_bits(t, prm))


def test_music_exact_on_tiny_instances_sums_hidden_phases():
    prm = MusicParams(chords=(("I", "ce"), ("IV", "cf")), cycle=("I", "IV", "IV"),
                      rhythms=(("4", "4"), ("2",)))
    outputs = enumerate_program(music_program, 3, prm)
    # Some texts arise from several phases (a bar of c's fits both chords).
    assert any(music_bits(t, prm) < -math.log2(p) + 1 for t, p in outputs.items())
    check_exact(outputs, lambda t: music_bits(t, prm))


def test_xor_exact_on_tiny_instances():
    outputs = enumerate_program(xor_program, 1, 10)
    check_exact(outputs, lambda t: xor_bits(t, 10))


def test_anbn_exact_on_tiny_instances():
    outputs = enumerate_program(anbn_program, 2, 2, 6)
    check_exact(outputs, lambda t: anbn_bits(t, 2, 6))


@pytest.mark.parametrize("name", ["insertions", "music", "xor", "anbn", "markov2"])
def test_generated_data_has_finite_exact_bits_and_is_seeded(name):
    n = {"xor": 50, "anbn": 3, "insertions": 40, "music": 60, "markov2": 5000}[name]
    a, b = corpora.generate(name, n, seed=3), corpora.generate(name, n, seed=3)
    assert a.data == b.data and a.data != corpora.generate(name, n, seed=4).data
    assert 0 < a.true_bits < math.inf
    assert corpora.true_log2_loss(name, a.data, seed=3) == a.true_bits


@pytest.mark.parametrize("name, bad", [
    ("insertions", b"abd\n"), ("music", b"c4 d4 e4 |\n"), ("xor", b" 1 0=1\n"),
    ("anbn", b"aa\nbbb\n"), ("markov2", b"zzz"),
])
def test_impossible_text_has_infinite_bits(name, bad):
    assert corpora.true_log2_loss(name, bad) == math.inf


def test_paper_sizes_and_entropy_rates():
    """Defaults follow 000 Sect. 4; a^n b^n costs exactly 10 bits per block."""
    assert corpora.generate("anbn", seed=0).true_bits == 100.0
    music = corpora.generate("music", seed=0)
    assert music.data.count(b"|\n") == 2700
    lines = corpora.generate("insertions", seed=0).data.count(b"\n")
    assert lines == 1000


def test_xor_scored_positions_are_the_result_bits():
    data = corpora.generate("xor", 20, seed=1).data
    positions = corpora.xor_scored_positions(data)
    assert len(positions) == 20
    assert all(data[p - 1:p] == b"=" and data[p:p + 1] in (b"0", b"1") for p in positions)


def test_unknown_corpus():
    with pytest.raises(ValueError):
        corpora.generate("nope")
