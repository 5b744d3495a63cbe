"""seqzip.Predictor: the coder's own probabilities, full state saved and copied, sampling;
model files as dictionaries of compress / decompress."""
import io
import struct

import numpy as np
import pytest
from click.testing import CliRunner

import seqzip
from seqzip import api
from seqzip.cli import cli
from seqzip.container import parse_frame, parse_header
from seqzip.errors import DictionaryError
from seqzip.models import MODELS
from seqzip.predictor import Predictor

TEXT = (b"It was the best of times, it was the worst of times, it was the age of wisdom, "
        b"it was the age of foolishness, it was the epoch of belief. ") * 12
ALPHABET = bytes(sorted(set(TEXT)))


def _predictor(name, level=1, alphabet=ALPHABET):
    return Predictor(name, level, alphabet=alphabet, seed=5)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_copy_and_save_load_predict_identically(name, tmp_path):
    """After any prefix, a copy and a saved-and-loaded predictor charge every later symbol
    exactly the bits the original charges (the full state travels: weights, optimiser and
    metric state, recurrent state, the experts' tables)."""
    p = _predictor(name)
    p.feed(TEXT[:700])
    q = p.copy()
    p.save(tmp_path / "m.sqm")
    r = Predictor.load(tmp_path / "m.sqm")
    assert (r.symbols, r.bits) == (p.symbols, p.bits)
    rest = TEXT[700:1100]
    a, b, c = p.feed(rest), q.feed(rest), r.feed(rest)
    assert np.array_equal(a, b) and np.array_equal(a, c)
    # and the copy is independent: feeding the original did not move the copy
    assert np.array_equal(q.feed(rest), r.feed(rest))


@pytest.mark.long
@pytest.mark.parametrize("name,level", [("cm", 6), ("cm", 7), ("glnn", 6), ("mlstm", 6),
                                        ("ctw", 9)])
def test_copy_at_strong_levels(name, level):
    p = _predictor(name, level)
    p.feed(TEXT[:900])
    q = p.copy()
    assert np.array_equal(p.feed(TEXT[900:1300]), q.feed(TEXT[900:1300]))


