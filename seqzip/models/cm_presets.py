"""Every preset id cm's stream headers name, today's levels and the variants chosen by what
the data is (``CMConfig.for_data``).  Append-only: a changed level takes a new id and the old id
keeps naming the old preset, so old streams decode as written (tests/test_container.py and
tests/models/test_cm_streams.py pin them).  Importing this module fills ``CMConfig``'s class
tables (``PRESET_IDS``, ``VARIANT_IDS``, ``DATA_VARIANTS``, ``PRESETS``, ``LEVELS``).
"""
from __future__ import annotations

from dataclasses import fields as dataclass_fields

from .cm_config import BITMAP_CHANGES, CMConfig, network_config

# Levels: a Pareto front measured by benchmarks/cm.py (each level smaller than the one below
# on every Canterbury text file).  Level 1 is a small mixer of a few experts without a network;
# the default (6) adds CTW, the order-2 model and the GLNN as inputs (the GLNN pays on structured
# data: insertions regret 4,219 -> 2,960 bits; on text it is neutral); 7-9 add orders and
# memory, and replace the GLNN by an mLSTM of 32, 64 and 96 units.  No level uses the gated
# weight set ("gate"): measured on the four text files it cost 0.0003-0.0014 bpc and a third of
# the speed at levels 6, 7 and 9.
_TEXT = dict(word=3, sparse=2, indirect=1, record=1, match2=16,
             sets="node,match,order,c1,word", apm=4)
FIRST_PRESETS: dict[int, dict] = {  # what preset ids 1-9 name in every stream: never changed
    1: dict(orders="2,3,4", match=6, word=0, sets="node", layer2=False, apm=1,
            table_bits=18, history_bits=20),
    2: dict(orders="2,3,4,6", match=6, word=1, sets="node,match", apm=2, table_bits=20),
    3: dict(orders="2,3,4,6", match=6, word=2, sparse=1, sets="node,match,c1", apm=3,
            table_bits=21),
    4: dict(orders="2,3,4,6,8", match=6, word=3, sparse=1, record=1,
            sets="node,match,order,c1,word", apm=4, table_bits=22),
    5: dict(_TEXT, orders="2,3,4,6,8", experts="order2", table_bits=22),
    6: dict(_TEXT, orders="2,3,4,6,8", experts="ctw8@96+order2", table_bits=22, network="glnn",
            network_config=network_config("glnn", n_units=8, interval=64)),
    7: dict(_TEXT, orders="2,3,4,5,6,8,12,16", experts="ctw8@96+order2", table_bits=23,
            history_bits=23, network="mlstm", network_config=network_config("mlstm", hidden=32)),
    8: dict(_TEXT, orders="2,3,4,5,6,7,8,12,16,24", experts="ctw8@96+order2", table_bits=24,
            history_bits=24, network="mlstm", network_config=network_config("mlstm", hidden=64)),
    9: dict(_TEXT, orders="2,3,4,5,6,7,8,12,16,24", experts="ctw8@96+order2", table_bits=24,
            history_bits=24, network="mlstm", network_config=network_config("mlstm", hidden=96)),
}
# Every preset id streams name -> its fields: append-only (a changed level takes a new id,
# ``CMConfig.PRESET_IDS``, and the old id keeps naming the old preset, so old streams decode as
# written; tests/test_container.py pins them all).
PRESETS: dict[int, dict] = dict(FIRST_PRESETS)
PRESETS.update({
    # Issue 20 (benchmarks/canterbury.py): level 1 adds record contexts with the scored record
    # length (Canterbury 423,412 -> 378,676 bytes, about 10% more CPU time on text); level 6
    # adds the scored record length, column, text and aligned contexts and drops the GLNN
    # (337,357 bytes with it, +148 without, 44% of the time: 0.0004 bpc); level 9 adds the
    # same contexts and keeps its mLSTM.
    10: dict(FIRST_PRESETS[1], record=2),
    11: dict(FIRST_PRESETS[6], record=2, text=1, aligned=1, columns=1, network="",
             network_config=""),
    12: dict(FIRST_PRESETS[9], record=2, text=1, aligned=1, columns=1),
})
# preset id -> (the id of the preset it varies, its changes): see CMConfig.VARIANT_IDS
VARIANTS: dict[int, tuple[int, dict]] = {13: (11, {"image": 1}), 14: (12, {"image": 1})}
PRESETS.update({i: dict(PRESETS[base], **changes) for i, (base, changes) in VARIANTS.items()})
# Issue 20, round two (benchmarks/canterbury.py, one run; bytes of the whole corpus at level 1
# 377,260 -> 352,584, level 6 331,780 -> 330,500, level 9 330,176 -> 329,804): level 1 takes word contexts, two APMs, a weight set selected by the
# previous byte's high nibble and the kind of the byte before (c12n) and 1 Mi slots, and on
# text leaves out the record contexts (alice29.txt 2.054 -> 1.956 bpc, below PPMd order 6 on
# every book); levels 6 and 9 take six weight sets (c12n, match, ordern, c1, word, c2) and level
# 6 8 Mi slots, and four markup contexts (526: the open elements, the line's indent, the last
# tag and the words since); on binary data every level's variant adds record contexts (level 1) or the
# image expert, the numeric-sample expert and the 16-bit and numeric contexts (6 and 9).
_SETS = "c12n,match,ordern,c1,word,c2"
PRESETS.update({
    16: dict(PRESETS[10], word=1, apm=2, sets="c12n", table_bits=20, record=0),
    17: dict(PRESETS[11], sets=_SETS, table_bits=23, markup=526),
    18: dict(PRESETS[12], sets=_SETS, markup=526),
})
_BINARY = dict(image=1, samples=1, numeric=3, aligned16=1, markup=0)
_VARIANTS_2 = {19: (16, dict(record=2, sets="c12n,match")), 20: (17, _BINARY), 21: (18, _BINARY)}
VARIANTS.update(_VARIANTS_2)
PRESETS.update({i: dict(PRESETS[base], **changes) for i, (base, changes) in _VARIANTS_2.items()})
# Issue 20, round three.  Levels 6 and 9 damp the mixer's curvature more (eps 10 -> 30:
# every Canterbury file smaller at level 6, alice29.txt -0.19%, lcet10.txt -0.16%, the small
# texts -1.4 to -4.4%, sum -2.3%, kennedy.xls -3.3%; eps 20 and 50 measured a little worse;
# level 1 loses 0.5% with it, so keeps 10): ids 27 and 28, binary variants 29 and 30.
# Variants chosen by what the data is (``data_kinds``): a 1-bit image takes
# ``BITMAP_CHANGES`` on the level's binary variant (ptt5: level 1 27,657 -> 22,393, 6
# 24,405 -> 21,969, 9 24,769 -> 21,965 bytes: ids 26, 22, 23); 68000 code takes code contexts
# 0 and 2 in place of the aligned 16-bit one and the code weight set in place of c12n (99 KB
# of 68000 objects -1.8% at levels 6 and 9 before the damping, -2.9% with it: ids 24, 25; on
# ptt5 and kennedy.xls it costs 1% and 0.3%, so only such data takes it).  Ids 16-30, all
# that format 10 names, are now taken.
PRESETS.update({27: dict(PRESETS[17], eps=30.0), 28: dict(PRESETS[18], eps=30.0)})
_M68K = dict(_BINARY, sets="code,match,ordern,c1,word,c2", code=5, aligned16=0)
_VARIANTS_3 = {22: (27, dict(_BINARY, **BITMAP_CHANGES)), 23: (28, dict(_BINARY, **BITMAP_CHANGES)),
               24: (27, _M68K), 25: (28, _M68K),
               26: (16, dict(_VARIANTS_2[19][1], **BITMAP_CHANGES)),
               29: (27, _BINARY), 30: (28, _BINARY)}
