"""The cm model's config: the fields of :class:`CMConfig`, their checks and memory bound, the
kernel's spec they build (:class:`CMSpec`), and the networks' config strings.

The preset tables (every id a header names, the levels, the data variants) are
``seqzip.models.cm_presets``, which fills ``CMConfig``'s class tables when it is imported;
``seqzip.models.cm`` imports both, so import the config from there.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from .._kernels.cm import (CONFIG_BOUNDS, KINDS, LIMITS, MIN_MATCH, OPTIMIZERS, SELECTORS,
                           post_bytes, sse_stages)
from .base import check_range, config_from_bytes, config_to_bytes, preset_by_id
from .detect import data_kinds
from .experts import experts_memory, parse_experts

NETWORKS = ("", "glnn", "mlstm")
MAX_ORDER = 32
WORD_CONTEXTS = (0, 2, 4, 8)  # word contexts at word levels 0..3
SPARSE_CONTEXTS = (0, 3, 6)   # sparse contexts at sparse levels 0..2
FIT_MIN_BITS, FIT_EXTRA_BITS = 16, 7  # ``fit``: the table's slots for a known length
X86_PRED_BIT, X86_PRED_INPUTS = 17, 5  # code's bit of the x86 predicted bytes (not a context)
M68K_PRED_BIT, M68K_PRED_INPUTS = 23, 5  # ... of the 68000 predicted words (mpred.pxd)


@dataclass(frozen=True)
class CMSpec:
    """A config as the kernel takes it: parsed and checked once (``CMConfig.spec``).

        >>> CMConfig.for_level(1).spec.contexts  # orders 2-4, two word contexts, the phrase
        ((0, 2), (0, 3), (0, 4), (1, 0), (1, 1), (13, 8))
    """
    contexts: tuple[tuple[int, int], ...]  # (kind id, parameter), in input order
    matches: tuple[int, ...]  # minimum lengths of the match models
    table_bits: int
    history_bits: int
    selectors: tuple[int, ...]  # selector ids, one per weight set
    layer2: bool
    optimizer: int
    rate: float
    rate2: float
    decay: float
    eps: float
    apm: int
    apm_rate: int
    gate_units: int
    gate_rate: float
    periods: bool  # record=2: the record length by scored repeat distances
    image: int = 0  # the 1-bit image expert: 1, 2 (more tables and bit histories)
    samples: bool = False  # samples=1: the numeric-sample expert
    mix_init: int = 0  # the mixer's start: 0 zero weights, 1 and 2 a share (mixer.pxd)
    row_maps: int = 0  # rows bits 8-11: the row maps (direct tables, rows.pxd)
    sse: int = 0  # the final stage's newer behaviours (CMConfig.sse)
    runs: int = 0  # run information's inputs, a bit mask (runs.pxd)
    post: int = 0  # the last mix's rate x 100000 (post.pxd; 0: none)
    floats: int = 0  # the float-sample expert's formats, a bit mask (floats.pxd)
    post_mode: int = 0  # the last mix's structure, a bit mask (post.pxd)
    net_sel: int = 0  # the network's prediction as context, a bit mask (netsel.pxd)
    cx_inputs: int = 0  # more inputs per hashed context, a bit mask (cxinputs.pxd)
    x86_pred: bool = False  # code bit 17: the x86 predicted bytes' inputs (xpred.pxd)
    m68k_pred: bool = False  # code bit 23: the 68000 predicted words' inputs (mpred.pxd)
    mix_skip: float = 0.0  # QDH: a set's |error| below it steps its curvature only (mixer.pxd)


@dataclass(frozen=True)
class CMConfig:
    """See the module docstring.

        >>> CMConfig.for_level(1).orders, CMConfig(match=1)
        Traceback (most recent call last):
        ...
        ValueError: match lengths are 0 (off) or at least 2
    """
    orders: str = "2,3,4,6"  # hashed context orders (orders 0 and 1 are direct tables)
    match: int = 7  # minimum length of the match model (0: off)
    match2: int = 0  # a second match model with a longer minimum length (0: off)
    word: int = 1  # word contexts: 0 off, 1 word and word+previous word, 2 also the word
    # before and the text column with the byte above, 3 also skip-word, separator, the byte
    # before the word and the sentence so far
    sparse: int = 0  # sparse contexts: 0 off, 1 three (skip 1-2 bytes), 2 six
    record: int = 0  # record contexts with the record length detected: 0 off, 1 by runs of
    # votes, 2 by scored repeat distances (finds 216 in ptt5, 13 in kennedy.xls)
    columns: int = 0  # with record contexts, 4 more: the column in the record with the byte
    # above and with the byte before, 2-D neighbourhoods (0/1)
    text: int = 0  # 1: four more word contexts: the word and the three before it, the word,
    # the previous and the third previous, the word and the bracket/quote/tag nesting, the
    # word and the column in the line
    aligned: int = 0  # 1: three contexts of the lane in the aligned 32-bit word and its bytes
    # so far, with the previous word, the word before it, the previous two words' first bytes
    indirect: int = 0  # indirect contexts: the bytes that followed the last one or two (0/1)
    experts: str = ""  # symbol experts joined as inputs: "ctwD", "order2" ("+"-joined)
    network: str = ""  # online network as an input and gate: "", "glnn", "mlstm"
    network_config: str = ""  # that network's own config (its JSON array), experts off
    gate_units: int = 0  # network features gating one weight set (0: no gated set)
    gate_rate: float = 0.1  # learning rate of the gates
    table_bits: int = 20  # the hash table holds 2^table_bits slots of 16 bytes
    history_bits: int = 22  # bytes of history for the match models and record contexts
    sets: str = "node,match"  # the mixer's weight sets, each selected by a small context
    # (the kernel's SELECTORS; c1n: the previous byte's high nibble with the node of the symbol,
    # c12n: that and the kind of the byte before it, ordern: the known hashed contexts with the
    # node -- issue 20: level 1 with c12n for node codes Canterbury 1.8% smaller; code, code32:
    # the lane in the aligned 16- or 32-bit word, its first byte's high nibble, the node;
    # x86: the x86 decoder's stage and operand bytes left or prefixes, the node -- in place of
    # c12n with code=960 x86-64 objects -1.7% more at level 6; m68k: the 68000 decoder's kind
    # of word and lane, in an opcode its first byte's high nibble, the node: in place of code
    # with code bits 18-23 68000 code -0.7 to -1.7% more at level 6)
    layer2: bool = True  # a second layer mixes the sets' outputs (else they are averaged)
    optimizer: str = "qdh"  # the mixer's training: Ollivier's QDH, "sgd" or "adam"
    rate: float = 1.0  # learning rate of the first layer (QDH: of its Newton step)
    rate2: float = 1.0  # and of the second layer
    decay: float = 0.9999  # QDH: decay of the running curvature per bit (alice29.txt, level
    # 5: 0.999 1.9398, 0.9995 1.9307, 0.9999 1.9289 bpc)
    eps: float = 10.0  # QDH: damping of the curvature (0.1, 1, 10: 1.9346, 1.9307, 1.9241)
    apm: int = 2  # secondary estimation stages: order 0, order 1, hashed orders 2 and 3,
    # the match state
    apm_rate: int = 6  # their tables move 2^-apm_rate of the way to each bit
    image: int = 0  # 1: the 1-bit image expert (pixels from the rows above: the record length),
    # 2: with five more tables (a small neighbourhood, runs, three of bit histories)
    aligned16: int = 0  # a bit mask of contexts of the lane in the aligned 16-bit word
    numeric: int = 0  # a bit mask of contexts of the next sample predicted (kinds.pxd)
    samples: int = 0  # 1: the numeric-sample expert (big-endian 2- and 4-byte samples)
    markup: int = 0  # markup contexts (XML, HTML, wiki text), bit j the markup kind's j:
    # (0) in text the open element and the word, in a tag its name, attribute and value so
    # far; (1) the two innermost elements (in a tag: the tag) and the last two bytes; (2) the
    # line's indent and first byte, the last two bytes; (3) the element, the last tag, the
    # words since it (up to 3) and the word; (4, 5) the word and the one or two words before
    # it outside tags; (6, 7) the last 3 or 5 bytes outside tags; (8) the last tag, the words
    # since and the last two bytes; (9) as 3 with the word before outside tags.  Each bit is
    # a context (kinds.markup_hash); 526 (1, 2, 3, 9) is the measured pick (book.html -1.5%);
    # (10) in text the start tag's name, last attribute and value with the word, in a tag the
    # value before this one with this one so far; (11) the element, the bytes since its tag
    # and the last byte; (12) as 11 with the two bytes at that place in the text of the
    # element of that name before.  3598 (526 + 10, 11), preset 104, 1 MB: an XML of
    # translations (freedesktop.org.xml) -2.6%, HTML (the Rust book) -0.18%, prose +0.01%
    code: int = 0  # machine-code contexts (kind code), bit j the kind's j: (0-4) 16-bit
    # big-endian instruction words (68000): instruction classes, opcode bytes, the previous
    # word; (5) x86 CALL/JMP/Jcc rel32 operands (kinds.code_hash).  Measured (issue 20, 68000
    # objects): 5 (0, 2) in place of aligned16's context, with the code set for c12n, -1.8%
    # (ptt5 +0.95%: a variant for 68000 code, benchmarks/code_contexts.py's detector); (6-9)
    # x86 by a light decoder's state (x86.pxd: the stage, opcode, ModRM, operand bytes left)
    # with the previous opcode, the last two bytes, the previous two opcodes, the
    # instruction's bytes (kinds.x86_hash; 960, all four, at level 6 on binary data (34): a
    # 128 KB x86-64 object's code -5.1%, -6.7% with the x86 weight set for c12n; the whole
    # 381 KB object -3.4%); (10-12) 32-bit big-endian RISC words' opcode fields
    # (kinds.risc_hash; 7168: sum -0.7%, -1.1% with code32 for c12n and rows=0); (13-16) x86
    # by the instruction history (kinds.x86h_hash, x86.pxd's XH_*): (13, 16) a relative jump's
    # offset by the third and fourth, the last two jump targets; (14) Elf64_Rela entries by
    # the r_offset the relocation sites predict (zero rel32 operands, RIP-relative
    # displacements and immediates seen in .text: x86_sites); (15) the previous three opcodes
    # and ModRMs; (17, not a context: CMSpec.x86_pred) the bytes those predict as inputs in
    # the way of a match model (xpred.pxd).  Measured (session 14, preset 112 + 245760, bits
    # 14-17): four x86-64 objects -5.6% by log-loss (.rela.text -50 to -60%, .text -3 to -4%);
    # (18-22, 24) 68000 by a light decoder (m68k.pxd: the kind of the next word, its index in
    # the instruction, the opcode) with (18) the previous opcode, (19) the previous two or the
    # word before, (20) the word seen last at this place, (21) a branch's displacement by the
    # last two targets and the addresses seen (also an abs.L's and a d16(An)'s low bytes),
    # (22) the previous instruction whole, (24) a d16(An) by An's last d16 (before an opcode
    # with the last two A-line traps); (23, not a context: CMSpec.m68k_pred) the words those
    # predict as inputs (mpred.pxd).  Measured (session 15, preset 126 + 0x1FC0005 with the
    # m68k weight set for code): 68000/68020 gcc code -2.3 to -6.5% by log-loss (level 9 alike)
    mix_init: int = 0  # the mixer's start: 0 every weight at 0; 1 each first-layer row's
    # input weights summing to 2 (a mean of the inputs' log-odds, the bias at 0) and a prior
    # curvature of 16 samples, not 4, that keeps rare rows near that mean (issue 20: level 1
    # the small Canterbury texts -2 to -8%, the books -0.3 to -0.4%; levels 6 and 9 -0.2
    # to -1.2% and -0.05%); 2 the same weights with the prior of 4 (binary data: level 6
    # x86-64 object -0.12%, kennedy.xls 0.00%, where 1 gives -0.03% and +0.09%)
    rows: int = 0  # row contexts (kind rows), bit j < 8 the kind's j: the bytes one and two
    # rows above, a second period longer than the record (the row of a table: kennedy.xls
    # 2,963 bytes of 13-byte cells) detected by the distance at which 3-byte contexts repeat
    # (context.ctx_vote_row; kinds.rows_hash lists the contexts); bits 8-11 the row maps
    # (rows.pxd: direct tables of probabilities by the last 5, 6, 4 bytes, the rows above).
    # Measured (kennedy.xls, bytes): level 6's binary variant 29 11,696 -> 0x12F 11,188,
    # 0xF2F 11,148, 0xFFF 11,132 (+11% and +38% CPU); level 9's (30, whose 44 contexts
    # leave room for 4) 11,240 -> 0x12E 10,812, 0xF2E 10,760; level 1's (19) 16,156 ->
    # 0x22 14,232 (+7% CPU), 0x122 12,884 (+36%)
    sse: int = 0  # the final stage (sse.pxd), a bit mask: (0) per-cell counts, a cell moves
    # 1/(n + 1.5) of the way to each bit down to 2^-apm_rate; (1) a learned mix of the
    # stages' stretched outputs and the mixer's log-odds in place of the fixed weights; more
    # stages (2^16 rows each): (2) order 2 with the match state, (3) the word so far and the
    # last byte, (4) order 1 with the classes of the two bytes before, (5) hashed order 6;
    # (6) each stage refines the one before's output (a chain); (7) the APM's hashed stages
    # (orders 2 and 3) take 2^16 rows, not 2^14; (8) a stage of the word so far with the
    # word before it (at most four stages).  Measured (body bytes): level 6, 51 (0, 1, 4, 5)
    # -0.2 to -0.3% on text, kennedy.xls -2.0%, ctw.o -0.3%, 16 MB, +10-40% CPU; the chain +1
    # to +2%, 7 nothing; level 1, 3: cp.html -1.0%, fields.c -1.5%, sum -0.9%; 8 (issue 20,
    # 300 KB of prose and of wiki XML) level 6's 19 -> 275 -0.07% and -0.02%, level 9's 51 ->
    # 307 -0.05% and -0.02%; (9, not a stage) the result clamped to [1, 65535] / 2^16, not
    # [16, 65520] (binary variants 138-140: kennedy.xls -2.8% at level 6, -1.7% at level 1)
    runs: int = 0  # run information per hashed context (its last byte and how many times in
    # a row it came), bit j an input of runs.pxd: (0) the agreeing context with the longest
    # run, (1) a vote of the agreeing contexts, (2) the highest agreeing order, (3) one input
    # per order context, (4) one per hashed context
    post: int = 0  # the last mix (post.pxd): after the final stage, one row of weights over
    # its log-odds and every mixer input, plain gradient steps of rate post / 100000
    words2: int = 0  # more word contexts (kind words2, kinds.words2_hash), bit j the kind's
    # j, each with the current word: (0-2) crude stems with numbers as one class, (3-5) the
    # place in the sentence and line, their first words, (6) open brackets and quotes, (7)
    # the word above, (8) the phrase since the punctuation, (9) the last capitalised word,
    # (10) the markup and entity, (11) case classes, (12) word lengths, (13) the column and
    # the bytes above, (14) the line's first word, (15) the bytes since a capitalised word.
    # The weight set "words2" (selectors.pxd) reads the same trackers.  Measured (issue 20,
    # body bytes): level 9 without its mLSTM, each context alone 0 to -0.2% on the books (8,
    # the phrase, the most), 7 and 13 -1.0% on dense XML; 0xA38C (2, 3, 7, 8, 9, 13, 15) in
    # place of the aligned and column contexts, with the words2 set, -0.32 to -0.45% on the
    # books, cp.html -0.74%, fields.c -0.72%, XML -1.53% (+9% CPU); level 6 0xA38C in place
    # of the aligned contexts -0.42% alice29.txt, XML -1.65% (+5% CPU); level 1 0x100 (the
    # phrase) alice29.txt -0.60%, asyoulik.txt -0.29% at no measurable CPU
    floats: int = 0  # float samples' expert (floats.pxd), formats: 1 IBM, 2 IEEE BE, 4 IEEE LE
    post_mode: int = 0  # the last mix's structure, a bit mask (post.pxd; measured: README)
    sparse2: int = 0  # more sparse contexts, bit j kind sparse's 6 + j (bin2.pxd lists them:
    # bytes 1 and 4, 2 and 4, 4, nibbles of 1-4, bytes 2-4, 2/4/6, 1/3/5 ...)
    indirect2: int = 0  # more indirect contexts, bit j kind indirect's 3 + j (bin2.pxd: the
    # bytes that followed 3-byte contexts, the distances a byte and a pair came at before,
    # the distances to the last 0x00, space, newline, 0xFF; to the last newline and space)
    # Measured (body bytes; round bin2): level 6 sparse2 8 (the high nibbles of the last four
    # bytes) with indirect2 34 (the bytes after a pair, the distances to 0x00/space/newline/
    # 0xFF) kennedy.xls -0.56%, sum -0.53% (536: -0.53%); 537 and 34 68000 objects -0.89%
    # (+14% CPU); indirect2 290 text -0.18 to -0.55% (+2% CPU); level 1 binary with sparse 2,
    # indirect 1, 537, 34: -2.6 to -4.8% (+40% CPU; 8 and 34 alone kennedy.xls -2.3%, +9%)
    net_sel: int = 0  # the network's prediction put to more uses (netsel.pxd), a bit mask:
    # (0) one more input, the log-odds of its top byte while the bits agree with it; (1) an
    # SSE stage keyed by that byte's agreement, next bit and confidence, and the node; (2) one
    # keyed by its P(1) in 16 buckets, the previous byte and the depth.  The weight sets
    # "netp" and "nettop" read the same.  Needs a network.  Measured (issue 20, level 9 (47),
    # body bytes, alice29.txt 34,812, without the network 34,848): bit 0 -4 (asyoulik.txt -4,
    # fields.c and cp.html 0, 300 KB of lcet10.txt -8 of 61,326, of a book in HTML -8 of
    # 45,506; binary (67) kennedy.xls -32 of 10,152, sum -4; +1% CPU); bit 1 or 2 with the stage
    # at weight 1 against 1 +32, +24, at 1 against 3 (today's) 0 and 0; the sets nettop +8,
    # netp +12.  The network's rate (0.002) moves more but not one way: 0.004 -12, 0.008
    # with bit 0 -4, 0.006 with bit 0 -28 (asyoulik.txt -12, cp.html -8) but lcet10.txt's
    # 300 KB +28 and a book in HTML's +20 (0.004 with bit 0 there: 0 and +4, kennedy.xls at
    # 96 units +368); 96 units -12; training every 40 bytes (half its CPU) +28.  (3) one more
    # input, its P(1) linear: 84 with 9 alice29.txt -4, asyoulik.txt -4 (rate 0.01/0.002: -5, -6)
    cx_inputs: int = 0  # more inputs per hashed context (cxinputs.pxd), a bit mask: (1) its
    # probability in the linear domain, (2) its log-odds when its history holds one bit value
    # only, (4) a second map's log-odds (by state and bit depth, a faster rate); (8) the share
    # of contexts never seen.  Measured (body bytes, alice29.txt, asyoulik.txt, fields.c,
    # cp.html): level 9 without its mLSTM 1 +0.12%, 2 +0.05%, 4 +0.41%, 8 -0.04%; level 6 1
    # +0.12%, 2 +0.01%, 4 +0.35%, 8 -0.04%; level 6's binary variant (62) on kennedy.xls,
    # sum, ptt5: 2 -1.50%, -0.26%, -0.66%, 1 and 8 within 0.3%, 4 +0.4 to +1.6%; 68000
    # variant (65) m68k objects 2 -0.34%; level 6 2 on 300 KB of lcet10.txt and of prose in
    # HTML -0.10%, wiki-like XML -0.21%; level 9's binary variant (67, no mLSTM) 2
    # kennedy.xls -1.41%, sum -0.16%.  CPU (level 6, alice29.txt): 1 +29%, 2 +19%, 4
    # +33%, 8 +3%, 7 +70%
    fit: int = 0  # 1: when the stream's header gives the input's length n, the hashed table
    # (and the run table, a quarter of it) is sized to the input: 2^(bit length of n + 7)
    # slots, at least 2^16 and at most 2^table_bits (``table_bits_for``).  A short input
    # then builds and touches a small table: xargs.1 (4 KB) at level 6, 2^20 slots against
    # 2^24, 0.02% more log-loss; in a fresh process 1.01 s of CPU against 1.96, 128 MB
    # resident against 387 (level 9: 1.85 s against 3.48, 236 MB against 775)
    fold_case: int = 0  # 1: the stream codes the text case-folded (``seqzip.textcase``: a
    # capital as an escape and its lower-case letter, a word in capitals as another escape
    # and the word), which the model learns from better on short texts (level 6, exact
    # streams: alice29.txt -0.38%, cp.html -1.05%, fields.c -0.95%, 24 texts of 3-20 KB -2.0%;
    # lcet10.txt +0.09%, plrabn12.txt, verse, +0.21%); the session folds and unfolds, the
    # kernel never sees the field.  Chosen per stream (``seqzip.session.fold_pays``)
    mix_skip: float = 0.0  # QDH only: a first-layer weight set whose error |bit - p| on a bit
    # is below mix_skip learns only its running curvature from that bit, not its weights
    # (mixer.pxd's ``mixer_curvature``): the weight step, with a division per input, is most
    # of the mixer's training, and at level 6 half or more of the sets' errors are this small
    # (alice29.txt 51%, 200 KB of XML 83% at 0.005).  Measured (issue 20, level 6, log-loss of
    # 11 texts: the Canterbury texts and 150-200 KB of XML, Python's pydoc topics, perldiag):
    # 0.005 +0.003% in all (alice29.txt +0.010%, the XML -0.024%, fields.c -0.023%), 0.01
    # +0.009%, 0.02 +0.024%; skipping the curvature too: 0.003 XML +0.085%


    # Fields added after streams existed, in the order they came, in generations (issue 20's
    # first round; the image expert; round two; the code contexts; round four: the mixer's
    # start, the rows, the final stage, the runs; kind words2): a JSON array (model files,
    # formats 3-5) leaves out the newest generations while their fields hold their defaults,
    # and one written before a generation lacks it and the later ones (``models.base``).
    ADDED_FIELDS: ClassVar[tuple[str, ...]] = ("aligned", "columns", "text", "image",
                                               "aligned16", "numeric", "samples", "markup",
                                               "code", "mix_init", "rows", "sse", "runs",
                                               "post", "words2", "floats", "post_mode",
                                               "sparse2", "indirect2", "net_sel", "cx_inputs",
                                               "fit", "fold_case", "mix_skip")
    ADDED_GENERATIONS: ClassVar[tuple[int, ...]] = (3, 1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1,
                                                    1, 1, 1)
    # Each level -> the header's id of its preset today (``PRESETS``: every id streams name;
    # ids 1-9 the first presets, so a level not listed is its own first preset).
    PRESET_IDS: ClassVar[dict[int, int]]  # set by cm_presets
    # The stream codes over the byte values 0..top (seqzip.session.coding_alphabet), so the
    # bit decisions are the byte's own bits, which cm learns better than an index's into the
    # values present (issue 20: cm -6 codes 1 MB of text 0.86% smaller, the Canterbury texts
    # 0.3-1.2%; ctw gains on four of five texts, order2 loses a little, so only cm does it);
    # the header spells 0..top in a byte where the values present took 9-14.
    CODES_BYTES: ClassVar[bool] = True
    # Presets a preset turns into for some data (``for_data``), each a header id of its own:
    # id -> (the preset's id, the fields it changes).  The presets of levels 6 and 9 on binary
    # data (a zero byte in it) add the 1-bit image expert, which is bit-level 2-D context for
    # any record-structured binary (ptt5 -11%, sum -1.3%, kennedy.xls -1.6%) and costs text
    # ratio and time.
    VARIANT_IDS: ClassVar[dict[int, tuple[int, dict]]]
    # Which variant a preset takes for which data today: preset id -> {kind: variant id}, the
    # kinds ``data_kinds`` names (a 1-bit image, 68000 code, other binary data); a variant
    # no longer chosen keeps its id in ``VARIANT_IDS`` for the streams that name it.
    DATA_VARIANTS: ClassVar[dict[int, dict[str, int]]]
    # A text preset's case-folded twin (``fold_case``): preset id -> the twin's id.
    FOLDED_IDS: ClassVar[dict[int, int]]
    PRESETS: ClassVar[dict[int, dict]]
    LEVELS: ClassVar[dict[int, dict]]  # each level 1-9 -> its preset's fields today

    def __post_init__(self) -> None:
        orders = [v for v in self.orders.split(",") if v] if self.orders else []
        if not all(v.isdigit() and 2 <= int(v) <= MAX_ORDER for v in orders) or \
                len(set(orders)) != len(orders):
            raise ValueError(f"orders must list distinct integers in 2..{MAX_ORDER}")
        for name, (low, high) in CONFIG_BOUNDS.items():
            check_range(name, getattr(self, name), low, high)
        check_range("apm", self.apm, 0, LIMITS["apm"])
        if 0 < self.match < MIN_MATCH or 0 < self.match2 < MIN_MATCH:
            raise ValueError("match lengths are 0 (off) or at least 2")
        sets = [s for s in self.sets.split(",") if s]
        if not 1 <= len(sets) <= LIMITS["sets"] or any(s not in SELECTORS for s in sets):
            raise ValueError(f"sets must name 1 to {LIMITS['sets']} of {sorted(SELECTORS)}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {sorted(OPTIMIZERS)}")
        if self.mix_skip and self.optimizer != "qdh":
            raise ValueError("mix_skip is a QDH mixer's (its curvature learns the skipped bits)")
        if self.network not in NETWORKS:
            raise ValueError(f"network must be one of {NETWORKS}")
        if ("gate" in sets) != (self.gate_units > 0) or (self.gate_units and not self.network):
            raise ValueError("a gated set needs a network and gate_units > 0, and vice versa")
        if bool(self.network) != bool(self.network_config):
            raise ValueError("network and network_config go together")
        if self.network:
            self.network_model_config()  # raises ValueError when it does not parse
        if (self.net_sel or {"netp", "nettop"} & set(sets)) and not self.network:
            raise ValueError("net_sel and the netp and nettop sets need a network")
        if self.columns and not self.record:
            raise ValueError("columns needs record contexts")
        if sse_stages(self.sse) > 4:
            raise ValueError("sse takes at most four extra stages")
        n_experts = len(parse_experts(self.experts))
        contexts = tuple((KINDS["order"], int(v)) for v in orders) + \
            tuple((KINDS["word"], j) for j in range(WORD_CONTEXTS[self.word])) + \
            tuple((KINDS["sparse"], j) for j in range(SPARSE_CONTEXTS[self.sparse])) + \
            tuple((KINDS["record"], j) for j in range(3 * (self.record > 0))) + \
            tuple((KINDS["indirect"], j) for j in range(3 * self.indirect)) + \
            tuple((KINDS["sparse"], 6 + j) for j in range(12) if self.sparse2 >> j & 1) + \
            tuple((KINDS["indirect"], 3 + j) for j in range(9) if self.indirect2 >> j & 1) + \
            tuple((KINDS["column"], j) for j in range(4 * self.columns)) + \
            tuple((KINDS["text"], j) for j in range(4 * self.text)) + \
            tuple((KINDS["aligned"], j) for j in range(3 * self.aligned)) + \
            tuple((KINDS["aligned16"], j) for j in range(5) if self.aligned16 >> j & 1) + \
            tuple((KINDS["numeric"], j) for j in range(7) if self.numeric >> j & 1) + \
            tuple((KINDS["markup"], j) for j in range(13) if self.markup >> j & 1) + \
            tuple((KINDS["code"], j) for j in range(M68K_PRED_BIT + 2)
                  if self.code >> j & 1 and j != X86_PRED_BIT and j != M68K_PRED_BIT) + \
            tuple((KINDS["rows"], j) for j in range(8) if self.rows >> j & 1) + \
            tuple((KINDS["words2"], j) for j in range(16) if self.words2 >> j & 1)
        matches = tuple(m for m in (self.match, self.match2) if m)
        # the mixer's inputs: the bias, the hashed contexts, orders 0 and 1, the image expert's
        # tables, the match models, the symbol experts and the network
        n_inputs = 1 + len(contexts) + 2 + LIMITS["image_maps"] * self.image + len(matches) + \
            n_experts + bool(self.network) + (self.net_sel & 1) + (self.net_sel >> 3 & 1) + \
            LIMITS["sample_maps"] * self.samples + \
            LIMITS["float_maps"] * bin(self.floats).count("1") + \
            bin(self.rows >> 8).count("1") + bin(self.runs & 7).count("1") + \
            (len(contexts) if self.runs & 16 else len(orders) if self.runs & 8 else 0) + \
            len(contexts) * bin(self.cx_inputs & 7).count("1") + (self.cx_inputs >> 3 & 1) + \
            X86_PRED_INPUTS * (self.code >> X86_PRED_BIT & 1) + \
            M68K_PRED_INPUTS * (self.code >> M68K_PRED_BIT & 1)
        if len(contexts) > LIMITS["contexts"] or n_experts > LIMITS["symbol_experts"] or \
                n_inputs > LIMITS["inputs"]:
            raise ValueError(f"at most {LIMITS['contexts']} hashed contexts, "
                             f"{LIMITS['symbol_experts']} symbol experts and "
                             f"{LIMITS['inputs']} mixer inputs")
        spec = CMSpec(contexts=contexts, matches=matches, table_bits=self.table_bits,
                      history_bits=self.history_bits,
                      selectors=tuple(SELECTORS[s] for s in sets), layer2=bool(self.layer2),
                      optimizer=OPTIMIZERS[self.optimizer], rate=self.rate, rate2=self.rate2,
                      decay=self.decay, eps=self.eps, apm=self.apm, apm_rate=self.apm_rate,
                      gate_units=self.gate_units, gate_rate=self.gate_rate,
                      periods=self.record == 2, image=self.image,
                      samples=bool(self.samples), mix_init=self.mix_init,
                      row_maps=self.rows >> 8, sse=self.sse, runs=self.runs,
                      post=self.post, post_mode=self.post_mode, floats=self.floats,
                      net_sel=self.net_sel, cx_inputs=self.cx_inputs,
                      x86_pred=bool(self.code >> X86_PRED_BIT & 1),
                      m68k_pred=bool(self.code >> M68K_PRED_BIT & 1), mix_skip=self.mix_skip)
        object.__setattr__(self, "_spec", spec)  # derived, not a field: not in the header
        object.__setattr__(self, "_n_inputs", n_inputs)

    def table_bits_for(self, length: int) -> int:
        """The hashed table's size (log2 of its slots) for an input of ``length`` symbols
        (0: not known): ``table_bits``, or with ``fit`` the length's bit length + 7, between
        16 and ``table_bits``.

            >>> c = CMConfig(table_bits=24, fit=1)
            >>> c.table_bits_for(0), c.table_bits_for(4227), c.table_bits_for(100_000)
            (24, 20, 24)
        """
        if not self.fit or length <= 0:
            return self.table_bits
        return min(self.table_bits, max(FIT_MIN_BITS, length.bit_length() + FIT_EXTRA_BITS))

    def spec_for(self, length: int) -> CMSpec:
        """``spec`` for an input of ``length`` symbols (0: not known; see ``fit``)."""
        bits = self.table_bits_for(length)
        return self.spec if bits == self.table_bits else replace(self.spec, table_bits=bits)

    @property
    def spec(self) -> CMSpec:
        """The config as the kernel takes it (parsed once, here)."""
        return self._spec  # type: ignore[attr-defined]


    def network_model_config(self):
        """The gating network's own config (None without a network)."""
        if not self.network:
            return None
        cls = _network_class(self.network)[0]
        return config_from_bytes(cls, self.network_config.encode("ascii"))

    @classmethod
    def for_level(cls, level: int) -> "CMConfig":
        """Levels trade speed for ratio (benchmarks/cm.py measures them)."""
        return cls(**cls.LEVELS[level])

    @classmethod
    def for_preset_id(cls, preset_id: int) -> "CMConfig":
        """The config a header's preset id names (``seqzip.models.base.preset_by_id``): ids
        1-9 the first presets (``FIRST_PRESETS``), those of ``PRESET_IDS`` today's levels,
        every id in ``PRESETS`` (which only grows).

            >>> CMConfig.for_preset_id(42) == CMConfig.for_level(6) != CMConfig.for_preset_id(133)
            True
        """
        if preset_id not in cls.PRESETS:
            raise ValueError(f"no preset id {preset_id}")
        return cls(**cls.PRESETS[preset_id])

    def for_data(self, present: bytes, profile=None) -> "CMConfig":
        """The config to code data holding the byte values ``present`` (``profile``: its
        byte and word counts, ``seqzip.session.DataProfile``, when known) with: a level
        preset that has a variant for such data (``DATA_VARIANTS``, by ``data_kinds``: a
        1-bit image, 68000 code, any data with a zero byte) becomes that variant; any other
        config is kept.  The encoder's choice, per stream, written in the header (the
        variant's own id), so the decoder follows it.

            >>> six = CMConfig.for_level(6)
            >>> six.for_data(b"\\x00\\x01").image, six.for_data(b"ab").image
            (1, 0)
        """
        if not present or present[0] != 0:
            return self
        kinds = data_kinds(profile)
        for base_id, variants in _tables().DATA_VARIANTS.items():
            if self == preset_by_id(CMConfig, base_id):  # the presets built once (models.base)
                for kind in kinds:
                    if kind in variants:
                        return preset_by_id(CMConfig, variants[kind])
        return self

    def folded(self) -> "CMConfig | None":
        """The case-folded twin of a preset that has one (``FOLDED_IDS``), else None.

            >>> CMConfig.for_level(6).folded().fold_case, CMConfig.for_level(1).folded()
            (1, None)
        """
        return self._twin(0)

    def unfolded(self) -> "CMConfig":
        """This config coding the data as it is: a twin's preset, or the config with
        ``fold_case`` 0.

            >>> six = CMConfig.for_level(6)
            >>> six.folded().unfolded() == six
            True
        """
        return self._twin(1) or replace(self, fold_case=0)

    def _twin(self, side: int) -> "CMConfig | None":
        """The other preset of the pair in ``FOLDED_IDS`` (base, twin) whose ``side`` (0, 1)
        this config is, else None."""
        for pair in _tables().FOLDED_IDS.items():
            if self == preset_by_id(CMConfig, pair[side]):
                return preset_by_id(CMConfig, pair[1 - side])
        return None

    def memory_bytes(self, alphabet_size: int) -> int:
        """Bytes the kernel, its symbol experts and its network allocate (a bound)."""
        A = alphabet_size
        B = max(1, (A - 1).bit_length())
        n_contexts = len(self.spec.contexts)
        n_inputs = self._n_inputs  # type: ignore[attr-defined]
        sizes = {"node": 1 << B, "match": 48 * 8, "c1": A, "order": (n_contexts + 1) * 8,
                 "gate": 1, "c2": 256 * 8, "word": 16 * 4 * 8, "net": 64 * 8,
                 "c1n": 16 << B, "c12n": 64 << B, "ordern": 8 << B, "code": 64 << B,
                 "code32": 128 << B, "pixel": 512, "x86": 64 << B, "m68k": 64 << B,
                 "words2": 8 * 4 * 4 * 8,
                 "netp": 16 * 8, "nettop": 16 * 8}
        mixer = sum(3 * 8 * sizes[s] * n_inputs for s in self.sets.split(",") if s)
        mixer += 3 * 8 * (1 << B) * 9 + 3 * 8 * (1 << B) * self.gate_units * n_inputs
        match_table = 4 << min(self.history_bits, 24)
        total = (16 << self.table_bits) + (1 << self.history_bits) + \
            ((self.match > 0) + (self.match2 > 0)) * match_table + (A + 1) * (1 << B) + \
            (n_contexts + 2) * 256 * 6 + mixer + \
            sum(((1 << B), A << B, 1 << 16, 1 << 16, 48 << B)[i] * 33 * 2
                for i in range(self.apm)) + \
            8 * (A + 6 * (2 << B)) + (1 << 16) + (self.record == 2) * 8 * 4096 + \
            LIMITS["image_bytes"][self.image] + \
            self.samples * LIMITS["sample_maps"] * 6 * LIMITS["sample_size"] + \
            bin(self.floats).count("1") * LIMITS["float_bytes"] + \
            (self.markup > 0) * 8 * 19 + (self.words2 > 0) * 8 * 19 + \
            (self.rows > 0) * LIMITS["row_bytes"] + \
            (self.indirect2 > 0) * LIMITS["bin2_bytes"] + \
            bin(self.rows >> 8).count("1") * (6 << 20) + \
            _sse_memory(self.sse, self.apm, A, B) + \
            ((16 << B) * (self.net_sel >> 1 & 1) + 16 * 256 * 8 * (self.net_sel >> 2 & 1)) * 66 + \
            (self.runs > 0) * ((1 << self.table_bits) + 6 * 4 * 12288) + \
            post_bytes(self.post, self.post_mode, n_inputs, self.spec, self.apm, self.sse) + \
            (self.cx_inputs >> 2 & 1) * n_contexts * 8 * 256 * 6 + \
            ((self.code >> 13) % 32 > 0) * ((1 << self.history_bits) + 4096) + \
            (self.code >> 18 > 0) * 65536
        # markup, the row detector, maps, sse's tables; runs.pxd: the table (2^(table_bits - 2)
        # entries of 4 bytes), maps of 4,096 indices, of 256 per context (48 at least) twice
        # and of 128 per context (36,864 at 48 contexts, 45,056 at 64: 4 x 12,288 bounds them);
        # the last mix (post.pxd); code bits 13-17: the x86 relocation sites (a byte per history
        # byte) and the predicted bytes' maps (xpred.pxd); code bits 18-24: the 68000 decoder's
        # state (m68k.pxd's M68_N words, 53 KB) and the predicted words' maps (mpred.pxd, 8 KB)
        total += experts_memory(self.experts, A)
        network = self.network_model_config()
        if network is not None:
            total += network.memory_bytes(A)
        return total


