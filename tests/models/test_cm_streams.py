"""Bit identity of the context mixer through its restructuring into a bank of components
(issue 19).  The single-class kernel (main at 0cd69a4) charged these costs: the SHA-256 (first
16 hex digits) of the per-symbol probabilities the coder charges (``cost_digest``) over 3,000
bytes of four generated corpora and of the first 3,000 bytes of each Canterbury file, at every
level.  Until issue 20's round eight the digests were of ``Predictor.feed``'s bits (-log2 of
those probabilities), whose last bits numpy's log2 gives differently on some CPUs (inferred:
AVX-512 or not): main at 8f1fa52 passed them in its own session's CI and failed all of CI's
here on a CPU without AVX-512 (its streams and every stream golden identical, with Cython 3.2.9
or 3.3.1 and numpy 2.3.5 or 2.4.6), so they were pinned again from that build as
digests of the probabilities themselves.  (The costs, not
the streams, so that the goldens hold across container header formats; the streams themselves
were compared at 0cd69a4's format: identical at levels 1-9.)  And a model file that kernel saved
(its state's scalars were positional lists then) still loads and predicts the same."""
import hashlib
from pathlib import Path

import numpy as np
import pytest

from seqzip import corpora
from seqzip._core import SCORE, run
from seqzip.models.cm import CMConfig
from seqzip.predictor import Predictor

CANTERBURY = Path("/work/shared/corpora/canterbury")
PREFIX = 3000

GENERATED = {
    1: {
        "english": "dcfea3960483a846",
        "binary": "50189234df0c0434",
        "insertions": "2685e26802d0bb00",
        "markov2": "de02d6abf65ca1c6",
    },
    2: {
        "english": "23048333a81ec570",
        "binary": "c820206c3c5537c1",
        "insertions": "b2ec03af604b2150",
        "markov2": "b948762256a97755",
    },
    3: {
        "english": "54aca52792bbb665",
        "binary": "04c7c9ba8e186d51",
        "insertions": "08778b40d75b9015",
        "markov2": "37cdabe1153d0ab7",
    },
    4: {
        "english": "e6e047ee2774d65e",
        "binary": "d35758f66a8ddb21",
        "insertions": "f28d388793c67fde",
        "markov2": "44fe279594a9b1c8",
    },
    5: {
        "english": "763a9d771b1a00cc",
        "binary": "e8500339a78aee40",
        "insertions": "5d6700dac3b0636d",
        "markov2": "93bc9c84d3d4ee0d",
    },
    6: {
        "english": "1eeadaf8b9b569d4",
        "binary": "056b8e6453b961c3",
        "insertions": "90260d10bc7c0e50",
        "markov2": "a4697406d4d6e2ed",
    },
    7: {
        "english": "88a7dede09639ea5",
        "binary": "9d7421d0647ac9c6",
        "insertions": "2d5582f424cdde45",
        "markov2": "58a96b3579ddfc43",
    },
    8: {
        "english": "50dd712a485ddcf6",
        "binary": "42ffcbbaa8c92699",
        "insertions": "234b42cec6b06aee",
        "markov2": "232aef1c60d366b2",
    },
    9: {
        "english": "5f5b86463dfd79a5",
        "binary": "3d90c9e3316f09fc",
        "insertions": "ec0b3ecef884fc24",
        "markov2": "5fa18d6e4e9954b6",
    },
}
CANTERBURY_COSTS = {
    1: {
        "alice29.txt": "8a3e41dd2df676c4",
        "asyoulik.txt": "3225ab853edf3000",
        "cp.html": "909d9ea1ef0c8c0b",
        "fields.c": "dec94f69b193a96b",
        "grammar.lsp": "027ce3930f959628",
        "kennedy.xls": "d202984b5184e474",
        "lcet10.txt": "063dced621210641",
        "plrabn12.txt": "e5c3161288ecc977",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "6945ae55b95c3b95",
        "xargs.1": "7b273a80a8bb9fa1",
    },
    2: {
        "alice29.txt": "9e7f05618c7b94d0",
        "asyoulik.txt": "18a4472e9c3d3882",
        "cp.html": "0d341cee2017c0f8",
        "fields.c": "60041343d9a8232d",
        "grammar.lsp": "891493f75d6c1596",
        "kennedy.xls": "701518ae3d60f209",
        "lcet10.txt": "895e42e810726be1",
        "plrabn12.txt": "fa87b833995bc713",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "a9f7b3eff1fe2e01",
        "xargs.1": "8769164da23ad38f",
    },
    3: {
        "alice29.txt": "ae1940f52e08435e",
        "asyoulik.txt": "0febaf677a899b88",
        "cp.html": "34c1a855d6ca4a02",
        "fields.c": "6e06b9550b695bdb",
        "grammar.lsp": "0dd94fd317202da4",
        "kennedy.xls": "daaa22bd640728a0",
        "lcet10.txt": "0c404c6701f3732c",
        "plrabn12.txt": "558deb37df5479b3",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "793b15b08803b3be",
        "xargs.1": "f3ff86583afd6f89",
    },
    4: {
        "alice29.txt": "032091d36b3421d5",
        "asyoulik.txt": "9ce98804d03954b5",
        "cp.html": "e25aa617ca2e23a8",
        "fields.c": "fb85dcb648269eba",
        "grammar.lsp": "d63c124a3a81dbbb",
        "kennedy.xls": "813474472fa5eed6",
        "lcet10.txt": "80a338db05fa2f60",
        "plrabn12.txt": "945af275d0afeddd",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "bd920dff042085cf",
        "xargs.1": "4aca9b1dcf30b0f8",
    },
    5: {
        "alice29.txt": "4338a18cd3631437",
        "asyoulik.txt": "02f8d12f60ab10a4",
        "cp.html": "8cc5c32595be2677",
        "fields.c": "afbcab1d79994e51",
        "grammar.lsp": "447004c679a95780",
        "kennedy.xls": "a11ec748a30ddff4",
        "lcet10.txt": "073397e9358ec73a",
        "plrabn12.txt": "23c577f721a7ce59",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "56e4f5aa09bd9958",
        "xargs.1": "3fa077b5178306e1",
    },
    6: {
        "alice29.txt": "d3a188e3ac0573e4",
        "asyoulik.txt": "ce470eea6a82973d",
        "cp.html": "e7ec2457ca0c83f0",
        "fields.c": "ac1a8bcf0e83eb46",
        "grammar.lsp": "81d4a5e7c88d5a02",
        "kennedy.xls": "962bf8674522fe29",
        "lcet10.txt": "44b183dd99ec4074",
        "plrabn12.txt": "916e3aea84eef158",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "062ec6a5ac5a4ccc",
        "xargs.1": "001bca9d6f083e2b",
    },
    7: {
        "alice29.txt": "acae15764ba51a9f",
        "asyoulik.txt": "2ff7b939284e9062",
        "cp.html": "ccf87d1cdde81bed",
        "fields.c": "54c674561b4d8e63",
        "grammar.lsp": "9dda7613e17f7259",
        "kennedy.xls": "ae25159edbec0701",
        "lcet10.txt": "21ed68e4ad1515dd",
        "plrabn12.txt": "05e0d2f88970e502",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "d647b85a74676e75",
        "xargs.1": "0875e04ccffab5e7",
    },
    8: {
        "alice29.txt": "8212a5dba4df62f4",
        "asyoulik.txt": "03d2c802ae83f5e3",
        "cp.html": "e258f1edb9e05276",
        "fields.c": "f33fe90e3bf43e1a",
        "grammar.lsp": "f941063b9df028b7",
        "kennedy.xls": "43e215854a5e0cfe",
        "lcet10.txt": "f63fa6beb0d23880",
        "plrabn12.txt": "0ffa79b9cf213b37",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "6c8a0cc3d980381a",
        "xargs.1": "e0bb4d11200fd265",
    },
    9: {
        "alice29.txt": "aac989a176e48bf1",
        "asyoulik.txt": "c274dbc2040472d4",
        "cp.html": "425966fb1e526f8b",
        "fields.c": "d02edb732b48c2c9",
        "grammar.lsp": "07d52978e1f26acb",
        "kennedy.xls": "d2d03102e2edb710",
        "lcet10.txt": "92203b12e1f927c5",
        "plrabn12.txt": "9601393923b35180",
        "ptt5": "bf92e28edd3af5c1",
        "sum": "0ddc4ba64e4086df",
        "xargs.1": "855cc14c0593e36b",
    },
}


