"""Row contexts and row maps (CMConfig.rows, kind "rows", rows.pxd): the row detector against
a plain-Python reference, the contexts' dependence on the rows above, round trips over many
inputs, determinism, state restored mid-stream, bad values refused, memory bounded."""
import dataclasses
import io

import numpy as np
import pytest

import seqzip
from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS
from seqzip.models.cm import CMConfig, CMModel
from tests.kernels.test_cm import feed, kernel
from tests.kernels.test_cm_options import round_trip
from tests.helpers import canterbury_file

ROWS = KINDS["rows"]


def table(rows: int = 40, columns: int = 30, seed: int = 3, numbers: float = 0.02) -> bytes:
    """A spreadsheet's cells as BIFF writes them: per row a 12-byte label record, then a
    13-byte record per cell (type, length, row, column, format, a 16-bit value); each column
    has its own few values, one column in five is an error cell, and now and then a cell is
    a 19-byte number record (rows of unequal lengths)."""
    rng = np.random.default_rng(seed)
    spread = rng.integers(1, 6, columns)
    out = bytearray()
    for r in range(rows):
        out += bytes([4, 0, 8, 0]) + r.to_bytes(2, "little") + b"\x00\x00\x00\x00lb"
        for c in range(columns):
            head = r.to_bytes(2, "little") + c.to_bytes(2, "little") + b"\x00\x03\x03"
            if c % 5 == 4:
                out += bytes([5, 0, 9, 0]) + head + b"\x00\x01"
            elif rng.random() < numbers:
                out += bytes([3, 0, 15, 0]) + head + rng.integers(0, 256, 8, np.uint8).tobytes()
            else:
                value = int(c + rng.integers(0, spread[c]))
                out += bytes([2, 0, 9, 0]) + head + value.to_bytes(2, "little")
    return bytes(out)


def reference_row_length(data: bytes) -> int:
    """The row detector (context.ctx_vote_row) in plain Python, with no record length (the
    record detectors off): the last 3 bytes hashed to 16 bits, seen again at the distance
    they were seen at before (2..65535) vote for it; slot d % 4096, scores as the record
    length's (context.ctx_vote_period); the cell the best of all, the row the best longer."""
    last, dist = [0] * 65536, [0] * 65536
    ds, ss = [0] * 4096, [0] * 4096
    cell = row = 0

    def score(d):
        return ss[d % 4096] if d and ds[d % 4096] == d else 0

    for pos in range(3, len(data) + 1):
        c3 = data[pos - 1] | data[pos - 2] << 8 | data[pos - 3] << 16
        h = ((c3 * 0x9E3779B1) & 0xFFFFFFFF) >> 16
        prev, last[h] = last[h], pos
        d = pos - prev if prev else 0
        if d != dist[h] or d < 2 or d > 65535:
            dist[h] = d
            continue
        slot = d % 4096
        if ds[slot] == d:
            ss[slot] += 1
        elif ss[slot] > 0:
            ss[slot] -= 1
        else:
            ds[slot], ss[slot] = d, 1
        if ds[slot] == d and ss[slot] >= 16:
            if d != cell and ss[slot] > score(cell) + 2:
                cell = d
            if d > cell and d != row and ss[slot] > (score(row) if row > cell else 0) + 2:
                row = d
        if ss[slot] >= 65536:
            ss = [s >> 1 for s in ss]
    return row if row > cell else 0


def test_row_length_matches_the_reference_and_finds_the_row():
    data = table()
    row = 12 + 30 * 13  # most rows: no number record in them
    assert cm.py_row_length(data, False, False) == reference_row_length(data) == row
    rng = np.random.default_rng(0)
    for sample in (rng.integers(0, 256, 5000, np.uint8).tobytes(), b"abc" * 500,
                   bytes(range(256)) * 20 + data[:3000], b"", b"\x01\x02"):
        assert cm.py_row_length(sample, False, False) == reference_row_length(sample)
    assert cm.py_row_length(data) == row  # with the record detectors on


def test_row_length_of_kennedy_xls():
    data = canterbury_file("kennedy.xls")[:400_000]
    assert cm.py_row_length(data) == 2963  # 227 cells of 13 bytes and a 12-byte label


def rows_hash(data: bytes, j: int) -> int:
    return cm.py_context_hashes(data, [(ROWS, j)], True, True, rows=True)[0]


