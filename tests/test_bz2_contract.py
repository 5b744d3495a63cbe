"""The bz2 contract: the same scenarios run against ``bz2`` and ``seqzip`` and pass for both.

Someone who knows ``bz2`` should need no docs to use seqzip: open modes, the incremental
objects, errors caught as ``OSError`` / ``EOFError``, ``tarfile`` and ``shutil.copyfileobj``
over a file object, ``compresslevel=``, concatenated streams.  Scenarios only seqzip has
(dictionaries through ``open()``, settings contradicting a dictionary) follow at the end.
"""
import bz2
import io
import shutil
import tarfile

import pytest

import seqzip
from seqzip.predictor import Predictor

TEXT = b"It was the best of times, it was the worst of times; " * 40
MODULES = [pytest.param(bz2, id="bz2"), pytest.param(seqzip, id="seqzip")]


class Face:
    """The module's bz2-shaped names (seqzip at a fast level to keep the tests quick)."""

    def __init__(self, module):
        self.module = module
        self.seqzip = module is seqzip
        self.Compressor = module.BZ2Compressor if not self.seqzip else module.SeqzipCompressor
        self.Decompressor = (module.BZ2Decompressor if not self.seqzip
                             else module.SeqzipDecompressor)
        self.File = module.BZ2File if not self.seqzip else module.SeqzipFile

    def compress(self, data, compresslevel=1):
        return self.module.compress(data, compresslevel=compresslevel)

    def decompress(self, data):
        return self.module.decompress(data)

    def open(self, path, mode="rb", **kwargs):
        return self.module.open(path, mode, **kwargs)


@pytest.fixture(params=MODULES)
def face(request):
    return Face(request.param)


def test_one_shot_round_trip_with_compresslevel(face):
    for level in (1, 9):
        assert face.decompress(face.compress(TEXT, level)) == TEXT
    assert face.decompress(face.module.compress(TEXT, 2)) == TEXT  # the level by position


def test_concatenated_streams(face):
    packed = face.compress(b"first ") + face.compress(b"") + face.compress(b"second")
    assert face.decompress(packed) == b"first second"


@pytest.mark.parametrize("mode", ["wb", "xb", "ab"])
def test_open_binary_write_modes_then_read(face, tmp_path, mode):
    path = tmp_path / "f"
    if mode == "ab":
        with face.open(path, "wb", compresslevel=1) as f:
            f.write(b"before ")
    with face.open(path, mode, compresslevel=1) as f:
        assert f.write(TEXT) == len(TEXT)
    with face.open(path, "rb") as f:
        assert f.read() == (b"before " if mode == "ab" else b"") + TEXT
    if mode == "xb":
        with pytest.raises(FileExistsError):
            face.open(path, "xb")


def test_open_text_modes(face, tmp_path):
    path = tmp_path / "t"
    with face.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        f.write("première ligne\nseconde\n")
    with face.open(path, "rt", encoding="utf-8") as f:
        assert f.readlines() == ["première ligne\n", "seconde\n"]


def test_file_object_protocol(face):
    buffer = io.BytesIO()
    with face.File(buffer, "w", compresslevel=1) as f:
        f.write(b"line one\nline two\n")
        assert f.writable() and not f.readable()
    buffer.seek(0)
    with face.File(buffer, "r") as f:
        assert f.readable() and f.seekable()
        assert f.readline() == b"line one\n" and f.tell() == 9
        f.seek(0)
        assert f.read(4) == b"line" and f.peek(1)[:1] == b" "
        assert f.read() == b" one\nline two\n"
    assert f.closed
    with pytest.raises(ValueError):
        f.read()


def test_incremental_compressor_and_decompressor(face):
    c = face.Compressor(1)
    out = [c.compress(TEXT[i:i + 100]) for i in range(0, len(TEXT), 100)]
    out.append(c.flush())
    packed = b"".join(out)
    with pytest.raises(ValueError):
        c.flush()  # a second flush, as bz2
    with pytest.raises(ValueError):
        c.compress(b"more")
    d = face.Decompressor()
    got = [d.decompress(packed[i:i + 50]) for i in range(0, len(packed), 50)]
    assert b"".join(got) == TEXT and d.eof and not d.needs_input
    with pytest.raises(EOFError):
        d.decompress(b"x")


