"""The network's prediction as context (CMConfig.net_sel, the sets "netp" and "nettop";
netsel.pxd): the class, bucket and rows of a bit computed on crafted distributions against a
plain-Python reference, the extra input in a running kernel against the same reference on
the kernel's own tree, round trips and deterministic streams, the state restored, bad values
refused, memory counted."""
import dataclasses
import io
import random

import numpy as np
import pytest

import seqzip
from seqzip._kernels.cm import py_net_context, py_stretch
from seqzip.models.cm import CMConfig, CMModel, network_config
from tests.kernels.test_cm_runs import TEXT

NET = dict(network="mlstm", network_config=network_config("mlstm", hidden=8))
SMALL = dict(orders="2,3,4", table_bits=16, history_bits=16, experts="", **NET)


def reference(probs, node):
    """netsel.pxd's definitions in plain Python (stretch from the kernel's table)."""
    n = len(probs)
    B = n.bit_length() - 1
    depth = node.bit_length() - 1
    top = max(range(n), key=lambda x: (probs[x], -x))  # the lowest on a tie
    leaf = n + top
    below = lambda v, d: sum(probs[x] for x in range(n) if (n + x) >> (B - d) == v)
    t = below(node, depth)
    p1 = below(2 * node + 1, depth + 1) / t if t > 0 else 0.5
    agree = leaf >> (B - depth) == node
    expect = (leaf >> (B - 1 - depth)) & 1
    share = probs[top] / t if agree and t > 0 else 0.0
    if agree:
        c = share
    else:
        c, expect = (p1, 1) if p1 >= 0.5 else (1 - p1, 0)
    cls = (agree * 2 + expect) * 4 + (c >= 0.4) + (c >= 0.7) + (c >= 0.9)
    bucket = min(max(int(py_stretch(p1) + 8.0), 0), 15)
    x = 0.0 if not agree else (py_stretch(share) if expect else -py_stretch(share))
    return top, p1, cls, bucket, bucket * 8 + depth, cls * 8 + depth, x


def test_crafted_distributions_match_the_reference():
    rng = random.Random(5)
    cases = [([0.1, 0.6, 0.2, 0.1], 1), ([0.1, 0.6, 0.2, 0.1], 2), ([0.1, 0.6, 0.2, 0.1], 3),
             ([0.25] * 4, 1), ([0.25] * 4, 3), ([0.0, 0.0, 0.0, 1.0], 3),
             ([0.97] + [0.03 / 7] * 7, 1), ([0.97] + [0.03 / 7] * 7, 4)]
    for _ in range(200):
        n = rng.choice([2, 4, 16, 256])
        probs = [rng.random() ** 4 for _ in range(n)]
        total = sum(probs)
        cases.append(([p / total for p in probs], rng.randrange(1, n)))
    seen = set()
    for probs, node in cases:
        got, want = py_net_context(probs, node), reference(probs, node)
        assert got[0] == want[0] and got[2:6] == want[2:6], (probs, node)
        assert got[1] == pytest.approx(want[1], abs=1e-12)
        assert got[6] == pytest.approx(want[6], abs=1e-12)
        seen.add(got[2])
    assert len(seen) >= 12  # most classes reached
    # by hand: the top symbol 1 (0b01) expects a 0 at the root with 0.6 of the mass (the
    # second confidence level), then a 1 below node 2 with 0.6 / 0.7 (the third)
    top, p1, cls, bucket, row_p, row_top, x = py_net_context([0.1, 0.6, 0.2, 0.1], 1)
    assert (top, cls, row_top, x) == (1, (2 + 0) * 4 + 1, 9 * 8, -py_stretch(0.6))
    top, p1, cls, bucket, row_p, row_top, x = py_net_context([0.1, 0.6, 0.2, 0.1], 2)
    assert (top, cls, row_top, x) == (1, (2 + 1) * 4 + 2, 14 * 8 + 1, py_stretch(0.6 / 0.7))
    # disagreeing (node 3, the 1-branch): p1 = 0.1 / 0.3 favours 0 with 2/3
    assert py_net_context([0.1, 0.6, 0.2, 0.1], 3)[2] == (0 * 2 + 0) * 4 + 1
    with pytest.raises(ValueError):
        py_net_context([0.5, 0.3, 0.2], 1)


def model(**fields):
    return CMModel(CMConfig(**dict(SMALL, **fields)), alphabet=bytes(range(256)), seed=0)


