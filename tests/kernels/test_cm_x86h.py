"""x86 instruction history, relocation sites and predicted bytes (CMConfig.code bits 13-17:
kinds.x86h_hash and x86_reloc, x86.pxd's x86_track and x86_sites, xpred.pxd): the bound and
the spec, each context's dependence on what its docstring says, round trips, determinism,
get/set state, and the inputs paying on a synthetic object file's relocations."""
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
PRED = 1 << 17  # the predicted bytes' inputs (not a context)


def h(data: bytes, j: int) -> int:
    return cm.py_context_hashes(data, [(CODE, j)], False)[0]


def synthetic_object(n_sites: int = 300, seed: int = 5) -> bytes:
    """An ELF header, .text of short instructions among relocation sites (zero call
    offsets and RIP-relative displacements) and the Elf64_Rela entries naming the sites in
    order (a few symbols, PLT32 for calls, GOTPCRELX for loads)."""
    rng = random.Random(seed)
    text, rela = bytearray(), []
    fillers = [bytes.fromhex(x) for x in ("4889c7", "31c0", "4883c408", "85c0", "5d", "53")]
    for _ in range(n_sites):
        for _ in range(rng.randrange(1, 4)):
            text += rng.choice(fillers)
        if rng.random() < 0.5:
            text += b"\xe8"
            rela.append((len(text), 4, rng.randrange(20, 26), -4))
            text += bytes(4)
        else:
            text += b"\x48\x8b\x05"
            rela.append((len(text), 42, rng.randrange(30, 34), -4))
            text += bytes(4)
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 1, 62) + bytes(44)
    return head + bytes(text) + b"\x00" * (-len(text) % 8) + b"".join(
        struct.pack("<QQq", off, (sym << 32) | kind, add) for off, kind, sym, add in rela)


def test_bound_spec_and_inputs():
    with pytest.raises(ValueError):
        CMConfig(code=1 << 25)
    assert CMConfig(code=PRED).spec.contexts == CMConfig().spec.contexts
    assert CMConfig(code=PRED).spec.x86_pred and not CMConfig(code=1 << 16).spec.x86_pred
    assert CMConfig(code=(1 << 13) | (1 << 16)).spec.contexts[-2:] == ((CODE, 13), (CODE, 16))
    assert kernel(code=0x1E000).context_count() == kernel().context_count() + 4
    plain, pred = kernel(), kernel(code=PRED)
    for k in (plain, pred):
        feed(k, b"\x55\x48\x89\xe5")
        k.predict_bit()
    assert len(pred.mixer_inputs()) == len(plain.mixer_inputs()) + 5


def test_jump_contexts_read_the_last_targets():
    # after a jmp back to offset 2 (EB, rel8 -6 at 4..5), a jcc rel32's first offset byte:
    # bit 16 keys it by the byte the last target predicts; an earlier target elsewhere differs
    jump = b"\x90" * 4 + b"\xeb\xfa" + b"\x90\x0f\x84"
    other = b"\x90" * 4 + b"\xeb\xfb" + b"\x90\x0f\x84"
    assert h(jump, 16) != h(other, 16)
    assert h(jump, 13) == h(other, 13)  # 13: the third and fourth last targets (none here)
    # once a byte of the offset disagrees with a target, that target says nothing
    assert h(jump + b"\x55", 16) == h(other + b"\x55", 16)
    # outside a jump's offset, the decoder's state only
    assert h(b"\x90\xeb\xfa\x89", 16) == h(b"\x90\xeb\xfb\x89", 16)


def test_history_context_reads_the_previous_opcodes_and_modrms():
    a = h(b"\x48\x8b\x45\xf8\x48\x89\xe5\x89", 15)
    assert h(b"\x48\x8b\x4d\xf8\x48\x89\xe5\x89", 15) != a  # an older ModRM differs
    assert h(b"\x48\x8b\x45\xf0\x48\x89\xe5\x89", 15) == a  # not its displacement
    assert h(b"\x48\x8b\x45\xf8\x48\x8b\xe5\x89", 15) != a  # an opcode differs
    # a ModRM that ends its instruction is not kept (measured better)
    assert h(b"\x48\x89\xc7\x89", 15) == h(b"\x48\x89\xc6\x89", 15)
    assert h(b"\x48\x8b\x05\x01\x02\x03\x04\x89", 15) == h(b"\x48\x8b\x05\x09\x09\x09\x09\x89", 15)