def test_copy_of_cm_with_its_network():
    p = _predictor("cm", 6, alphabet=b" abcdefghij")
    data = bytes(b" abcdefghij"[(i * i + i // 7) % 11] for i in range(1200))
    p.feed(data[:800])
    q = p.copy()
    assert np.array_equal(p.feed(data[800:]), q.feed(data[800:]))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_feed_bits_are_the_payload_bits_of_compress(name):
    """Predictor.feed charges what the range coder spends, within its overhead (the final
    flush, at most two 32-bit words, and the 24-bit quantisation of each probability; a lean
    stream's tight seal may end a few bits short of the log-loss, where the final range's
    lowest value happens to end in zeros)."""
    data = TEXT[:600]
    bits = _predictor(name).feed(data)
    packed = seqzip.compress(data, 1, model=name, seed=5)
    header, at = parse_header(packed)
    payload, _, _ = parse_frame(packed, at, len(data), 0, header.version)  # one frame
    payload_bits = 8 * len(payload)
    assert bits.sum() <= payload_bits + 16
    assert payload_bits - bits.sum() <= 64 + 0.01 * len(data)


@pytest.mark.parametrize("name", ["order2", "ctw", "cm"])
def test_probs_is_what_feed_charges(name):
    p = _predictor(name, alphabet=b"abcde")
    p.feed(b"abcabcdeabcdeeabcab" * 3)
    probs = p.probs()
    assert probs.shape == (5,) and probs.dtype == np.float64
    assert abs(probs.sum() - 1.0) < 1e-9
    again = p.probs()  # probs() leaves the model as it was
    assert np.array_equal(probs, again)
    for symbol in b"abcde":
        q = p.copy()
        assert q.update(symbol) == -np.log2(probs[b"abcde".index(symbol)])


def test_bits_per_symbol_runs():
    p = _predictor("order2")
    first = p.feed(TEXT[:100])
    second = p.feed(TEXT[100:300])
    assert p.symbols == 300
    assert p.bits_per_symbol == pytest.approx((first.sum() + second.sum()) / 300)
    p.reset()
    assert (p.symbols, p.bits) == (0, 0.0)
    assert np.array_equal(p.feed(TEXT[:100]), first)  # reset means a fresh model


@pytest.mark.parametrize("name", ["order2", "cm", "lstm"])
def test_sample_is_reproducible_and_leaves_the_state(name):
    p = _predictor(name)
    p.feed(TEXT[:500])
    before = p.probs() if name != "cm" else None
    a = p.sample(60, seed=7)
    assert a == p.sample(60, seed=7) and len(a) == 60
    assert set(a) <= set(ALPHABET)
    assert len({a} | {p.sample(60, seed=s) for s in range(8, 13)}) > 1  # seeds differ
    if before is not None:
        assert np.array_equal(before, p.probs())
    greedy = p.sample(30, seed=1, temperature=0)
    assert greedy == p.sample(30, seed=2, temperature=0)


def test_bad_input():
    with pytest.raises(ValueError, match="outside the predictor's alphabet"):
        _predictor("order2").feed(b"~")
    with pytest.raises(ValueError, match="unknown model"):
        Predictor("nope")
    with pytest.raises(ValueError, match="distinct"):
        Predictor("order2", alphabet=b"aa")
    with pytest.raises(ValueError):
        _predictor("order2").sample(5, temperature=-1)


def test_model_file_is_checked(tmp_path):
    p = _predictor("ctw")
    p.feed(TEXT[:200])
    data = bytearray(p.to_bytes())
    assert Predictor.from_bytes(bytes(data)).symbols == 200
    data[len(data) // 2] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        Predictor.from_bytes(bytes(data))
    with pytest.raises(ValueError, match="not a seqzip model file"):
        Predictor.from_bytes(b"PK\x03\x04" + bytes(100))
    other = _predictor("order2").kernel.get_state()
    with pytest.raises(ValueError):
        _predictor("ctw").kernel.set_state(other)


# ---------------------------------------------------------------- dictionaries


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = tmp_path_factory.mktemp("dict") / "text.sqm"
    p = Predictor("cm", 1, seed=3)
    p.feed(TEXT)
    digest = p.save(path)
    return path, digest


def test_dictionary_round_trip_and_gain(trained):
    path, digest = trained
    data = b"it was the age of wisdom, it was the epoch of belief. " * 3
    packed = seqzip.compress(data, dictionary=path)
    header, _ = parse_header(packed)
    # format 8 with the hash (10 and 12 with it for a preset of id 16-30 and 31-45: level 1's
    # today is 33)
    assert header.version == 9 + 2 * ((header.config[0] - 1) // 15) + 64 * header.lean
    assert header.lean  # one frame of a few hundred symbols: lean (test_lean)
    assert header.dictionary == digest
    assert seqzip.decompress(packed, dictionary=path) == data
    assert len(packed) < len(seqzip.compress(data, 1, model="cm", seed=3))
    out = io.BytesIO()
    api.decompress_file(io.BytesIO(packed + packed), out, dictionary=path)
    assert out.getvalue() == data + data
    # a stream without a dictionary ignores one given
    plain = seqzip.compress(data, 1, model="order2")
    assert seqzip.decompress(plain, dictionary=path) == data


def test_dictionary_missing_or_wrong(trained, tmp_path):
    path, _ = trained
    packed = seqzip.compress(TEXT[:300], dictionary=path)
    with pytest.raises(DictionaryError, match="give that file"):
        seqzip.decompress(packed)
    other = Predictor("cm", 1, seed=3)
    other.feed(TEXT[:50])
    other.save(tmp_path / "other.sqm")
    with pytest.raises(DictionaryError, match="not with the given one"):
        seqzip.decompress(packed, dictionary=tmp_path / "other.sqm")
    narrow = Predictor("order2", 1, alphabet=b"abc")
    with pytest.raises(ValueError, match="outside the model file's alphabet"):
        seqzip.compress(b"abcd", dictionary=narrow)


def test_cli_dict_fails_cleanly_and_writes_nothing(trained, tmp_path):
    path, _ = trained
    src = tmp_path / "t.txt"
    src.write_bytes(TEXT[:400])
    runner = CliRunner()
    ok = runner.invoke(cli, ["compress", "--dict", str(path), str(src)])
    assert ok.exit_code == 0, ok.output
    src.unlink()
    packed = tmp_path / "t.txt.sqz"
    missing = runner.invoke(cli, ["decompress", "-k", str(packed)])
    assert missing.exit_code == 1 and "--dict" in missing.output
    assert len(missing.output.strip().splitlines()) == 1 and not src.exists()
    wrong = Predictor("cm", 1, seed=3)
    wrong.save(tmp_path / "wrong.sqm")
    bad = runner.invoke(cli, ["decompress", "-k", "--dict", str(tmp_path / "wrong.sqm"),
                              str(packed)])
    assert bad.exit_code == 1 and "not with the given one" in bad.output
    assert not src.exists()
    unreadable = runner.invoke(cli, ["decompress", "-k", "--dict", str(packed), str(packed)])
    assert unreadable.exit_code == 1 and "not a seqzip model file" in unreadable.output
    assert not src.exists()
    good = runner.invoke(cli, ["decompress", "-k", "--dict", str(path), str(packed)])
    assert good.exit_code == 0 and src.read_bytes() == TEXT[:400]


def test_cli_train_and_sample(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(TEXT)
    out = tmp_path / "d.sqm"
    runner = CliRunner()
    result = runner.invoke(cli, ["train", str(src), "-o", str(out), "--model", "ctw",
                                 "--level", "2", "-q"])
    assert result.exit_code == 0, result.output
    p = Predictor.load(out)
    assert p.model_name == "ctw" and p.symbols == len(TEXT) and p.alphabet_size == 256
    first = runner.invoke(cli, ["sample", "--dict", str(out), "-n", "50", "--seed", "4"])
    second = runner.invoke(cli, ["sample", "--dict", str(out), "-n", "50", "--seed", "4"])
    assert first.exit_code == 0 and first.stdout_bytes == second.stdout_bytes
    assert len(first.stdout_bytes) == 50
    again = runner.invoke(cli, ["train", str(src), "-o", str(out)])
    assert again.exit_code == 1 and "exists" in again.output
    bad = runner.invoke(cli, ["train", str(src), "-o", str(tmp_path / "x.sqm"), "--model",
                              "lstm", "--optimizer", "nope"])
    assert bad.exit_code == 1 and "'nope' is not one of" in bad.output
    assert not (tmp_path / "x.sqm").exists()


def test_a_kernel_without_state_says_so():
    """A kernel that does not override the state methods refuses instead of copying only the
    base's counters (which would silently predict differently)."""
    from seqzip._kernels.testing import BitFrequencies

    with pytest.raises(NotImplementedError, match="BitFrequencies"):
        BitFrequencies(5).get_state()
    with pytest.raises(NotImplementedError):
        BitFrequencies(5).set_state({"fallbacks": np.array(0)})


@pytest.mark.parametrize("level", [1, pytest.param(6, marks=pytest.mark.long)])
def test_cm_probs_over_all_bytes_is_exact_and_leaves_the_state(level):
    """Over 256 symbols the bit tree crosses a group boundary (new hash-table slots are looked
    up and may evict others): the journalled save points still restore every byte."""
    p = Predictor("cm", level, seed=1)
    p.feed(TEXT[:600])
    before = p.kernel.get_state()
    probs = p.probs()
    after = p.kernel.get_state()
    assert before.keys() == after.keys()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert abs(probs.sum() - 1.0) < 1e-9
    for symbol in b"t e,~\x00\xff":
        assert p.copy().update(symbol) == -np.log2(probs[symbol])


def test_version_5_streams_still_decode(trained, checked_streams):
    """A stream coded from a model file, rewritten as format 5 wrote it (fixed-size header
    and frame heads around the same payloads), decodes with that file."""
    from seqzip import container
    path, digest = trained
    data = b"it was the age of wisdom, it was the epoch of foolishness. " * 4
    packed = seqzip.compress(data, dictionary=path)
    h, at = parse_header(packed)
    old = container.StreamHeader(h.model_id, h.config, h.seed, h.length, h.frame_size,
                                 h.alphabet, h.crc32, 5, h.dictionary).pack()
    payload, checks, end = parse_frame(packed, at, len(data), 0)
    old += container.pack_frame(len(data), payload, struct.pack(f"<{len(checks)}H", *checks), 5)
    assert end == len(packed) and old[4] == 5
    assert len(old) - len(packed) == (69 + 16 - at) + (12 - 3)  # header, frame head: 3 bytes
    assert seqzip.decompress(old, dictionary=path) == data


def test_version_5_header_round_trip_and_checks():
    from seqzip.container import StreamHeader

    h = StreamHeader(7, b"\x01", seed=3, length=5, frame_size=8, alphabet=b"abc", crc32=9,
                     version=5, dictionary=bytes(range(16)))
    packed = h.pack()
    assert parse_header(packed) == (h, len(packed))
    assert len(packed) == len(StreamHeader(7, b"\x01", 3, 5, 8, b"abc", 9, 4).pack()) + 16
    h7 = StreamHeader(7, b"\x01", seed=3, length=5, frame_size=8, alphabet=b"abc", crc32=9,
                      version=7, dictionary=bytes(range(16)))
    assert parse_header(h7.pack()) == (h7, len(h7.pack()))
    assert len(h7.pack()) == len(StreamHeader(7, b"\x01", 3, 5, 8, b"abc", 9).pack()) + 16
    for bad in (dict(version=5), dict(version=7), dict(version=4, dictionary=bytes(16)),
                dict(version=6, dictionary=bytes(16)), dict(version=5, dictionary=bytes(8))):
        with pytest.raises(ValueError):
            StreamHeader(7, b"\x01", 3, 5, 8, b"abc", 9, **bad).pack()
    corrupt = bytearray(packed)
    corrupt[12] ^= 1  # inside the dictionary hash: the header checksum catches it
    with pytest.raises(seqzip.CorruptError):
        parse_header(bytes(corrupt))
