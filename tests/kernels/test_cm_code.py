"""Machine-code contexts (CMConfig.code, kind "code") and the code weight-set selectors
("code", "code32"): each context's exact dependence on crafted bytes, the selectors' rows,
hashes and a stream pinned, round trips, the bound refused, memory bounded."""
import dataclasses
import io

import numpy as np
import pytest

import seqzip
from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS, SELECTORS
from seqzip.header import parse_header
from seqzip.models.cm import CMConfig, CMModel
from tests.kernels.test_cm import kernel
from tests.kernels.test_cm_binary import frames_digest
from tests.kernels.test_cm_options import round_trip

CODE = KINDS["code"]


def code_hash(data: bytes, j: int) -> int:
    return cm.py_context_hashes(data, [(CODE, j)], False)[0]


def test_bound_is_refused_and_the_mask_chooses_the_contexts():
    for bad in (-1, 1 << 25):  # 6-12: test_cm_x86.py; 13-17: test_cm_x86h.py; 18-24: m68k
        with pytest.raises(ValueError):
            CMConfig(code=bad)
    assert kernel(code=63).context_count() == kernel().context_count() + 6
    assert CMConfig(code=5).spec.contexts[-2:] == ((CODE, 0), (CODE, 2))
    with pytest.raises(ValueError):
        CMConfig(sets="node,code64")


def test_instruction_class_context_reads_the_top_nibbles_of_four_words():
    # j = 0: lane 0 after the words 41xx 52xx 63xx 74xx; only their top nibbles count
    a = code_hash(b"\x41\x11\x52\x22\x63\x33\x74\x44", 0)
    assert code_hash(b"\x4f\xff\x5e\xee\x6d\xdd\x7c\xcc", 0) == a
    assert code_hash(b"\x99\x99\x41\x11\x52\x22\x63\x33\x74\x44", 0) == a  # a fifth word back
    assert code_hash(b"\x41\x11\x52\x22\x63\x33\x84\x44", 0) != a
    assert code_hash(b"\x41\x11\x52\x22\x63\x33\x74\x44\x74", 0) != a  # lane 1, a byte so far
    # lane 1: the byte so far counts whole, the words are those before it
    b = code_hash(b"\x41\x11\x52\x22\x63\x33\x74\x44\x4e", 0)
    assert code_hash(b"\x41\x00\x52\x00\x63\x00\x74\x00\x4e", 0) == b
    assert code_hash(b"\x41\x11\x52\x22\x63\x33\x74\x44\x4f", 0) != b


def test_word_contexts_read_what_their_docstring_says():
    # j = 1: the previous word and the first byte of the one before (lane 1: byte 07 so far)
    a = code_hash(b"\x41\x99\x52\x33\x07", 1)
    assert code_hash(b"\x41\x00\x52\x33\x07", 1) == a
    assert code_hash(b"\x41\x99\x52\x34\x07", 1) != a
    assert code_hash(b"\x42\x99\x52\x33\x07", 1) != a
    # j = 2: the first bytes of the previous three words
    b = code_hash(b"\x01\x02\x41\xaa\x52\xbb\x63\xcc", 2)
    assert code_hash(b"\x09\x09\x41\x00\x52\x01\x63\x02", 2) == b
    assert code_hash(b"\x01\x02\x41\xaa\x52\xbb\x64\xcc", 2) != b
    # j = 3: the previous word without its effective address, the class of the one before
    c = code_hash(b"\x20\x00\x4e\xb9", 3)
    assert code_hash(b"\x2f\xff\x4e\xbf", 3) == c
    assert code_hash(b"\x20\x00\x4e\x79", 3) != c
    assert code_hash(b"\x30\x00\x4e\xb9", 3) != c