VARIANTS.update(_VARIANTS_3)
PRESETS.update({i: dict(PRESETS[base], **changes) for i, (base, changes) in _VARIANTS_3.items()})
# Issue 20, round four (format 12 names ids 31-45): every level starts its mixer's rows from
# a share of the inputs (mix_init: 1 on text, 2 on binary data); levels 6 and 9 add the run
# information (runs=7) and the final stage's counts, learned mix and extra stages (sse 19 at
# level 6, 51 at level 9: the word and hashed order-6 stages cost level 6 about 10% more);
# their binary variants add the row contexts and maps (kennedy.xls: a table's rows) and drop
# the aligned 16-bit context (no gain on any binary measured, 2-10% of the time).
_ROUND4_BINARY = dict(_BINARY, aligned16=0, mix_init=2)
PRESETS.update({31: dict(PRESETS[27], mix_init=1, runs=7, sse=19),
                32: dict(PRESETS[28], mix_init=1, runs=7, sse=51),
                33: dict(PRESETS[16], mix_init=1)})
_BITMAP4 = dict(_BINARY, **BITMAP_CHANGES, mix_init=2, rows=0x12F, runs=0, sse=19)
_VARIANTS_4 = {34: (31, dict(_ROUND4_BINARY, rows=0x12F)),
               35: (32, dict(_ROUND4_BINARY, rows=0xF2E)),  # 44 contexts: room for 4 rows
               36: (33, dict(_VARIANTS_2[19][1], mix_init=2, rows=0x22)),
               37: (31, _BITMAP4), 38: (32, _BITMAP4),
               39: (33, dict(_VARIANTS_2[19][1], **BITMAP_CHANGES, mix_init=2)),
               40: (31, dict(_M68K, mix_init=1)), 41: (32, dict(_M68K, mix_init=1))}
