"""The context mixer's state checked as a decoder checks a stream, before any of it is used.

``CMKernel.set_state`` takes its state from model files, which are untrusted input: every
index a table is read or written at, every count a table of rates is read at, every position
inside the symbol's bit tree and every float the arithmetic turns into an index comes from
the file.  ``check_state`` checks them all against the kernel's layout (``CMKernel._layout``)
and raises ``ValueError`` naming the first field no model could have written; the kernel is
written only after it returns.  What it does not check (the hash table's check bytes, the
maps' probabilities, hashes, history bytes, the APM tables) can take any value: a wrong one
only predicts badly.
"""
import math

import numpy as np

# One set of bounds for a cm config: ``seqzip.models.cm.CMConfig`` checks its fields against
# these and the kernel checks its spec against the same (``CMKernel._check``).  The kernel's
# own limits (hashed contexts, match models, weight sets, APM stages) are its C constants,
# exported as ``LIMITS``; the constants a state is checked against (the StateMaps' count cap,
# the match map's size, the APM bins, the longest record ...) come with the kernel's layout
# (``CMKernel._layout``), so that no number here repeats one of the kernel's.
CONFIG_BOUNDS = {
    "match": (0, 64), "match2": (0, 64),  # minimum match lengths (0: off), each 0 or >= 2
    "word": (0, 3), "sparse": (0, 2), "record": (0, 2), "indirect": (0, 1),
    "columns": (0, 1), "text": (0, 1), "aligned": (0, 1), "image": (0, 2),
    "markup": (0, 8191), "code": (0, (1 << 25) - 1),
    "gate_units": (0, 64),
    "aligned16": (0, 31), "numeric": (0, 127),  # bit masks of their contexts
    "samples": (0, 1), "runs": (0, 31),  # runs: a bit mask of its inputs (runs.pxd)
    "floats": (0, 7),  # a bit mask of the float expert's formats (floats.pxd)
    "post": (0, 1000),  # the last mix's rate x 100000 (post.pxd)
    "post_mode": (0, 127),  # a bit mask (post.pxd's PM_MASK)
    "net_sel": (0, 15),  # a bit mask (netsel.pxd's NS_MASK)
    "rows": (0, 4095),  # bit masks of the row contexts (0-7) and the row maps (8-11)
    "table_bits": (10, 26), "history_bits": (10, 26),
    "rate": (0.0, 100.0), "rate2": (0.0, 100.0), "gate_rate": (0.0, 100.0),
    "decay": (0.5, 1.0), "eps": (1e-6, 1e6),
    "mix_skip": (0.0, 0.5),  # QDH: a set's |error| below it steps its curvature only
    "apm_rate": (1, 12),
    "mix_init": (0, 2),  # the mixer's start (mixer.pxd)
    "sse": (0, 1023),  # a bit mask (sse.pxd's SSE_MASK)
    "words2": (0, 65535),  # a bit mask of kind words2's contexts
    "sparse2": (0, 4095), "indirect2": (0, 511),  # bit masks: sparse j 6+, indirect j 3+
    "cx_inputs": (0, 15),  # a bit mask of the inputs per hashed context (cxinputs.pxd)
    "fit": (0, 1),  # the hashed table sized to the input's length (CMConfig.table_bits_for)
    "fold_case": (0, 1),  # the text coded case-folded (seqzip.textcase; the session's work)
}
SSE_STAGE_BITS = 316  # the sse bits that each add a stage (sse.pxd's SSE_KINDS: 4, 8, 16, 32, 256)


def sse_stages(sse: int) -> int:
    """How many extra stages the field ``sse`` asks for."""
    return bin(sse & SSE_STAGE_BITS).count("1")


def post_bytes(post: int, mode: int, n_inputs: int, spec, apm: int, sse: int) -> int:
    """Bytes the last mix allocates (post.pxd, ``post_mode``): its inputs, and 3 doubles per
    weight of each row (of each of its two mixes with bit 5)."""
    if not post:
        return 0
    n = 3 + len(spec.selectors) + apm + (sse_stages(sse) + (sse >> 1 & 1) if sse
                                         else 0) + (mode >> 6 & 1) * n_inputs \
        if mode & 1 else n_inputs + 1
    rows = (1, 8, 48, 8)[mode >> 1 & 3]
    return 8 * n + 3 * 8 * rows * n * (2 if mode & 32 else 1)


MIN_MATCH = 2            # a match model's shortest minimum length
INT_MAX = 2 ** 31 - 1    # the C ints of the kernel