def test_relocation_context_follows_the_sites():
    obj = synthetic_object(4)
    rela = len(obj) - 4 * 24
    offsets = [struct.unpack_from("<Q", obj, rela + 24 * i)[0] for i in range(4)]

    def with_first(offset: int) -> int:  # the context of the second entry's first byte
        data = bytearray(obj[:rela + 24])
        data[rela:rela + 8] = struct.pack("<Q", offset)
        return h(bytes(data), 14)

    a = with_first(offsets[0])  # predicts the second site's r_offset
    assert with_first(offsets[0]) == a
    assert with_first(offsets[1]) != a  # predicts the third site's
    assert with_first(offsets[0] + 1) != a  # names no site: the decoder's state only
    assert h(obj[:rela + 24], 14) != h(obj[:rela + 24], 15)


def test_zero_immediates_are_sites():
    # code without PIC: mov $sym, %esi (BE imm32) and movabs $sym, %rax (48 B8 imm64) are
    # relocated; an entry naming such a site predicts the next (the call's)
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 1, 62) + bytes(44)
    text = b"\xbe" + bytes(4) + b"\x48\xb8" + bytes(8) + b"\xe8" + bytes(4) + b"\xc3" * 5

    def context(first: int) -> int:  # at the second entry's first byte
        return h(head + text + struct.pack("<QQq", first, 10 | (5 << 32), 0), 14)

    assert context(1) != context(2) and context(7) != context(8)
    assert context(1) != context(7)  # the next sites differ: 7, 16


@pytest.mark.parametrize("code", [0x3C0 | (1 << 14), 0x3C0 | 0x1E000 | PRED, PRED])
def test_round_trips_and_determinism(code):
    rng = random.Random(code)
    obj = synthetic_object(60)
    for data in (b"", b"\x00", bytes(rng.randrange(256) for _ in range(2000)), obj,
                 obj[:len(obj) // 2] + obj):
        round_trip(data, code=code)
    config = dataclasses.replace(CMConfig.for_preset_id(112), code=code)
    outs = []
    for _ in range(2):
        out = io.BytesIO()
        seqzip.compress_file(io.BytesIO(obj), out, model="cm", config=config)
        outs.append(out.getvalue())
    assert outs[0] == outs[1] and seqzip.decompress(outs[0]) == obj


def test_memory_is_bounded():
    config = CMConfig(orders="2,3", table_bits=14, history_bits=16, code=0x3C0 | 0x3E000)
    k = cm.CMKernel(config.spec, bytes(range(256)))
    plain = cm.CMKernel(CMConfig(orders="2,3", table_bits=14, history_bits=16,
                                 code=0x3C0).spec, bytes(range(256)))
    assert k.memory_allocated() >= plain.memory_allocated() + (1 << 16)  # the sites
    assert k.memory_allocated() <= config.memory_bytes(256)


def test_state_round_trips():
    obj = synthetic_object(40)
    k = kernel(code=0x3C0 | 0x1E000 | PRED)
    feed(k, obj[:len(obj) - 100])
    state = k.get_state()
    assert "x86h" in state and "x86sites" in state and "xpred.sm" in state
    k2 = kernel(code=0x3C0 | 0x1E000 | PRED)
    k2.set_state(state)
    assert all((k2.get_state()[key] == value).all() for key, value in state.items()
               if hasattr(value, "all"))


def test_predicted_relocations_pay():
    obj = synthetic_object(400)
    rela = len(obj) - 400 * 24
    base = CMConfig.for_preset_id(112)
    costs = {}
    for code in (base.code, base.code | (1 << 14) | PRED):
        config = dataclasses.replace(base, code=code, table_bits=18)
        c = Predictor("cm", alphabet=bytes(range(256)), config=config).feed(obj)
        costs[code] = float(c[rela:].sum()) / 8
    before, after = costs.values()
    assert after < 0.5 * before, costs