VARIANTS.update(_VARIANTS_4)
PRESETS.update({i: dict(PRESETS[base], **changes) for i, (base, changes) in _VARIANTS_4.items()})
# Issue 20, round five (format 14 names ids 46-60): the text presets take kind words2's
# contexts (0xA38C in place of the aligned contexts at levels 6 and 9, and of the column ones
# at 9, with the words2 weight set there; the phrase alone at level 1) and at 6 and 9 the last
# mix (post 10); level 9's mLSTM has 64 units, not 96 (text +0.05% for 1.6x the speed; its
# binary variants keep 96: without one kennedy.xls was 3.7% larger); every binary variant of
# levels 6, 9 and 1 takes the last mix (post 30); x86 and 32-bit RISC code have variants of
# their own (code contexts 6-9 and the x86 weight set; 10-12 and code32).  Each variant is
# written as the older preset it extends (``_LIKE_5``: base id -> the fields it has).
_W5 = dict(aligned=0, words2=0xA38C, post=10)
PRESETS.update({46: dict(PRESETS[31], **_W5),
                47: dict(PRESETS[32], **_W5, columns=0, sets=_SETS + ",words2",
                         network_config=network_config("mlstm", hidden=64)),
                48: dict(PRESETS[33], words2=0x100)})
_B6, _B1 = dict(PRESETS[34], post=30), dict(PRESETS[36], post=30)
_B9 = dict(PRESETS[35], post=30)
_X86, _RISC = dict(code=960, sets="x86" + _SETS[4:]), dict(code=7168, sets="code32" + _SETS[4:])
_LIKE_5 = {49: (46, _B6), 50: (47, _B9), 51: (48, _B1),
           52: (46, dict(_B6, **_X86)), 53: (47, dict(_B9, **_X86, text=0)),
           54: (48, dict(_B1, code=960, sets="x86,match")),
           55: (46, dict(_B6, **_RISC, rows=0)), 56: (47, dict(_B9, **_RISC, text=0, rows=0)),
           57: (48, dict(_B1, code=7168, sets="code32,match")),
           58: (46, dict(PRESETS[40], post=30)),
           59: (47, dict(PRESETS[41], post=30, network_config=PRESETS[47]["network_config"])),
           60: (46, dict(PRESETS[37], post=30))}
_DEFAULTS = {f.name: f.default for f in dataclass_fields(CMConfig)}


def _add_variants(like: dict[int, tuple[int, dict]]) -> None:
    """Variant id -> (its base preset's id, all its fields): ``VARIANTS`` takes the fields that
    differ from the base's (with the config's defaults under both), ``PRESETS`` the whole."""
    VARIANTS.update({i: (base, {k: v for k, v in dict(_DEFAULTS, **fields).items()
                                if dict(_DEFAULTS, **PRESETS[base])[k] != v})
                     for i, (base, fields) in like.items()})
    PRESETS.update({i: dict(PRESETS[VARIANTS[i][0]], **VARIANTS[i][1]) for i in like})


_add_variants(_LIKE_5)
# Issue 20, round six (formats 16 and 18 name ids 61-90).  The last mix takes the stages'
# outputs (the weight sets', the APM/SSE stages', the final stage's) beside the mixer's inputs
# (post_mode 65): level 6's text preset 61 and every variant with the last mix (level 6:
# kennedy.xls -1.40%, sum -0.42 to -0.53%, ptt5 -0.31%, ctw.o -0.58%, 68000 objects -0.51%,
# text -0.03 to -0.39%; level 9's binary kennedy.xls -1.09%; level 1's binary -1.74% and
# -0.31%; the CPU of today's last mix).  Level 9's text (47: 0 to -0.07%) and level 1's (no
# last mix: +6-10% CPU for -0.1 to -0.3%) keep their presets.  Float samples
# (``detect.float_kind``: IBM big-endian, IEEE big- and little-endian binary32) take the
# float-sample expert of their format on the level's binary variant (``floats.pxd``;
# geo_like.bin, traces of IBM floats: level 6 -0.63%, level 1 -3.0%; smoother traces -2.2%
# and -7.0%); level 9's runs no network there (geo_like: no shorter with it, 4x the time).
_M65 = dict(post_mode=65)
PRESETS[61] = dict(PRESETS[46], **_M65)
_LIKE_6 = {62: (61, 49), 63: (61, 52), 64: (61, 55), 65: (61, 58), 66: (61, 60),
           67: (47, 50), 68: (47, 53), 69: (47, 56), 70: (47, 59),
           71: (48, 51), 72: (48, 54), 73: (48, 57)}
_LIKE_6 = {i: (base, dict(PRESETS[like], **_M65)) for i, (base, like) in _LIKE_6.items()}
_NO_NET = dict(network="", network_config="")
_LIKE_6.update({74 + 3 * i + j: (base, dict(_LIKE_6[like][1], floats=k,
                                            **(_NO_NET if base == 47 else {})))
                for i, k in enumerate((1, 2, 4))
                for j, (base, like) in enumerate(((61, 62), (47, 67), (48, 71)))})
_add_variants(_LIKE_6)
_FLOAT_IDS = {level_id: {f"floats{k}": 74 + 3 * i + j for i, k in enumerate((1, 2, 4))}
              for j, level_id in enumerate((61, 47, 48))}
