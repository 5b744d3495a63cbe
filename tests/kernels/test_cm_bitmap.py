"""The 1-bit image expert's second form (image=2: five more tables, the pixels as APM stage 3's
context) and the ``pixel`` weight-set selector: each pays on a bitmap, round-trips, its state
restores mid-stream and is checked, its memory is bounded, and a stream is pinned."""
import io

import numpy as np
import pytest

import seqzip
from seqzip._kernels.cm import LIMITS, SELECTORS
from seqzip.header import parse_header
from seqzip.models.base import config_to_header
from seqzip.models.cm import (BITMAP_CHANGES, PRESETS, CMConfig, CMModel,
                              looks_like_bitmap)
from tests.kernels.test_cm import feed, kernel
from tests.kernels.test_cm_binary import frames_digest
from tests.kernels.test_cm_options import round_trip


def bitmap(rows: int = 600, width: int = 512, seed: int = 3) -> bytes:
    """A 1-bit picture, eight pixels a byte: rectangles and slanted bars that continue from
    row to row, on a white (zero) ground."""
    rng = np.random.default_rng(seed)
    image = np.zeros((rows, width), dtype=np.uint8)
    for _ in range(rows // 6):
        r, c = rng.integers(0, rows - 20), rng.integers(0, width - 40)
        h, w, slant = rng.integers(3, 20), rng.integers(3, 40), rng.integers(-1, 2)
        for k in range(h):
            image[r + k, max(0, c + slant * k):c + slant * k + w] ^= 1
    return np.packbits(image, axis=1).tobytes()


BITMAP = dict(record=2, image=2, sets="c12n,match,pixel", apm=4)
GOLDEN = (724, "a8cb8e647f6efb07c46cb332de7b189d185607fed957691e847957c8a7740584")


def test_bounds_and_inputs():
    with pytest.raises(ValueError):
        CMConfig(image=3)
    with pytest.raises(ValueError):
        CMConfig(sets="pixel,nothing")
    n = len(kernel().mixer_inputs())
    assert len(kernel(image=1).mixer_inputs()) == n + LIMITS["image_maps"]
    assert len(kernel(image=2).mixer_inputs()) == n + 2 * LIMITS["image_maps"]
    assert "pixel" in SELECTORS


def test_memory_is_the_kernels_own_account():
    one, two = CMConfig(image=1), CMConfig(image=2)
    # the expert's own tables, and the mixer's rows for its five more inputs
    assert two.memory_bytes(256) - one.memory_bytes(256) > \
        LIMITS["image_bytes"][2] - LIMITS["image_bytes"][1] > 0
    for config in (one, two, CMConfig(image=2, sets="pixel,node")):
        allocated = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel.memory_allocated()
        assert allocated <= config.memory_bytes(256)
    # image=1's account is the one it always had: five tables of 2^20 6-byte entries
    assert LIMITS["image_bytes"][1] == 5 * 6 << 20


def test_the_pixel_selector_and_image2_pay_on_a_bitmap():
    data = bitmap()
    base = dict(record=2, sets="c12n,match", apm=4)
    one = round_trip(data, **dict(base, image=1))
    pixel = round_trip(data, **dict(base, image=1, sets="c12n,match,pixel"))
    both = round_trip(data, **BITMAP)
    # (image=2's own gain shows on a real page, ptt5, not on these rectangles)
    assert pixel < one and both < one, (one, pixel, both)


def test_pixel_selector_round_trips_on_text_and_short_inputs():
    """With no record length (text, a few bytes) the selector reads only the row's pixels."""
    for data in (b"", b"\x00", b"ab", b"the cat sat on the mat " * 40):
        round_trip(data, sets="pixel", image=2)


def test_golden_stream(checked_streams):
    config = CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **BITMAP))
    assert frames_digest(bitmap(), config) == GOLDEN


def test_image2_state_restores_mid_stream_and_is_checked():
    data = bitmap(rows=100)
    a, b = kernel(**BITMAP), kernel(**BITMAP)
    feed(a, data[:3001])
    a.predict_bit()
    a.update_bit(1)  # inside a byte: the indices are those of a pixel in the middle
    state = a.get_state()
    assert {"image.history0", "image.slot2", "image9.index"} <= set(state)
    assert "image.history0" not in kernel(image=1).get_state()
    b.set_state(state)
    for k in (a, b):
        for bit in (0, 1, 1, 0, 0, 1, 0):
            k.predict_bit()
            k.update_bit(bit)
        feed(k, data[3001:5000])
    assert a.predict_bit() == b.predict_bit()
    c = kernel(**BITMAP)
    for name, value in (("image.slot1", 1 << 20), ("image5.index", 1 << 16),
                        ("image8.index", 1 << 12), ("image6.index", 256), ("image0.index", -1)):
        with pytest.raises(ValueError, match=name.replace(".", r"\.")):
            c.set_state(dict(state, **{name: np.array(value, dtype=np.int64)}))
    counts = np.frombuffer(state["image8.n"], dtype="=u2").copy()
    counts[5] = 4000
    with pytest.raises(ValueError, match=r"image8\.n"):
        c.set_state(dict(state, **{"image8.n": counts.view(np.uint8)}))
    c.set_state(state)  # taken after the bad ones were refused
    assert c.get_state()["image.slot2"] == state["image.slot2"]


