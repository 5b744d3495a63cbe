"""The context mixer's options of issue 20 (record=2, columns, text, aligned), each on its own:
each doing what it is for on data made for it, its hashes pinned, its state saved and restored
mid-stream, and its config fields absent from a header while at their defaults."""
import io

import numpy as np

import seqzip
from seqzip.models.cm import CMConfig
import pytest

from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS
from tests.kernels.test_cm import feed, kernel


def round_trip(data: bytes, **fields) -> int:
    config = CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **fields))
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=config)
    assert seqzip.decompress(out.getvalue()) == data
    return len(out.getvalue())

PINNED = [9638903180283664975, 15582964673698715327, 15473659001380384962, 8460877687479013546,
          3637156127934810622, 9735976756269858671, 9413103715942521894, 12600724414670790570,
          1792666628248942007, 18356952361204471780, 4192474413831962785, 13502147102719437875]


def noisy_image(rows: int = 120, width: int = 216, seed: int = 1) -> bytes:
    """A 1-bit picture: vertical strokes (the same byte in the same column on every row) among
    sparse noise bytes of a few values, mostly zero bytes."""
    rng = np.random.default_rng(seed)
    row = np.zeros(width, dtype=np.uint8)
    row[rng.integers(0, width, 20)] = rng.integers(1, 256, 20)
    out = []
    for _ in range(rows):
        r = row.copy()
        noise = rng.integers(0, width, 40)
        r[noise] = rng.integers(1, 3, 40)
        out.append(r.tobytes())
    return b"".join(out)


def test_scored_record_length_finds_the_width_among_noise():
    data = noisy_image()
    runs, scored = kernel(record=1), kernel(record=2)
    feed(runs, data)
    feed(scored, data)
    assert runs.record_length() != 216 and scored.record_length() == 216


def test_scored_record_length_round_trips():
    data = noisy_image(rows=40)
    assert round_trip(data, record=2) < round_trip(data, record=1)


def test_column_contexts_need_record_contexts_and_round_trip():
    with pytest.raises(ValueError):
        CMConfig(record=0, columns=1)
    assert kernel(record=2, columns=1).context_count() == kernel(record=2).context_count() + 4
    data = noisy_image(rows=40)
    assert round_trip(data, record=2, columns=1) < round_trip(data, record=2)


def test_text_contexts_round_trip_and_pay_on_text():
    from seqzip import corpora
    text = corpora.generate("text", 6000, seed=3).data + b" (a [b {c} \"d\"] <e>)\n" * 20
    assert kernel(text=1).context_count() == kernel().context_count() + 4
    assert round_trip(text, text=1) < round_trip(text)
    with pytest.raises(ValueError):
        CMConfig(text=2)


def test_aligned_contexts_pay_on_fixed_width_code():
    assert kernel(aligned=1).context_count() == kernel().context_count() + 3
    rng = np.random.default_rng(3)  # 32-bit words: an opcode of four, a byte it fixes, noise
    code = b"".join(bytes([op, op ^ 0x5A]) + rng.integers(0, 256, 2, dtype=np.uint8).tobytes()
                    for op in rng.integers(0, 4, 1500) * 64 + 3)
    assert round_trip(code, aligned=1) < round_trip(code)
    with pytest.raises(ValueError):
        CMConfig(aligned=2)


def test_new_fields_leave_old_headers_alone():
    import dataclasses
    import json
    from seqzip.models.base import config_from_bytes, config_to_bytes
    old = config_to_bytes(CMConfig(record=2))
    assert len(json.loads(old)) == len(dataclasses.fields(CMConfig)) - len(CMConfig.ADDED_FIELDS)
    assert config_from_bytes(CMConfig, old) == CMConfig(record=2)
    new = CMConfig(record=2, columns=1, text=1, aligned=1)
    assert config_from_bytes(CMConfig, config_to_bytes(new)) == new


def test_a_json_array_written_before_each_generation_of_fields_still_loads():
    """Model files hold a config as a JSON array of its values by sorted field name: one saved
    before a generation of fields came lacks them and those of the later ones (level 6's
    preset, which sets fields of the first generation, saved before and after the image
    field came), and loads with them at their defaults."""
    import dataclasses
    import json
    from seqzip.models.base import config_from_bytes, config_to_bytes
    names = sorted(f.name for f in dataclasses.fields(CMConfig))
    added, sizes = CMConfig.ADDED_FIELDS, CMConfig.ADDED_GENERATIONS
    assert sum(sizes) == len(added) and set(added) <= set(names)
    config = CMConfig.for_preset_id(11)  # issue 20's level 6: aligned, columns and text set
    values = dataclasses.asdict(config)
    full = [values[name] for name in names]  # as a build writes it once a later field is set
    for k in range(1, len(sizes) + 1):
        missing = set(added[sum(sizes[:k]):])
        old = [v for name, v in zip(names, full) if name not in missing]
        assert config_from_bytes(CMConfig, json.dumps(old).encode()) == config, k
    lengths = {len(names) - sum(sizes[k:]) for k in range(len(sizes) + 1)}
    bad = max(n for n in range(len(names)) if n not in lengths)  # a length of no generation
    with pytest.raises(ValueError, match="values"):
        config_from_bytes(CMConfig, json.dumps(full[:bad]).encode())
    # written, a config leaves out the newest generations its fields leave at their defaults
    assert len(json.loads(config_to_bytes(config))) == len(names) - sum(sizes[1:])