def test_decompressor_max_length_and_unused_data(face):
    packed = face.compress(TEXT) + b"TRAILER"
    d = face.Decompressor()
    first = d.decompress(packed, max_length=10)
    assert first == TEXT[:10] and not d.eof and not d.needs_input
    rest = d.decompress(b"", max_length=-1)
    assert first + rest == TEXT and d.eof and d.unused_data == b"TRAILER"


def test_compressor_returns_data_before_flush_on_large_input():
    """bz2 returns a block's data once 900 kB of input have filled it; seqzip does the same
    for each block of ``block_size`` bytes (a stream of its own)."""
    data = bytes(range(256)) * 5000  # 1.28 MB
    big = bz2.BZ2Compressor(1)
    assert big.compress(data) != b""
    c = seqzip.SeqzipCompressor(1, model="order2")
    early = c.compress(data)
    assert early and seqzip.decompress(early) == data[:1 << 20]
    assert seqzip.decompress(early + c.flush()) == data


def test_bad_data_is_an_oserror(face):
    with pytest.raises(OSError):
        face.decompress(b"this is not compressed data at all, not even close")
    with pytest.raises(OSError):
        face.File(io.BytesIO(b"garbage garbage garbage")).read()
    d = face.Decompressor()
    with pytest.raises(OSError):
        d.decompress(b"this is not compressed data at all, not even close")


