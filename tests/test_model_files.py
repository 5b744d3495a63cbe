"""Issue 23: model files and forged headers are untrusted input.

A model file (``.sqm``) loads only if every index, count and link of its state is one a model
could have written, and every array inflates to exactly its declared size; anything else is a
``ModelFileError`` (a ``DictionaryError``).  A forged header's work before the first block
check is bounded (OINIT's step budget), and a one-symbol stream (empty payloads) decodes past
1 GiB only when the caller sets ``max_length``.  The long fuzz run is
``benchmarks/model_fuzz.py``; here a short seeded run of the same target and its regressions.
"""
from __future__ import annotations

import dataclasses
import pathlib
import random
import subprocess
import sys
import zlib

import numpy as np
import pytest

import seqzip
from seqzip import container
from seqzip.errors import CorruptError, DictionaryError, LimitError, ModelFileError
from seqzip.models import MODELS, create, make_config
from seqzip.models.base import config_to_header
from seqzip.models.relu_rnn import OINIT_WORK, oinit_steps
from seqzip.predictor import Predictor

from . import model_fuzzing

ROOT = pathlib.Path(__file__).parent.parent
REGRESSIONS = pathlib.Path(__file__).parent / "model_regressions"


@pytest.fixture(scope="module")
def seeds():
    return model_fuzzing.seed_models()


def _ctw_with(seeds, change) -> bytes:
    """The ctw seed file with ``change(state)`` applied to its state arrays."""
    meta, arrays = model_fuzzing.read_file(seeds["ctw"][0])
    state = {name: np.array(a) for name, a in arrays}
    change(state)
    return model_fuzzing.write_file(meta, sorted(state.items()))


# --- crafted files ---------------------------------------------------------------------------

def test_ctw_block_class_32_is_refused(seeds):
    """A context node claiming block class 32 made ``1u << cls`` wrap and ``_free_block(start,
    32)`` write past the 9 free lists (a 4-byte write of a value from the file to an address
    from the file).  Now the load refuses it, and the file is kept as a regression input."""
    def class_32(state):  # the root context: 1 entry, class 32 (1u << 32 == 1 on x86)
        state["node_count"][0:2] = np.frombuffer(np.uint16(1).tobytes(), np.uint8)
        state["node_class"][0] = 32
    data = _ctw_with(seeds, class_32)
    with pytest.raises(ModelFileError, match="block class"):
        Predictor.from_bytes(data)
    with pytest.raises(ModelFileError, match="block class"):  # the file kept from the issue
        Predictor.from_bytes((REGRESSIONS / "ctw-block-class-32.sqm").read_bytes())


@pytest.mark.parametrize("what", ["child to an older node", "child outside the nodes",
                                  "free block outside the pool", "overlapping free block",
                                  "count over the limit", "beta NaN", "stamp from the future",
                                  "history outside the alphabet", "twin decision node"])
def test_ctw_tree_checks(seeds, what):
    def change(state):
        entries = state["entries"].view(np.uint8).reshape(-1, 16)
        children = state["children"].view(np.uint8).reshape(-1, 12)
        occupied = np.flatnonzero(children[:, :8].copy().view(np.uint64)[:, 0])
        if what.startswith("child"):
            node = children[occupied[0], 8:12].copy().view(np.uint32)
            node[0] = 0 if what == "child to an older node" else 1 << 30
            children[occupied[0], 8:12] = node.view(np.uint8)
        elif what == "free block outside the pool":
            state["free0"] = np.frombuffer(np.array([1 << 30], np.uint32).tobytes(), np.uint8)
            state["free_count"][0], state["free_cap"][0] = 1, max(state["free_cap"][0], 64)
        elif what == "overlapping free block":
            start = state["node_block"].view(np.uint32)[1]
            state["free0"] = np.frombuffer(np.array([start], np.uint32).tobytes(), np.uint8)
            state["free_count"][0], state["free_cap"][0] = 1, max(state["free_cap"][0], 64)
        elif what == "count over the limit":
            entries[0, 8:10] = np.frombuffer(np.uint16(65535).tobytes(), np.uint8)
        elif what == "beta NaN":
            entries[0, 0:8] = np.frombuffer(np.float64(np.nan).tobytes(), np.uint8)
        elif what == "stamp from the future":
            stamp = state["stamp"].view(np.uint64)
            stamp[5] = state["sizes"][8] + 1
        elif what == "history outside the alphabet":
            state["history"].view(np.int32)[0] = 200
        else:  # two entries of one context for the same decision node
            start = state["node_block"].view(np.uint32)[0]
            entries[start + 1, 12] = entries[start, 12]
    # every state array is a fresh array whose view we changed in place
    with pytest.raises(ModelFileError):
        Predictor.from_bytes(_ctw_with(seeds, change))


