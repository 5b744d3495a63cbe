"""Case-folded streams (``seqzip.textcase``, cm's presets 141 and 142): the transform and its
inverse over any chunking, the header's escape count, the encoder's choice, exact streams, and
each kind of damage giving its error."""
import dataclasses
import hashlib
import io

import pytest
from hypothesis import given, settings, strategies as st

import seqzip
import seqzip.session
from seqzip import corpora, textcase
from seqzip.api import config_with
from seqzip.container import parse_header
from seqzip.errors import CorruptError
from seqzip.header import DEFAULT_FRAME, StreamHeader
from seqzip.incremental import SeqzipDecompressor
from seqzip.models.cm import CMConfig
from seqzip.models.base import preset_by_id
from seqzip.pieces import warm_layout
from seqzip.streaminfo import describe_file
from seqzip.textcase import Folder, Unfolder, fold, unfold

TEXT = corpora.generate("text", 6_000, seed=3).data  # generated English with capitals
# bytes a text is made of: letters of both cases weighted up, everything else but the escapes
CHARS = st.sampled_from(b"AaBbZzQqEe" * 6 + bytes(b for b in range(256) if b not in (1, 2)))
TEXTS = st.lists(CHARS, max_size=300).map(bytes)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(points, points[1:])]


def test_examples():
    assert fold(b"The BBC: OK") == b"\x01the \x02bbc: \x02ok"
    assert fold(b"ABc") == b"\x01a\x01bc"  # capitals followed by a lower-case letter
    assert fold(b"ABCd") == b"\x01a\x01b\x01cd"
    assert fold(b"NASA") == b"\x02nasa" and fold(b"A") == b"\x01a"
    assert fold(b"caf\xc3\x89 \xc3\x89T\xc3\x89") == b"caf\xc3\x89 \xc3\x89\x01t\xc3\x89"
    assert fold(b"no capitals") == b"no capitals" and fold(b"") == b""


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_unfold_inverts_fold(data):
    folded = fold(data)
    assert unfold(folded) == data
    assert len(folded) >= len(data) and folded.count(1) + folded.count(2) == \
        len(folded) - len(data)
    assert not any(65 <= b <= 90 for b in folded)  # no ASCII capital is left


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.lists(st.integers(0, 300), max_size=8))
def test_chunked_fold_and_unfold_equal_whole(data, cuts):
    folder = Folder()
    folded = b"".join(folder.feed(c) for c in _chunks(data, cuts)) + folder.close()
    assert folded == fold(data)
    unfolder = Unfolder()
    restored = b"".join(unfolder.feed(c) for c in _chunks(folded, cuts)) + unfolder.close()
    assert restored == data


@pytest.mark.parametrize("damaged", [b"\x01", b"ab\x01", b"\x01 x", b"\x01A", b"\x02",
                                     b"\x02 ", b"x\x02\x02ab", b"\x01\x01a"])
def test_an_escape_without_its_letter_is_corrupt(damaged):
    with pytest.raises(CorruptError, match="escape without its letter"):
        unfold(damaged)
    unfolder = Unfolder()
    with pytest.raises(CorruptError, match="escape without its letter"):
        unfolder.feed(damaged)
        unfolder.close()


@pytest.mark.parametrize("spelling", [b"\x02a ", b"\x01a\x01b", b"\x02a\x01bc", b"x\x02a",
                                      b"\x02ab\x01c "])
def test_only_folds_own_spelling_unfolds(spelling):
    """unfold alone reads these as capitals, but fold writes "A", "AB", "ABc" and "ABC" other
    ways: the decoder's Unfolder refuses them, so a stream decodes only from one form."""
    assert fold(unfold(spelling)) != spelling
    unfolder = Unfolder()
    with pytest.raises(CorruptError, match="one spelling"):
        for i in range(len(spelling)):  # a byte at a time: the check spans the chunks
            unfolder.feed(spelling[i:i + 1])
        unfolder.close()


def test_header_carries_the_escape_count():
    h = StreamHeader(7, bytes([141]), 0, 100, DEFAULT_FRAME, bytes(range(120)), 5, escapes=7)
    packed = h.pack()
    assert parse_header(packed) == (h, len(packed)) and h.coded == 107
    plain = dataclasses.replace(h, escapes=0).pack()
    assert len(packed) == len(plain) + 2  # the options byte and a one-byte varint
    with pytest.raises(ValueError, match="at most its length"):
        dataclasses.replace(h, escapes=101).pack()
    with pytest.raises(ValueError, match="versions 8 and later"):
        dataclasses.replace(h, version=6, config=b"\x06").pack()