DATA_VARIANTS = {11: {"binary": 13}, 12: {"binary": 14}, 16: {"bitmap": 26, "binary": 19},
                 17: {"binary": 20}, 18: {"binary": 21},
                 27: {"bitmap": 22, "m68k": 24, "binary": 29},
                 28: {"bitmap": 23, "m68k": 25, "binary": 30},
                 31: {"bitmap": 37, "m68k": 40, "binary": 34},
                 32: {"bitmap": 38, "m68k": 41, "binary": 35},
                 33: {"bitmap": 39, "binary": 36},
                 46: {"bitmap": 60, "m68k": 58, "x86": 52, "risc": 55, "binary": 49},
                 61: {"bitmap": 66, "m68k": 65, **_FLOAT_IDS[61], "x86": 63, "risc": 64,
                      "binary": 62},
                 47: {"bitmap": 38, "m68k": 70, **_FLOAT_IDS[47], "x86": 68, "risc": 69,
                      "binary": 67},
                 48: {"bitmap": 39, **_FLOAT_IDS[48], "x86": 72, "risc": 73, "binary": 71}}
# Issue 20, round seven (formats 18 and 20 name ids 83-95).  Levels 6 and 9 take eight more
# indirect contexts' three (indirect2 290: the bytes after a 3-byte context, the distances to the
# last 0x00/space/newline/0xFF and to the last newline and space): text -0.2 to -0.7%; level 9
# also its network's top byte as an input (net_sel 1).  The binary variants take the sparse
# contexts of the last four bytes' high nibbles (sparse2 8; 536/537 more on code) and the pair's
# followers and mark distances (indirect2 34), and at 6 and 9 but on x86 code each context's
# log-odds again when its history is deterministic (cx_inputs 2): level 6 kennedy.xls -2.3%,
# 68000 objects -1.2%, sum -0.8%; level 1 -1.5 to -2.3% (no cx_inputs: +19% CPU there).  The
# bitmap and float variants stay round six's.
_LIKE_7 = {85: (83, dict(PRESETS[62], sparse2=8, indirect2=34, cx_inputs=2)),
           86: (83, dict(PRESETS[63], sparse2=8)),
           87: (83, dict(PRESETS[64], sparse2=536, indirect2=34, cx_inputs=2)),
           88: (83, dict(PRESETS[65], sparse2=537, indirect2=34, cx_inputs=2)),
           89: (84, dict(PRESETS[67], cx_inputs=2, net_sel=1)),
           90: (84, dict(PRESETS[68], sparse2=8, net_sel=1)),
           91: (84, dict(PRESETS[69], sparse2=537, indirect2=34, cx_inputs=2, net_sel=1)),
           92: (84, dict(PRESETS[70], sparse2=536, cx_inputs=2, net_sel=1)),
           93: (48, dict(PRESETS[71], sparse2=8, indirect2=34)),
           94: (48, dict(PRESETS[72], sparse2=537, indirect2=34)),
           95: (48, dict(PRESETS[73], sparse2=536, indirect2=34))}
PRESETS.update({83: dict(PRESETS[61], indirect2=290), 84: dict(PRESETS[47], indirect2=290, net_sel=1)})
_add_variants(_LIKE_7)
DATA_VARIANTS.update({  # the bitmap and float variants stay round six's (levels_of_config)
    83: dict(DATA_VARIANTS[61], m68k=88, x86=86, risc=87, binary=85),
    84: dict(DATA_VARIANTS[47], m68k=92, x86=90, risc=91, binary=89),
    48: dict(DATA_VARIANTS[48], x86=94, risc=95, binary=93)})
# Issue 20, round eight (format 20 names ids 96 and 97).  Levels 6 and 9 hold twice the slots
# (table_bits 24 and 25: 256 and 512 MiB of table; 769 KB of prose and 1 MB of wiki-like XML
# -0.23% and -0.29% at level 6, -0.11% and -0.13% more at level 9; a file of a few hundred KB
# fills neither table).  Level 9's mLSTM on text learns at Adam's rate 0.02 decayed by 0.01
# (rate / sqrt(1 + 0.01 t)) in place of a fixed 0.002, and its P(1) is one more input (net_sel
# 9): its ablation on the books 0.0016-0.0023 -> 0.0034-0.0065 bpc (helper net: alice29.txt -58
# bytes, plrabn12.txt -256).  The variants stay round seven's (and six's): level 9's binary ones
# keep their mLSTM of 96 units (48 units: 1.8x the speed, but kennedy.xls +1.6%, 10,123 bytes;
# 64 units about +1.4% by its log-loss; x86 code +0.17%, 68000 objects +0.09%).
PRESETS.update({96: dict(PRESETS[83], table_bits=24),
                97: dict(PRESETS[84], table_bits=25, net_sel=9, network_config=network_config(
                    "mlstm", hidden=64, lr=0.02, lr_decay=0.01))})