# the buffers of C arrays (native byte order) and their element types
_TYPES = {"map_state": "=i4", "apm_ctx": "=i4", "apm_bin": "=i4", "apm_frac": "=f8",
          "apm_out": "=f8", "inputs": "=f8", "y2": "=f8", "expert_probs": "=f8",
          "trees": "=f8", "last_pos": "=u8", "last_dist": "=u8", "gate_U": "=f8",
          "gate_hd": "=f8", "gate_hc": "=f8", "gate_features": "=f8", "gate_z": "=f8",
          "sse.out": "=f8", "sse.w": "=f8", "sse.inp": "=f8"}


def _fail(name: str, what: str):
    raise ValueError(f"model state field {name!r} {what}")


def _int(v: dict, name: str, lo: int, hi: int) -> int:
    """The scalar ``name``, which must lie in lo..hi."""
    x = v[name]
    if not lo <= x <= hi:
        _fail(name, f"is {x}, outside {lo}..{hi}")
    return x


def _float(v: dict, name: str, lo: float, hi: float) -> float:
    x = v[name]
    if not (math.isfinite(x) and lo <= x <= hi):
        _fail(name, f"is {x}, outside [{lo}, {hi}]")
    return x


def _view(raw: dict, name: str, dtype: str) -> np.ndarray:
    return np.frombuffer(raw[name].tobytes(), dtype=np.dtype(dtype))


def _below(raw: dict, name: str, dtype: str, limit: int, lo: int = 0) -> np.ndarray:
    a = _view(raw, name, dtype)
    if a.size and (a.min() < lo or a.max() >= limit):
        _fail(name, f"holds a value outside {lo}..{limit - 1}")
    return a


def _finite(raw: dict, name: str, nonnegative: bool = False) -> np.ndarray:
    a = _view(raw, name, _TYPES.get(name, "=f8"))
    if not np.isfinite(a).all():
        _fail(name, "holds a value that is not finite")
    if nonnegative and a.size and a.min() < 0.0:
        _fail(name, "holds a negative value")
    return a


def check_symbol(L: dict, v: dict):
    """The position inside the symbol's bit tree: depth, node, its group and node in the
    group as ``update_bit`` leaves them, on the path of a symbol of the alphabet."""
    A, B, groups = L["A"], L["B"], L["group_bits"]
    depth = _int(v, "symbol.depth", 0, B - 1)
    node = _int(v, "symbol.node", 1 << depth, (2 << depth) - 1)
    if (node << (B - depth)) - (1 << B) >= A:
        _fail("symbol.node", "is on no symbol's path")
    group, left = 0, depth
    while left >= groups[group]:
        left -= groups[group]
        group += 1
    if v["symbol.group"] != group:
        _fail("symbol.group", f"is not {group} at depth {depth}")
    if v["symbol.group_left"] != groups[group] - left:
        _fail("symbol.group_left", f"is not {groups[group] - left} at depth {depth}")
    if v["symbol.gnode"] != (1 << left) | (node & ((1 << left) - 1)):
        _fail("symbol.gnode", "does not match symbol.node")
    _int(v, "symbol.forced", -1, 0)
    _int(v, "symbol.n_known", 0, L["n_hashed"])
    _int(v, "symbol.net_pattern", 0, L["net_patterns"] - 1)
    _int(v, "symbol.seen", 0, 2 ** 63 - 1)


def check_context(L: dict, v: dict, raw: dict):
    pos = v["ctx.pos"]
    _int(v, "ctx.c1_index", 0, L["A"] - 1)
    _int(v, "ctx.word_len", 0, INT_MAX)
    _int(v, "ctx.record_votes", 0, INT_MAX)  # a counter (a won vote may pass 64): no index
    _int(v, "ctx.candidate_votes", 0, INT_MAX)
    _int(v, "ctx.line_start", 0, pos)
    _int(v, "ctx.prev_line_start", 0, v["ctx.line_start"])
    for name in ("ctx.record_len", "ctx.record_candidate"):
        if v[name] == 1 or v[name] > L["max_record"]:
            _fail(name, f"is {v[name]}, not 0 or 2..{L['max_record']}")
    last = _view(raw, "last_pos", "=u8")
    if last.size and int(last.max()) > pos:
        _fail("last_pos", "holds a position after ctx.pos")
    if "markup" in raw:  # markup contexts: the mode and the depth of the element stack
        modes, depth = L["markup"]
        m = _view(raw, "markup", "=u8")
        if m[0] >= modes:
            _fail("markup", f"holds the mode {m[0]}, not below {modes}")
        if m[1] > depth:
            _fail("markup", f"holds the depth {m[1]}, above {depth}")


