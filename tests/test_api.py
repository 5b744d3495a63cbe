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


def test_level_is_positional_like_bz2_and_the_rest_keyword_only():
    data = b"positional level " * 20
    assert seqzip.compress(data, 3, model="order2") == seqzip.compress(data, level=3,
                                                                        model="order2")
    assert seqzip.decompress(seqzip.compress(data, 9, model="order2")) == data
    with pytest.raises(ValueError):
        seqzip.compress(b"abc", "order2")  # a model where the level goes
    with pytest.raises(TypeError):
        seqzip.compress(b"abc", 6, "order2")
    c = seqzip.SeqzipCompressor(2, model="order2")
    c.compress(data)
    assert seqzip.decompress(c.flush()) == data


def test_open_bad_modes(tmp_path):
    for mode in ("rw", "rbt", "z"):
        with pytest.raises(ValueError):
            seqzip.open(tmp_path / "x.sqz", mode)
    with pytest.raises(ValueError):
        seqzip.open(tmp_path / "x.sqz", "wb", encoding="utf-8")


# --- the file object: frames on disk as they complete, tell and seek, tarfile -------------------


def test_writer_puts_each_block_on_disk_as_it_completes(tmp_path):
    path = tmp_path / "log.sqz"
    data = random_bytes(2600, 4)
    with seqzip.open(path, "wb", model="order2", block_size=1000) as f:
        f.write(data[:999])
        assert path.read_bytes() == b""  # the first block is not full yet
        f.write(data[999:2600])
        on_disk = path.read_bytes()
        assert seqzip.decompress(on_disk) == data[:2000]  # two whole blocks, decodable now
        assert f.tell() == 2600
        f.flush()  # codes the buffered 600 bytes: the file decodes up to here
        assert seqzip.decompress(path.read_bytes()) == data
        f.write(b"tail")
    assert seqzip.decompress(path.read_bytes()) == data + b"tail"
    with seqzip.open(path) as f:
        assert f.read() == data + b"tail"


def test_one_large_write_is_linear_and_holds_one_block(monkeypatch):
    """Issue 23: one large ``write()`` copied the rest of its buffer per block (quadratic: 309 s
    of copying for 1 GiB) and held the whole input twice.  64 MiB in blocks of 64 KiB: each
    block reaches the coder once, in order, and the writer's memory on top of the caller's
    buffer stays within a few blocks (the old code buffered all 64 MiB first)."""
    import hashlib
    import tracemalloc

    block, blocks = 64 << 10, 1024
    data = bytearray(random_bytes(block, 5) * blocks)
    data[-1] ^= 1
    coded = []

    def fake_write(self, src, dst, frame_size=0, progress=None):
        chunk = src.read()  # what the coder is given, as the coder reads it
        coded.append((len(chunk), hashlib.sha256(chunk).digest()))
        return 0

    from seqzip.session import StreamSettings
    monkeypatch.setattr(StreamSettings, "write", fake_write)
    with seqzip.SeqzipFile(io.BytesIO(), "wb", model="order2", block_size=block) as f:
        f.write(b"x" * 10)  # a partial block first: the big write completes it, then whole ones
        tracemalloc.start()
        f.write(data)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(f._pending) < block
    want = b"x" * 10 + bytes(data)
    assert [n for n, _ in coded] == [block] * blocks + [10]
    assert [d for _, d in coded] == [hashlib.sha256(want[i:i + block]).digest()
                                     for i in range(0, len(want), block)]
    assert peak < 8 * block, f"{peak:,} bytes on top of the input"


def test_writer_of_nothing_writes_one_empty_stream(tmp_path):
    with seqzip.open(tmp_path / "e.sqz", "wb", model="order2"):
        pass
    assert seqzip.decompress((tmp_path / "e.sqz").read_bytes()) == b""
    with seqzip.open(tmp_path / "e.sqz", "wb", model="order2") as f:
        f.flush()
        f.flush()
    assert seqzip.decompress((tmp_path / "e.sqz").read_bytes()) == b""