def _resealed(head: bytes) -> bytes:
    import zlib
    return head + (zlib.crc32(head) & 0xFFFF).to_bytes(2, "little")


def test_header_refuses_escape_fields_out_of_spelling():
    h = StreamHeader(7, bytes([141]), 0, 100, DEFAULT_FRAME, bytes(range(120)), 5, escapes=7)
    body = h.pack()[:-2]
    at = body.index(bytes([7]), 7)  # the escapes varint, after the length's
    with pytest.raises(CorruptError, match="not canonical"):
        parse_header(_resealed(body[:at] + b"\x00" + body[at + 1:]))  # flagged, but zero
    with pytest.raises(CorruptError, match="escape count"):
        parse_header(_resealed(body[:at] + b"\x65" + body[at + 1:]))  # 101 > length 100
    options = body[6]
    with pytest.raises(CorruptError, match="options"):
        parse_header(_resealed(body[:6] + bytes([options | 8]) + body[7:]))


def _header(packed: bytes) -> StreamHeader:
    return parse_header(packed)[0]


@pytest.mark.parametrize("level, preset_id", [(5, 118), (6, 43), (7, 149), (8, 150), (9, 142)])
def test_levels_5_to_9_fold_a_text_that_pays(level, preset_id):
    packed = seqzip.compress(TEXT, level)
    header = _header(packed)
    assert header.config == bytes([preset_id]) and header.length == len(TEXT)
    assert header.escapes == len(fold(TEXT)) - len(TEXT) > 0
    assert seqzip.decompress(packed) == TEXT
    assert seqzip.decompress(packed, max_length=len(TEXT)) == TEXT  # the length is the output's
    d, out = SeqzipDecompressor(), b""
    for i in range(0, len(packed), 97):  # a byte at a time out of chunks of input
        out += d.decompress(packed[i:i + 97], max_length=1)
    while not d.eof:
        out += d.decompress(b"", max_length=1)
    assert out == TEXT


def test_the_encoder_keeps_the_text_as_it_is_where_folding_cannot_or_need_not_pay(monkeypatch):
    assert _header(seqzip.compress(TEXT, 1)).config == bytes([48])  # level 1: no twin
    assert _header(seqzip.compress(TEXT.lower(), 6)).config == bytes([42])  # no capitals
    assert _header(seqzip.compress(TEXT + b"\x01", 6)).config == bytes([42])  # an escape byte
    assert _header(seqzip.compress(TEXT + b"\x00", 6)).config[0] == 44  # binary: its variant
    monkeypatch.setattr(seqzip.session, "MAX_FOLDED", len(TEXT) - 1)
    assert _header(seqzip.compress(TEXT, 6)).config == bytes([42])  # too long
    monkeypatch.setattr(seqzip.session, "MAX_FOLDED", len(TEXT))
    monkeypatch.setattr(seqzip.session, "fold_pays", lambda sample: False)
    assert _header(seqzip.compress(TEXT, 6)).config == bytes([42])  # the trial says no


FAST = config_with("cm", 1, fold_case=1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(b"ABCQZabq .,:\n!x"), min_size=1, max_size=400).map(bytes),
       st.sampled_from([7, 100, DEFAULT_FRAME]))
def test_folded_streams_round_trip_whatever_letters_the_text_lacks(data, frame_size):
    """The header's alphabet is the folded form's (a capital's lower-case letter may be absent
    from the text), over frames that cut escapes from their letters."""
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, config=FAST, frame_size=frame_size)
    header = _header(out.getvalue())
    assert header.escapes == len(fold(data)) - len(data)
    assert not bytes(set(fold(data))).translate(None, header.alphabet)
    assert seqzip.decompress(out.getvalue()) == data


def test_level_6_folds_a_text_whose_alphabet_is_listed(monkeypatch):
    monkeypatch.setattr(seqzip.session, "fold_pays", lambda sample: True)
    data = b"The BBC said: OK. Then NASA and the Quick Fox ran. " * 6
    packed = seqzip.compress(data, 6)
    assert _header(packed).escapes and seqzip.decompress(packed) == data


def test_fold_pays_reads_exact_coded_sizes():
    assert seqzip.session.fold_pays(TEXT[:4000])
    assert not seqzip.session.fold_pays(b"The cat sat on the mat. A dog ran to the cat. " * 20)
    assert not seqzip.session.fold_pays(b"")
    assert not seqzip.session.fold_pays(b"x=Y;" * 200)  # a capital in every word of code