DATA_VARIANTS.update({96: DATA_VARIANTS[83], 97: DATA_VARIANTS[84]})
# Issue 20, round nine (format 20 names ids 98-103).  Text: the words2 weight set in place of
# the word set and the words2 context of the last token (bit 1), and one more final SSE stage
# keyed by the word so far with the previous one (sse bit 8); level 6 gives the column-and-
# bytes-above context (words2 bit 13) for the token (48 contexts then), level 9 its order 7:
# level 6 769 KB of prose -0.32%, 1 MB of wiki-like XML -0.48%, the books -0.06 to -0.12%
# (fields.c +0.12%); level 9 300 KB of each -0.16% and -0.17% (helper text).  Level 6's binary,
# x86, RISC and 68000 variants damp the mixer's curvature more (eps 45) and match from 5 bytes
# (match 5): kennedy.xls -1.47%, sum -0.54%, 57 KB of 68000 objects -0.28%, an x86-64 object
# -0.09% by log-loss (helper bin; level 9's variants untested, so unchanged).
_LIKE_9 = {100: (98, dict(PRESETS[85], eps=45.0, match=5)),
           101: (98, dict(PRESETS[86], eps=45.0, match=5)),
           102: (98, dict(PRESETS[87], eps=45.0, match=5)),
           103: (98, dict(PRESETS[88], eps=45.0, match=5))}
PRESETS.update({98: dict(PRESETS[96], sets="c12n,match,ordern,c1,words2,c2", words2=33678,
                         sse=275),
                99: dict(PRESETS[97], orders="2,3,4,5,6,8,12,16,24", words2=41870, sse=307)})
_add_variants(_LIKE_9)
DATA_VARIANTS.update({98: dict(DATA_VARIANTS[96], binary=100, x86=101, risc=102, m68k=103),
                      99: DATA_VARIANTS[97]})
# Issue 20, round ten (format 20 names ids 104 and 105, format 22 ids 106-110).  The kernel
# holds 64 hashed contexts (was 48).  Text: words2 bits 14 and 0 (the word two back with the
# word so far, the bytes since the line began), level 9 also markup bit 5: level 6 -0.04% in
# all on the stand-ins and the Canterbury texts (1 MB of wiki-like XML -0.13%), level 9 -0.06%
# on their 300 KB prefixes (the XML -0.24%, 300 KB of HTML -0.15%) (helper ctx).  Level 9's
# binary variants take what level 6's took in round nine (match 5) and damp the mixer's
# curvature more still (eps 60; 45 on x86 code), and give up orders 5 and 24 (and 7) for level 6's
# sparse and indirect contexts of binary data: kennedy.xls -2.39%, sum -0.70%, 57 KB of 68000
# objects -0.69% (level 9 had lost to level 6 there: its orders left no room for them), an
# x86-64 object -0.17% by log-loss; its bitmap variant is level 6's with the larger tables (ptt5
# -0.85%) (helper bin9).
_ORDERS_BIN9 = "2,3,4,6,8,12,16"
_LIKE_10 = {106: (105, dict(PRESETS[89], eps=60.0, match=5, sparse2=8, indirect2=34,
                            orders=_ORDERS_BIN9)),
            107: (105, dict(PRESETS[90], eps=45.0, match=5, indirect2=34, orders=_ORDERS_BIN9)),
            108: (105, dict(PRESETS[91], eps=60.0, match=5, orders=_ORDERS_BIN9)),
            109: (105, dict(PRESETS[92], eps=60.0, match=5, sparse2=537, indirect2=34,
                            orders=_ORDERS_BIN9)),
            110: (105, dict(PRESETS[66], table_bits=24, history_bits=24, eps=45.0))}
PRESETS.update({104: dict(PRESETS[98], words2=50063),
                105: dict(PRESETS[99], words2=58255, markup=558)})
_add_variants(_LIKE_10)
DATA_VARIANTS.update({104: DATA_VARIANTS[98],
                      105: dict(DATA_VARIANTS[99], binary=106, x86=107, risc=108, m68k=109,
                                bitmap=110)})
# Issue 20, round eleven (format 22 names ids 111-114).  Level 6's binary variants take the APM's
# match-state stage (apm 5) and the share of contexts never seen as an input (cx_inputs bit 8),
# and drop the word contexts other than the first on data without words (word 1); the binary
# one also damps its mixer more (eps 75), adds the SSE stage of the column (sse 51) and more row
# maps (rows 0xF2E) for tables; the RISC and 68000 ones eps 60 and a faster curvature decay
# (0.9995), the x86 one indirect2 34 and decay 0.9998: by log-loss kennedy.xls -2.04%, sum
# -0.55%, 68000 code -0.29 to -0.38% (57 KB of objects, a 543 KB static program and its last
# 200 KB), an x86-64 object -0.22%; paired CPU 4-20% less on code, on kennedy.xls 0-8% more
# (unsettled) (helper bin13).
_LIKE_11 = {111: (104, dict(PRESETS[100], eps=75.0, sse=51, rows=0xF2E, apm=5, cx_inputs=10,
                            word=1)),
            112: (104, dict(PRESETS[101], apm=5, cx_inputs=8, indirect2=34, decay=0.9998)),
            113: (104, dict(PRESETS[102], eps=60.0, decay=0.9995, apm=5, cx_inputs=10, word=1)),
            114: (104, dict(PRESETS[103], eps=60.0, decay=0.9995, apm=5, cx_inputs=10, word=1))}
