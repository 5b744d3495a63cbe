"""Format 6: the compact header and frame heads, typed config fields, and configs read once."""
import collections
import io
import struct
import zlib

import pytest

import seqzip
from seqzip.models.cm import CMConfig
from seqzip import container
from seqzip.container import alphabet_codes
from seqzip.errors import CorruptError, TruncatedError
from seqzip.models import MODELS, preset
from seqzip.models.base import (config_from_fields, config_to_fields, pack_varint,
                                read_varint)
from seqzip.models.order2 import Order2Config
from seqzip.streaminfo import describe_file

from tests.test_container import as_version_6

# the goldens here pin checked streams (format 8 and its bands); lean ones: test_lean
pytestmark = pytest.mark.usefixtures("checked_streams")


def compress6(data, *args, **kwargs) -> bytes:
    """``data`` compressed as format 6 wrote it (seqzip writes format 8 since)."""
    return as_version_6(seqzip.compress(data, *args, **kwargs))

DATA = b"hello, hello, hello world " * 20
ORDER2 = MODELS["order2"].model_id


def forge(flags: int, fields: bytes, model_id: int = ORDER2, version: int = 6) -> bytes:
    """A compact header from raw field bytes, with a valid header check."""
    head = container.MAGIC + bytes([version, model_id, flags]) + fields
    return head + struct.pack("<H", zlib.crc32(head) & 0xFFFF)


def frames_of(packed: bytes) -> bytes:
    return packed[container.parse_header(packed)[1]:]


def header_fields(length=len(DATA), alphabet=bytes(sorted(set(DATA))), crc=zlib.crc32(DATA)):
    tag = min((len(c), t) for t, c in enumerate(alphabet_codes(alphabet)))[1]
    return tag, pack_varint(length) + alphabet_codes(alphabet)[tag] + struct.pack("<I", crc)


def test_a_forged_header_equal_to_the_real_one_decodes():
    packed = compress6(DATA, model="order2", level=4)
    tag, fields = header_fields()
    assert forge(4 | tag << 4, fields) + frames_of(packed) == packed
    assert seqzip.decompress(packed) == DATA


def _bad_headers():
    tag, fields = header_fields()
    level4 = 4 | tag << 4
    length, rest = pack_varint(len(DATA)), fields[len(pack_varint(len(DATA))):]
    typed = config_to_fields(Order2Config(count_limit=100))
    return [
        ("level 10", forge(10 | tag << 4, fields), "config"),
        ("level 15", forge(15 | tag << 4, fields), "config"),
        ("seed flag with seed 0", forge(level4 | 0x40, b"\x00" + fields), "canonical"),
        ("seed varint not minimal", forge(level4 | 0x40, b"\x85\x00" + fields), "minimal"),
        ("seed varint over 10 bytes", forge(level4 | 0x40, b"\xff" * 11 + fields), "10 bytes"),
        ("frame flag with the default", forge(level4 | 0x80, length + pack_varint(1 << 20)
                                              + rest), "canonical"),
        ("frame size 0", forge(level4 | 0x80, length + b"\x00" + rest), "frame size"),
        ("frame size 2^24 + 1", forge(level4 | 0x80, length + pack_varint((1 << 24) + 1)
                                      + rest), "frame size"),
        ("length 2^48 + 1", forge(level4, pack_varint((1 << 48) + 1) + rest), "length"),
        ("length 519", forge(level4, pack_varint(519) + rest), "block|checksum"),
        ("length 521", forge(level4, pack_varint(521) + rest), "block|checksum|ended"),
        ("crc32 of the data", forge(level4, fields[:-4] + b"\0\0\0\0"), "checksum"),
        ("config length 4097", forge(tag << 4, pack_varint(4097) + b"\0" * 4097 + fields),
         "config length"),
        ("config truncated", forge(tag << 4, pack_varint(len(typed)) + b"\0" + typed[:-2]
                                   + fields), "config"),
        ("config trailing byte", forge(tag << 4, pack_varint(len(typed) + 2) + b"\0" + typed
                                       + b"\0" + fields), "config"),
        ("config unknown field", forge(tag << 4, pack_varint(len(typed) + 1) + b"\0"
                                       + typed.replace(b"order", b"ordex") + fields), "config"),
        ("config repeated field", forge(tag << 4, _config(b"\x02\x05order\x02\x04\x05order\x02\x04")
                                        + fields), "config"),
        ("config int as float", forge(tag << 4, _config(b"\x01\x05order\x03" + bytes(8))
                                      + fields), "config"),
        ("config float as int", forge(tag << 4, _config(b"\x01\x0descape_weight\x02\x02")
                                      + fields), "config"),
        ("config str for int", forge(tag << 4, _config(b"\x01\x05order\x04\x01x") + fields),
         "config"),
        ("config bool for int", forge(tag << 4, _config(b"\x01\x05order\x01") + fields),
         "config"),
        ("config out of range", forge(tag << 4, _config(b"\x01\x05order\x02\x0e") + fields),
         "config"),
        ("config name not ASCII", forge(tag << 4, _config(b"\x01\x05ord\xffr\x02\x04")
                                        + fields), "config"),
        ("config too many fields", forge(tag << 4, _config(b"\xff\x01") + fields), "config"),
        ("config JSON", forge(tag << 4, _config(b"[255,1.0,2]") + fields), "config"),
    ]


