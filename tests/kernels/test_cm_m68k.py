"""68000 code by a light decoder (CMConfig.code bits 18-24: m68k.pxd, kinds.code_hash j =
18-22 and 24, mpred.pxd; the weight set m68k): the bound and the spec, the decoder's kinds of
words and targets, each context's dependence on what its docstring says, round trips,
determinism, get/set state, the memory bound, and the inputs paying on synthetic code."""
import dataclasses
import io
import random
import struct

import pytest

import seqzip
from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS
from seqzip.models.cm import CMConfig
from seqzip.predictor import Predictor
from tests.kernels.test_cm import feed, kernel
from tests.kernels.test_cm_options import round_trip

CODE = KINDS["code"]
PRED = 1 << 23  # the predicted words' inputs (not a context)
CONTEXTS = 0x7C0000 | (1 << 24)  # 18-22, 24
ALL = CONTEXTS | PRED
OP, IMM, D16, IDX, ABSW, ABSL, PCD, BR, EXT = range(9)  # m68k.pxd's MW_*
NAME, CLEN, DATA = 11, 12, 13
KIND, T0, C0 = 0, 10, 14  # m68k.pxd's MS_KIND, MS_T0, MS_C0


def h(data: bytes, j: int) -> int:
    return cm.py_context_hashes(data, [(CODE, j)], False)[0]


def words(*ws: int) -> bytes:
    return struct.pack(f">{len(ws)}H", *ws)


def kinds(data: bytes) -> list:
    """The kind of each word after the first (the decoder's state after the word before)."""
    states = cm.py_m68k_states(data)
    return [states[p - 1][KIND] for p in range(2, len(data), 2)]


def synthetic_code(n_functions: int = 60, seed: int = 3) -> bytes:
    """Functions of a 68000 compiler: LINK A6, MOVEM.L of a few registers to -(SP), moves
    and branches to earlier labels, the MOVEM back (its mask the other way round), UNLK, RTS."""
    rng = random.Random(seed)
    out = bytearray()
    for _ in range(n_functions):
        mask = rng.randrange(1, 1 << 16)
        out += words(0x4E56, -4 * rng.randrange(1, 40) & 0xFFFF, 0x48E7, mask)
        start = len(out)
        for _ in range(rng.randrange(3, 12)):
            r = rng.random()
            if r < 0.4:
                out += words(0x202E | (rng.randrange(4) << 9), 8 + 4 * rng.randrange(4))
            elif r < 0.7:
                out += words(0x4A80 | rng.randrange(8))
                out += words(0x6600, (start - len(out) - 2) & 0xFFFF)  # back to the start
            else:
                out += words(0x4EB9, 0, 0x1000 + 16 * rng.randrange(8))  # JSR abs.L
        back = int(f"{mask:016b}"[::-1], 2)
        out += words(0x4CDF, back, 0x4E5E, 0x4E75)
    return bytes(out)


def test_bound_spec_and_inputs():
    with pytest.raises(ValueError):
        CMConfig(code=1 << 25)
    assert CMConfig(code=PRED).spec.contexts == CMConfig().spec.contexts
    assert CMConfig(code=PRED).spec.m68k_pred and not CMConfig(code=1 << 22).spec.m68k_pred
    assert CMConfig(code=(1 << 18) | (1 << 24)).spec.contexts[-2:] == ((CODE, 18), (CODE, 24))
    assert kernel(code=CONTEXTS).context_count() == kernel().context_count() + 6
    plain, pred = kernel(), kernel(code=PRED)
    for k in (plain, pred):
        feed(k, words(0x4E56, 0xFFF8))
        k.predict_bit()
    assert len(pred.mixer_inputs()) == len(plain.mixer_inputs()) + 5
    kernel(sets="node,m68k")  # the weight set turns the decoder on