def test_row_contexts_read_the_rows_above():
    data = table(rows=12, numbers=0.0)
    row = 12 + 30 * 13
    end = len(data) - 5  # inside the last row's last cell, no number record near
    assert cm.py_row_length(data[:end]) == row
    base = [rows_hash(data[:end], j) for j in range(8)]
    above = bytearray(data[:end])
    above[end - row] ^= 0x40  # the byte one row above
    changed = [rows_hash(bytes(above), j) for j in range(8)]
    assert all(a != b for a, b in zip(base, changed)), "every context reads the byte above"
    two = bytearray(data[:end])
    two[end - 2 * row] ^= 0x40  # two rows above: j = 1 and 5 read it
    changed = [rows_hash(bytes(two), j) for j in range(8)]
    assert [a != b for a, b in zip(base, changed)] == [False, True, False, False, False, True,
                                                        False, False]
    # no row length yet: one context for every position
    assert rows_hash(b"abc", 0) == rows_hash(b"xyz", 0)


def test_bad_values_are_refused_and_the_mask_chooses():
    for bad in (-1, 4096):
        with pytest.raises(ValueError):
            CMConfig(rows=bad)
    assert kernel(rows=255).context_count() == kernel().context_count() + 8
    assert CMConfig(rows=0x205).spec.contexts[-2:] == ((ROWS, 0), (ROWS, 2))
    assert CMConfig(rows=0x205).spec.row_maps == 2
    assert CMConfig(rows=5).spec.row_maps == 0


@pytest.mark.parametrize("rows", [0x2F, 0x12F, 0xF2F])
def test_round_trips_and_determinism(rows):
    rng = np.random.default_rng(1)
    inputs = [b"", b"x", b"\x00", rng.integers(0, 256, 3000, np.uint8).tobytes(),
              b"the cat sat on the mat. " * 80, table(rows=15)]
    for data in inputs:
        round_trip(data, rows=rows, record=2, columns=1)
    config = CMConfig(orders="2,3,4", table_bits=16, history_bits=16, record=2, rows=rows)
    packed = [io.BytesIO() for _ in range(2)]
    for out in packed:
        seqzip.compress_file(io.BytesIO(table(rows=15)), out, model="cm", config=config)
    assert packed[0].getvalue() == packed[1].getvalue()


def test_rows_pay_on_a_table():
    data = table(rows=60)
    plain = round_trip(data, record=2, columns=1)
    assert round_trip(data, record=2, columns=1, rows=0x2F) < plain
    assert round_trip(data, record=2, columns=1, rows=0x12F) < round_trip(
        data, record=2, columns=1, rows=0x2F)


def test_state_restores_mid_stream_and_is_checked():
    data = table(rows=30)
    fields = dict(record=2, rows=0x32F)
    a, b = kernel(**fields), kernel(**fields)
    feed(a, data[:6000])
    state = a.get_state()
    assert {"rows", "rowmap0.p", "rowmap0.n", "rowmap1.index", "rowmap.h"} <= set(state)
    b.set_state(state)
    feed(a, data[6000:])
    feed(b, data[6000:])
    assert a.predict_bit() == b.predict_bit()
    bad = dict(state)
    bad["rowmap1.index"] = np.array(1 << 20, dtype=bad["rowmap1.index"].dtype)
    with pytest.raises(ValueError, match="rowmap1.index"):
        b.set_state(bad)
    assert "rows" not in kernel().get_state()


def test_memory_is_bounded():
    base = CMConfig.for_preset_id(29)
    config = CMConfig(**dict(dataclasses.asdict(base), rows=0x32F))
    model = CMModel(config, alphabet=bytes(range(256)), seed=0)
    assert model.kernel.memory_allocated() <= config.memory_bytes(256)
    assert config.memory_bytes(256) - base.memory_bytes(256) >= 2 * (6 << 20)


def test_defaults_leave_presets_and_headers_alone():
    from seqzip.models.base import config_to_bytes
    assert all(CMConfig.for_preset_id(i).rows == 0 for i in CMConfig.PRESETS if i <= 30)
    assert len(config_to_bytes(CMConfig())) < len(config_to_bytes(CMConfig(rows=1)))


PINNED = [13228364150992459770, 14184890230798124765, 5232419250029324554, 16174999142968852617,
          14911264014007795913, 6624744434453431520, 15006037687877391106, 8515645777029047547]


def test_row_hashes_are_pinned():
    """The hashes are part of the streams: a change here changes every stream using them."""
    data = table(rows=8, numbers=0.0)[:-5]
    assert cm.py_row_length(data) == 402
    assert cm.py_context_hashes(data, [(ROWS, j) for j in range(8)], True, True,
                                rows=True) == PINNED
