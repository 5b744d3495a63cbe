"""Round trips through every public entry point, over many inputs."""
import io
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seqzip
from seqzip import corpora

SPECIAL = [b"", b"\x00", b"\xff", bytes(range(256)), bytes(range(256)) * 7, b"a" * 100_000,
           b"\x00" * 3000 + b"\x01", b"ab" * 5000]


def random_bytes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


@pytest.mark.parametrize("data", SPECIAL, ids=lambda d: f"{len(d)}B")
@pytest.mark.parametrize("level", [1, 6, 9])
def test_special_inputs(data, level):
    assert seqzip.decompress(seqzip.compress(data, level=level)) == data


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 9))
def test_random_bytes_round_trip(data, level):
    assert seqzip.decompress(seqzip.compress(data, level=level)) == data


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=2000))
def test_text_round_trip(text):
    data = text.encode("utf-8")
    assert seqzip.decompress(seqzip.compress(data)) == data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=1, max_size=5000), st.integers(1, 700), st.integers(0, 2**32))
def test_multi_frame_streams(data, frame_size, seed):
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, frame_size=frame_size, seed=seed)
    assert seqzip.decompress(out.getvalue()) == data


def test_large_random_and_text():
    # the fast model: the default (neural) one has its own 1 MB tests in test_online_glnn.py
    data = random_bytes(300_000) + corpora.generate("text", 300_000).data
    packed = seqzip.compress(data, model="order2")
    assert seqzip.decompress(packed) == data


def test_concatenated_streams():
    parts = [b"first part ", b"", b"second \x00\xff part", random_bytes(5000, 3)]
    packed = b"".join(seqzip.compress(p, level=i + 1) for i, p in enumerate(parts))
    assert seqzip.decompress(packed) == b"".join(parts)


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=4000), st.lists(st.integers(1, 600), min_size=1, max_size=30),
       st.integers(-1, 500).filter(lambda n: n != 0))
def test_incremental_decompressor_any_chunking(data, cuts, max_length):
    """Feeding the stream in arbitrary pieces with any max_length yields the same bytes."""
    packed = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), packed, frame_size=257)
    packed = packed.getvalue() + b"TRAILING"
    d = seqzip.SeqzipDecompressor()
    out, pos, i = [], 0, 0
    while not d.eof:
        if d.needs_input:
            assert pos < len(packed), "decompressor wants input after the whole stream"
            step = cuts[i % len(cuts)]
            chunk, pos, i = packed[pos:pos + step], pos + step, i + 1
        else:
            chunk = b""
        piece = d.decompress(chunk, max_length)
        if max_length >= 0:
            assert len(piece) <= max_length
        out.append(piece)
    assert b"".join(out) == data
    assert d.unused_data + packed[pos:] == b"TRAILING"
    with pytest.raises(EOFError):
        d.decompress(b"x")


def test_incremental_compressor():
    data = corpora.generate("text", 50_000).data
    c = seqzip.SeqzipCompressor(level=4)
    assert all(c.compress(data[i:i + 999]) == b"" for i in range(0, len(data), 999))
    assert seqzip.decompress(c.flush()) == data
    with pytest.raises(ValueError):
        c.flush()
    with pytest.raises(ValueError):
        c.compress(b"more")


def test_open_binary_and_text(tmp_path):
    path = tmp_path / "x.sqz"
    data = random_bytes(20_000) + b"\nline\n"
    with seqzip.open(path, "wb", level=3) as f:
        f.write(data[:100])
        f.write(memoryview(data[100:]))
    with seqzip.open(path, "ab") as f:
        f.write(b"appended")
    with seqzip.open(path) as f:
        assert f.read(10) == data[:10]
        assert f.read() == data[10:] + b"appended"
    text = "héllo wörld\nsecond line\n" * 100
    with seqzip.open(tmp_path / "t.sqz", "wt", encoding="utf-8") as f:
        f.write(text)
    with seqzip.open(tmp_path / "t.sqz", "rt", encoding="utf-8") as f:
        lines = f.readlines()
    assert "".join(lines) == text and len(lines) == 200
    with open(tmp_path / "t.sqz", "rb") as raw, seqzip.open(raw) as f:  # file objects work too
        assert f.read().decode("utf-8") == text


def test_open_empty_file_reads_nothing(tmp_path):
    (tmp_path / "e.sqz").write_bytes(b"")
    with seqzip.open(tmp_path / "e.sqz") as f:
        assert f.read() == b""


def test_open_x_mode_refuses_existing(tmp_path):
    (tmp_path / "x.sqz").write_bytes(b"")
    with pytest.raises(FileExistsError):
        seqzip.open(tmp_path / "x.sqz", "xb")


def test_non_seekable_input_is_spooled():
    data = random_bytes(70_000, 9)

    class Pipe(io.RawIOBase):
        def __init__(self):
            self.src = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            n = self.src.readinto(memoryview(b)[:random.randint(1, 5000)])
            return n

    out = io.BytesIO()
    seqzip.compress_file(Pipe(), out, model="order2")  # the spooling, not a model, is tested
    assert seqzip.decompress(out.getvalue()) == data


def test_seed_is_stored_and_compression_is_deterministic():
    data = corpora.generate("text", 5000).data
    assert seqzip.compress(data, seed=5) == seqzip.compress(data, seed=5)
    assert seqzip.compress(data, seed=5) != seqzip.compress(data, seed=6)


@pytest.mark.parametrize("kwargs", [dict(level=0), dict(level=10), dict(level="6"),
                                    dict(level=True), dict(model="nope"), dict(seed=-1),
                                    dict(seed=2**64)])
def test_bad_settings_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        seqzip.compress(b"abc", **kwargs)


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        seqzip.compress(b"abc", "order2")


def test_open_bad_modes(tmp_path):
    for mode in ("rw", "rbt", "z"):
        with pytest.raises(ValueError):
            seqzip.open(tmp_path / "x.sqz", mode)
    with pytest.raises(ValueError):
        seqzip.open(tmp_path / "x.sqz", "wb", encoding="utf-8")