def test_decoder_kinds_of_words():
    code = words(0x4E56, 0xFFF8,          # LINK A6,#-8: a word
                 0x48E7, 0x3830,          # MOVEM.L regs,-(SP): the mask
                 0x206E, 0x0008,          # MOVEA.L 8(A6),A0
                 0x2D7C, 0, 1, 0xFFFC,    # MOVE.L #1,-4(A6): the immediate, then d16
                 0x6700, 0x0010,          # BEQ.W
                 0x6604,                  # BNE.S
                 0x4EB9, 0, 0x1234,       # JSR abs.L
                 0x41FB, 0x0800,          # LEA d8(PC,D0.L),A0
                 0x4878, 0x0017,          # PEA abs.W
                 0x4E75, 0x4E71)
    assert kinds(code) == [EXT, OP, EXT, OP, D16, OP, IMM, IMM, D16, OP, BR, OP, OP, ABSL, ABSL,
                           OP, IDX, OP, ABSW, OP, OP]


def test_decoder_skips_macsbug_names():
    named = words(0x4E75) + b"\x85Hello" + words(4, 0x1234, 0x5678, 0x4E56, 0xFFF8)
    assert kinds(named) == [OP, NAME, NAME, CLEN, DATA, DATA, OP, EXT]
    assert kinds(words(0x4E75) + b"\x85\xc8ello" + words(0, 0x4E56, 0xFFF8))[1] != NAME
    assert kinds(words(0x4E71) + b"\x85Hello" + words(0, 0x4E56, 0xFFF8))[1] != NAME


def test_decoder_targets_and_elf_start():
    states = cm.py_m68k_states(words(0x4E71, 0x6700, 0x0010, 0x6104, 0x4E71))
    assert states[5][T0] == 4 + 0x10  # BEQ.W at 2: its displacement word's place + 16
    assert states[7][C0] == 8 + 4     # BSR.S at 6
    tail = bytes(44) + words(0x4E71, 0x4EB9, 0x4E75, 0x4E71)  # JSR abs.L just before .text
    assert kinds(b"\x7fELF" + tail)[-2:] == [OP, OP]  # .text 52 bytes from the header's start
    assert kinds(b"\x7fEL@" + tail)[-2:] == [ABSL, ABSL]


def test_contexts_read_the_decoder():
    # 18: the kind of word, the opcode and the previous one; not the operands' values
    assert h(words(0x2F2E), 18) != h(words(0x2F2F), 18)
    assert h(words(0x2F2E, 0x0008, 0x4E71, 0x2F2E), 18) == \
        h(words(0x2F2E, 0x000C, 0x4E71, 0x2F2E), 18)
    assert h(words(0x4E71, 0x2F2E), 18) != h(words(0x4E75, 0x2F2E), 18)
    # 19: before an opcode, the previous two opcodes
    assert h(words(0x4E71, 0x4E75), 19) != h(words(0x4E75, 0x4E75), 19)
    assert h(words(0x4E71, 0x4E71, 0x4E75), 19) == h(words(0x4E75, 0x4E71, 0x4E75), 19)
    # 20: the word seen last after the same opcode at the same index
    assert h(words(0x2F2E, 0x0008, 0x4E71, 0x2F2E), 20) != \
        h(words(0x2F2E, 0x0010, 0x4E71, 0x2F2E), 20)
    # 21: a branch's displacement by the last targets
    assert h(words(0x6700, 0x0100, 0x4E71, 0x6600), 21) != \
        h(words(0x6700, 0x0200, 0x4E71, 0x6600), 21)
    # ... and a d16(An)'s second byte by the d16 last seen with An and that first byte
    assert h(words(0x206D, 0x1234, 0x4E71, 0x226D) + b"\x12", 21) != \
        h(words(0x206D, 0x1238, 0x4E71, 0x226D) + b"\x12", 21)
    assert h(words(0x206C, 0x1234, 0x4E71, 0x226D) + b"\x12", 21) == \
        h(words(0x206C, 0x1238, 0x4E71, 0x226D) + b"\x12", 21)
    # 22: the previous instruction whole
    assert h(words(0x2F2E, 0x0008, 0x4E71), 22) != h(words(0x2F2E, 0x000C, 0x4E71), 22)
    # 24: a d16(An) by An's last d16, another register's not
    assert h(words(0x202A, 0x0010, 0x4E71, 0x222A), 24) != \
        h(words(0x202A, 0x0014, 0x4E71, 0x222A), 24)
    assert h(words(0x202B, 0x0014, 0x4E71, 0x222A), 24) == \
        h(words(0x202B, 0x0018, 0x4E71, 0x222A), 24)
    # ... before an opcode, the last two A-line traps
    assert h(words(0xA9A0, 0x4E71), 24) != h(words(0xA9A1, 0x4E71), 24)
    assert h(words(0x4E71, 0x4E71), 24) == h(words(0x4E75, 0x4E71), 24)