def test_order2_counts_must_add_up(seeds):
    meta, arrays = model_fuzzing.read_file(seeds["order2"][0])
    state = {name: np.array(a) for name, a in arrays}
    state["c1"][3] += 1  # a count without its context's total
    with pytest.raises(ModelFileError, match="impossible counts"):
        Predictor.from_bytes(model_fuzzing.write_file(meta, sorted(state.items())))


def test_network_ring_symbols_are_checked_before_anything_changes(seeds):
    p = Predictor.from_bytes(seeds["lstm"][0])
    before = p.kernel.get_state()
    state = dict(before)
    state["theta"] = np.zeros_like(state["theta"])
    state["ring_symbols"] = np.full_like(state["ring_symbols"], 10 ** 6)
    with pytest.raises(ValueError, match="outside the alphabet"):
        p.kernel.set_state(state)
    assert (p.kernel.get_state()["theta"] == before["theta"]).all()


def test_zlib_bomb_is_not_inflated():
    """An entry whose stored stream inflates to 256 MiB (its file is 260 KB) is refused, in a
    child process whose peak memory stays far below the bomb's size."""
    code = f"""
import resource, sys, zlib
sys.path.insert(0, {str(ROOT)!r})
import numpy as np
from tests import model_fuzzing
from seqzip.errors import ModelFileError
from seqzip.predictor import Predictor
data = model_fuzzing.seed_models(["order2"])["order2"][0]
meta, arrays = model_fuzzing.read_file(data)
z = zlib.compressobj(9)
bomb = b"".join(z.compress(bytes(1 << 20)) for _ in range(256)) + z.flush()
def hook(name, raw, stored):
    return (len(raw), bomb) if name == "c2" else (len(raw), stored)
bad = model_fuzzing.write_file(meta, arrays, entry_hook=hook)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    Predictor.from_bytes(bad)
    print("loaded")
except ModelFileError as exc:
    print(len(bad), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024, exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split(" ", 2)
    size, grown_mib, message = int(out[0]), int(out[1]), out[2]
    assert size < 400_000 and grown_mib < 32, (size, grown_mib)
    assert "does not inflate to its declared size" in message


def test_declared_sizes_are_checked_before_inflating(seeds):
    meta, arrays = model_fuzzing.read_file(seeds["order2"][0])

    def hook(name, raw, stored):
        return ((1 << 40), stored) if name == "huge" else (len(raw), stored)
    lying = arrays + [("huge", np.zeros(0, np.uint8))]  # declares 1 TiB for an empty shape
    with pytest.raises(ModelFileError, match="declares a size"):
        Predictor.from_bytes(model_fuzzing.write_file(meta, lying, entry_hook=hook))
    # shape and size agree, but no order2 model of this alphabet holds 12 MiB of state
    large = arrays + [("huge", np.zeros(12 << 20, np.uint8))]
    with pytest.raises(ModelFileError, match="declares a size"):
        Predictor.from_bytes(model_fuzzing.write_file(meta, large))


@pytest.mark.parametrize("change", [
    {"alphabet": 10 ** 9}, {"alphabet": [300]}, {"alphabet": []}, {"seed": -1},
    {"seed": "7"}, {"symbols": 1e400}, {"bits": float("nan")}, {"info": [1, 2]},
    {"model": "nonesuch"}, {"model": None}, {"config": "[1,2"}, {"config": 5}])
def test_malformed_metadata_is_a_model_file_error(seeds, change):
    meta, arrays = model_fuzzing.read_file(seeds["order2"][0])
    with pytest.raises(ModelFileError):
        Predictor.from_bytes(model_fuzzing.write_file({**meta, **change}, arrays))


@pytest.mark.parametrize("raw", [b"[" * 100_000, b"{}", b"\xff\xfe", b"null", b"[]"])
def test_metadata_that_is_not_an_object(seeds, raw):
    meta, arrays = model_fuzzing.read_file(seeds["order2"][0])
    with pytest.raises(ModelFileError):
        Predictor.from_bytes(model_fuzzing.write_file(meta, arrays, raw_meta=raw))


def test_a_bad_dictionary_is_one_line_on_the_cli(tmp_path, seeds):
    bad = tmp_path / "bad.sqm"
    bad.write_bytes((REGRESSIONS / "ctw-block-class-32.sqm").read_bytes())
    src = tmp_path / "in.txt"
    src.write_bytes(b"abc")
    result = subprocess.run([sys.executable, "-c", "from seqzip.cli import main; main()",
                             "compress", "--dict", str(bad), str(src)], capture_output=True,
                            text=True, cwd=ROOT)
    assert result.returncode == 1 and not (tmp_path / "in.txt.sqz").exists()
    assert len(result.stderr.strip().splitlines()) == 1 and "block class" in result.stderr


# --- the fuzz target ---------------------------------------------------------------------------

@pytest.mark.parametrize("family", [f for f in model_fuzzing.FAMILIES if f != "cm"])
def test_seeded_model_fuzz_run_finds_nothing(family, seeds):
    """120 mutated model files per family: each a DictionaryError or an exact round trip."""
    counts = model_fuzzing.run(family, 120, seed=20261125, seeds=seeds)
    findings = counts.pop("_findings")
    assert not findings, findings[0][1]
    assert sum(counts.values()) == 120 and counts.get("rejected", 0) > 20


@pytest.mark.long
def test_seeded_model_fuzz_run_cm():
    result = subprocess.run([sys.executable, "-c", f"""
