"""x86 and 32-bit RISC code contexts (CMConfig.code bits 6-12, kinds.x86_hash, risc_hash):
the light x86 decoder (x86.pxd) checked word for word against a plain-Python reference on
crafted instructions and random bytes, the contexts' dependence on what their docstrings
say, round trips, determinism, the bound refused."""
import dataclasses
import io
import random

import pytest

import seqzip
from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS
from seqzip.models.cm import CMConfig
from tests.kernels.test_cm import kernel
from tests.kernels.test_cm_options import round_trip

CODE = KINDS["code"]
OP, OP2, OP3, MODRM, SIB, DATA, VEX = range(7)  # the decoder's stages (x86.pxd XG_*)


def one_modrm(op):
    if op < 0x40:
        return (op & 7) < 4 and op != 0x0F
    return op in (0x62, 0x63, 0x69, 0x6B, 0xC0, 0xC1, 0xC6, 0xC7, 0xF6, 0xF7, 0xFE, 0xFF) or \
        0x80 <= op <= 0x8F or 0xD0 <= op <= 0xD3 or 0xD8 <= op <= 0xDF


def one_imm(op):
    """The immediate's size: an int, or "z" (4, 2 with 66), "v" (B8-BF: 8 with REX.W),
    "m" (a memory offset: 8, 4 with 67), "f6" (only when ModRM's reg is 0 or 1)."""
    if op < 0x40:
        return {4: 1, 5: "z"}.get(op & 7, 0)
    if op in (0x68, 0x69, 0x81, 0xA9, 0xC7, 0xE8, 0xE9):
        return "z"
    if op in (0x6A, 0x6B, 0x80, 0x82, 0x83, 0xA8, 0xC0, 0xC1, 0xC6, 0xCD, 0xD4, 0xD5, 0xEB) or \
            0x70 <= op <= 0x7F or 0xB0 <= op <= 0xB7 or 0xE0 <= op <= 0xE7:
        return 1
    if 0xB8 <= op <= 0xBF:
        return "v"
    if 0xA0 <= op <= 0xA3:
        return "m"
    return {0xC2: 2, 0xCA: 2, 0xC8: 3, 0xF6: "f6", 0xF7: "f6"}.get(op, 0)


def two_modrm(op):
    return not (0x05 <= op <= 0x09 or op in (0x0B, 0x0E, 0x77, 0xA0, 0xA1, 0xA2, 0xA8, 0xA9, 0xAA)
                or 0x30 <= op <= 0x37 or 0x80 <= op <= 0x8F or 0xC8 <= op <= 0xCF)


def two_imm(op):
    if 0x80 <= op <= 0x8F:
        return "z"
    return 1 if 0x70 <= op <= 0x73 or op in (0xA4, 0xAC, 0xBA) or 0xC2 <= op <= 0xC6 else 0