def test_weight_set_reads_the_kind_of_word():
    row = lambda data: cm.py_selector_row(data, cm.SELECTORS["m68k"]) >> 8  # without the node
    assert row(words(0x4E71)) == 4               # an opcode's first byte: the last opcode's
    assert row(words(0x4E71) + b"\x20") == 16 + 2  # its second: the first byte's high nibble
    assert row(words(0x206E)) == 32 + 2 * D16     # an operand: its kind and lane
    assert row(words(0x206E) + b"\x00") == 32 + 2 * D16 + 1


@pytest.mark.parametrize("code", [CONTEXTS, ALL, PRED])
def test_round_trips_and_determinism(code):
    rng = random.Random(code)
    obj = synthetic_code(20)
    for data in (b"", b"\x00", bytes(rng.randrange(256) for _ in range(2000)), obj,
                 obj[:len(obj) // 2 + 1] + obj):
        round_trip(data, code=code, sets="node,m68k")
    config = dataclasses.replace(CMConfig.for_preset_id(126), code=code, sets="m68k,match")
    outs = []
    for _ in range(2):
        out = io.BytesIO()
        seqzip.compress_file(io.BytesIO(obj), out, model="cm", config=config)
        outs.append(out.getvalue())
    assert outs[0] == outs[1] and seqzip.decompress(outs[0]) == obj


def test_memory_is_bounded():
    config = CMConfig(orders="2,3", table_bits=14, history_bits=16, code=ALL, sets="node,m68k")
    k = cm.CMKernel(config.spec, bytes(range(256)))
    plain = cm.CMKernel(CMConfig(orders="2,3", table_bits=14, history_bits=16).spec,
                        bytes(range(256)))
    assert k.memory_allocated() <= config.memory_bytes(256)
    assert config.memory_bytes(256) > CMConfig(orders="2,3", table_bits=14,
                                               history_bits=16).memory_bytes(256)
    # the contexts and the weight set take memory, and the predicted words' inputs more
    contexts_only = cm.CMKernel(dataclasses.replace(config, code=CONTEXTS).spec,
                                bytes(range(256)))
    assert k.memory_allocated() > contexts_only.memory_allocated() > plain.memory_allocated()


def test_state_round_trips():
    obj = synthetic_code(20)
    k = kernel(code=ALL)
    feed(k, obj[:len(obj) - 101])
    state = k.get_state()
    assert "m68k" in state and "mpred.sm" in state
    k2 = kernel(code=ALL)
    k2.set_state(state)
    assert all((k2.get_state()[key] == value).all() for key, value in state.items()
               if hasattr(value, "all"))


def test_predicted_words_pay():
    obj = synthetic_code(300)  # the restoring MOVEMs' masks and the JSRs' addresses repeat
    base = dataclasses.replace(CMConfig.for_preset_id(126), table_bits=18)
    m68k = base.sets.replace("code", "m68k")
    costs = []
    for code, sets in ((base.code, base.sets), (base.code | CONTEXTS, m68k),
                       (base.code | ALL, m68k)):
        config = dataclasses.replace(base, code=code, sets=sets)
        costs.append(float(Predictor("cm", alphabet=bytes(range(256)),
                                     config=config).feed(obj).sum()) / 8)
    assert costs[2] < 0.85 * costs[0] and costs[2] < 0.9 * costs[1], costs  # 3367, 3328, 2729