def cost_digest(data: bytes, level: int, config=None) -> str:
    """The digest of the costs under the preset that id ``level`` names (the level's first
    preset: issue 20 renumbered the changed ones), or under ``config``: of each symbol's
    probability as the coding loop's SCORE step computes it (the product of its bits' 16-bit
    probabilities), which is exact on every machine.  Not of ``Predictor.feed``'s -log2 of
    it: numpy's log2 gives other last bits on a CPU with AVX-512 than on one without."""
    config = config or CMConfig.for_preset_id(level)
    alphabet = bytes(sorted(set(data)))
    index = np.zeros(256, np.uint8)
    index[list(alphabet)] = np.arange(len(alphabet))
    symbols = index[np.frombuffer(data, np.uint8)]
    scores = np.empty(len(symbols))
    run(Predictor("cm", alphabet=alphabet, config=config).kernel, SCORE, symbols, scores=scores)
    return hashlib.sha256(scores.tobytes()).hexdigest()[:16]


# The presets of ids beyond 9 (issue 20's levels 1, 6, 9 and later ones, ``models.cm.PRESETS``):
# preset id -> the level whose generated files above it is measured on, and the digest of the
# digests over them.
LATER = {
    10: (1, "77e5af04cc886063"),
    11: (6, "e327405d5c3e74da"),
    12: (9, "f8d661e84e7c73db"),
    16: (1, "2d0282dfb4f706f8"),
    17: (6, "0523cc6584130a54"),
    18: (9, "58e61b0b5e0752f5"),
    27: (6, "3875de52e73e82a9"),
    28: (9, "2c11639c09092f47"),
    31: (6, "a247c179a8b48b1f"),
    32: (9, "3c8c8bf8348f8137"),
    33: (1, "dae19ca7413c52d1"),
    46: (6, "41a51e198fa8fb2d"),
    47: (9, "7cccac32c39bc7b4"),
    48: (1, "499a44acdc425f65"),
    61: (6, "c9eef9ce8dcbe51f"),
    83: (6, "a67847e3b5ed488a"),
    84: (9, "5260c9c0a6ed0e3e"),
    96: (6, "eff535e8b9b99170"),
    97: (9, "f8af2f111841fb5b"),
    98: (6, "ef8d6d99b11f5ec7"),
    99: (9, "a32d3971c78bf5bc"),
    104: (6, "ca69248fbdb1907d"),
    105: (9, "a70bd9a208cb0b2d"),
    # round twelve: 104 and 105 with ``fit``, which with no length known (a Predictor) changes
    # nothing; their streams, sized to the input, are pinned in test_container/test_header_v8
    121: (6, "ca69248fbdb1907d"),
    122: (9, "a70bd9a208cb0b2d"),
    133: (6, "1d37cb7cec7a124f"),  # 121 and 122 with markup bits 10 and 11
    134: (9, "af6d994e5e2a00cd"),
    # round sixteen: levels 2-5, 7 and 8 (steps between 1, 6 and 9)
    143: (1, "b3f69d6f6ce9d242"),
    144: (1, "4c41d0fdd124e5a3"),
    145: (6, "dcc04411f348451c"),
    146: (6, "ec532722c502ad00"),
    147: (6, "8f322368db866eda"),
    148: (6, "3116986fe0eed9df"),
    # round seventeen: level 6 with its weight sets' quiet steps (mix_skip)
    42: (6, "b7948d453edd1306"),
}