# Level 9's x86, RISC and 68000 variants (ids 115-117) are level 6's new ones with 24-bit tables
# and orders 2-16, and so run no network: by log-loss level 9's units had gained 0.36% on an
# x86-64 object, 0.09% on sum and 0.08% on 57 KB of 68000 objects for 4-4.5x the CPU (2.5-3.7
# KB/s, below level 9's floor of 5).  Against round ten's variants with their network: the
# x86-64 object +0.16%, the 68000 objects -0.19%, sum -0.36%, at 11-15 KB/s; against level 6
# -0.05%, -0.11%, -0.03%.  The binary variant keeps its 96 units: kennedy.xls's first 200 KB
# are 4.2% larger without them (3.2% with 64 units, 4.2% with 32).
_LIKE_11.update({i: (105, dict(_LIKE_11[like][1], table_bits=24, orders=_ORDERS_BIN9))
                 for i, like in ((115, 112), (116, 113), (117, 114))})
_add_variants(_LIKE_11)
DATA_VARIANTS[104] = dict(DATA_VARIANTS[104], binary=111, x86=112, risc=113, m68k=114)
DATA_VARIANTS[105] = dict(DATA_VARIANTS[105], x86=115, risc=116, m68k=117)
# Round twelve (format 24 names ids 121-130): levels 6 and 9 and their code and binary variants
# size their tables to the input (``fit``): 2^(bit length of the length + 7) slots, at most
# their own 2^24.  An input of 64 KB or more codes as before; a shorter one builds and touches
# a table 4-256 times smaller.  By log-loss at level 6 (104 with fit's table size): xargs.1
# +0.02%; exact streams at levels 6 and 9 (121/122 against 104/105): xargs.1, grammar.lsp, sum
# unchanged, fields.c -4 bytes at 6, cp.html +4 at 9.  xargs.1 in a fresh process: level 6
# 1.96 -> 1.01 s of CPU, 387 -> 128 MB resident; level 9 3.48 -> 1.85 s, 775 -> 236 MB.  The
# bitmap and float variants keep their ids (their files are large, or their tables small).
_FITTED = {121: 104, 122: 105}  # the levels' presets; then their variants: id -> (base, like)
_FITTED_VARIANTS = {123: (121, 111), 124: (121, 112), 125: (121, 113), 126: (121, 114),
                    127: (122, 106), 128: (122, 115), 129: (122, 116), 130: (122, 117)}
PRESETS.update({i: dict(PRESETS[like], fit=1) for i, like in _FITTED.items()})
_add_variants({i: (base, dict(PRESETS[like], fit=1))
               for i, (base, like) in _FITTED_VARIANTS.items()})
DATA_VARIANTS.update({121: dict(DATA_VARIANTS[104], binary=123, x86=124, risc=125, m68k=126),
                      122: dict(DATA_VARIANTS[105], binary=127, x86=128, risc=129, m68k=130)})
# Round twelve's x86 variants (format 24 names ids 131 and 132): levels 6's and 9's (124 and
# 128) with code bits 14-17 (code 246720): the relocation sites the x86 decoder records in .text
# (zero call, jump and RIP-relative operands, zero immediates) predict each Elf64_Rela entry's
# r_offset (bit 14), the previous three instructions' opcodes and ModRMs (15), a jump's offset
# by the last two jump targets (16), and five mixer inputs in the way of a match model from the
# predicted r_offset and the last four jump targets (17).  By log-loss at level 6 on four x86-64
# objects (a 128 KB -g object's code, prng.o 280 KB, a 282 KB object with debug info, 200 KB of
# libc.a's members): -4.0%, -8.4%, -2.6%, -6.2% (-5.57% in all; .rela.text about half its cost);
# level 9: prng.o -8.4%, the libc members -6.2%; CPU 3-10% more (helper obj14).
_add_variants({131: (121, dict(PRESETS[124], code=246720)),
               132: (122, dict(PRESETS[128], code=246720))})
DATA_VARIANTS[121] = dict(DATA_VARIANTS[121], x86=131)
DATA_VARIANTS[122] = dict(DATA_VARIANTS[122], x86=132)
# Round twelve's markup (format 24 names ids 133 and 134): levels 6 and 9 (121, 122) with markup
# bits 10 and 11 (helper xml14): in text, the start tag's name, its last attribute and value and
# the word (in a tag: the previous attribute value with the value so far); the element, the bytes
# since its tag and the last byte.  By log-loss at level 6 (1 MB each): a real XML file (the
# freedesktop MIME database, many languages) -2.63%, an HTML book -0.18%, a synthetic wiki dump
# -0.04%, prose +0.005 to +0.007%; level 9 with bit 5 too (markup 3630) on that XML file's
# first 200 KB -1.23%, alice29.txt's first 80 KB +0.0005%.
PRESETS.update({133: dict(PRESETS[121], markup=3598), 134: dict(PRESETS[122], markup=3630)})
DATA_VARIANTS.update({133: DATA_VARIANTS[121], 134: DATA_VARIANTS[122]})
# Round thirteen's 68000 variants (format 26 names ids 136 and 137): levels 6's and 9's (126 and
# 130) with code bits 18-24 (code 0x1FC0005) and the m68k weight set for the code set (helper
# m68k15): a light 68000 decoder (m68k.pxd: the kind of each word -- opcode, extension word,
# branch displacement, MOVEM mask, MacsBug name -- and its place in the instruction) keys the
# previous one or two opcodes (18, 19), the word seen last at this place (20), a branch's
# displacement by the last targets and the addresses seen (21), the previous instruction
# whole (22) and a d16(An) by An's last one (24); five mixer inputs from the words those
# predict (23, mpred.pxd).  By log-loss at level 6 on 68000/68020 gcc code (57 KB of objects,
# 31 KB of .text with LINK frames, 24 KB of -mshort objects, 40 KB of .text with MacsBug
# names, a 543 KB program): -3.0%, -5.1%, -2.3%, -4.4%, -6.5%; level 9 the same; CPU 0-15%
# more (helper's paired runs, loaded).
_add_variants({136: (133, dict(PRESETS[126], code=0x1FC0005,
                                sets="m68k,match,ordern,c1,word,c2")),
               137: (134, dict(PRESETS[130], code=0x1FC0005,
                                sets="m68k,match,ordern,c1,word,c2"))})