def test_corrupt_data_is_an_oserror(face):
    packed = bytearray(face.compress(TEXT))
    packed[len(packed) // 2] ^= 0x55
    with pytest.raises(OSError):
        face.decompress(bytes(packed))


def test_truncated_data(face):
    packed = face.compress(TEXT)[:-20]
    with pytest.raises(EOFError):
        face.File(io.BytesIO(packed)).read()
    with pytest.raises(ValueError):  # bz2.decompress raises ValueError for truncated data
        face.decompress(packed)


def test_empty_file(face):
    """The one documented difference: an empty file reads as nothing in seqzip (as gzip
    reads it), where bz2 finds no end-of-stream marker."""
    if face.seqzip:
        assert face.File(io.BytesIO(b"")).read() == b""
    else:
        with pytest.raises(EOFError):
            face.File(io.BytesIO(b"")).read()


def test_tarfile_over_both(face, tmp_path):
    members = {"a.txt": TEXT, "dir/b.bin": bytes(range(256)) * 8}
    path = tmp_path / "x.tar.z"
    with face.open(path, "wb", compresslevel=1) as raw, \
            tarfile.open(fileobj=raw, mode="w:") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with face.open(path, "rb") as raw, tarfile.open(fileobj=raw, mode="r:") as tar:
        assert sorted(tar.getnames()) == sorted(members)
        for name, data in members.items():
            assert tar.extractfile(name).read() == data


def test_shutil_copyfileobj_both_ways(face, tmp_path):
    path = tmp_path / "c"
    with face.open(path, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(io.BytesIO(TEXT), dst, 333)
    out = io.BytesIO()
    with face.open(path, "rb") as src:
        shutil.copyfileobj(src, out, 77)
    assert out.getvalue() == TEXT


def test_bad_settings_are_value_errors(face):
    with pytest.raises(ValueError):
        face.compress(b"x", compresslevel=10)
    with pytest.raises(ValueError):
        face.open(io.BytesIO(), "rw")


# ------------------------------------------------------------------ seqzip only

@pytest.fixture(scope="module")
def dictionary(tmp_path_factory):
    p = Predictor("order2", 6)
    p.feed(TEXT * 3)
    path = tmp_path_factory.mktemp("dict") / "english.sqm"
    p.save(path)
    return path


def test_dictionary_through_open(tmp_path, dictionary):
    path = tmp_path / "d.sqz"
    with seqzip.open(path, "wb", dictionary=dictionary) as f:
        f.write(TEXT)
    with pytest.raises(seqzip.errors.DictionaryError):
        seqzip.open(path).read()
    with seqzip.open(path, dictionary=dictionary) as f:
        assert f.read() == TEXT
    with seqzip.open(path, "rt", encoding="ascii", dictionary=str(dictionary)) as f:
        assert f.read() == TEXT.decode("ascii")
    assert seqzip.decompress(path.read_bytes(), dictionary=dictionary) == TEXT
    out = io.BytesIO()
    seqzip.decompress_file(io.BytesIO(path.read_bytes()), out, dictionary=dictionary)
    assert out.getvalue() == TEXT


def test_dictionary_on_every_writer(dictionary):
    loaded = Predictor.load(dictionary)
    one = seqzip.compress(TEXT, dictionary=dictionary)
    assert seqzip.compress(TEXT, dictionary=loaded) == one
    c = seqzip.SeqzipCompressor(dictionary=dictionary, block_size=None)
    assert c.compress(TEXT) == b"" and c.flush() == one
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(TEXT), out, dictionary=dictionary)
    assert out.getvalue() == one
    d = seqzip.SeqzipDecompressor(dictionary=dictionary)
    assert d.decompress(one) == TEXT and d.eof
    assert len(one) < len(seqzip.compress(TEXT, model="order2"))


def test_settings_contradicting_the_dictionary_are_refused(dictionary):
    for settings in (dict(model="ctw"), dict(level=2), dict(compresslevel=1), dict(seed=5),
                     dict(model="cm", level=1)):
        with pytest.raises(ValueError, match="contradicts the model file"):
            seqzip.compress(TEXT, dictionary=dictionary, **settings)
        with pytest.raises(ValueError, match="contradicts the model file"):
            seqzip.SeqzipCompressor(dictionary=dictionary, **settings)
        with pytest.raises(ValueError, match="contradicts the model file"):
            seqzip.open(io.BytesIO(), "wb", dictionary=dictionary, **settings)
        with pytest.raises(ValueError, match="contradicts the model file"):
            seqzip.compress_file(io.BytesIO(TEXT), io.BytesIO(), dictionary=dictionary,
                                 **settings)
    # the file's own settings, given explicitly, are no contradiction; the defaults of another
    # model are (the command line passes only the flags given)
    same = seqzip.compress(TEXT, 6, model="order2", seed=0, dictionary=dictionary)
    assert same == seqzip.compress(TEXT, dictionary=dictionary)
    with pytest.raises(ValueError, match="contradicts the model file"):
        seqzip.compress(TEXT, 6, model="cm", dictionary=dictionary)


def test_level_and_compresslevel_must_agree():
    assert seqzip.compress(TEXT, 3, compresslevel=3, model="order2") == \
        seqzip.compress(TEXT, compresslevel=3, model="order2")
    with pytest.raises(ValueError, match="disagree"):
        seqzip.compress(TEXT, 3, compresslevel=4, model="order2")


def test_error_hierarchy():
    from seqzip import errors

    for name in ("NotSeqzipError", "UnsupportedVersionError", "CorruptError", "LimitError",
                 "DictionaryError", "TruncatedError"):
        assert issubclass(getattr(errors, name), (errors.SeqzipError, OSError))
    assert issubclass(errors.TruncatedError, EOFError)
    assert issubclass(errors.TruncatedError, ValueError)
    assert not issubclass(errors.CorruptError, ValueError)
    assert str(errors.CorruptError("bad frame")) == "bad frame"


def test_decompressor_next_stream_reads_concatenated_streams_in_pieces():
    packed = b"".join(seqzip.compress(p, model="order2") for p in (b"ab", b"", b"cd" * 50))
    d = seqzip.SeqzipDecompressor()
    out = []
    for i in range(0, len(packed), 7):
        piece = packed[i:i + 7]
        if d.eof:
            assert d.next_stream(piece)
            piece = b""
        out.append(d.decompress(piece))
        while d.eof and d.next_stream():
            out.append(d.decompress(b""))
    assert b"".join(out) == b"abcd" + b"cd" * 49
    with pytest.raises(ValueError):
        seqzip.SeqzipDecompressor().next_stream()


@pytest.mark.parametrize("block_size", [64, 1000, 5000])
@pytest.mark.parametrize("cut", [1, 13, 999, 20_000])
def test_compressor_blocks_whatever_the_chunking(block_size, cut):
    """Every block_size bytes become one stream, however the input is cut into calls."""
    data = bytes(range(256)) * 4 + b"abc" * 700
    c = seqzip.SeqzipCompressor(model="order2", block_size=block_size)
    parts = [c.compress(data[i:i + cut]) for i in range(0, len(data), cut)]
    packed = b"".join(parts) + c.flush()
    assert seqzip.decompress(packed) == data
    whole = b"".join(seqzip.compress(data[i:i + block_size], model="order2")
                     for i in range(0, len(data), block_size))
    assert packed == whole