# CI keeps the presets of today's levels 1, 2, 3 and 6 (ids 48, 143, 144 and 42) and 133, the
# base of levels 5, 7 and 8; the superseded presets, levels 4, 5, 7 and 8 and the level-9 ones
# (10-160 s each on the loaded machine; every level's stream is pinned in CI by
# test_container's goldens) run with ``-m long``.
_LATER_IN_CI = (42, 48, 133, 143, 144)


@pytest.mark.parametrize("preset_id", [i if i in _LATER_IN_CI else
                                       pytest.param(i, marks=pytest.mark.long)
                                       for i in sorted(LATER)])
def test_generated_costs_of_the_later_presets(preset_id):
    level, digest = LATER[preset_id]
    got = [cost_digest(corpora.generate(name, PREFIX, seed=0).data, level,
                       CMConfig.for_preset_id(preset_id)) for name in GENERATED[level]]
    assert hashlib.sha256(" ".join(got).encode()).hexdigest()[:16] == digest


def test_each_level_preset_today_is_pinned():
    assert {i for i in CMConfig.PRESET_IDS.values()} <= set(LATER)


# levels 7-9 (the mLSTM: 50-110 s each on the loaded machine) run with ``-m long``; CI keeps 1-6
LEVELS = [pytest.param(v, marks=pytest.mark.long) if v >= 7 else v for v in range(1, 10)]


@pytest.mark.parametrize("level", LEVELS)
def test_generated_costs_are_those_of_the_single_class_kernel(level):
    for name, digest in GENERATED[level].items():
        assert cost_digest(corpora.generate(name, PREFIX, seed=0).data, level) == digest, name


@pytest.mark.skipif(not CANTERBURY.is_dir(), reason="the Canterbury corpus is not here")
@pytest.mark.parametrize("level", LEVELS)
def test_canterbury_costs_are_those_of_the_single_class_kernel(level):
    for name, digest in CANTERBURY_COSTS[level].items():
        data = (CANTERBURY / name).read_bytes()[:PREFIX]
        assert cost_digest(data, level) == digest, name


def test_a_model_file_of_the_single_class_kernel_loads_and_predicts_the_same():
    old = Predictor.from_bytes((Path(__file__).parent / "cm_state_0cd69a4.sqm").read_bytes())
    config = CMConfig(orders="2,3", match=4, match2=8, word=1, apm=2, sets="node,match",
                      table_bits=10, history_bits=10)
    new = Predictor("cm", alphabet=b"abcdefghijklmnopqrstuvwxyz .\n", config=config)
    new.feed(b"the cat sat on the mat.\n" * 40 + b"the ca")
    assert hashlib.sha256(old.probs().tobytes()).hexdigest()[:16] == "9ba2691f9400ba18"
    assert np.array_equal(old.probs(), new.probs())
    again = Predictor.from_bytes(new.to_bytes())  # the named state round-trips
    for symbol in b"t sat":
        assert np.array_equal(old.probs(), again.probs())
        assert old.update(bytes([symbol])) == again.update(bytes([symbol]))