import sys; sys.path.insert(0, {str(ROOT)!r})
from tests import model_fuzzing
c = model_fuzzing.run("cm", 150, seed=20261125); f = c.pop("_findings")
assert not f, f[0][1]
"""], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-500:]


def test_the_fuzz_oracle_catches_a_wrong_outcome(seeds, monkeypatch):
    """The target can fail: a loader that lets a ValueError through is a finding."""
    def broken(cls, data, *args):
        raise ValueError("not a DictionaryError")
    monkeypatch.setattr(Predictor, "from_bytes", classmethod(broken))
    with pytest.raises(model_fuzzing.Finding, match="ValueError"):
        model_fuzzing.check(*seeds["order2"])


def test_the_regression_inputs_are_there():
    """They are data files: an ignore rule must not drop them silently."""
    assert len(list(REGRESSIONS.glob("*.sqm"))) >= 2


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.sqm")), ids=lambda p: p.name)
def test_model_regression_inputs(path, seeds):
    """Inputs kept from the fuzzer and the issue: each is refused with a DictionaryError or
    round-trips exactly, in a child process (so that a crash is a failure, not the end of the
    suite)."""
    result = subprocess.run([sys.executable, "-c", f"""
import sys; sys.path.insert(0, {str(ROOT)!r})
from tests import model_fuzzing
print(model_fuzzing.check(open({str(path)!r}, "rb").read(), model_fuzzing.TEXT[600:760]))
"""], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-800:]
    assert result.stdout.strip() in ("rejected", "round trip")


# --- forged headers ----------------------------------------------------------------------------

def test_oinit_budget_bounds_the_work_of_every_header():
    for n in range(1, 385):
        for blocks in (1, 4, 5):
            steps = oinit_steps(n, blocks)
            assert 1 <= steps <= 100_000
            assert steps * blocks * n ** 3 <= OINIT_WORK or steps == 1


@pytest.mark.parametrize("name", ["relu-rnn", "lstm", "mlstm", "mrnn"])
def test_one_unit_network_with_slowest_oinit_builds(name):
    """It used to raise a bare ValueError (OINIT did not converge) from model construction; a
    forged header with it now fails at its first block check, a CorruptError."""
    config = dataclasses.replace(make_config(name, 1), hidden=1, oinit=True, oinit_rate=1e-6,
                                 experts="")
    create(name, config, alphabet=b"ab", seed=0)
    spec = MODELS[name]
    n = 4096
    header = container.StreamHeader(spec.model_id, config_to_header(spec.config_class, config),
                                    0, n, n, b"ab", 0).pack()
    checks = b"\0\0" * len(container.block_bounds(n))
    with pytest.raises(CorruptError):
        seqzip.decompress(header + container.pack_frame(n, b"\x55" * 40, checks))


@pytest.mark.long
def test_slowest_oinit_on_the_widest_network_costs_seconds():
    import time
    config = dataclasses.replace(make_config("relu-rnn", 9), hidden=384, oinit=True,
                                 oinit_rate=1e-6, init_radius=10.0, experts="")
    start = time.process_time()
    create("relu-rnn", config, alphabet=bytes(range(256)), seed=0)
    assert time.process_time() - start < 5.0


def test_unchanged_oinit_within_its_budget():
    """Below the budget OINIT runs to 1e-6 as before: R R^T = I."""
    config = dataclasses.replace(make_config("relu-rnn", 1), hidden=24, oinit=True, experts="")
    R = create("relu-rnn", config, alphabet=b"abcde", seed=3).recurrent_matrices()["R"]
    assert np.abs(R @ R.T - np.eye(24)).max() < 1e-3


# --- one-symbol streams ------------------------------------------------------------------------

def _one_symbol_header(length: int) -> bytes:
    spec = MODELS["order2"]
    config = make_config("order2", 1)
    return container.StreamHeader(spec.model_id, config_to_header(spec.config_class, config), 0,
                                  length, 1 << 24, b"a", zlib.crc32(b"")).pack()


def test_one_symbol_stream_past_one_gib_needs_max_length():
    forged = _one_symbol_header(4 << 30)
    with pytest.raises(LimitError, match="repeats one byte value"):
        seqzip.decompress(forged)
    with pytest.raises(seqzip.TruncatedError):  # the caller asked: it gets past the check
        seqzip.decompress(forged, max_length=8 << 30)
    d = seqzip.SeqzipDecompressor()
    with pytest.raises(LimitError):
        d.decompress(forged)


def test_one_symbol_streams_within_the_bound_round_trip():
    data = b"z" * 5_000_000
    packed = seqzip.compress(data, model="order2")
    assert len(packed) < 1000 and seqzip.decompress(packed) == data
    # concatenated streams count together: the bound is on the call's output
    assert container.ONE_SYMBOL_LENGTH == 1 << 30


def test_concatenated_one_symbol_streams_share_the_bound():
    stream = _one_symbol_header(600 << 20)
    with pytest.raises(LimitError):
        container.check_one_symbol_length(container.parse_header(stream)[0], 600 << 20,
                                          container.DEFAULT_MAX_LENGTH)
    container.check_one_symbol_length(container.parse_header(stream)[0], 0,
                                      container.DEFAULT_MAX_LENGTH)


def test_a_ctw_file_whose_child_map_has_grown_loads():
    """The check of the child map probes with the state's map size, not a fresh kernel's (a
    tree past 2^14 nodes has grown its map: every such file was refused)."""
    from seqzip import corpora
    from seqzip.predictor import Predictor

    p = Predictor("ctw", 6, alphabet=bytes(range(256)))
    p.feed(corpora.generate("english", 30_000, seed=4).data)
    state = p._model.kernel.get_state()
    assert int(state["sizes"][4]) + 1 > 1 << 15  # the map grew
    q = Predictor.from_bytes(p.to_bytes())
    assert (q.feed(b"the end of it") == p.feed(b"the end of it")).all()


@pytest.mark.parametrize("model", ["ctw", "order2", "glnn", "lstm", "mlstm", "mrnn", "relu-rnn",
                                   "cm"])
def test_fresh_models_and_their_experts_pass_their_own_checks(model):
    """A model that has seen nothing (its experts neither: a CTW tree that walked no path)
    is a state a model can be in, so its file loads."""
    from seqzip.predictor import Predictor

    for level in (1, 6):
        p = Predictor(model, level, alphabet=bytes(range(256)))
        kernel = p._model.kernel
        kernel.set_state(kernel.get_state())
        q = Predictor.from_bytes(p.to_bytes())
        assert (q.feed(b"abc") == p.feed(b"abc")).all()


def _recipe(meta_changes: dict, text: bytes = b"abc " * 50, declared: int | None = None):
    """A recipe model file (a fresh order2 -1 state and the text it learns), forged."""
    import hashlib
    import json
    import lzma
    import struct

    from seqzip import predictor as predictor_module
    from seqzip.models import config_to_bytes, make_config

    meta = {"model": "order2", "config": config_to_bytes(make_config("order2", 1)).decode(),
            "alphabet": list(range(256)), "seed": 0, "info": {}, "rescale": None,
            "replay": len(text) if declared is None else declared, "base": 0}
    meta.update(meta_changes)
    raw = json.dumps(meta).encode()
    body = (predictor_module.RECIPE_MAGIC + bytes([predictor_module.RECIPE_VERSION]) +
            struct.pack("<I", len(raw)) + raw + lzma.compress(text))
    return body + hashlib.sha256(body).digest()


def test_recipe_files_are_untrusted_input_too():
    """A recipe (a starting state and a text to learn) is checked as a full-state file is:
    its metadata's types and ranges, and a text that cannot pay for its length -- an LZMA
    bomb of zeros asking for hours of learning -- is refused before anything is learnt."""
    import time
    import tracemalloc

    from seqzip.predictor import Predictor

    good = Predictor.from_bytes(_recipe({}))
    assert good.symbols == 200
    for changes in ({"alphabet": 10**9}, {"seed": "x"}, {"model": 3}, {"rescale": 1},
                    {"base": -1}, {"replay": "many"}, {"info": 5}):
        with pytest.raises(ModelFileError):
            Predictor.from_bytes(_recipe(changes))
    with pytest.raises(ModelFileError, match="wrong length|longer"):
        Predictor.from_bytes(_recipe({}, declared=150))
    bomb_file = _recipe({}, bytes(64 << 20))  # 64 MiB of zeros: LZMA makes it ~10 KB
    start = time.process_time()
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="impossible sizes"):
            Predictor.from_bytes(bomb_file)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.process_time() - start < 5
    assert peak < 8 << 20, f"{peak / 2**20:.1f} MiB allocated: the bomb was inflated"


def test_a_research_network_file_given_as_a_dictionary_says_what_it_is(tmp_path):
    import numpy as np

    from seqzip.predictor import Predictor

    path = tmp_path / "r.sqm"
    with open(path, "wb") as f:
        np.savez(f, meta=np.array([1]))
    with pytest.raises(ModelFileError, match="research network file.*train --model"):
        Predictor.load(str(path))


def test_max_memory_refuses_a_dictionary_before_it_is_built(tmp_path):
    """--max-memory counts the dictionary's model (over its own alphabet, all 256 byte
    values), and a file asking for more is refused from its metadata, before its arrays are
    inflated or its model allocated."""
    import seqzip
    from seqzip.errors import LimitError
    from seqzip.predictor import Predictor

    d = Predictor("ctw", 6)
    d.feed(b"hello world " * 40)
    path = str(tmp_path / "d.sqm")
    d.save(path)
    packed = seqzip.compress(b"hello there", dictionary=path)
    need = d.config.memory_bytes(256)
    with pytest.raises(LimitError, match="max-memory"):
        Predictor.load(path, max_memory=need - 1)
    with pytest.raises(LimitError, match="max-memory"):
        seqzip.decompress(packed, dictionary=path, max_memory=need - 1)
    assert seqzip.decompress(packed, dictionary=path, max_memory=need) == b"hello there"
    result = subprocess.run([sys.executable, "-m", "seqzip.cli", "-dc", "--dict", path,
                             "--max-memory", str(need - 1)], input=packed,
                            capture_output=True)
    assert result.returncode == 1 and b"max-memory" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