def _config(body: bytes) -> bytes:
    return pack_varint(len(body) + 1) + b"\0" + body


@pytest.mark.parametrize("name, header, message", _bad_headers(), ids=lambda v: str(v)[:30])
def test_every_compact_header_field_is_checked(name, header, message):
    packed = compress6(DATA, model="order2", level=4)
    with pytest.raises(CorruptError, match=message):
        seqzip.decompress(header + frames_of(packed))


@pytest.mark.parametrize("tag, code, message", [
    (0, b"\x00\x00\x00", "alphabet"),  # a window of one value, its bit clear
    (0, b"\xf0\x20\xff\xff\xff\xff\xff", "shortest"),  # a window past 255
    (0, b"\x61\x19\x01\x00\x00\x02", "shortest"),  # a and z as a window: the list is shorter
    (1, b"\x02abc", "shortest"),  # a-c as a list: the run is shorter
    (1, b"\x01aa", "shortest"),  # a repeated value
    (1, b"\x01ba", "shortest"),  # unsorted
    (2, b"\x61\x02\x60", "shortest"),  # a-c as runs: the window is as short, a lower tag
    (2, b"\x61\x00\x60", "end at"),  # a run of 3 in a span of 1
    (2, b"\x61\x01\xc0", "end at"),  # ending on an absent run
    (2, b"\x61\x00\x81", "end at"),  # a padding bit set
    (2, b"\x61\x10\x00\x00", "too long"),  # a run over 256
    (2, b"\xf0\x20\x04\x20", "shortest"),  # a run of 33 from 240: past 255
    (3, b"\x01\x00\xff", "alphabet"),  # every value absent
    (3, b"\x02\x00\x7f\x00\x7f", "shortest"),  # absent runs past 255
])
def test_every_alphabet_code_is_checked(tag, code, message):
    header = forge(4 | tag << 4, pack_varint(3) + code + b"\0\0\0\0")
    with pytest.raises(CorruptError, match=message):
        seqzip.decompress(header + bytes(64))


@pytest.mark.parametrize("alphabet", [b"a", b"ab", b"abc", b"az", bytes(range(256)),
                                      bytes(range(255)), bytes(range(1, 256)), b"\n !\"#az",
                                      bytes(range(0, 256, 2)), bytes(range(0, 256, 3))])
def test_every_alphabet_round_trips_in_its_shortest_code(alphabet):
    data = alphabet * 3
    packed = compress6(data, model="order2")
    header, end = container.parse_header(packed)
    assert header.alphabet == alphabet and seqzip.decompress(packed) == data
    assert end == 13 + len(pack_varint(len(data))) + min(map(len, alphabet_codes(alphabet)))


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("level", [1, 6, 9])
def test_a_preset_header_is_at_most_16_bytes_besides_its_alphabet(model, level):
    for length in (1, 127, 4096, 16383, (1 << 21) - 1):
        h = container.StreamHeader(MODELS[model].model_id, bytes([level]), 0, length,
                                   container.DEFAULT_FRAME, b"a", 0, 6)
        code = alphabet_codes(b"a")[1]
        assert len(h.pack()) - len(code) <= 16
    # all 256 byte values (a binary file) under 16 KB: 16 bytes in all
    h = container.StreamHeader(MODELS[model].model_id, bytes([level]), 0, 16383,
                               container.DEFAULT_FRAME, bytes(range(256)), 0, 6)
    assert len(h.pack()) == 16


