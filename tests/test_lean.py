"""Lean streams (format versions 72-91): a stream of at most LEAN_MAX symbols in one frame
carries no frame or block checks and a payload to the byte, its bit coder sealed tight; the
decoder returns nothing of it before the data's CRC-32 verifies."""
import hashlib
import io
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import seqzip
import seqzip.session
from seqzip import coder, container, corpora
from seqzip._core import BitDecoder, BitEncoder
from seqzip.container import block_bounds
from seqzip.errors import CorruptError, SeqzipError
from seqzip.header import (LEAN_MAX, LEAN_SHIFT, LEAN_VERSIONS, StreamHeader, checked_version,
                           is_lean, lean_fits, parse_header)
from seqzip.incremental import SeqzipDecompressor
from seqzip.models import MODELS, create
from seqzip.models.base import pack_varint

from tests.test_container import GOLDEN_INPUT
from tests.test_header_v8 import TEXT

# Lean streams pinned by hand from a reviewed build: order2 -6 on the golden input (seed 1)
# and cm -1 on TEXT; a change here means streams no longer decode.
GOLDEN_LEAN_ORDER2 = (
    "b753515a48e5010101960100ff41e42a36098beb104808487e5be700a91d20cf3e83e8a5451363c041121310"
    "1ec3a872f8659b73527db036c91d60dd476c2f")
GOLDEN_LEAN_CM1 = (
    "b753515a4e13d7027910e85fcf65acba0186c05cb60ef389eb3b3f02b7c8932cc43dc5721e52249a53539ced"
    "cb84dbf8bba2d793fe04466b19ccb5c5d0244dba706d3d3dc8ccd651b8ef04fd5c5798b80aa5e317abaae377"
    "2c639bb570e698e8c65023e274f189e97dd68b53065267cb3d3854f8f81244909b77b57b88b83e4bfbbdcb46"
    "9c755568a66bf4a94bca3c54ed837a0e106862238b9829200c47b9fb8c23fc437974a4b973c0d0af0d3da2a9"
    "fe3ab44585918785948dc4fd8a0eece0edb562f8ce0521971c49b0")
# cm's levels on the golden input x 20 (seed 1; binary data: their binary variants, format 26
# lean, 90; level 9's since round sixteen id 135, format 24 lean, 88): size and SHA-256
# (checked, test_container pins 68-76 bytes)
GOLDEN_LEAN_CM = {
    1: (59, "1848f49989f96779251c57837b87b53eaa161474fbe61e56ae0a60deb17433db"),
    6: (58, "605aff7723710cc424fbe4a93d083ccdd44d1973df3ccfb60ff86159a542a98d"),  # 44 (round 17)
    9: (57, "fbde2b624f04bdff42ffcf9587d5578a9c0adc2a7f58782bf2c308c7b52a7bc3"),  # 135 (round 16)
}


def checked(data: bytes, monkeypatch, **kw) -> bytes:
    """``data`` compressed as builds before lean streams wrote it."""
    with monkeypatch.context() as m:
        m.setattr(seqzip.session, "LEAN", False)
        return seqzip.compress(data, **kw)


# -- which streams are lean ----------------------------------------------------------------