def check_tables(L: dict, raw: dict):
    """Bit histories below the number of states; map counts within the rate table."""
    n = L["n_states"]
    table = _view(raw, "table", "u1").reshape(-1, 16)
    if table.size and table[:, 1:].max() >= n:
        _fail("table", f"holds a bit history >= {n} (the number of states)")
    _below(raw, "o0", "u1", n)
    _below(raw, "o1", "u1", n)
    for i in range(L["n_hashed"] + 2):
        _below(raw, f"map{i}.n", "=u2", L["sm_limit"] + 1)
    _below(raw, "map_state", "=i4", n)
    for i in range(L["n_hashed"] if "cxmap.index" in raw else 0):  # cx_inputs' second maps
        size = _below(raw, f"cxmap{i}.n", "=u2", L["sm_limit"] + 1).size
    if "cxmap.index" in raw:
        _below(raw, "cxmap.index", "=i4", size, -1)


def check_slots(L: dict, slots) -> list:
    """Each hashed context's slot: a 16-byte slot inside the hash table."""
    out = []
    for i, s in enumerate(int(x) for x in slots):
        if not (0 <= s <= L["table_bytes"] - 16 and s % 16 == 0):
            _fail("slots", f"holds {s} for context {i}: not a slot of the hash table")
        out.append(s)
    return out


def check_match(L: dict, v: dict, raw: dict):
    pos = v["ctx.pos"]
    for i in range(L["n_match"]):
        length = _int(v, f"match{i}.length", 0, L["match_max"])
        _int(v, f"match{i}.predicted", -1, L["A"] - 1)
        _int(v, f"match{i}.miss", 0, 1)
        _int(v, f"match{i}.sm_index", -1, L["match_sm"] - 1)
        _int(v, f"match{i}.ptr", 0, pos - 1 if length > 0 else pos)
        _below(raw, f"match{i}.smn", "=u2", L["sm_limit"] + 1)
        if pos < 2 ** 32:
            _below(raw, f"match{i}.table", "=u4", pos + 1)


def check_mixer(L: dict, v: dict, raw: dict):
    """Selected rows inside their weight sets; weights and the optimiser's moments finite,
    and of the sign the optimiser keeps them (QDH's diagonal, Adam's second moment)."""
    qdh, adam = L["optimizer"] == "qdh", L["optimizer"] == "adam"
    _float(v, "opt.b1t", 0.0, 1.0)
    _float(v, "opt.b2t", 0.0, 1.0)
    _float(v, "out.p_mix", 0.0, 1.0)
    _float(v, "out.p_final", 0.0, 1.0)
    mixers = [(f"set{i}", rows) for i, rows in enumerate(L["set_rows"])]
    if L["final_rows"]:
        mixers.append(("final", L["final_rows"]))
    mixers = [(name, rows, qdh, adam) for name, rows in mixers]
    if "post.selected" in v:  # the last mix (post.pxd): its rows, one or two mixes, its step
        mode = L["post_mode"]
        mixers += [(name, (1, 8, 48, 8)[mode >> 1 & 3], bool(mode & 8), False)
                   for name in ("post", "post2") if f"{name}.selected" in v]
        _finite(raw, "post.y")
        if "post.boost" in raw:  # the rate's extra (post_mode bit 4)
            _finite(raw, "post.boost", nonnegative=True)
    for name, rows, qdh_step, adam_step in mixers:
        _int(v, f"{name}.selected", 0, rows - 1)
        _float(v, f"{name}.dot", -16.0, 16.0)
        _float(v, f"{name}.p", 0.0, 1.0)
        _finite(raw, f"{name}.w")
        _finite(raw, f"{name}.hd", nonnegative=qdh_step)
        _finite(raw, f"{name}.hc", nonnegative=adam_step)
    if not L["final_rows"]:
        _int(v, "final.selected", 0, 0)
        _float(v, "final.dot", -16.0, 16.0)
        _float(v, "final.p", 0.0, 1.0)
    if L["gate_units"]:
        _finite(raw, "gate_U")
        _finite(raw, "gate_hd", nonnegative=qdh)
        _finite(raw, "gate_hc", nonnegative=adam)
        if _finite(raw, "gate_features")[0] != 1.0:
            _fail("gate_features", "does not start with the constant 1")
        _finite(raw, "gate_z")
    for name in ("inputs", "y2", "apm_frac", "apm_out"):
        _finite(raw, name)
    _finite(raw, "expert_probs", nonnegative=True)
    _finite(raw, "trees", nonnegative=True)