def test_header_sizes_of_a_4_kb_text():
    text = bytes(range(97, 123)) * 158  # 4,108 bytes
    packed = compress6(text[:4096], model="order2", level=1)
    header, end = container.parse_header(packed)
    assert end == 13 + 2 + 4  # a-z: one run (its lowest value, span and gamma code)
    frame = frames_of(packed)
    payload, checks, used = container.parse_frame(frame, 0, 4096, 0)
    assert used == len(frame) == len(pack_varint(len(payload) // 4)) + 2 + 2 * 5 + len(payload)


def test_every_prefix_of_a_format_6_stream_is_truncation():
    packed = compress6(DATA * 3, model="order2", seed=7)
    for cut in range(1, len(packed)):
        with pytest.raises(TruncatedError):
            seqzip.decompress(packed[:cut])


def test_frame_head_fields_are_checked():
    packed = compress6(b"0123456789" * 400, model="order2")
    _, end = container.parse_header(packed)
    payload, checks, after = container.parse_frame(packed, end, 4000, 0)
    words_at = end
    words, at = read_varint(packed, words_at)
    checks_bytes = struct.pack(f"<{len(checks)}H", *checks)

    def frame(words_field: bytes) -> bytes:
        body = checks_bytes + payload
        return words_field + struct.pack("<H", zlib.crc32(body, zlib.crc32(words_field))
                                         & 0xFFFF) + body

    assert packed[:end] + frame(pack_varint(words)) == packed
    too_many = pack_varint(container.max_payload_bytes(4000) // 4 + 1)
    with pytest.raises(CorruptError, match="impossible payload"):
        seqzip.decompress(packed[:end] + frame(too_many))
    with pytest.raises(CorruptError, match="impossible payload"):  # not minimal
        seqzip.decompress(packed[:end] + frame(pack_varint(words)[:-1] + bytes(
            [pack_varint(words)[-1] | 0x80, 0])))
    bad = bytearray(packed)
    bad[at] ^= 1  # the frame check
    with pytest.raises(CorruptError, match="frame 0 checksum"):
        seqzip.decompress(bytes(bad))
    fewer = packed[:end] + frame(pack_varint(words - 1))[:-4]  # a word shorter, checked
    with pytest.raises(CorruptError):
        seqzip.decompress(fewer)


def test_concatenated_and_seekable_format_6_streams():
    a = compress6(b"first " * 300, seed=3)
    out = io.BytesIO()  # cm's level 1 as format 6 wrote it: its preset then, id 10
    seqzip.compress_file(io.BytesIO(b"second"), out, config=CMConfig.for_preset_id(10))
    b = as_version_6(out.getvalue())
    assert seqzip.decompress(a + b) == b"first " * 300 + b"second"
    with seqzip.open(io.BytesIO(a + b)) as f:
        f.seek(1795)
        assert f.read() == b"irst second"
    with seqzip.open(io.BytesIO(a + b)) as f:
        assert f.seek(0, io.SEEK_END) == 1806


@pytest.mark.parametrize("name", sorted(MODELS))
def test_typed_config_fields_round_trip_exactly(name):
    cls = MODELS[name].config_class
    for level in (1, 6, 9):
        config = preset(cls, level)
        assert config_from_fields(cls, config_to_fields(config)) == config
    order2 = Order2Config(escape_weight=0.1 + 2 ** -52)  # every bit of a float survives
    back = config_from_fields(Order2Config, config_to_fields(order2))
    assert back.escape_weight.hex() == order2.escape_weight.hex()


def test_a_field_the_data_does_not_name_takes_its_default():
    data = b"\x01\x05order\x02\x02"  # order 1 only
    assert config_from_fields(Order2Config, data) == Order2Config(order=1)


def test_seqzip_info_shows_the_header_version_and_size():
    report = describe_file(io.BytesIO(compress6(DATA, model="order2")), "x")
    stream = report["streams"][0]
    assert (stream["version"], stream["header_bytes"]) == (6, container.parse_header(
        compress6(DATA, model="order2"))[1])
    old = io.BytesIO(bytes.fromhex(
        "b753515a03010100050100000000000000960000000000000000001000030000000310000400000000bed23f"
        "04000000000000000000000000000000807e5be7007e31bb9a96000000200000008e8b18b5e8833ecf631345"
        "a5131241c0a8c31e109b65f872b07d5273601dc9362f6c47dd"))
    assert describe_file(old, "v3")["streams"][0]["header_bytes"] == 69


def test_one_compress_builds_each_config_at_most_once():
    """Issue 19: one compress of b"hello hello" built CMConfig 8 times and GLNNConfig 72."""
    from seqzip.models import base
    classes = {spec.config_class for spec in MODELS.values()}
    from seqzip.models.glnn import GLNNConfig
    classes.add(GLNNConfig)
    counts = collections.Counter()
    originals = {cls: cls.__init__ for cls in classes}

    def counting(cls):
        def init(self, *args, **kwargs):
            counts[cls.__name__] += 1
            originals[cls](self, *args, **kwargs)
        return init

    try:
        for cls in classes:
            cls.__init__ = counting(cls)
        base.preset.cache_clear()
        base.config_from_bytes.cache_clear()
        seqzip.compress(b"hello hello")
        # the presets up to the default level, once each (the first match is the level byte)
        assert counts["CMConfig"] <= 6
        assert counts["GLNNConfig"] <= 1  # the gate's network config, parsed once
        counts.clear()
        assert seqzip.decompress(seqzip.compress(b"hello hello")) == b"hello hello"
        assert counts["CMConfig"] == 0 and counts["GLNNConfig"] == 0
    finally:
        for cls, init in originals.items():
            cls.__init__ = init


def test_an_unknown_model_id_in_a_compact_header():
    packed = compress6(DATA, model="order2", level=4)
    tag, fields = header_fields()
    with pytest.raises(CorruptError, match="model id 200"):
        seqzip.decompress(forge(4 | tag << 4, fields, model_id=200) + frames_of(packed))


def test_every_single_bit_flip_of_a_format_6_header_is_detected():
    packed = compress6(DATA, model="order2", seed=9)
    _, end = container.parse_header(packed)
    for pos in range(end):
        for bit in range(8):
            bad = bytearray(packed)
            bad[pos] ^= 1 << bit
            with pytest.raises(seqzip.SeqzipError):
                seqzip.decompress(bytes(bad))