DATA_VARIANTS[133] = dict(DATA_VARIANTS[133], m68k=136)
DATA_VARIANTS[134] = dict(DATA_VARIANTS[134], m68k=137)
# Round fourteen's binary variants (format 26 names ids 138-140): levels 6's, 9's and 1's (123,
# 127, 93) with sse bit 9, a final probability that may come within 2^-16 of 0 or 1, not 2^-12
# (each bit of a byte the model is sure of cost at least 0.00035 bits, 352 bytes a MB).  By
# log-loss: kennedy.xls -2.8% at level 6 (9,947.7 -> 9,667.8), -1.7% at level 1 (13,324.0 ->
# 13,091.2), ptt5 -0.1%, sum, x86-64 and 68000 objects and 150 KB texts within +-0.02%; no CPU.
_add_variants({138: (133, dict(PRESETS[123], sse=PRESETS[123]["sse"] | 512)),
               139: (134, dict(PRESETS[127], sse=PRESETS[127]["sse"] | 512)),
               140: (48, dict(PRESETS[93], sse=PRESETS[93].get("sse", 0) | 512))})
DATA_VARIANTS[133] = dict(DATA_VARIANTS[133], binary=138)
DATA_VARIANTS[134] = dict(DATA_VARIANTS[134], binary=139)
DATA_VARIANTS[48] = dict(DATA_VARIANTS[48], binary=140)
# Round fifteen's case-folded twins (format 26 names ids 141 and 142): levels 6 and 9 coding a
# text with its capitals as escapes (``fold_case``, seqzip.textcase), chosen per stream where
# level 1 codes the first 32 KB smaller folded (seqzip.session.fold_pays).  Exact streams at
# level 6 (benchmarks/folding.py): 24 small texts (man pages, C, HTML, Python; not
# Canterbury's) -1.96%, alice29.txt -0.38%, cp.html -1.05%, fields.c -0.95%, xargs.1 -0.07%,
# grammar.lsp +0.84%; level 9 alice29.txt -0.30%, cp.html -0.91%.
FOLDED_IDS = {133: 141, 134: 142}
_add_variants({twin: (base, dict(PRESETS[base], fold_case=1))
               for base, twin in FOLDED_IDS.items()})
# Round sixteen (format 26 names ids 143-150, the last of band 9; format 22 id 118): levels 2-5,
# 7 and 8, which had named the first presets (ids 2-5, 7, 8: level 2 coded alice29.txt 1.7%
# larger than level 1, levels 7 and 8 2.7% larger than 6 at 0.8x and 0.5x its speed), become
# steps between today's levels 1, 6 and 9.  Level 2 is level 1 with order 6, the match state's
# weight set, the second layer, four APMs and 4 Mi slots; level 3 also level 6's word contexts
# and four markup contexts; level 4 is level 6 without its symbol experts, with three weight
# sets and no final stage, run inputs nor last mix, 8 Mi slots; level 5 level 6 without CTW,
# with four weight sets; levels 7 and 8 level 6 with level 9's mLSTM on text (Adam 0.02 decayed
# by 0.01, its P(1) and top byte as inputs) of 16 and 32 units.  Canterbury in exact bytes
# (benchmarks/canterbury.py, one run a level): levels 2-8 339,016, 334,290, 329,312, 321,277,
# 319,995, 319,761, 319,139 (1: 341,723, 9: 318,773); alice29.txt compressing at 451, 237, 147,
# 76, 44, 32, 23, 13 and 8.4 KB/s of CPU at levels 1-9 (benchmarks/cm_cpu.py, medians of three
# or five; level 5 unfolded).  On binary data levels 2-4 take level 1's variants and 5, 7 and 8
# level 6's; 5, 7 and 8 fold capitals as 6 does (twins 118, one of band 7's free ids, 149 and
# 150; level 5 folded: alice29.txt -0.38%, cp.html -0.98%, eight small texts -1.5 to -4.7%,
# payload bytes); 2-4 do not (level 1's speed).


