"""The bound of hashed contexts (slots.pxd's MAX_CONTEXTS, 64 since session 12; 48 before):
configs up to it build, code and round trip with every per-context component (runs, the
second maps of cx_inputs), and their state restores mid-symbol; one more is refused.  A
state's per-context buffers hold max(48, contexts) entries (STATE_CONTEXTS), so the states
of configs of 48 contexts or fewer keep the sizes older builds wrote and their model files
load."""
import dataclasses
import hashlib
import io

import numpy as np
import pytest

import seqzip
from seqzip.models.cm import CMConfig
from seqzip.models.cm_config import LIMITS
from seqzip.predictor import Predictor
from tests.kernels.test_cm import feed, kernel, resumes

TEXT = b"the cat sat on the mat; the dog sat on the log. " * 20 + \
    b"<p>a cat is not a dog, and a dog is not a log.</p>\n" * 10
LAYOUT_99 = "80fd4178e0110a7d"  # the same from a build of MAX_CONTEXTS 48 (e7ad9df)
# 39 contexts of kinds words2, markup and code, 2 of the word, then one per order
MANY = dict(word=1, words2=65535, markup=1023, code=8191)


def orders(n_contexts: int) -> str:
    """The orders that bring MANY to ``n_contexts`` hashed contexts."""
    return ",".join(str(k) for k in range(2, 2 + n_contexts - 41))


def config(n_contexts: int, **fields) -> dict:
    return dict(MANY, orders=orders(n_contexts), match=4, sets="node,match", table_bits=14,
                history_bits=16, **fields)


def test_the_bound_is_64_and_one_more_is_refused():
    assert LIMITS["contexts"] == 64
    assert len(CMConfig(**config(64)).spec.contexts) == 64
    with pytest.raises(ValueError, match="at most 64 hashed contexts"):
        CMConfig(**config(65))


@pytest.mark.parametrize("fields", [dict(runs=31), dict(cx_inputs=12)])
def test_64_contexts_round_trip(fields):
    cfg = CMConfig(**config(64, **fields))
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(TEXT), out, model="cm", config=cfg)
    assert seqzip.decompress(out.getvalue()) == TEXT
    again = io.BytesIO()
    seqzip.compress_file(io.BytesIO(TEXT), again, model="cm", config=cfg)
    assert again.getvalue() == out.getvalue()  # deterministic


@pytest.mark.parametrize("fields", [dict(runs=31), dict(cx_inputs=12)])
def test_64_contexts_memory_is_bounded(fields):
    cfg = CMConfig(**config(64, **fields))
    k = kernel(**config(64, **fields))
    assert k.memory_allocated() <= cfg.memory_bytes(256)


@pytest.mark.parametrize("fields", [dict(runs=31), dict(cx_inputs=12)])
def test_64_contexts_restore_mid_symbol(fields):
    a, b = kernel(**config(64, **fields)), kernel(**config(64, **fields))
    feed(a, TEXT[:700])
    a.predict_bit()
    a.update_bit(0)
    assert resumes(a, b, a.get_state(), TEXT[700:900])


def buffer_sizes(state: dict) -> dict:
    """The bytes of each per-context buffer of a state, and the entries of runs' maps 0, 2."""
    names = ["ctx_hash", "group_hash", "map_state", "runs.sym", "runs.run", "runs.changed",
             "runs.where", "runs.check", "runs.live"]
    out = {name: state[name].size for name in names}
    out.update({f"runs{k}.n": state[f"runs{k}.n"].size // 2 for k in (0, 2)})
    return out


def expected(n: int) -> dict:
    return {"ctx_hash": 8 * n, "group_hash": 8 * n, "map_state": 4 * (n + 2), "runs.sym": n,
            "runs.run": n, "runs.changed": n, "runs.where": 4 * n, "runs.check": 2 * n,
            "runs.live": n, "runs0.n": 256 * n, "runs2.n": 256 * n}


@pytest.mark.parametrize("n_contexts, entries", [(3, 48), (48, 48), (56, 56), (64, 64)])
def test_state_buffers_hold_48_contexts_at_least(n_contexts, entries):
    fields = dict(runs=7) if n_contexts == 3 else config(n_contexts, runs=7)
    k = kernel(**fields)
    feed(k, TEXT[:50])
    assert buffer_sizes(k.get_state()) == expected(entries)


def test_a_state_of_48_contexts_has_the_layout_older_builds_wrote():
    """Level 9's text preset (48 contexts, runs) in small tables: the state's names and the
    shapes of its arrays (the network's left out) as a build with MAX_CONTEXTS 48 (e7ad9df)
    wrote them, pinned by a digest of the sorted (name, shape) pairs."""
    cfg = dataclasses.replace(CMConfig.for_preset_id(99), table_bits=12, history_bits=12)
    p = Predictor("cm", config=cfg, alphabet=bytes(range(256)))
    p.feed(TEXT[:300])
    state = p.kernel.get_state()
    pairs = sorted((name, np.asarray(value).shape) for name, value in state.items()
                   if not name.startswith("expert"))
    assert len(pairs) == 267
    assert hashlib.sha256(repr(pairs).encode()).hexdigest()[:16] == LAYOUT_99
