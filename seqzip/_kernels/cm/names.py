"""Names of the context mixer's state scalars: their types, and the reading of a state
written before they were named (three positional lists: model files of seqzip 0cd69a4 and
older)."""
import numpy as np

from seqzip._core import take


def scalar_type(name: str):
    """The dtype of a named scalar of the state: the context's words and the match pointers
    are uint64, probabilities and Adam's powers float64, the rest int64."""
    if name.startswith("ctx.") and name not in ("ctx.c1_index", "ctx.word_len",
                                                 "ctx.record_votes", "ctx.candidate_votes") \
            or name.endswith(".ptr"):
        return np.uint64
    if name.startswith(("opt.", "out.")) or name.endswith((".dot", ".p")):
        return np.float64
    return np.int64


def legacy_scalars(state: dict, n_match: int, n_sets: int) -> dict:
    """The named scalars of a state whose scalars are the lists ``ints``, ``words`` and
    ``floats`` (checked for their lengths)."""
    ints = [int(v) for v in take(state, "ints", np.int64, (13 + 4 * n_match + n_sets + 1,))]
    words = [int(v) for v in take(state, "words", np.uint64, (12 + n_match,))]
    floats = [float(v) for v in take(state, "floats", np.float64, (6 + 2 * n_sets,))]
    out = dict(zip(["ctx.c1_index", "symbol.node", "symbol.depth", "symbol.gnode",
                    "symbol.group", "symbol.group_left", "symbol.forced", "symbol.n_known",
                    "ctx.word_len", "ctx.record_votes", "ctx.candidate_votes",
                    "symbol.net_pattern", "symbol.seen"], ints))
    out.update(zip(["ctx.pos", "ctx.c8", "ctx.line_start", "ctx.prev_line_start",
                    "ctx.word0", "ctx.word1", "ctx.word2", "ctx.separator",
                    "ctx.before_word", "ctx.sentence", "ctx.record_len",
                    "ctx.record_candidate"], words))
    out.update(zip(["opt.b1t", "opt.b2t", "out.p_mix", "out.p_final", "final.dot",
                    "final.p"], floats))
    k = 13
    for i in range(n_match):
        for j, name in enumerate(("length", "predicted", "miss", "sm_index")):
            out[f"match{i}.{name}"] = ints[k + j]
        out[f"match{i}.ptr"] = words[12 + i]
        k += 4
    for i in range(n_sets):
        out[f"set{i}.selected"] = ints[k + i]
        out[f"set{i}.dot"], out[f"set{i}.p"] = floats[6 + 2 * i], floats[7 + 2 * i]
    out["final.selected"] = ints[k + n_sets]
    return out