def counts_of(data: bytes) -> np.ndarray:
    return np.bincount(np.frombuffer(data, dtype=np.uint8), minlength=256)


def test_the_bitmap_detector_tells_a_page_from_text_tables_and_code():
    from seqzip import corpora
    from tests.kernels.test_cm_binary import ar2_samples
    assert looks_like_bitmap(counts_of(bitmap()))
    assert looks_like_bitmap(counts_of(bytes(255 - b for b in bitmap())))  # black on white
    rng = np.random.default_rng(1)
    for data in (corpora.generate("text", 5000, seed=1).data, ar2_samples(2000, 2),
                 bytes(1000) + rng.integers(0, 256, 1000, dtype=np.uint8).tobytes(),
                 bytes(range(256)) * 4, b""):
        assert not looks_like_bitmap(counts_of(data)), data[:20]
    # the edges: half blank, nine in ten of the rest smooth
    edge = np.zeros(256, dtype=np.int64)
    edge[0], edge[0x0F], edge[0x41] = 10, 9, 1
    assert looks_like_bitmap(edge)
    edge[0x41] = 2
    assert not looks_like_bitmap(edge)


def profile_of(data: bytes):
    from seqzip.session import _scan_profile
    return _scan_profile(io.BytesIO(data))[1]


@pytest.mark.parametrize("level,bitmap_id,from_id,binary_id,more", [
    (6, 66, 62, 44, dict(runs=0)),
    (9, 110, 62, 135, dict(runs=0, table_bits=24, history_bits=24, eps=45.0)),
    (1, 39, 71, 140, dict(rows=0, post=0, post_mode=0))])
def test_each_level_codes_a_page_with_its_bitmap_variant(level, bitmap_id, from_id, binary_id,
                                                        more):
    """A level preset turns into its bitmap variant (the binary variant's fields with
    ``BITMAP_CHANGES`` and, since round four, no run information, level 1 no row contexts,
    level 9 level 6's rows and final stage; since round five levels 1 and 9 without the last
    mix, whose binary variants since round six take its mode 65; round seven's binary variants
    added contexts, round nine's level 6 binary variant damps its mixer more, its bitmap variants
    are round six's, round ten's level 9 takes level 6's with its larger tables, round eleven's
    level 6 binary variant is 111, round twelve's binary variants 123 and 127 size their tables
    to the input, round fourteen's 138, 139 and 140 floor the final probability at 2^-16, round
    sixteen's level 9 binary variant is 135, round seventeen's level 6 binary variant 44) on
    data the detector calls a 1-bit image, into its
    binary variant on other data with a zero byte and when the counts are not known; a
    variant never turns again; the stream names the variant and decodes."""
    base, bitmap_preset = CMConfig.for_level(level), CMConfig.for_preset_id(bitmap_id)
    binary = CMConfig.for_preset_id(binary_id)
    assert bitmap_preset == CMConfig(**{**PRESETS[from_id], **BITMAP_CHANGES, **more})
    data = bitmap()
    text = b"a table\x00 of words\x00" * 50
    assert base.for_data(b"\x00\x01", profile_of(data)) == bitmap_preset
    assert base.for_data(b"\x00\x01", profile_of(text)) == binary
    assert base.for_data(b"\x00\x01") == binary  # profile unknown
    assert base.for_data(b"ab", profile_of(b"ab")) == base  # no zero byte: text
    assert binary.for_data(b"\x00", profile_of(data)) == binary  # only a level preset turns
    assert bitmap_preset.for_data(b"\x00", profile_of(data)) == bitmap_preset
    if level == 6:
        packed = seqzip.compress(data, level)
        header = parse_header(packed)[0]
        assert header.config == bytes([bitmap_id]) == config_to_header(CMConfig, bitmap_preset)
        assert seqzip.decompress(packed) == data
        # -T 2: the variant is chosen once from the whole input, for every piece
        from seqzip import api
        from seqzip.pieceset import parse_piece_set
        big = data * (160_000 // len(data) + 1)
        out = io.BytesIO()
        api.compress_file(io.BytesIO(big), out, level=level, processes=2)
        packed = out.getvalue()
        pieces, at = parse_piece_set(packed)
        assert len(pieces.lengths) >= 2
        assert parse_header(packed, at)[0].config == bytes([bitmap_id])
        assert seqzip.decompress(packed) == big