def test_words_since_return_context_counts_back_to_4e75_or_4e56():
    a = code_hash(b"\x4e\x75" + b"\x11\x11" * 3 + b"\x22\x22", 4)
    assert code_hash(b"\x33\x33\x4e\x56" + b"\x44\x44" * 3 + b"\x22\x22", 4) == a
    assert code_hash(b"\x4e\x75" + b"\x11\x11" * 2 + b"\x22\x22", 4) != a
    none = code_hash(b"\x11\x11" * 9 + b"\x22\x22", 4)  # none within 8 words: 8
    assert code_hash(b"\x4e\x75" + b"\x11\x11" * 8 + b"\x22\x22", 4) == none
    assert code_hash(b"\x4e\x75" + b"\x11\x11" * 7 + b"\x22\x22", 4) == none
    assert code_hash(b"\x4e\x75" + b"\x11\x11" * 6 + b"\x22\x22", 4) != none  # 7 back
    assert code_hash(b"\x11\x11" * 3 + b"\x22\x22", 4) == none  # the start: none


def test_x86_rel32_context_finds_the_operand_of_call_jmp_and_jcc():
    a = code_hash(b"\x90\xe8\x01\x02", 5)  # two bytes into a CALL's operand
    assert code_hash(b"\x55\x48\x90\xe8\x01\x02", 5) == a
    assert code_hash(b"\x90\xe9\x01\x02", 5) != a  # JMP
    assert code_hash(b"\x90\xe8\x01\x03", 5) != a
    jcc = code_hash(b"\x0f\x85\x01", 5)
    assert code_hash(b"\x31\x0f\x85\x01", 5) == jcc
    assert code_hash(b"\x31\x85\x01", 5) == code_hash(b"\x01", 5) != jcc  # not 0F 85: order 1
    assert code_hash(b"\xe8\x01\x02\x03\x04", 5) == code_hash(b"\x04", 5)  # operand done


@pytest.mark.parametrize("data, node, row", [
    (b"\x4e\x75\x20", 1, (18 * 2) << 8 | 1),   # lane 1, first byte 2x, previous word 4E75
    (b"\x4e\x75", 1, (4 * 2) << 8 | 1),         # lane 0, the previous word's first byte 4x
    (b"\x00\x00", 5, 1 << 8 | 5),               # lane 0, the previous word 0
    (b"\x12\x00\x9a\x00", 1, (9 * 2) << 8 | 1),
])
def test_code_selector_rows(data, node, row):
    assert cm.py_selector_row(data, SELECTORS["code"], node) == row


@pytest.mark.parametrize("data, row", [
    (b"\x12\x34\x56\x78\x9a", (25 * 2) << 8 | 1),  # lane 1, first byte 9x
    (b"\x12\x34\x56\x78", 2 << 8 | 1),             # lane 0, the previous word's first 1x
    (b"\x00" * 4, 1 << 8 | 1),                     # the previous 32 bits 0
    (b"\xa0\x00\x00\x00\x00\x00\x00", (48 * 2 + 1) << 8 | 1),  # lane 3, first byte 0
])
def test_code32_selector_rows(data, row):
    assert cm.py_selector_row(data, SELECTORS["code32"]) == row


PINNED = [12233425289331279720, 8042050333242757022, 17523499668368098092,
          13076100970773210916, 16224290836888765301, 4989548168206463728]


def test_code_hashes_are_pinned():
    """The hashes are part of the streams: a change here changes every stream using them."""
    data = b"\x4e\x56\xff\xf8\x48\xe7\x3f\x3e\x4e\xb9\x00\x00\x00\x00\x4e\x75\xe8\x11"
    assert cm.py_context_hashes(data, [(CODE, j) for j in range(6)], False) == PINNED


