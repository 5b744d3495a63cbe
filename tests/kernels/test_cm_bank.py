"""The context mixer as a bank of components: the state it names (for model files) and what
it holds after learning are those of the kernel before the bank (seqzip cb6c4cc), byte for
byte, for a small level and for a config that turns every component and selector on."""
import hashlib
from dataclasses import replace

import numpy as np
import pytest

from seqzip.models.cm import CMConfig, CMModel, network_config

# sha256 over the sorted (name, dtype, shape, bytes) of get_state(), computed at cb6c4cc
GOLDEN = {
    "level2": "03ec4d4363f3ec86a54e7a756681cf44e5bd3a2ad325b98c092f12c998b36d0a",
    "wide": "56a655168f94a6698927c5dd1d5c9b6512a498c6451d84e30cfaa53ad9d9b575",
}


def _config(name):
    if name == "level2":
        return replace(CMConfig.for_preset_id(2), table_bits=14, history_bits=14)
    return replace(CMConfig.for_preset_id(11), table_bits=14, history_bits=14, match2=12, record=2,
                   text=1, aligned=1, indirect=1, columns=1, experts="order2", network="glnn",
                   network_config=network_config("glnn", n_units=8, interval=16),
                   sets="node,match,order,c1,word,c2,net,gate", gate_units=4,
                   optimizer="adam", apm=5)


TEXT = b"the quick brown fox, jumps over the lazy dog; 0123456789 (abc) \"quoted\" <tag>\n" * 8


def _learnt(name, **size_hint):
    m = CMModel(_config(name), alphabet=bytes(range(10, 110)), seed=0, **size_hint)
    for b in TEXT:
        m.update(b - 10 if 10 <= b < 110 else 0)
    return m


def _digest(state):
    h = hashlib.sha256()
    for k in sorted(state):
        v = np.ascontiguousarray(state[k])
        h.update(repr((k, str(v.dtype), v.shape)).encode())
        h.update(v.tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_state_names_and_contents_unchanged(name):
    assert _digest(_learnt(name).kernel.get_state()) == GOLDEN[name]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_state_round_trip_and_save_points(name):
    """A second kernel given the state predicts as the first; a save point taken inside a
    symbol and restored gives the same prediction again."""
    a, b = _learnt(name), CMModel(_config(name), alphabet=bytes(range(10, 110)), seed=0)
    b.kernel.set_state(a.kernel.get_state())
    assert _digest(b.kernel.get_state()) == _digest(a.kernel.get_state())
    for k in (a.kernel, b.kernel):
        k.predict_bit()
        k.update_bit(1)
    p = a.kernel.predict_bit()
    assert b.kernel.predict_bit() == p
    a.kernel.track_points(True)
    point = a.kernel.save_point()
    a.kernel.update_bit(0)
    a.kernel.predict_bit()
    a.kernel.restore_point(point)
    a.kernel.track_points(False)
    assert a.kernel.predict_bit() == p


def test_memory_is_the_components_sum():
    """The kernel's account grows by a match model's table and map when one is added."""
    base = replace(CMConfig.for_preset_id(2), table_bits=14, history_bits=14, match2=0)
    one = CMModel(base, alphabet=b"ab", seed=0).kernel.memory_allocated()
    two = CMModel(replace(base, match2=12), alphabet=b"ab", seed=0).kernel.memory_allocated()
    # the match table (4 bytes x 2^14), its map (128 x 6 bytes), and one more input in each
    # of the mixer's weight sets (node: 2 rows, match: 384 rows; 3 doubles per weight)
    assert two - one == 4 * 2 ** 14 + 128 * 6 + 3 * 8 * (2 + 384)


@pytest.mark.parametrize("name,value", [("table_bits", 27), ("history_bits", 9),
                                        ("apm_rate", 13), ("gate_units", 65), ("match", 65)])
def test_one_set_of_bounds(name, value):
    """The config and the kernel refuse the same values: both read checks.CONFIG_BOUNDS."""
    from seqzip._kernels.cm import CONFIG_BOUNDS, CMKernel
    low, high = CONFIG_BOUNDS[name]
    assert not low <= value <= high
    with pytest.raises(ValueError, match=name):
        replace(CMConfig.for_level(1), **{name: value})
    spec = replace(CMConfig.for_level(1), table_bits=14).spec
    if name == "match":
        spec = replace(spec, matches=(value,))
    else:
        spec = replace(spec, **{name: value})
    with pytest.raises(ValueError):
        CMKernel(spec, b"ab")


def test_interface_runs_without_the_interpreter_lock():
    """The cm kernel's interface functions (and its symbol experts' and network's, through
    the default ones that take the lock back) predict and learn with the lock released
    exactly as through Python."""
    from seqzip._kernels.cm import py_run_nogil
    data = np.frombuffer(b"abracadabra, abracadabra! " * 20, dtype=np.uint8) - 32
    a, b = _learnt("wide"), _learnt("wide")
    got = py_run_nogil(a.kernel, data)
    want = []
    for x in data:
        for j in range(b.kernel.bits - 1, -1, -1):
            want.append(b.kernel.predict_bit())
            b.kernel.update_bit((int(x) >> j) & 1)
    assert got.tolist() == want
    assert _digest(a.kernel.get_state()) == _digest(b.kernel.get_state())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_size_hint_changes_pages_not_what_is_learnt(name):
    """A kernel told its input is short puts its large tables on plain pages (tables.pxd's
    BIG_PLAIN); it learns the same state, byte for byte, as one that was not told, also past
    the hint (640 symbols against a hint of 100)."""
    told, untold = _learnt(name, size_hint=100), _learnt(name)
    assert told.kernel.plain_pages and not untold.kernel.plain_pages
    assert _digest(told.kernel.get_state()) == _digest(untold.kernel.get_state())


@pytest.mark.parametrize("n, plain", [(1, True), (256, True), (257, False), (4000, False)])
def test_streams_give_their_length_as_the_hint(n, plain):
    """The coder builds a stream's model with the header's length as its size hint, on both
    sides (session.model_for_header), and the stream round-trips either way."""
    from seqzip import compress, decompress
    from seqzip.header import parse_header
    from seqzip.session import model_for_header
    data = (b"abcabd" * 700)[:n]
    z = compress(data, level=1)
    assert model_for_header(parse_header(z)[0]).kernel.plain_pages is plain
    assert decompress(z) == data
