"""The .sqz format: golden bytes, and a clear error for every kind of bad input."""
import hashlib
import struct
import zlib

import pytest

import seqzip
from seqzip import container
from seqzip.models import DEFAULT_MODEL, MODELS
from seqzip.errors import (CorruptError, NotSeqzipError, SeqzipError, TruncatedError,
                           UnsupportedVersionError)

GOLDEN_INPUT = b"seqzip golden input: abracadabra, abracadabra! \x00\x01\xff" * 3

# Pinned by hand from a reviewed build.  A deliberate format change bumps container.VERSION and
# these values in one commit; any other change here means streams no longer decode.
GOLDEN_HEX = (
    "b753515a02010b005b3235352c312e302c325d01000000000000009600000000000000000010000300000003"
    "10000400000000bed23f04000000000000000000000000000000807e5be70053a55c8796000000200000008e"
    "8b18b5e8833ecf631345a5131241c0a8c31e109b65f872b07d5273601dc9362f6c47dd")

# The learned models, pinned by SHA-256 of a 3 KB stream (long enough for dozens of training
# steps of every network): any change to their arithmetic, initialisation or defaults shows.
GOLDEN_STREAMS = [
    ("glnn", 1, 242, "e5313190181bfa1847ee980a614f524d0da106c4677e89d6ab89edcdb3d1e063"),
    ("glnn", 6, 215, "5e9e610f7cf35f4b4d526fa34c0dac10e75e7e5ea37a4165e0736384c2c6aad7"),
    ("lstm", 1, 268, "ed5304f47a8e04e74695bd627d7a1aa7b17810f1e3bd85a0025e128d37252fe6"),
    ("mlstm", 1, 264, "d6c36ec35acecd0c61a29a4a4f584b47ac8358ca850df1b2aa73fbdce66a79d5"),
    ("mlstm", 6, 245, "a8c699c9e101add0e1a37c45414b78e5d069a451f027683a771ad3dc0722a4a5"),
    ("mrnn", 1, 268, "852daee0e820974ff4d9f265ccbdced9ad93b18627502ab5fe5221bf3c8b0852"),
    ("ctw", 6, 177, "875a6599a940b6ec94b70596afc9a15d04f6d159a1cbfae5a3f62937f75a5866"),
    ("cm", 1, 201, "941eb460ea4225017208da91b3ad0dced93fbd2beccf08cd97bb624c6794f2ad"),
    ("cm", 6, 318, "94bdbf4f6976fb65dbd68c8b0249c0e1f2ec230a590e31989007ba17f157edbf"),
    ("cm", 9, 361, "ccdcff2195ea0d12eca22c7edc4094cdc1dd2d608e0da42619040086394ed19f"),
]


@pytest.mark.parametrize("model, level, size, sha256", GOLDEN_STREAMS)
def test_golden_streams_of_every_learned_model(model, level, size, sha256):
    data = GOLDEN_INPUT * 20
    packed = seqzip.compress(data, model=model, level=level, seed=1)
    assert (len(packed), hashlib.sha256(packed).hexdigest()) == (size, sha256)
    assert seqzip.decompress(packed) == data


def small_stream(data=b"hello, hello, hello world " * 20, **kw):
    return seqzip.compress(data, **kw)


def test_golden_bytes():
    packed = seqzip.compress(GOLDEN_INPUT, model="order2", level=6, seed=1)
    assert packed[:4] == container.MAGIC and packed[4] == container.VERSION
    assert packed.hex() == GOLDEN_HEX
    assert seqzip.decompress(bytes.fromhex(GOLDEN_HEX)) == GOLDEN_INPUT


def test_header_layout():
    packed = small_stream(seed=0xDEADBEEF)
    header, end = container.parse_header(packed)
    magic, version, model_id, config_len = struct.unpack_from("<4sBBH", packed)
    assert (magic, version, model_id) == (b"\xb7SQZ", 2, MODELS[DEFAULT_MODEL].model_id)
    seed, length, frame_size = struct.unpack_from("<QQI", packed, 8 + config_len)
    assert seed == 0xDEADBEEF == header.seed and length == 520 == header.length
    assert header.alphabet == bytes(sorted(set(b"hello, world ")))
    assert header.crc32 == zlib.crc32(b"hello, hello, hello world " * 20)
    assert end == 8 + config_len + 8 + 8 + 4 + 32 + 4 + 4


def test_bad_magic():
    with pytest.raises(NotSeqzipError, match="magic"):
        seqzip.decompress(b"PK\x03\x04 not ours")
    with pytest.raises(NotSeqzipError):
        seqzip.decompress(b"BZh91AY&SY")


def test_unknown_version():
    packed = bytearray(small_stream())
    packed[4] = 99
    with pytest.raises(UnsupportedVersionError, match="version 99"):
        seqzip.decompress(bytes(packed))


