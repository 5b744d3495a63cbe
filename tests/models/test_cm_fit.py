"""cm's ``fit``: with the input's length known from the stream's header, the hashed table (and
the run table, a quarter of it) is sized to the input (``CMConfig.table_bits_for``).  The size
is part of the model, so every path that builds one must agree: a stream's encoder and decoder
(both from the header), and the pieces of a warm piece set (never sized: each later piece takes
the prefix's state)."""
import io

import pytest

import seqzip
import seqzip.session
from seqzip import api, corpora
from seqzip.header import parse_header
from seqzip.models.cm import CMConfig
from seqzip.pieces import warm_layout
from seqzip.pieceset import parse_piece_set
from seqzip.session import model_for_header

LIGHT = CMConfig(orders="2,3", table_bits=23, fit=1)  # a fast config whose table can shrink


def _stream(data: bytes, config: CMConfig) -> bytes:
    out = io.BytesIO()
    api.compress_file(io.BytesIO(data), out, model="cm", config=config)
    return out.getvalue()


def test_the_table_follows_the_length_between_its_bounds():
    config = CMConfig(table_bits=24, fit=1)
    assert [config.table_bits_for(n) for n in (0, 1, 511, 512, 4227, 65535, 65536, 1 << 30)] \
        == [24, 16, 16, 17, 20, 23, 24, 24]
    assert CMConfig(table_bits=14, fit=1).table_bits_for(100) == 14  # never above its own
    assert CMConfig(table_bits=24).table_bits_for(100) == 24  # without fit: its own
    assert config.spec_for(0) is config.spec and config.spec_for(4227).table_bits == 20
    with pytest.raises(ValueError, match="fit"):
        CMConfig(fit=2)


def test_levels_6_and_9_fit_and_level_1_does_not():
    assert CMConfig.for_level(6).fit == CMConfig.for_level(9).fit == 1
    assert CMConfig.for_level(1).fit == 0
    for level in (6, 9):
        variants = CMConfig.DATA_VARIANTS[CMConfig.PRESET_IDS[level]]
        for kind in ("binary", "x86", "risc", "m68k"):
            assert CMConfig.for_preset_id(variants[kind]).fit == 1, (level, kind)


@pytest.mark.parametrize("length", [511, 512, 2047, 2048, 9000])
def test_a_stream_is_decoded_by_a_model_of_its_encoders_size(length):
    data = corpora.generate("text", length, seed=length).data
    packed = _stream(data, LIGHT)
    header = parse_header(packed)[0]
    assert header.length == length
    sized = model_for_header(header)
    full = model_for_header(header, sized=False)
    bits = LIGHT.table_bits_for(length)
    assert bits < 23
    # the hashed table is 2^bits slots of 16 bytes and the run table a quarter of its slots
    assert full.kernel.memory_allocated() - sized.kernel.memory_allocated() >= \
        16 * ((1 << 23) - (1 << bits))
    assert seqzip.decompress(packed) == data
    # the fitted model is the unsized one with that table: the same payload (the headers
    # differ, as the configs do)
    other = _stream(data, CMConfig(orders="2,3", table_bits=bits))
    assert packed[parse_header(packed)[1]:] == other[parse_header(other)[1]:]


def test_level_6_on_a_short_text_names_its_fitted_preset_and_decodes(monkeypatch):
    monkeypatch.setattr(seqzip.session, "fold_pays", lambda sample: False)  # not its twin, 141
    data = corpora.generate("text", 3000, seed=1).data
    packed = seqzip.compress(data, 6)
    header = parse_header(packed)[0]
    six = CMConfig.PRESET_IDS[6]  # a terse header's version: 8 + 2 * the id's band, + 64 lean
    assert header.config == bytes([six]) and header.version == 8 + 2 * ((six - 1) // 15) + 64
    assert seqzip.decompress(packed) == data


def test_a_warm_piece_set_of_a_fitted_config_takes_one_table_size():
    """The prefix (1/8 of the input) would fit a smaller table than the later pieces; all are
    built unsized so that the later pieces can take the prefix's state."""
    data = corpora.generate("text", 160_000, seed=3).data
    layout = warm_layout(len(data), 2)
    assert len(layout) == 3 and LIGHT.table_bits_for(layout[0]) < \
        LIGHT.table_bits_for(layout[1])
    out = io.BytesIO()
    api.compress_file(io.BytesIO(data), out, model="cm", config=LIGHT, processes=2)
    packed = out.getvalue()
    pieces, _ = parse_piece_set(packed)
    assert len(pieces.lengths) == 3
    assert seqzip.decompress(packed) == data
    back = io.BytesIO()
    api.decompress_file(io.BytesIO(packed), back, processes=2)
    assert back.getvalue() == data