def test_new_kinds_hashes_are_pinned():
    """The hashes are part of the streams: a change here changes every stream using them."""
    data = b"the (cat [sat]) on \"the\" mat.\n<b>the dog</b> ran" * 3 + b"(in"
    kinds = [(KINDS["column"], j) for j in range(4)] + [(KINDS["text"], j) for j in range(4)] + \
        [(KINDS["aligned"], j) for j in range(3)] + [(KINDS["record"], 0)]
    got = cm.py_context_hashes(data, kinds, True, True, True)
    assert got == PINNED
    assert cm.py_context_hashes(data, kinds[4:8], True, True, False) != got[4:8]  # nesting off


def test_state_of_the_new_trackers_restores_mid_stream():
    data = noisy_image(rows=30) + b"(a [b {c} \"d\"] <e>) the cat" * 30
    fields = dict(record=2, columns=1, text=1, aligned=1)
    a, b = kernel(**fields), kernel(**fields)
    feed(a, data[:5000])
    state = a.get_state()
    assert {"period_d", "period_s", "period_len", "text_state"} <= set(state)
    b.set_state(state)
    assert b.record_length() == a.record_length() == 216
    feed(a, data[5000:])
    feed(b, data[5000:])
    assert a.predict_bit() == b.predict_bit()
    assert "period_d" not in kernel(record=1).get_state()
    assert "text_state" not in kernel().get_state()



# The weight-set selectors added since (c1n: the previous byte's high nibble with the node of
# the symbol; c12n: that and the kind of the byte before it; ordern: the known hashed contexts,
# to 7, with the node) in a stream at level 6's config, their sets in place of node and order
# and c2 added: the stream's bytes are pinned.
NEW_SETS = "c12n,match,ordern,c1,word,c2"
# level 6's preset of issue 20 (id 11) with the new sets: its frames (the header lists every
# config field, so it grows with each new one)
NEW_SETS_STREAM = (1078, "81e063355d1a694cd67e5d64365e891b548dbd99e25d860fecb255330d78ca44")


def selector_text() -> bytes:
    from seqzip import corpora
    return corpora.generate("text", 4000, seed=5).data


@pytest.mark.parametrize("name, rows", [("c1n", 16 << 8), ("c12n", 64 << 8), ("ordern", 8 << 8)])
def test_new_selectors_rows_and_round_trip(name, rows):
    k = kernel(sets=f"{name},match")
    n = k.mixer_inputs().shape[0]
    assert k.get_state()["set0.w"].size == rows * n * 8
    text = selector_text()
    assert round_trip(text, sets=f"{name},match") < round_trip(text, sets="node,match")


def test_new_selectors_pick_their_rows():
    k = kernel(sets="c1n,c12n,ordern", orders="2,3,4")
    feed(k, b"ab7\x9c" * 4)  # the last byte's high nibble is 9, the one before it a digit
    k.predict_bit()
    state = k.get_state()
    known = int(state["symbol.n_known"])
    assert 0 < known <= k.context_count() < 8
    assert int(state["set0.selected"]) == (9 << 8) | 1
    assert int(state["set1.selected"]) == ((9 * 4 + 1) << 8) | 1
    assert int(state["set2.selected"]) == (known << 8) | 1
    k.update_bit(1)
    k.predict_bit()
    assert int(k.get_state()["set0.selected"]) == (9 << 8) | 3
    with pytest.raises(ValueError):
        CMConfig(sets="c1n,nibble")


def test_new_selectors_state_checked_and_restored():
    a, b = kernel(sets="c12n,match"), kernel(sets="c12n,match")
    text = selector_text()
    feed(a, text[:2000])
    state = a.get_state()
    bad = dict(state)
    bad["set0.selected"] = np.array(64 << 8)  # one past the last row
    with pytest.raises(ValueError, match="set0.selected"):
        b.set_state(bad)
    b.set_state(state)
    feed(a, text[2000:])
    feed(b, text[2000:])
    assert a.predict_bit() == b.predict_bit()


def test_new_selectors_stream_is_pinned_and_memory_bounded(checked_streams):
    import dataclasses
    import hashlib
    from seqzip.models.cm import CMModel
    from seqzip.header import parse_header
    config = CMConfig(**dict(dataclasses.asdict(CMConfig.for_preset_id(11)), sets=NEW_SETS))
    out = io.BytesIO()
    data = selector_text()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=config)
    stream = out.getvalue()
    frames = stream[parse_header(stream)[1]:]
    assert (len(frames), hashlib.sha256(frames).hexdigest()) == NEW_SETS_STREAM
    assert seqzip.decompress(stream) == data
    kernel_bytes = CMModel(config, alphabet=bytes(range(256)), seed=0).kernel.memory_allocated()
    assert kernel_bytes <= config.memory_bytes(256)
