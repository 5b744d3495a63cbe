"""Generated corpora: exact log-probabilities against brute-force enumeration of the generators."""
import math
import re
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


# --- the bench's built-in data against the Canterbury corpus -----------------------------------


def bzip2_bpc(data: bytes) -> float:
    import bz2

    return 8 * len(bz2.compress(data, 9)) / len(data)


def test_english_is_as_hard_as_real_prose_for_bzip2():
    """At alice29.txt's size bzip2 -9 codes alice29.txt in 2.27 bpc; the pseudo-words of
    "text" in 1.75 (too easy to stand for prose); "english" must land near 2.27."""
    for seed in (0, 1):
        assert 2.1 < bzip2_bpc(corpora.generate("english", 152_089, seed=seed).data) < 2.5


def test_english_looks_like_prose():
    text = corpora.generate("english", 60_000, seed=3).data.decode("ascii")
    assert text == corpora.generate("english", 60_000, seed=3).data.decode("ascii")
    assert len(text) == 60_000
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    assert len(paragraphs) > 100
    assert all(len(line) <= 72 for line in text.splitlines())
    words = text.split()
    assert 4.0 < sum(len(w.strip('.,;:!?"()')) for w in words) / len(words) < 6.0
    for mark in (',"', '?"', '!"', ", ", "; ", " -- ", "'s ", "n't ", "CHAPTER", "\n\n"):
        assert mark in text, mark
    sentences = [s for s in re.split(r'[.!?]"?\s+', text) if s]
    # after a quoted question: "...?" they asked
    assert sum(s[0].isupper() or s[0] == "\"" for s in sentences) > 0.9 * len(sentences)


def test_english_against_alice_when_present():
    from tests.helpers import canterbury_file

    alice = canterbury_file("alice29.txt")
    english = corpora.generate("english", len(alice), seed=0).data
    assert abs(bzip2_bpc(english) - bzip2_bpc(alice)) < 0.15
    # alice29.txt also has CR LF line ends, digits and rarer marks: 74 byte values to 65
    assert 0.85 * len(set(alice)) < len(set(english)) <= len(set(alice))


def test_binary_is_like_an_executable():
    data = corpora.generate("binary", 60_000, seed=0).data
    assert len(data) == 60_000 and data[:4] == b"\x7fSQB"
    assert len(set(data)) >= 250  # every byte value, like sum and kennedy.xls
    assert 0.15 < data.count(0) / len(data) < 0.4  # sum: 0.32
    assert 2.4 < bzip2_bpc(data) < 3.1  # sum (a SPARC executable): 2.70


def test_binary_against_sum_when_present():
    from tests.helpers import canterbury_file

    executable = canterbury_file("sum")
    data = corpora.generate("binary", len(executable), seed=0).data
    assert abs(bzip2_bpc(data) - bzip2_bpc(executable)) < 0.3


def test_the_text_generator_is_unchanged():
    """Tests and golden data depend on "text": it must never change."""
    import hashlib

    digest = hashlib.sha256(corpora.generate("text", 5000, seed=0).data).hexdigest()
    assert digest[:16] == "4d700fc49cef32f9"


# --- the pathological problems of 002 Sect. III-A ----------------------------------------------

class _Capped:
    """Replays the enumerator's choices, with the noise choices (uniform over ``k`` options)
    narrowed to their first ``cap[k]`` options so that the enumeration stays small; it counts
    the bits each narrowed choice costs less than in the true model."""

    def __init__(self, inner, cap):
        self.inner, self.cap, self.saved = inner, cap, 0.0

    def uniform(self, k):
        if k in self.cap:
            self.saved += math.log2(k / self.cap[k])
            return self.inner.uniform(self.cap[k])
        return self.inner.uniform(k)


@pytest.mark.parametrize("task, t, cap, least", [
    ("temporal-order", 20, {4: 1}, 16), ("temporal-order-3bit", 20, {4: 1}, 64),
    ("adding", 10, {10: 2}, 4096), ("permutation", 10, {60: 2}, 1024)])
def test_pathological_exact_on_tiny_instances(task, t, cap, least):
    """Every line of a tiny instance, each with its probability: with the noise narrowed, the
    true probability is the enumerated one times the narrowed choices' ratio."""
    saved = {}

    def program(choices):
        capped = _Capped(choices, cap)
        text = corpora.pathological_program(capped, 1, task, t)
        saved[text] = capped.saved
        return text

    outputs = enumerate_program(program)
    assert len(outputs) == least
    assert sum(outputs.values()) == pytest.approx(1.0, abs=1e-12)
    for text, probability in outputs.items():
        assert corpora.pathological_bits(text, task, t) == pytest.approx(
            -math.log2(probability) + saved[text], abs=1e-9), text


@pytest.mark.parametrize("task", ["temporal-order", "temporal-order-3bit", "adding",
                                  "permutation"])
def test_pathological_generated_lines(task):
    sample = corpora.generate(task, 30, seed=2)
    assert sample.data == corpora.generate(task, 30, seed=2).data
    assert 0 < sample.true_bits < math.inf
    lines = sample.data.decode().splitlines()
    assert len(lines) == 30
    for line in lines:
        inputs, target = line.split("=")
        cls = corpora.pathological_target_class(task, target)
        if task == "temporal-order":
            relevant = [c for c in inputs if c in "XY"]
            assert "".join(relevant) == target and 0 <= cls < 4
        elif task == "adding":
            marked = [int(inputs[i + 1]) for i in range(0, len(inputs), 2) if inputs[i] == "X"]
            assert cls == sum(marked)
        elif task == "permutation":
            assert target == inputs[0]
    broken = sample.data.replace(b"=", b"=Z", 1)
    assert corpora.pathological_bits(broken.decode(), task) == math.inf


def test_pathological_bad_arguments():
    with pytest.raises(ValueError):
        corpora.pathological_line(None, "nope", 20)
    with pytest.raises(ValueError):
        corpora.pathological_line(None, "adding", 5)