def _net9(units: int) -> dict:
    """Level 9's text network (round eight): an mLSTM of ``units`` on Adam's rate 0.02 decayed
    by 0.01, its P(1) and top byte as inputs (net_sel 9)."""
    return dict(network="mlstm", net_sel=9, network_config=network_config(
        "mlstm", hidden=units, lr=0.02, lr_decay=0.01))


PRESETS.update({
    143: dict(PRESETS[48], orders="2,3,4,6", sets="c12n,match", layer2=True, apm=4,
              table_bits=22, fit=1),
    145: dict(PRESETS[133], experts="", sets="c12n,match,words2", post=0, post_mode=0, sse=0,
              runs=0, table_bits=23),
    146: dict(PRESETS[133], experts="order2", sets="c12n,match,ordern,words2"),
    147: dict(PRESETS[133], **_net9(16)),
    148: dict(PRESETS[133], **_net9(32))})
PRESETS[144] = dict(PRESETS[143], word=3, markup=526, words2=50063)
FOLDED_IDS.update({146: 118, 147: 149, 148: 150})
_add_variants({twin: (base, dict(PRESETS[base], fold_case=1))
               for base, twin in FOLDED_IDS.items() if base > 142})
DATA_VARIANTS.update({i: DATA_VARIANTS[48] for i in (143, 144, 145)})
DATA_VARIANTS.update({i: DATA_VARIANTS[133] for i in (146, 147, 148)})
# Round sixteen's binary variant of level 9 (format 24 names id 135, the one id round twelve
# left free): 139 with the text preset's network schedule on 32 units (Adam's rate 0.02 decayed
# by 0.01, its P(1) and top byte as inputs) in place of 96 units at a fixed 0.002.  kennedy.xls
# (payload bytes, two at a time): 96 units about 9,452, 48 units 9,856, 32 units 9,424 (with the fixed
# rate 9,528; with net_sel 1 9,432), 16 units 9,872; the whole stream alone (benchmarks/
# canterbury.py --levels 9 --files kennedy.xls) 9,467 -> 9,439 bytes at 10.2 KB/s of CPU against
# session 19's 3.9, above level 9's floor of 5 that 96 units missed.  DWARF sections of an x86-64
# object (85 and 129 KB): +0.12% and -0.04% at 2.3x the speed (two at a time).
_add_variants({135: (134, dict(PRESETS[139], **_net9(32)))})
DATA_VARIANTS[134] = dict(DATA_VARIANTS[134], binary=135)
# ... and level 8's (id 119, band 7's, format 22): level 6's binary variant (138) with the same
# network, so that level 8 is level 6 with a network on binary data as on text: kennedy.xls
# payload 9,828 -> 9,400 (-4.35%; level 9's 135: 9,424); the whole stream alone 9,843 -> 9,415
# bytes at 10.3 KB/s of CPU (level 6: 19-22 in this session's runs).
# Level 7 keeps level 6's variants (16 units on kennedy.xls: 9,872, no better than none).
_add_variants({119: (148, dict(PRESETS[138], **_net9(32)))})
DATA_VARIANTS[148] = dict(DATA_VARIANTS[148], binary=119)
# Round seventeen's level 6 (format 12 names ids 42 and 43, band 2's first free ids): 133 whose
# weight sets take their weight step only on bits they missed by 0.005 or more, learning the
# others' curvature alone (``mix_skip``; its folded twin 43).  Log-loss of 11 texts +0.003% in
# all; alice29.txt 35.0 -> 36.9 KB/s of CPU compressing, 36.8 -> 38.5 decompressing
# (benchmarks/cm_cpu.py, medians of five).  The same for its binary and x86 variants (ids 44
# and 45, band 2's last: 138 and 131 with mix_skip 0.005; log-loss of 200 KB of kennedy.xls
# 2,918.6 -> 2,918.4 bytes, sum 7,458.2 -> 7,456.5, two x86-64 objects -11.5 and +0.3 bytes,
# 10-25% less CPU on the spreadsheet, two runs each); its other variants are 133's.
PRESETS[42] = dict(PRESETS[133], mix_skip=0.005)
FOLDED_IDS[42] = 43
_add_variants({43: (42, dict(PRESETS[42], fold_case=1)),
               44: (42, dict(PRESETS[138], mix_skip=0.005)),
               45: (42, dict(PRESETS[131], mix_skip=0.005))})
DATA_VARIANTS[42] = dict(DATA_VARIANTS[133], binary=44, x86=45)
CMConfig.FOLDED_IDS = FOLDED_IDS
CMConfig.DATA_VARIANTS = DATA_VARIANTS
# CMConfig.PRESET_IDS: a level -> its preset's id today
LEVEL_IDS = {1: 48, 2: 143, 3: 144, 4: 145, 5: 146, 6: 42, 7: 147, 8: 148, 9: 134}
LEVELS: dict[int, dict] = {level: PRESETS[LEVEL_IDS.get(level, level)] for level in FIRST_PRESETS}
CMConfig.PRESET_IDS, CMConfig.VARIANT_IDS, CMConfig.PRESETS = LEVEL_IDS, VARIANTS, PRESETS
CMConfig.LEVELS = LEVELS