def check_apm(L: dict, raw: dict):
    ctx = _view(raw, "apm_ctx", "=i4")
    bins = _view(raw, "apm_bin", "=i4")
    frac = _view(raw, "apm_frac", "=f8")
    for i, contexts in enumerate(L["apm_contexts"]):
        if not 0 <= ctx[i] < contexts:
            _fail("apm_ctx", f"holds {ctx[i]} for stage {i} of {contexts} contexts")
        if not 0 <= bins[i] <= L["apm_bins"] - 2:  # a row is read at bin and bin + 1
            _fail("apm_bin", f"holds {bins[i]} for stage {i}")
        if not 0.0 <= frac[i] <= 1.0:
            _fail("apm_frac", f"holds {frac[i]} for stage {i}")


def check_sse(L: dict, v: dict, raw: dict):
    """sse > 0: each extra stage's row and bin inside its table, the mix's floats finite
    (the counts may hold any value: a rate's divisor)."""
    if L["sse"]:
        ctx, bins = _view(raw, "sse.ctx", "=i4"), _view(raw, "sse.bin", "=i4")
        frac = _view(raw, "sse.frac", "=f8")
        for i, rows in enumerate(L["sse"]):
            if not (0 <= ctx[i] < rows and 0 <= bins[i] <= L["apm_bins"] - 2 and
                    0.0 <= frac[i] <= 1.0):
                _fail("sse.ctx", f"holds row {ctx[i]}, bin {bins[i]} or fraction {frac[i]} "
                      f"outside stage {i}'s table")
        _finite(raw, "sse.out")
    if L["sse_mix"]:
        _float(v, "sse.p", 0.0, 1.0)
        _finite(raw, "sse.w")
        _finite(raw, "sse.inp")


def check_spec(spec, limits: dict, n_experts: int, network: bool):
    """The bounds of a parsed config (``CMConfig.spec``) that keep the kernel's memory safe:
    the config's own (``CONFIG_BOUNDS``) and the kernel's ``limits`` (``SPEC_LIMITS``: its
    arrays' sizes, the ids of kinds, selectors and optimisers).  ValueError if one fails."""
    contexts, selectors = list(spec.contexts), list(spec.selectors)
    for name in ("history_bits", "table_bits"):
        low, high = CONFIG_BOUNDS[name]
        if not low <= getattr(spec, name) <= high:
            raise ValueError(f"{name} must be in {low}..{high}")
    L = limits
    if len(contexts) > L["contexts"] or len(spec.matches) > L["matches"] or \
            not 1 <= len(selectors) <= L["sets"] or not 0 <= spec.apm <= L["apm"]:
        raise ValueError(f"at most {L['contexts']} hashed contexts, {L['matches']} match "
                         f"models, 1 to {L['sets']} weight sets and {L['apm']} APM stages")
    match, apm_rate, gate_units = CONFIG_BOUNDS["match"], CONFIG_BOUNDS["apm_rate"], \
        CONFIG_BOUNDS["gate_units"]
    if any(not 0 <= kind < L["kinds"] or not 0 <= j < L["params"] for kind, j in contexts) or \
            any(not 0 <= s < L["selectors"] for s in selectors) or \
            spec.optimizer not in L["optimizers"] or \
            any(not MIN_MATCH <= m <= match[1] for m in spec.matches) or \
            not apm_rate[0] <= spec.apm_rate <= apm_rate[1] or \
            not gate_units[0] <= spec.gate_units <= gate_units[1]:
        raise ValueError("unknown context kind, selector or optimizer, or a match length, "
                         "apm_rate or gate_units out of range")
    if (getattr(spec, "net_sel", 0) or set(L["net_sets"]) & set(selectors)) and not network \
            or not 0 <= getattr(spec, "net_sel", 0) <= CONFIG_BOUNDS["net_sel"][1]:
        raise ValueError("net_sel and the netp and nettop sets need a network; net_sel 0..15")
    if n_experts + network > L["symbol_experts"] + 1:
        raise ValueError(f"at most {L['symbol_experts']} symbol experts and a network")
    if (L["net"] in selectors or L["gate"] in selectors) and not network or \
            selectors.count(L["gate"]) > 1 or (L["gate"] in selectors) != (spec.gate_units > 0):
        raise ValueError("the net and gate selectors need a network; one gated set, with "
                         "gate_units >= 1")


