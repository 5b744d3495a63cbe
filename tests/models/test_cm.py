"""The context-mixing model: round trips at every level, each expert group earning its place
on the data it is for, the optimisers, the memory bound, and config validation."""
import dataclasses
import io

import numpy as np
import pytest

import seqzip
from seqzip import coder, corpora
from seqzip.api import symbols_of
from seqzip.models import create
from seqzip.models.cm import LEVELS, CMConfig, network_config
from tests.helpers import run_python


def bits(config: CMConfig, data: bytes) -> float:
    symbols, alphabet = symbols_of(data)
    return float(coder.log_loss_bits(create("cm", config, alphabet=alphabet, seed=0),
                                     symbols).sum())


TEXT = corpora.generate("text", 12_000, seed=3).data


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_round_trip_every_level(level):
    data = TEXT[:3000 if level >= 8 else 8000] + bytes(range(256)) * 2
    assert seqzip.decompress(seqzip.compress(data, model="cm", level=level)) == data


@pytest.mark.parametrize("optimizer", ["qdh", "sgd", "adam"])
def test_round_trip_every_optimizer_with_frames(optimizer):
    config = dataclasses.replace(CMConfig.for_preset_id(4), optimizer=optimizer,
                                 rate=1.0 if optimizer == "qdh" else 0.003)
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(TEXT), out, model="cm", config=config,
                         frame_size=2500)
    assert seqzip.decompress(out.getvalue()) == TEXT


def test_edge_inputs_round_trip():
    for data in [b"", b"a", b"ab" * 500, bytes(range(256)), bytes(1000),
                 bytes([255]) * 70 + b"\x00"]:
        assert seqzip.decompress(seqzip.compress(data, model="cm", level=2)) == data


def without(level: int, **fields) -> CMConfig:
    """The first preset of ``level`` (id ``level``: today's levels 2-5 are steps between 1 and
    6 with other fields) with ``fields`` changed."""
    return dataclasses.replace(CMConfig.for_preset_id(level), **fields)


def test_match_model_pays_on_long_repeats():
    """A random block repeated: with a hash table far too small to keep the block's
    contexts, only the match model (which reads the history buffer) can predict the copy."""
    rng = np.random.default_rng(4)
    block = rng.integers(0, 256, 6000, dtype=np.uint8).tobytes()
    data = block * 2
    on = bits(without(2, table_bits=10), data)
    off = bits(without(2, table_bits=10, match=0, match2=0), data)
    assert on < 8 * 6000 + 0.1 * 8 * 6000 < off, (on, off)


def test_word_contexts_pay_on_text():
    assert bits(without(4), TEXT) < bits(without(4, word=0), TEXT) - 0.02 * len(TEXT)


def test_record_contexts_pay_on_tables():
    rng = np.random.default_rng(5)
    rows = b"".join(bytes([0x40 + i % 16, 0, 0]) + int(v).to_bytes(2, "little") +
                    bytes([i % 3, 10]) for i, v in enumerate(rng.integers(0, 300, 3000)))
    assert bits(without(4), rows) < bits(without(4, record=0), rows)


def test_sparse_contexts_pay_on_interleaved_streams():
    rng = np.random.default_rng(6)
    a = corpora.generate("markov2", 6000, seed=1).data
    noise = rng.integers(0, 256, 6000, dtype=np.uint8).tobytes()
    data = bytes(b for pair in zip(a, noise) for b in pair)  # every other byte is noise
    assert bits(without(4), data) < bits(without(4, sparse=0), data)


def test_network_gate_and_symbol_experts_join():
    config = dataclasses.replace(
        CMConfig.for_preset_id(3), experts="ctw4", network="glnn",
        network_config=network_config("glnn", n_units=4, window=8, interval=8),
        gate_units=5, sets="node,match,gate")
    data = TEXT[:4000]
    packed = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), packed, model="cm", config=config)
    assert seqzip.decompress(packed.getvalue()) == data
    model = create("cm", config, alphabet=symbols_of(data)[1], seed=0)
    n_match = (config.match > 0) + (config.match2 > 0)
    assert model.kernel.mixer_inputs().shape[0] == \
        1 + model.kernel.context_count() + 2 + n_match + 2  # ... CTW and the network


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_memory_bound_holds(level):
    config = CMConfig.for_level(level)
    model = create("cm", config, alphabet=bytes(range(256)), seed=0)
    assert model.kernel.memory_allocated() <= config.memory_bytes(256)
    assert config.memory_bytes(256) < 1 << 30  # the strongest level stays under 1 GiB


@pytest.mark.parametrize("bad", [dict(orders="1,2"), dict(orders="2,2"), dict(match=1),
                                 dict(sets="node,nope"), dict(optimizer="rmsprop"),
                                 dict(network="glnn"), dict(gate_units=3),
                                 dict(table_bits=30), dict(apm=9), dict(word=5)])
def test_bad_configs_are_rejected(bad):
    with pytest.raises(ValueError):
        dataclasses.replace(CMConfig(), **bad)


def test_the_strongest_level_codes_within_its_memory_bound():
    """Address space, not the kernel's own count: a child process limits its virtual memory to
    what it uses after the imports plus the level's documented bound plus 64 MiB for Python's
    own allocations while coding, and must still compress and decompress."""
    script = (
        "import resource, seqzip\n"
        "from seqzip import corpora\n"
        "from seqzip.models.cm import CMConfig\n"
        "import seqzip.models.cm, seqzip.models.lstm, seqzip.coder\n"
        "data = corpora.generate('text', 20_000, seed=5).data\n"
        "vm = [int(line.split()[1]) * 1024 for line in open('/proc/self/status')\n"
        "      if line.startswith('VmSize:')][0]\n"
        "limit = vm + CMConfig.for_level(9).memory_bytes(256) + (64 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "assert seqzip.decompress(seqzip.compress(data, model='cm', level=9)) == data\n"
        "print('ok')\n")
    done = run_python(script)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