class Decoder:
    """The reference: the same state, by the same rules, written plainly."""

    def __init__(self):
        self.stage, self.op, self.modrm, self.left, self.imm = OP, 0, 0, 0, 0
        self.index, self.prev, self.data, self.last = 0, 0, 0, 0

    def words(self):
        imm = {"z": 16, "v": 17, "m": 18, "f6": 19}.get(self.imm, self.imm)
        return (self.stage, self.op, self.modrm, self.left, imm, self.index, self.prev,
                self.data, self.last)

    def end(self):
        self.prev = ((self.prev << 12) | (self.op & 0xFFF)) & (2 ** 48 - 1)
        self.last = self.index
        self.stage, self.op, self.modrm, self.left, self.imm, self.data, self.index = \
            OP, 0, 0, 0, 0, 0, 0

    def size(self):
        imm, op = self.imm, self.op
        if isinstance(imm, int):
            return imm
        if imm == "f6":
            if (self.modrm >> 3) & 6:
                return 0
            return 1 if op & 0xFF == 0xF6 else 2 if op & 0x1000 else 4
        if imm == "v" and op & 0x8000:
            return 8
        if imm == "m":
            return 4 if op & 0x2000 else 8
        return 2 if op & 0x1000 else 4

    def operands(self, disp):
        self.left = disp + self.size()
        if self.left:
            self.stage = DATA
        else:
            self.end()

    def opcode(self, op, modrm, imm):
        self.op = (self.op & 0xF000) | op
        self.imm = imm
        if modrm:
            self.stage = MODRM
        else:
            self.operands(0)

    def disp(self, mod, rm):
        return 4 if mod == 2 or (mod == 0 and rm == 5) else mod

    def step(self, b):
        self.index = min(self.index + 1, 15)
        if self.stage == OP:
            if b in (0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3) or \
                    0x40 <= b <= 0x4F:
                self.op |= {0x66: 0x1000, 0x67: 0x2000, 0xF2: 0x4000, 0xF3: 0x4000}.get(
                    b, 0x8000 if 0x48 <= b <= 0x4F else 0)
                if self.index >= 15:
                    self.end()
            elif b == 0x0F:
                self.stage = OP2
            elif b in (0xC4, 0xC5):
                self.stage, self.left = VEX, 2 if b == 0xC4 else 1
                self.op = (self.op & 0xF000) | (b << 4)
            else:
                self.opcode(b, one_modrm(b), one_imm(b))
        elif self.stage == OP2:
            if b in (0x38, 0x3A):
                self.stage = OP3
                self.op = (self.op & 0xF000) | (0x200 if b == 0x38 else 0x300)
            else:
                self.opcode(0x100 | b, two_modrm(b), two_imm(b))
        elif self.stage == OP3:
            m = self.op & 0x300
            self.opcode(m | b, True, 1 if m == 0x300 else 0)
        elif self.stage == VEX:
            if self.op & 0xFF0 == 0xC40 and self.left == 2:
                self.op = (self.op & 0xF000) | (0xC40 + (b & 3))
            if self.left == 2:
                self.left = 1
            else:
                m = self.op & 0xFFF
                self.left = 0
                self.op = (self.op & 0xF000) | {0xC43: 0x300, 0xC42: 0x200}.get(m, 0x100)
                self.stage = OP3 if m in (0xC42, 0xC43) else OP2
        elif self.stage == MODRM:
            self.modrm = 0x100 | b
            mod, rm = b >> 6, b & 7
            if mod == 3:
                self.operands(0)
            elif rm == 4:
                self.stage = SIB
            else:
                self.operands(self.disp(mod, rm))
        elif self.stage == SIB:
            self.operands(self.disp((self.modrm >> 6) & 3, b & 7))
        else:
            self.data = ((self.data << 8) | b) & 0xFFFFFFFF
            if 1 < self.left <= 12:
                self.left -= 1
            else:
                self.end()


def reference_states(data: bytes):
    d, out = Decoder(), []
    for b in data:
        d.step(b)
        out.append(d.words())
    return out


def starts(data: bytes):
    """The offsets where the decoder says an instruction starts."""
    return [0] + [i + 1 for i, s in enumerate(cm.py_x86_states(data)) if s[5] == 0][:-1]


# x86-64 instructions (gcc output) and their lengths
INSTRUCTIONS = [
    "55", "4889e5", "4883ec20", "897dfc", "8b45fc", "c3", "e800000000", "e9fbffffff",
    "0f1f440000", "0f1f8000000000", "660f1f840000000000", "488b0425a0000000",
    "48c7c001000000", "48b80102030405060708", "b801000000", "66b80100", "f30f1efa",
    "0f8412345678", "7405", "eb10", "c7442408ffffffff", "f6c301", "f7d8", "f7c700010000",
    "488d3d00000000", "660f6ec7", "0f28c1", "660f3a0fc108", "660f3800c1", "c5f877",
    "c4e27d18442408", "c3", "a1efcdab8967452301", "67a1efcdab89", "418b4c2404", "cc",
]


def test_decoder_matches_the_reference_and_finds_each_instruction():
    code = b"".join(bytes.fromhex(h) for h in INSTRUCTIONS)
    assert cm.py_x86_states(code) == reference_states(code)
    offsets, at = [], 0
    for h in INSTRUCTIONS:
        offsets.append(at)
        at += len(h) // 2
    assert starts(code) == offsets