def test_reader_tell_and_seek(tmp_path):
    data = corpora.generate("text", 20_000, seed=2).data
    path = tmp_path / "s.sqz"
    with seqzip.open(path, "wb", model="order2", block_size=7000) as f:
        f.write(data)
    with seqzip.open(path) as f:
        assert f.seekable() and f.tell() == 0
        assert f.read(10) == data[:10] and f.tell() == 10
        assert f.seek(15_000) == 15_000 and f.read(5) == data[15_000:15_005]  # forward
        assert f.seek(100) == 100 and f.read(5) == data[100:105]  # backward: re-read
        assert f.seek(-10, 1) == 95 and f.readline() == data[95:data.index(b"\n", 95) + 1]
        assert f.seek(-3, 2) == len(data) - 3 and f.read() == data[-3:]
        assert f.seek(len(data) + 50) == len(data) and f.read() == b""
    raw = io.BytesIO(b"junk" + path.read_bytes())
    raw.read(4)  # a stream that starts inside a file: seek(0) goes back to its start
    with seqzip.open(raw) as f:
        f.read(50)
        assert f.seek(0) == 0 and f.read(50) == data[:50]


def test_tarfile_random_access_over_a_sqz(tmp_path):
    import tarfile

    members = {"a.txt": b"first member\n" * 300, "dir/b.bin": random_bytes(5000, 8),
               "c.txt": corpora.generate("text", 3000).data}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    path = tmp_path / "t.tar.sqz"
    path.write_bytes(seqzip.compress(raw.getvalue(), model="order2"))
    with seqzip.open(path) as f, tarfile.open(fileobj=f, mode="r:") as tar:
        assert tar.getnames() == list(members)
        assert tar.extractfile("c.txt").read() == members["c.txt"]  # seeks back
        assert tar.extractfile("a.txt").read() == members["a.txt"]


# --- independent streams on several processes -------------------------------------------------


def test_independent_streams_of_older_versions_decode_side_by_side():
    data = corpora.generate("text", 200_000, seed=5).data
    # what -T 2 wrote before piece sets: each half a stream of its own, concatenated
    packed = b"".join(seqzip.compress(data[i:i + 100_000], model="order2")
                      for i in range(0, len(data), 100_000))
    assert seqzip.decompress(packed) == data
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    assert [(s.length, s.piece) for s in spans] == [(100_000, None), (100_000, None)]
    restored = io.BytesIO()
    seen = []
    seqzip.decompress_file(io.BytesIO(packed), restored, seen.append, processes=2)
    assert restored.getvalue() == data and sum(seen) == len(data)


def test_processes_on_small_input_give_one_stream():
    data = b"small " * 1000
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="order2", processes=4)
    assert out.getvalue() == seqzip.compress(data, model="order2")
    with pytest.raises(ValueError):
        seqzip.compress_file(io.BytesIO(data), io.BytesIO(), model="order2", processes=0)


def test_stream_spans_refuse_bad_input():
    packed = seqzip.compress(b"spans " * 100, model="order2")
    with pytest.raises(seqzip.TruncatedError):
        seqzip.api.stream_spans(io.BytesIO(packed[:-5]))
    with pytest.raises(seqzip.NotSeqzipError):
        seqzip.api.stream_spans(io.BytesIO(b"nope" + packed))
    with pytest.raises(seqzip.TruncatedError):
        seqzip.api.stream_spans(io.BytesIO(b""))


def test_import_is_lazy_and_names_still_resolve():
    import subprocess
    import sys

    script = ("import sys, seqzip; loaded = 'numpy' in sys.modules; "
              "assert callable(seqzip.compress) and seqzip.DEFAULT_LEVEL == 6; print(loaded)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
    assert {"compress", "open", "SeqzipFile", "CorruptError"} <= set(dir(seqzip))
    with pytest.raises(AttributeError):
        seqzip.no_such_name