def test_a_folding_config_on_data_it_cannot_fold_codes_it_as_it_is():
    twin = CMConfig.for_preset_id(141)
    assert twin.unfolded() == CMConfig.for_preset_id(133)
    assert CMConfig.for_preset_id(43).unfolded() == CMConfig.for_preset_id(42)  # level 6's
    custom = config_with("cm", 1, fold_case=1)
    assert custom.unfolded() == config_with("cm", 1) and custom.folded() is None
    for config in (twin, custom):
        out = io.BytesIO()
        seqzip.compress_file(io.BytesIO(TEXT + b"\x02"), out, config=config)
        header = _header(out.getvalue())
        assert not header.escapes and seqzip.decompress(out.getvalue()) == TEXT + b"\x02"


# exact streams of the folded presets (seed 1): size and SHA-256
GOLDEN_FOLDED = {
    141: (850, "54ab36f9715eda24a731f3e4dc904fcd77ebb5dc2fed54165e8938fae6b8cdd9"),
    142: (850, "4a2ee297a9781a550b38fc480ddfbe96bb72a053be6348dd47a9d8c3eafcba28"),
    118: (862, "fe8c4b83047777b426fa5704d939d093549d2915ec7654bf5261f83f2f726d9d"),
    149: (850, "a436572670cd7595c5b1481c71d80f6ab5f31815c86416eea9a7fa044d7724b3"),
    150: (850, "d7d0f9a71d4e8b7e1158bc0dd6ede9ac04443a14a968b5f3744d08e37ba73fb7"),
    43: (850, "5c428977c7dd79d1f8b3e216f18cfb486506d4210b3f77da00452d5ca927c816"),  # level 6's
}


@pytest.mark.parametrize("preset_id", sorted(GOLDEN_FOLDED))
def test_golden_streams_of_the_folded_presets(preset_id, checked_streams):
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(TEXT[:3000]), out, seed=1,
                         config=preset_by_id(CMConfig, preset_id))
    packed = out.getvalue()
    assert _header(packed).config == bytes([preset_id])
    assert (len(packed), hashlib.sha256(packed).hexdigest()) == GOLDEN_FOLDED[preset_id]
    assert seqzip.decompress(packed) == TEXT[:3000]


def test_damaged_escape_counts_are_refused():
    packed = seqzip.compress(TEXT, 6)
    header, used = parse_header(packed)
    for escapes in (header.escapes - 1, header.escapes + 1):
        forged = dataclasses.replace(header, escapes=escapes).pack() + packed[used:]
        with pytest.raises(CorruptError):
            seqzip.decompress(forged)
    plain = seqzip.compress(TEXT.lower(), 6)
    header, used = parse_header(plain)
    forged = dataclasses.replace(header, escapes=1).pack() + plain[used:]
    with pytest.raises(CorruptError, match="codes none"):
        seqzip.decompress(forged)


def test_folded_pieces_round_trip_serially_and_side_by_side():
    data = corpora.generate("text", 300_000, seed=11).data
    assert any(65 <= b <= 90 for b in data)
    config = config_with("cm", 1, fold_case=1)
    out, seen = io.BytesIO(), []
    seqzip.compress_file(io.BytesIO(data), out, config=config, processes=2,
                         progress=seen.append)
    packed = out.getvalue()
    assert sum(seen) == len(data)
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    assert len(spans) > 1 and all(s.header.escapes for s in spans)
    assert [s.length for s in spans] == list(warm_layout(len(data), 2))
    assert seqzip.decompress(packed) == data
    restored = io.BytesIO()
    seqzip.decompress_file(io.BytesIO(packed), restored, processes=2)
    assert restored.getvalue() == data


def test_progress_counts_input_bytes_and_info_reports_the_output_length():
    out, seen = io.BytesIO(), []
    seqzip.compress_file(io.BytesIO(TEXT), out, progress=seen.append)
    assert sum(seen) == len(TEXT) and _header(out.getvalue()).escapes
    info = describe_file(io.BytesIO(out.getvalue()), "x")
    assert info["original_bytes"] == len(TEXT) and info["levels"] == ["6"]
    assert info["streams"][0]["escapes"] == len(fold(TEXT)) - len(TEXT)


def test_a_model_file_whose_config_folds_codes_the_text_as_it_is():
    """A dictionary's stream codes over the model file's config and alphabet, never folded:
    the decoder unfolds only a stream whose header counts escapes."""
    from seqzip.predictor import Predictor
    d = Predictor("cm", config=config_with("cm", 1, fold_case=1), alphabet=bytes(range(256)))
    d.feed(TEXT[:2000])
    packed = seqzip.compress(TEXT + b"\x01\x02", dictionary=d)
    assert not _header(packed).escapes
    assert seqzip.decompress(packed, dictionary=d) == TEXT + b"\x01\x02"