def test_decoder_matches_the_reference_on_random_bytes():
    rng = random.Random(7)
    for n in (0, 1, 50, 3000):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert cm.py_x86_states(data) == reference_states(data)
    prefixes = b"\x66\x48" * 20 + b"\x90"  # a run of prefixes is cut at 15 bytes
    assert cm.py_x86_states(prefixes) == reference_states(prefixes)


def x86_hash(data: bytes, j: int) -> int:
    return cm.py_context_hashes(data, [(CODE, j)], False)[0]


def test_x86_contexts_read_the_decoder_state():
    # the next byte is ModRM of 89 (mov r/m, r) after a push: same state, same context
    a = [x86_hash(b"\x55\x89", j) for j in range(6, 10)]
    assert [x86_hash(b"\x53\x89", j) for j in (7, 9)] != a[1:4:2]  # the last bytes differ
    assert x86_hash(b"\x55\x89", 6) == a[0]
    # the previous instruction's opcode counts (6, 8), not its operand bytes
    b6 = x86_hash(b"\xb8\x01\x00\x00\x00\x89", 6)
    assert x86_hash(b"\xb8\x07\x07\x07\x07\x89", 6) == b6
    assert x86_hash(b"\xb9\x01\x00\x00\x00\x89", 6) != b6
    assert x86_hash(b"\x90\xb8\x01\x00\x00\x00\x89", 8) != x86_hash(b"\x91\xb8\x01\x00\x00\x00\x89", 8)
    # (9) the instruction's bytes so far, not the bytes before it
    c = x86_hash(b"\x90\xe8\x01\x02", 9)
    assert x86_hash(b"\x91\xe8\x01\x02", 9) == c
    assert x86_hash(b"\x90\xe8\x01\x03", 9) != c
    # ... before an opcode: the previous instruction's, whole (here 48 89 e5 after a push)
    d = x86_hash(b"\x55\x48\x89\xe5", 9)
    assert x86_hash(b"\x53\x48\x89\xe5", 9) == d
    assert x86_hash(b"\x55\x48\x89\xe4", 9) != d
    # a stage differs: the second byte of 0F 1F vs the ModRM of 8B
    assert x86_hash(b"\x0f", 6) != x86_hash(b"\x8b", 6)


def test_x86_selector_rows_follow_the_decoder():
    sel = cm.SELECTORS["x86"]
    row = lambda data: cm.py_selector_row(data, sel) >> 8  # without the node (B = 8)
    assert row(b"") == 0  # an opcode, no prefix
    # an opcode after prefixes: 67 (1), F2 or F3 (2), REX.W (4); not 66
    assert [row(bytes([p])) for p in (0x67, 0xF3, 0x48, 0x66)] == [1, 2, 4, 0]
    assert row(b"\xf2\x67\x4c") == 7
    assert row(b"\x0f") == 8  # the 0F map's second byte
    assert row(b"\x89") == 3 * 8  # ModRM
    assert row(b"\x89\x44") == 4 * 8  # SIB
    assert row(b"\xe8") == 5 * 8 + 4 and row(b"\xe8\x00\x00") == 5 * 8 + 2  # rel32 left
    assert row(b"\xc5") == 6 * 8  # VEX


def test_risc_contexts_read_the_previous_words_fields():
    # lane 0 after one word: (10) its top 19 bits only
    w = bytes.fromhex("9de3bf98")  # SPARC save %sp, -104, %sp
    a = x86_hash(w, 10)
    assert x86_hash(bytes.fromhex("9de3a000"), 10) == a  # low 13 bits differ
    assert x86_hash(bytes.fromhex("9de7bf98"), 10) != a
    assert x86_hash(w + b"\x01", 10) != x86_hash(w + b"\x02", 10)  # the word's byte so far
    # (11) the top 13 bits of the previous two words, (12) the top bytes of the previous three
    b = x86_hash(bytes.fromhex("11112222" "9de3bf98"), 11)
    assert x86_hash(bytes.fromhex("1117ffff" "9de7ffff"), 11) == b
    assert x86_hash(bytes.fromhex("11182222" "9de3bf98"), 11) != b
    c = x86_hash(bytes.fromhex("aa000000" "bb000000" "cc000000"), 12)
    assert x86_hash(bytes.fromhex("aaffffff" "bb123456" "cc654321"), 12) == c
    assert x86_hash(bytes.fromhex("ab000000" "bb000000" "cc000000"), 12) != c