def test_the_input_is_the_reference_on_the_kernels_own_tree():
    """net_sel bit 0's input (the last mixer input) is the reference's on the network's tree
    (the kernel's state ``trees``: no other symbol expert), bit by bit over text."""
    k = model(net_sel=1).kernel
    plain = model().kernel
    checked = 0
    for x in TEXT[:120]:
        tree = np.frombuffer(k.get_state()["trees"], dtype=np.float64)  # the symbol's
        for depth in range(8):
            node = 1 << depth | x >> (8 - depth)
            k.predict_bit()
            plain.predict_bit()
            got, without = k.mixer_inputs(), plain.mixer_inputs()
            assert len(got) == len(without) + 1
            assert np.array_equal(got[:-1], without)  # the other inputs unchanged
            want = reference(list(tree[256:]), node)
            assert got[-1] == pytest.approx(want[6], abs=1e-9)
            checked += got[-1] != 0.0
            bit = x >> (7 - depth) & 1
            k.update_bit(bit)
            plain.update_bit(bit)
    assert checked > 200


def test_the_linear_input_is_p1_on_the_kernels_own_tree():
    """net_sel bit 3's input (after bit 0's, the last) is (p1 - 1/2) * 4 with p1 the
    reference's on the network's tree; alone it is the only input added."""
    k, alone, plain = model(net_sel=9).kernel, model(net_sel=8).kernel, model().kernel
    for x in TEXT[:80]:
        tree = np.frombuffer(k.get_state()["trees"], dtype=np.float64)
        for depth in range(8):
            node = 1 << depth | x >> (8 - depth)
            for m in (k, alone, plain):
                m.predict_bit()
            got, without = k.mixer_inputs(), plain.mixer_inputs()
            assert len(got) == len(without) + 2 and len(alone.mixer_inputs()) == len(got) - 1
            assert np.array_equal(got[:-2], without)
            want = reference(list(tree[256:]), node)
            assert got[-2] == pytest.approx(want[6], abs=1e-9)
            assert got[-1] == pytest.approx((want[1] - 0.5) * 4.0, abs=1e-12)
            bit = x >> (7 - depth) & 1
            for m in (k, alone, plain):
                m.update_bit(bit)


def compress(data, **fields):
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm",
                         config=CMConfig(**dict(SMALL, **fields)))
    return out.getvalue()


@pytest.mark.parametrize("fields", [dict(net_sel=1), dict(net_sel=2), dict(net_sel=4),
                                    dict(net_sel=7), dict(net_sel=8), dict(net_sel=15),
                                    dict(sets="node,netp"),
                                    dict(sets="node,match,nettop", net_sel=6)])
def test_round_trips_and_determinism(fields):
    rng = random.Random(3)
    cases = [b"", b"x", bytes(rng.getrandbits(8) for _ in range(1500)), TEXT[:1500]]
    for data in cases:
        stream = compress(data, **fields)
        assert seqzip.decompress(stream) == data
        assert compress(data, **fields) == stream
    assert compress(TEXT[:1500], **fields) != compress(TEXT[:1500])  # it is used


def test_the_state_resumes_mid_symbol():
    a, b = model(net_sel=15, sets="node,nettop,netp").kernel, \
        model(net_sel=15, sets="node,nettop,netp").kernel
    for x in TEXT[:700]:
        a.update(x)
    a.predict_bit()
    a.update_bit(0)
    b.set_state(a.get_state())
    for depth in range(1, 8):
        assert a.predict_bit() == b.predict_bit()
        a.update_bit(0)
        b.update_bit(0)
    for x in TEXT[700:1200]:
        for depth in range(8):
            assert a.predict_bit() == b.predict_bit()
            bit = x >> (7 - depth) & 1
            a.update_bit(bit)
            b.update_bit(bit)


def test_bad_values_are_refused():
    for bad in (-1, 16):
        with pytest.raises(ValueError, match="net_sel"):
            CMConfig(**dict(SMALL, net_sel=bad))
    no_net = dict(SMALL, network="", network_config="")
    for fields in (dict(net_sel=1), dict(sets="node,netp"), dict(sets="nettop")):
        with pytest.raises(ValueError, match="network"):
            CMConfig(**dict(no_net, **fields))


@pytest.mark.parametrize("net_sel", [2, 4, 6])
def test_memory_is_counted_exactly(net_sel):
    config = CMConfig(**dict(SMALL, net_sel=net_sel))
    without = dataclasses.replace(config, net_sel=0)
    expected = ((16 << 8) * (net_sel >> 1 & 1) + 16 * 256 * 8 * (net_sel >> 2 & 1)) * 33 * 2
    k, k0 = (CMModel(c, bytes(range(256)), 0).kernel for c in (config, without))
    assert k.memory_allocated() - k0.memory_allocated() == expected
    assert config.memory_bytes(256) - without.memory_bytes(256) == expected
    assert k.memory_allocated() <= config.memory_bytes(256)