def m68k_like(n: int = 3000, seed: int = 5) -> bytes:
    """Words of a toy 16-bit instruction set: an opcode word whose top nibble says how many
    extension words follow (0-2), the classes in a loop of 7 (a program), the register bits
    and the extension words random."""
    rng = np.random.default_rng(seed)
    program = [0, 1, 0, 2, 1, 1, 0]
    out = bytearray()
    while len(out) < n:
        op = program[(len(out) // 2) % len(program)]
        out += bytes([0x40 + 0x10 * op + int(rng.integers(0, 4)), int(rng.integers(0, 8)) * 8])
        out += rng.integers(0, 256, 2 * op, dtype=np.uint8).tobytes()
    return bytes(out)


def test_code_contexts_and_selector_pay_on_16_bit_code_and_round_trip():
    data = m68k_like()
    plain = round_trip(data, sets="c12n,match")
    assert round_trip(data, sets="code,match") < plain
    assert round_trip(data, sets="c12n,match", code=5) < plain
    round_trip(data, sets="code32,code,match", code=63)
    round_trip(bytes(range(256)) * 3 + b"\xe8\x0f", code=63, sets="code32")


# a stream of the recommended binary changes on a small config: the size and SHA-256 of its
# frames
GOLDEN = (4074, "d046c842ec24da8302790d57b680acca764745a1aea6843126fd0ff41c573c0f")


def test_golden_stream_and_memory_bound(checked_streams):
    config = CMConfig(orders="2,3,4", table_bits=16, history_bits=16, code=63,
                      sets="code,match,code32")
    data = m68k_like(6000, seed=7)
    assert frames_digest(data, config) == GOLDEN
    # the change proposed for level 6's binary variant: the same weight-set memory as c12n's
    level6 = CMConfig.for_preset_id(20)
    binary = CMConfig(**dict(dataclasses.asdict(level6), code=5, aligned16=0,
                             sets="code,match,ordern,c1,word,c2"))
    model = CMModel(binary, alphabet=bytes(range(256)), seed=0)
    assert model.kernel.memory_allocated() <= binary.memory_bytes(256)
    # one more context's maps and one more input in each set (the code set's rows are c12n's)
    assert binary.memory_bytes(256) - level6.memory_bytes(256) == 256 * 6 + 3 * 8 * (
        (64 << 8) + 48 * 8 + (8 << 8) + 256 + 16 * 4 * 8 + 256 * 8)


def _m68k_function(k: int) -> bytes:
    """A 68000 function as a C compiler writes one: LINK A6, MOVEM.L to the stack, a few
    moves and a JSR through the jump table, MOVEM.L back, UNLK A6, RTS."""
    body = bytes.fromhex("4E56FFF8" "48E70300" "202E0008" "222E000C" "4EAD") + \
        (k * 4 & 0x7FFF).to_bytes(2, "big") + bytes.fromhex("2D40FFFC" "4CDF00C0" "4E5E4E75")
    return body


def test_68000_code_takes_the_level_variant_with_the_code_contexts():
    """68000 code (its signature words at even offsets, one per KiB and more) turns levels 6
    and 9 into their 68000 variants (40, 41 since round four: code contexts 0 and 2, the code
    weight set; 65, 70 since round six), other binary data into the binary variants (34, 35;
    62, 67 since round six; level 6's 103 and 100 since round nine, 114 and 111 since round
    eleven; level 9's 117 without the network since round eleven; 126 and 123, 130 and 127,
    the same with tables sized to the input, since round twelve; 136 and 137, the 68000
    decoder's contexts and inputs with the m68k weight set, since round thirteen; the binary
    variants 138 and 139, with the final probability's floor at 2^-16, since round fourteen;
    level 9's 135, 32 units on the text schedule, since round sixteen; level 6's 44, 138 with
    quiet steps, since round seventeen);
    the stream names the variant."""
    from seqzip.models.cm import looks_like_68000
    from seqzip.session import _scan_profile
    code = b"".join(_m68k_function(k) for k in range(300))
    other = bytes(range(256)) * 40 + b"\x00" * 100
    profile = _scan_profile(io.BytesIO(code))[1]
    assert looks_like_68000(profile.words)
    assert not looks_like_68000(_scan_profile(io.BytesIO(other))[1].words)
    # at an odd offset the words are not instructions
    assert not looks_like_68000(_scan_profile(io.BytesIO(b"\x01" + code))[1].words)
    for level, m68k, binary in ((6, 136, 44), (9, 137, 135)):
        base = CMConfig.for_level(level)
        assert CMConfig.DATA_VARIANTS[CMConfig.PRESET_IDS[level]]["m68k"] == m68k
        variant = base.for_data(b"\x00", profile)
        assert variant == CMConfig.for_preset_id(m68k) and variant.code == 0x1FC0005
        assert "m68k" in variant.sets.split(",") and variant.aligned16 == 0
        assert base.for_data(b"\x00", _scan_profile(io.BytesIO(other))[1]) == \
            CMConfig.for_preset_id(binary)
    packed = seqzip.compress(code, 6)
    assert parse_header(packed)[0].config == bytes([136])  # format 26 (band 9): id 136
    assert seqzip.decompress(packed) == code