@pytest.mark.parametrize("length", [1, 2, 255, 256, 4096, LEAN_MAX - 1, LEAN_MAX])
def test_a_stream_of_one_frame_up_to_lean_max_symbols_is_lean(length):
    data = (b"lean streams, " * (length // 14 + 1))[:length]
    packed = seqzip.compress(data, model="order2", level=1)
    header, _ = parse_header(packed)
    assert header.lean and is_lean(header.version) and header.version == 8 + LEAN_SHIFT
    assert seqzip.decompress(packed) == data


@pytest.mark.parametrize("length, frame_size", [(0, None), (LEAN_MAX + 1, None),
                                                (300, 256), (1000, 999)])
def test_longer_streams_empty_ones_and_several_frames_keep_their_checks(length, frame_size):
    data = (b"checked streams " * (length // 16 + 1))[:length]
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="order2", level=1,
                         **({"frame_size": frame_size} if frame_size else {}))
    header, _ = parse_header(out.getvalue())
    assert not header.lean and not is_lean(header.version)
    assert seqzip.decompress(out.getvalue()) == data


def test_the_online_networks_streams_keep_their_checks():
    """A forged lean stream costs the decoding of its symbols: the online networks' slowest
    configs take seconds to minutes for LEAN_MAX (benchmarks/hostile.py), so only cm, order2
    and ctw write lean streams."""
    assert sorted(MODELS[name].model_id for name in ("cm", "order2", "ctw")) == \
        sorted(seqzip.header.LEAN_MODEL_IDS)
    data = b"the networks keep their block checks " * 4
    for name in MODELS:
        header = parse_header(seqzip.compress(data, model=name, level=1))[0]
        assert header.lean == (header.model_id in seqzip.header.LEAN_MODEL_IDS), name


def test_lean_fits_and_versions():
    assert LEAN_VERSIONS == tuple(range(72, 92))
    assert all(checked_version(v) == v - LEAN_SHIFT for v in LEAN_VERSIONS)
    assert [lean_fits(n, 1 << 20) for n in (0, 1, LEAN_MAX, LEAN_MAX + 1)] == \
        [False, True, True, False]
    assert not lean_fits(10, 9)
    # a header asked to be lean where it cannot be is written checked
    h = StreamHeader(7, b"\x0a", 0, LEAN_MAX + 1, 1 << 20, b"ab", 0)
    assert not h.lean and h.version == 8
    assert StreamHeader(7, b"\x0a", 0, 10, 1 << 20, b"ab", 0).version == 72
    assert StreamHeader(7, b"\x0a", 0, 10, 1 << 20, b"ab", 0, lean=False).version == 8
    assert StreamHeader(7, bytes([140]), 0, 10, 1 << 20, b"ab", 0).version == 26 + LEAN_SHIFT


@pytest.mark.parametrize("coded, frame_size", [(LEAN_MAX + 1, 1 << 20), (100, 64)])
def test_a_lean_version_on_a_stream_that_cannot_be_lean_is_corrupt(coded, frame_size):
    """One spelling per stream: a lean header is refused for more than LEAN_MAX symbols or
    more than one frame (its frames would go unchecked)."""
    checked_header = StreamHeader(7, b"\x0a", 0, coded, frame_size, b"ab", 0)
    raw = bytearray(checked_header.pack())
    assert raw[4] == 8
    raw[4] = 72
    raw[-2:] = (zlib.crc32(bytes(raw[:-2])) & 0xFFFF).to_bytes(2, "little")
    with pytest.raises(CorruptError, match="does not fit"):
        parse_header(bytes(raw))


# -- sizes --------------------------------------------------------------------------------

@pytest.mark.parametrize("model, level", [("cm", 1), ("cm", 6), ("order2", 6), ("ctw", 1)])
def test_lean_streams_drop_the_checks_and_the_seal_bytes(model, level, monkeypatch):
    data = corpora.generate("text", 4000, seed=11).data
    lean, old = seqzip.compress(data, model=model, level=level), \
        checked(data, monkeypatch, model=model, level=level)
    header, end = parse_header(lean)
    old_header, old_end = parse_header(old)
    assert end == old_end and lean[5:end - 2] == old[5:old_end - 2]  # the same fields
    n = header.coded
    saved = 2 + 2 * len(block_bounds(n))  # the frame check, the block checks
    assert len(lean) <= len(old) - saved + 1  # (a byte count's varint may be a byte longer)
    if model == "cm":  # the tight seal is never longer than constriction's (4-8 bytes)
        assert len(lean) <= len(old) - saved
    assert seqzip.decompress(lean) == seqzip.decompress(old) == data


def test_lean_canterbury_small_texts(monkeypatch):
    from tests.helpers import canterbury_file
    for name in ("grammar.lsp", "xargs.1"):
        data = canterbury_file(name)
        if data is None:
            pytest.skip("Canterbury corpus not present")
        lean, old = seqzip.compress(data, level=1), checked(data, monkeypatch, level=1)
        checks = 2 + 2 * len(block_bounds(len(data)))  # 10-12 bytes here
        assert checks <= len(old) - len(lean) <= checks + 7
        assert seqzip.decompress(lean) == data


# -- the tight seal -------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(1, 65535)), min_size=0, max_size=400))
def test_a_tight_seal_decodes_as_the_full_one_and_is_never_longer(bits_probs):
    bits = np.array([b for b, _ in bits_probs], dtype=np.int64)
    probs = np.array([p for _, p in bits_probs], dtype=np.int64)
    e = BitEncoder()
    e.encode_bits(bits, probs)
    full, tight = e.get_compressed(), e.get_compressed(True)
    assert len(tight) <= len(full)
    assert BitDecoder(tight).decode_bits(probs).tolist() == bits.tolist()
    # what the lean payload keeps: the big-endian words, the last one's zero bytes left out
    payload = tight.astype(">u4").tobytes()
    kept = payload.rstrip(b"\x00") if payload else payload
    kept = payload[:max(len(kept), len(payload) - 3)]
    words = np.frombuffer(kept + bytes(-len(kept) % 4), dtype=">u4").astype(np.uint32)
    d = BitDecoder(words)
    assert d.decode_bits(probs).tolist() == bits.tolist() and d.words_read()


@pytest.mark.parametrize("seed", range(4))
def test_lean_payload_bytes_against_the_log_loss(seed):
    """A lean payload spends the model's -log2 p plus at most the seal's 32 bits and the coder's
    slack (constriction's 24-bit probabilities: under 0.1% here), and may end a few bits short
    of it where the final range's lowest value happens to end in zeros."""
    data = corpora.generate("text", 3000, seed=seed).data
    symbols, alphabet = seqzip.api.symbols_of(data)
    config = seqzip.models.make_config("cm", 1)
    bits = coder.log_loss_bits(create("cm", config, alphabet=alphabet, seed=0), symbols).sum()
    payload = coder.encode(create("cm", config, alphabet=alphabet, seed=0), symbols, lean=True)
    assert bits / 8 - 2 <= len(payload) <= bits / 8 * 1.001 + 4
    out = coder.decode(create("cm", config, alphabet=alphabet, seed=0), payload, len(symbols),
                       lean=True)
    assert out.tolist() == symbols.tolist()


# -- bad input ------------------------------------------------------------------------------

def _feed_bytewise(stream: bytes, out: bytearray) -> bytes:
    """``stream`` decoded a byte of input at a time, each call's output added to ``out`` (so
    a caller sees what came out before an error); TruncatedError where it ends early."""
    d = SeqzipDecompressor()
    for i in range(len(stream)):
        out += d.decompress(stream[i:i + 1])
    if not d.eof:  # a damaged field that asks for more input: cut short
        raise seqzip.errors.TruncatedError("truncated")
    return bytes(out)


@pytest.mark.parametrize("model", ["cm", "order2"])
def test_every_damaged_byte_of_a_lean_stream_is_refused_and_returns_nothing(model):
    data = b"lean streams are checked by the data's CRC-32 alone. " * 4
    packed = seqzip.compress(data, model=model, level=1)
    assert parse_header(packed)[0].lean
    for i in range(len(packed)):
        for flip in (1, 0x80):
            bad = bytearray(packed)
            bad[i] ^= flip
            got = bytearray()
            try:
                _feed_bytewise(bytes(bad), got)
            except SeqzipError:
                assert not got, f"byte {i} ^ {flip}: output returned before the CRC-32 failed"
                continue
            # the seal's last bits may be slack: the point moved within the final range
            assert got == data and i == len(packed) - 1, (i, flip)


def test_every_prefix_of_a_lean_stream_is_refused():
    data = corpora.generate("text", 600, seed=2).data
    packed = seqzip.compress(data, level=6)
    for cut in range(len(packed)):
        with pytest.raises(SeqzipError):
            seqzip.decompress(packed[:cut])
    assert _feed_bytewise(packed, bytearray()) == data


def test_lean_payload_longer_than_the_coder_can_write_is_corrupt():
    data = b"abcab" * 10
    packed = seqzip.compress(data, model="order2", level=1)
    header, end = parse_header(packed)
    bound = container.max_payload_bytes(header.coded)
    forged = packed[:end] + pack_varint(bound + 1) + bytes(bound + 1)
    with pytest.raises(CorruptError, match="impossible payload"):
        seqzip.decompress(forged)


def test_trailing_garbage_inside_a_lean_payload_is_refused():
    data = corpora.generate("text", 800, seed=4).data
    packed = seqzip.compress(data, level=1)
    header, end = parse_header(packed)
    size, at = seqzip.models.base.read_varint(packed, end, 1 << 30)
    payload = packed[at:at + size]
    forged = packed[:end] + pack_varint(size + 8) + payload + b"\x55" * 8
    with pytest.raises(CorruptError):
        seqzip.decompress(forged)


# -- goldens and the other paths ------------------------------------------------------------

def test_golden_lean_streams():
    packed = seqzip.compress(GOLDEN_INPUT, model="order2", level=6, seed=1)
    assert packed[4] == 72 and packed.hex() == GOLDEN_LEAN_ORDER2
    assert seqzip.decompress(bytes.fromhex(GOLDEN_LEAN_ORDER2)) == GOLDEN_INPUT
    packed = seqzip.compress(TEXT, level=1)  # cm's level 1 is preset 46 (band 3): version 78
    assert packed[4] == 14 + LEAN_SHIFT and packed.hex() == GOLDEN_LEAN_CM1
    assert seqzip.decompress(bytes.fromhex(GOLDEN_LEAN_CM1)) == TEXT


def test_golden_lean_stream_of_ctw():
    """A symbol-mode coder's lean payload: constriction's words, big-endian, its seal's."""
    data = GOLDEN_INPUT * 20
    packed = seqzip.compress(data, model="ctw", level=6, seed=1)
    assert packed[4] == 72 and (len(packed), hashlib.sha256(packed).hexdigest()) == \
        (95, "899b47a3cc3b54fd4cebb8d8bf45f494d1bffefd7d73288a3984f18b15139370")
    assert seqzip.decompress(packed) == data


@pytest.mark.parametrize("level", [1, 6, 9])
def test_golden_lean_streams_of_cm_levels(level):
    data = GOLDEN_INPUT * 20
    packed = seqzip.compress(data, model="cm", level=level, seed=1)
    assert (len(packed), hashlib.sha256(packed).hexdigest()) == GOLDEN_LEAN_CM[level]
    assert seqzip.decompress(packed) == data


# the folded presets (test_textcase pins their checked streams, 850 bytes each): lean
GOLDEN_LEAN_FOLDED = {
    141: (839, "3f41148ba1600cbe5805631d02cfa552eb16d4f9a810fbb63cfa6b4179e28f9f"),
    142: (838, "1732e2992ed0559cfdf76f0ef815c21eac36749b105a667a0ecba39a8c4eb352"),
}


@pytest.mark.parametrize("preset_id", sorted(GOLDEN_LEAN_FOLDED))
def test_golden_lean_streams_of_the_folded_presets(preset_id):
    from seqzip.models.base import preset_by_id
    from seqzip.models.cm import CMConfig
    from tests.test_textcase import TEXT as FOLDABLE
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(FOLDABLE[:3000]), out, seed=1,
                         config=preset_by_id(CMConfig, preset_id))
    packed = out.getvalue()
    header = parse_header(packed)[0]
    assert header.lean and header.escapes and header.version == 26 + LEAN_SHIFT
    assert (len(packed), hashlib.sha256(packed).hexdigest()) == GOLDEN_LEAN_FOLDED[preset_id]
    assert seqzip.decompress(packed) == FOLDABLE[:3000]


def test_checked_small_streams_of_earlier_builds_still_decode(monkeypatch):
    data = corpora.generate("text", 2000, seed=8).data
    for level in (1, 6):
        old = checked(data, monkeypatch, level=level)
        assert not is_lean(old[4]) and seqzip.decompress(old) == data


def test_piece_sets_mix_lean_and_checked_pieces():
    """A warm piece set's short prefix is lean, its longer pieces checked: one set."""
    data = corpora.generate("text", 160_000, seed=6).data
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="order2", level=1, processes=2)
    packed = out.getvalue()
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    versions = [s.header.version for s in spans]
    assert versions[0] == 72 and 8 in versions[1:], versions
    assert seqzip.decompress(packed) == data
    restored = io.BytesIO()
    seqzip.decompress_file(io.BytesIO(packed), restored, processes=2)
    assert restored.getvalue() == data


def test_lean_and_checked_streams_concatenate(monkeypatch):
    small, other = b"a lean stream " * 30, corpora.generate("text", 3000, seed=9).data
    lean = seqzip.compress(small, level=1)
    old = checked(other, monkeypatch, level=1)
    nets = seqzip.compress(small, model="mlstm", level=1)  # an online network's: checked
    assert is_lean(lean[4]) and not is_lean(old[4]) and not is_lean(nets[4])
    joined = lean + old + nets + lean
    assert seqzip.decompress(joined) == small + other + small + small
    d, out = SeqzipDecompressor(), bytearray()
    out += d.decompress(joined)
    while d.next_stream():
        out += d.decompress(b"")
    assert bytes(out) == small + other + small + small
    with seqzip.open(io.BytesIO(joined)) as f:
        assert f.read() == small + other + small + small