def check_image(L: dict, v: dict, raw: dict):
    """The image expert's tables: counts within the rate table (they index it), each bit's
    index inside its table and (image=2) each bit-history neighbourhood inside its table (any
    byte is a state: the maps over states hold all 256)."""
    for i, size in enumerate(L["image_maps"]):
        _below(raw, f"image{i}.n", "=u2", L["sm_limit"] + 1)
        if not 0 <= v[f"image{i}.index"] < size:
            _fail(f"image{i}.index", f"is outside its table of {size}")
    for i in range(3 * (len(L["image_maps"]) > 5)):
        if not 0 <= v[f"image.slot{i}"] < L["image_maps"][0]:  # as large as table 0
            _fail(f"image.slot{i}", f"is outside its table of {L['image_maps'][0]}")


def check_samples(L: dict, v: dict, raw: dict):
    """The numeric-sample expert's tables: counts within the rate table, each bit's index
    inside its table, the predictions inside the samples' range (the errors and the weights
    may hold any value: a bad one only predicts badly)."""
    for i in range(L.get("sample_maps", 0)):
        _below(raw, f"samples{i}.n", "=u2", L["sm_limit"] + 1)
        if not 0 <= v[f"samples{i}.index"] < L["sample_size"]:
            _fail(f"samples{i}.index", f"is outside its table of {L['sample_size']}")
    if L.get("sample_maps", 0):  # the predictions, offset binary: 0 .. 2^32 - 1 at most
        pred = np.frombuffer(raw["samples.pred"], dtype="=i8")
        if ((pred < 0) | (pred >= 1 << 32)).any():
            _fail("samples.pred", "holds a prediction outside 0..2^32 - 1")
    for f in range(3):  # the float expert's formats (floats.pxd): tables as above, its
        for i in (i for i in range(16) if f"floats{f}.{i}.n" in raw):  # words 32-bit
            size = _below(raw, f"floats{f}.{i}.n", "=u2", L["sm_limit"] + 1).size
            if not 0 <= v[f"floats{f}.{i}.index"] < size:
                _fail(f"floats{f}.{i}.index", f"is outside its table of {size}")
        if f"floats{f}.pred" in raw:
            pred = np.frombuffer(raw[f"floats{f}.pred"], dtype="=i8")
            if ((pred < 0) | (pred >= 1 << 32)).any():
                _fail(f"floats{f}.pred", "holds a word outside 0..2^32 - 1")


def check_rows(L: dict, v: dict, raw: dict):
    """The row maps (rows.pxd): counts within the rate table, each bit's index inside its
    map (its size: its counts' buffer)."""
    for i in range(4):
        if f"rowmap{i}.n" in raw:
            size = _below(raw, f"rowmap{i}.n", "=u2", L["sm_limit"] + 1).size
            if not 0 <= v[f"rowmap{i}.index"] < size:
                _fail(f"rowmap{i}.index", f"is outside its map of {size}")
def check_runs(L: dict, v: dict, raw: dict):
    """The run information: its maps' counts within the rate table, each bit's index inside
    its map or -1, each context's entry inside the table, the live contexts (the table's
    words, the contexts' symbols, runs and checks may hold any value: a bad one only
    predicts badly)."""
    if not L.get("runs"):
        return
    n = L["n_hashed"]
    for k, size in enumerate(L["runs"]["maps"]):
        _below(raw, f"runs{k}.n", "=u2", L["sm_limit"] + 1)
        if not -1 <= v[f"runs{k}.index"] < size:
            _fail(f"runs{k}.index", f"is outside its map of {size}")
    _below(raw, "runs.where", "=u4", L["runs"]["entries"])
    _int(v, "runs.n_live", 0, n)
    _int(v, "runs.pending", 0, 1)
    _below(raw, "runs.live", "u1", n)


def check_state(layout: dict, scalars: dict, raw: dict, slots) -> list:
    """Check a whole state (named scalars, raw buffers by name, slot offsets) against the
    kernel's layout; the slots as a list of offsets.  ValueError names the first bad field."""
    check_symbol(layout, scalars)
    check_context(layout, scalars, raw)
    check_tables(layout, raw)
    check_image(layout, scalars, raw)
    check_samples(layout, scalars, raw)
    check_rows(layout, scalars, raw)
    check_runs(layout, scalars, raw)
    check_match(layout, scalars, raw)
    check_mixer(layout, scalars, raw)
    check_apm(layout, raw)
    check_sse(layout, scalars, raw)
    return check_slots(layout, slots)
