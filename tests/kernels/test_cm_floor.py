"""The final probability's floor (``CMConfig.sse`` bit 9, ``sse.pxd``'s SSE_FINE): P(1) comes
to the coder in units of 2^-16, clamped to [16, 65520] without the bit and to [1, 65535] with
it, so a bit the model is sure of costs 2^-16 of certainty's price, not 2^-12's."""
import dataclasses

import pytest

import seqzip
from seqzip.header import parse_header
from seqzip.models.cm import CMConfig
from tests.kernels.test_cm import feed, kernel
from tests.kernels.test_cm_runs import compress
from tests.test_header_v8 import frames_of

FINE = 512
# a table of records that are mostly zeros, as a spreadsheet's are
RECORDS = b"".join(bytes([0, 0, 0, k % 7, 0, 0, 0, 0, 0, 0, 0, 1]) for k in range(3000))


def predictions(k, data: bytes):
    """P(1) (2^-16 units; 0 and 65536 a forced bit) for each bit of ``data``, the kernel
    learning each bit after its prediction is taken."""
    for b in data:
        for j in range(7, -1, -1):
            yield k.predict_bit()
            k.update_bit((b >> j) & 1)


def extremes(k, data: bytes) -> tuple[int, int]:
    """The least and greatest P(1) the kernel gives to a coded (not forced) bit of ``data``."""
    coded = [p for p in predictions(k, data) if 0 < p < 65536]
    return min(coded), max(coded)


def test_the_clamp_is_16_without_the_bit_and_1_with_it():
    plain, fine = kernel(sse=1), kernel(sse=1 | FINE)
    assert extremes(plain, RECORDS[:6000]) == (16, 65520)
    lo, hi = extremes(fine, RECORDS[:6000])
    assert lo < 16 and hi > 65520 and lo >= 1 and hi <= 65535


def test_the_bit_alone_adds_no_stage_and_changes_only_the_clamp():
    """sse = 512 alone builds no extra stage: its kernel predicts as sse = 0's wherever that
    one is inside the clamp, and its memory is the same."""
    a, b = kernel(), kernel(sse=FINE)
    assert a.memory_allocated() == b.memory_allocated()
    for pa, pb in zip(predictions(a, RECORDS[:3000]), predictions(b, RECORDS[:3000])):
        assert pa == pb or (pa in (16, 65520) and (pb < 16 or pb > 65520))


@pytest.mark.parametrize("sse", [0, 51, 275])
def test_round_trips_and_never_costs_more(sse):
    """A sure bit costs less; a wrong sure bit would cost more (16 bits, not 12), which the
    stages keep rare: on these records, three times over, the payload never grows (measured:
    73, 65, 69 bytes -> 73, 61, 65)."""
    data = RECORDS * 3
    plain, fine = compress(data, sse=sse), compress(data, sse=sse | FINE)
    assert seqzip.decompress(fine) == data and seqzip.decompress(plain) == data
    assert len(frames_of(fine)) <= len(frames_of(plain))
    if sse:
        assert len(frames_of(fine)) < len(frames_of(plain))
    text = b"a short text, and then some more of it; " * 40
    assert seqzip.decompress(compress(text, sse=sse | FINE)) == text


def test_bound_and_state():
    with pytest.raises(ValueError, match="sse"):
        CMConfig(sse=1024)
    a = kernel(sse=51 | FINE)
    feed(a, RECORDS[:500])
    b = kernel(sse=51 | FINE)
    b.set_state(a.get_state())
    assert a.predict_bit() == b.predict_bit()


def test_the_binary_variants_take_it():
    """Round fourteen's binary variants of levels 1, 6 and 9 (140, 138, 139) are round twelve's
    (93, 123, 127) with the bit; data with a zero byte takes them (format 26, band 9: one
    byte; level 9's since round sixteen 135, 139 with 32 units on the text's schedule, which
    keeps the bit), and their streams name them."""
    for level, new, old in ((1, 140, 93), (6, 138, 123), (9, 139, 127)):
        variant = CMConfig.for_preset_id(new)
        if level == 1:  # level 9 takes 135 since round sixteen (139 with another network),
            assert CMConfig.for_level(level).for_data(b"\x00") == variant  # level 6 44
        assert variant.sse == CMConfig.for_preset_id(old).sse | FINE
        assert dataclasses.replace(CMConfig.for_preset_id(old), sse=variant.sse) == variant
    assert CMConfig.for_level(9).for_data(b"\x00") == CMConfig.for_preset_id(135)
    assert CMConfig.for_preset_id(135).sse == CMConfig.for_preset_id(139).sse
    # level 6's since round seventeen: 138 with quiet steps (mix_skip), which keeps the bit
    assert CMConfig.for_level(6).for_data(b"\x00") == CMConfig.for_preset_id(44) == \
        dataclasses.replace(CMConfig.for_preset_id(138), mix_skip=0.005)
    table = b"a table\x00 of words\x00" * 50  # binary (a zero byte), not a 1-bit image
    for level, new in ((1, 140), (6, 44)):
        packed = seqzip.compress(table, level)
        assert parse_header(packed)[0].config == bytes([new])
        assert seqzip.decompress(packed) == table