@pytest.mark.parametrize("cut", [1, 3, 4, 7, 8, 20, 60, 100, 117, 120, 125, -9, -5, -1])
def test_truncation_is_an_eof_error(cut):
    packed = small_stream()
    with pytest.raises(TruncatedError) as info:
        seqzip.decompress(packed[:cut])
    assert isinstance(info.value, EOFError)


def test_every_prefix_is_truncation():
    packed = small_stream(b"xyz" * 50)
    for cut in range(1, len(packed)):
        with pytest.raises(TruncatedError):
            seqzip.decompress(packed[:cut])


def test_every_single_bit_flip_is_detected():
    data = b"flip every bit of me " * 10
    packed = seqzip.compress(data, level=2)
    for pos in range(len(packed)):
        for bit in range(8):
            bad = bytearray(packed)
            bad[pos] ^= 1 << bit
            with pytest.raises(SeqzipError):
                seqzip.decompress(bytes(bad))


def rebuild_header(packed: bytes, **changes) -> bytes:
    """Re-pack a stream's header with changed fields and a valid header checksum."""
    header, end = container.parse_header(packed)
    fields = dict(seed=header.seed, length=header.length, frame_size=header.frame_size,
                  crc32=header.crc32, config=header.config)
    fields.update(changes)
    config = fields.pop("config")
    head = struct.pack("<4sBBH", container.MAGIC, container.VERSION,
                       changes.pop("model_id", 1), len(config)) + config
    bitmap = bytearray(32)
    for b in header.alphabet:
        bitmap[b >> 3] |= 1 << (b & 7)
    head += struct.pack("<QQI32sI", fields["seed"], fields["length"], fields["frame_size"],
                        bytes(bitmap), fields["crc32"])
    return head + struct.pack("<I", zlib.crc32(head)) + packed[end:]


@pytest.mark.parametrize("changes, message", [
    (dict(length=2**63), "absurd length"),
    (dict(length=10**12), "expected"),  # frame declares fewer symbols than such a length needs
    (dict(length=519), "expected"),
    (dict(frame_size=0), "frame size"),
    (dict(frame_size=2**31), "frame size"),
    (dict(crc32=0), "checksum"),
    (dict(config=b'{"order":2}'), "config"),  # the old keyed form is not a config any more
    (dict(config=b'[255,1.0]'), "config"),  # a value missing
    (dict(config=b'[255,1.0,7]'), "config"),  # order 7 is out of range
    (dict(config=b'[255,1.0,"2"]'), "config"),  # a string for a number
    (dict(config=b'[255,true,2]'), "config"),  # a bool for a number
    (dict(config=b"\xff\xfe"), "config"),
    (dict(config=b"[]"), "config"),
    (dict(config=b"x" * 5000), "config"),
])
def test_hostile_header_fields(changes, message):
    """Fields with a valid header checksum but impossible values give a clear error."""
    packed = rebuild_header(small_stream(model="order2"), **changes)  # rebuild_header: order2
    with pytest.raises(CorruptError, match=message):
        seqzip.decompress(packed)


def test_unknown_model_id():
    packed = rebuild_header(small_stream(), model_id=200)
    with pytest.raises(CorruptError, match="model id 200"):
        seqzip.decompress(packed)


def test_absurd_frame_payload_length_is_rejected_before_reading():
    packed = small_stream()
    _, end = container.parse_header(packed)
    n, size, crc = struct.unpack_from("<III", packed, end)
    bad = packed[:end] + struct.pack("<III", n, 2**32 - 4, crc) + packed[end + 12:]
    with pytest.raises(CorruptError, match="impossible payload"):
        seqzip.decompress(bad)


def test_trailing_garbage_is_an_error():
    with pytest.raises(NotSeqzipError):
        seqzip.decompress(small_stream() + b"garbage")


def test_valid_frame_checksum_but_wrong_payload():
    """A payload forged with a matching frame checksum still fails the data checksum."""
    packed = small_stream(b"0123456789" * 40)
    _, end = container.parse_header(packed)
    n, size, _ = struct.unpack_from("<III", packed, end)
    payload = bytearray(packed[end + 12:end + 12 + size])
    payload[len(payload) // 2] ^= 0x55
    head = struct.pack("<II", n, size)
    forged = (packed[:end] + head + struct.pack("<I", zlib.crc32(bytes(payload),
                                                                 zlib.crc32(head)))
              + bytes(payload) + packed[end + 12 + size:])
    with pytest.raises(CorruptError):
        seqzip.decompress(forged)


def test_error_classes():
    assert issubclass(TruncatedError, EOFError) and issubclass(TruncatedError, SeqzipError)
    for cls in (CorruptError, NotSeqzipError, UnsupportedVersionError):
        assert issubclass(cls, SeqzipError)