def test_bound_is_refused_and_the_mask_chooses_the_contexts():
    for bad in (-1, 1 << 25):  # bits 13-17: test_cm_x86h.py; 18-24: test_cm_m68k.py
        with pytest.raises(ValueError):
            CMConfig(code=bad)
    assert CMConfig(code=(1 << 6) | (1 << 12)).spec.contexts[-2:] == ((CODE, 6), (CODE, 12))
    assert kernel(code=8191).context_count() == kernel().context_count() + 13


@pytest.mark.parametrize("code", [0x3C0, 0x1C00, 0x1FC0])
def test_round_trips_and_determinism(code):
    rng = random.Random(code)
    x86 = b"".join(bytes.fromhex(h) for h in INSTRUCTIONS) * 3
    for data in (b"", b"\x00", bytes(rng.randrange(256) for _ in range(2000)),
                 b"The quick brown fox jumps over the lazy dog. " * 20, x86):
        round_trip(data, code=code)
    config = dataclasses.replace(CMConfig.for_preset_id(34), code=code & 0x3C0 or 0x1C00)
    outs = []
    for _ in range(2):
        out = io.BytesIO()
        seqzip.api.compress_file(io.BytesIO(x86), out, model="cm", config=config)
        outs.append(out.getvalue())
    assert outs[0] == outs[1]


def profile_of(data: bytes):
    from seqzip.session import _scan_profile
    return _scan_profile(io.BytesIO(data))[1]


def test_detector_reads_the_elf_machine_then_the_instruction_pairs():
    from seqzip.models.cm import code_kind, data_kinds
    elf = lambda data, machine, order: b"\x7fELF\x01" + bytes([order]) + bytes(12) + \
        machine.to_bytes(2, "little" if order == 1 else "big") + bytes(44) + data
    noise = bytes(random.Random(3).randrange(256) for _ in range(4000))
    x86 = bytes.fromhex("4889e5488b45f8c390") * 64
    assert [code_kind(profile_of(elf(noise, m, 1))) for m in (3, 62, 2, 40)] == \
        ["x86", "x86", "", ""]  # SPARC little-endian is no big-endian RISC
    assert [code_kind(profile_of(elf(noise, m, 2))) for m in (2, 8, 18, 20, 21, 43, 4)] == \
        ["risc"] * 6 + [""]
    assert code_kind(profile_of(elf(x86, 40, 1))) == ""  # the header decides (ARM)
    assert code_kind(profile_of(noise)) == "" and code_kind(profile_of(x86)) == "x86"
    assert data_kinds(profile_of(x86)) == ("x86", "binary")
    assert data_kinds(profile_of(noise)) == ("binary",)


def test_detector_on_canterbury():
    from seqzip.models.cm import data_kinds
    from tests.helpers import canterbury_file
    kinds = {name: data_kinds(profile_of(canterbury_file(name)))[0]
             for name in ("sum", "kennedy.xls", "ptt5")}
    assert kinds == {"sum": "risc", "kennedy.xls": "binary", "ptt5": "bitmap"}


def test_state_restores_mid_stream_and_any_decoder_state_is_safe():
    import numpy as np
    from tests.kernels.test_cm import feed, resumes
    data = b"".join(bytes.fromhex(h) for h in INSTRUCTIONS) * 4
    a, b = kernel(code=0x3C0, sets="x86,match"), kernel(code=0x3C0, sets="x86,match")
    feed(a, data[:101])
    state = a.get_state()
    assert "x86" in state and "x86" not in kernel().get_state()
    assert resumes(a, b, state, data[101:])
    # a model file's decoder words can be anything: every word is masked where it is read
    bad = dict(state)
    bad["x86"] = np.frombuffer(b"\xff" * len(state["x86"].tobytes()), dtype=np.uint8)
    b.set_state(bad)
    feed(b, data)
    assert 0 < b.predict_bit() < 65536