# A bitmap codes best without the text, word, column and numeric contexts, the symbol experts
# and the network (their inputs only slow the mixer's learning: level 9's mLSTM takes 97% of
# the time for -16 bytes), with image=2, the weight sets selected by the pixels around, and a
# mixer and APMs that settle more (ptt5, presets 20 and 21 with these changes: 24,405 and
# 24,769 -> 21,969 and 21,965 bytes, 2.7 and 3.6 s of CPU; without eps, decay and apm_rate
# about 500 more).
BITMAP_CHANGES = dict(word=0, text=0, sparse=0, indirect=0, aligned=0, numeric=0, aligned16=0,
                      samples=0, columns=0, experts="", network="", network_config="", image=2,
                      sets="pixel,c1,match", eps=100.0, decay=0.99995, apm_rate=4)


def _tables() -> type:
    """``CMConfig`` with its class tables: ``cm_presets`` fills them when it is imported, which
    a process that has only unpickled a config (a worker of a piece set) has not done yet; the
    registry's import of the family does it."""
    from . import MODELS
    return MODELS["cm"].config_class


def _sse_memory(sse: int, apm: int, A: int, B: int) -> int:
    """Bytes the final stage's newer behaviours allocate (``CMConfig.sse``): 2^16 rows of 33
    bins per extra stage, a byte per cell with counts, the mix's weights."""
    extra = sse_stages(sse)
    hashed = 1 << 16 if sse & 128 else 1 << 14  # the APM's hashed stages' rows
    cells = 33 * (sum(((1 << B), A << B, hashed, hashed, 48 << B)[i] for i in range(apm)) +
                  (extra << 16))
    mix = 8 * (2 + apm + extra) if sse & 2 else 0
    return 2 * 33 * (extra << 16) + (sse & 1) * cells + mix


def _network_class(name: str):
    if name == "glnn":
        from .glnn import GLNNConfig, GLNNModel
        return GLNNConfig, GLNNModel
    from .lstm import MLSTMConfig, MLSTMModel
    return MLSTMConfig, MLSTMModel


def network_config(name: str, **fields) -> str:
    """The ``network_config`` string of network ``name`` with ``fields`` (experts off unless
    given: with experts, the network's prediction is its gated mixture of them).

        >>> network_config("glnn", n_units=4)[:3]
        '[0.'
    """
    cls = _network_class(name)[0]
    fields.setdefault("experts", "")
    return config_to_bytes(cls(**fields)).decode("ascii")
