# cython: language_level=3
# A light x86 / x86-64 instruction decoder for the code contexts (kinds.code_hash, j = 6-9):
# after each byte, what the next byte is in the instruction (a prefix or opcode, the second
# byte of a 0F opcode, ModRM, SIB, a displacement or immediate byte), the opcode, the ModRM
# and the previous instructions' opcodes.  Its state is a few words of the context state
# (``Context.x86``), updated once per byte (``x86_update``); it assumes 64-bit mode (40-4F
# are REX prefixes) and follows the published opcode maps' lengths (prefixes 66 67 F2 F3,
# segment overrides, 0F, 0F 38, 0F 3A, VEX C4/C5, ModRM and SIB with their displacements,
# immediates of 1, 2, 4 or 8 bytes).  On data that is not code it goes wrong and resyncs;
# any state (a model file's) is a valid one: every word is masked where it is read.
from libc.stdint cimport uint8_t, uint64_t


cdef enum:  # the words of the state (Context.x86)
    XS_STAGE = 0   # what the next byte is: XG_*
    XS_OP = 1      # the opcode (map << 8 | byte), the prefixes (bits 12-15: 66, 67, F2/F3, REX.W)
    XS_MODRM = 2   # the ModRM byte (bit 8: seen), 0 before it
    XS_LEFT = 3    # bytes left of the displacement and immediate (XG_DATA), or of VEX
    XS_IMM = 4     # the immediate's size, still to come after ModRM (and SIB)
    XS_INDEX = 5   # bytes since the instruction's first (prefixes included), capped at 15
    XS_PREV = 6    # the previous instructions' opcodes, 12 bits each, the newest lowest
    XS_DATA = 7    # the operand bytes so far (displacement and immediate), newest lowest
    XS_LAST = 8    # the previous instruction's length (capped at 15)
    X86_N = 9


cdef enum:  # stages
    XG_OP = 0      # a prefix or the opcode
    XG_OP2 = 1     # the byte after 0F
    XG_OP3 = 2     # the byte after 0F 38 or 0F 3A
    XG_MODRM = 3
    XG_SIB = 4
    XG_DATA = 5    # displacement or immediate bytes (XS_LEFT of them left)
    XG_VEX = 6     # the VEX prefix's payload (XS_LEFT bytes), then an opcode of its map
    XG_N = 7


cdef enum:  # immediate sizes before the prefixes decide them
    XI_Z = 16      # 4 bytes, 2 with 66
    XI_V = 17      # 4 bytes, 2 with 66, 8 with REX.W (B8-BF)
    XI_M = 18      # a memory offset: 8 bytes, 4 with 67
    XI_F6 = 19     # F6/F7: an immediate (1, or z) only when ModRM's reg is 0 or 1


cdef inline int x86_one_modrm(int op) noexcept nogil:
    """Whether the one-byte opcode ``op`` takes a ModRM byte."""
    if op < 0x40:
        return (op & 7) < 4 and op != 0x0F
    return op == 0x62 or op == 0x63 or op == 0x69 or op == 0x6B or 0x80 <= op <= 0x8F or \
        op == 0xC0 or op == 0xC1 or op == 0xC6 or op == 0xC7 or 0xD0 <= op <= 0xD3 or \
        0xD8 <= op <= 0xDF or op == 0xF6 or op == 0xF7 or op == 0xFE or op == 0xFF


cdef inline int x86_one_imm(int op) noexcept nogil:
    """The immediate (or relative offset) size of the one-byte opcode ``op`` (XI_* where the
    prefixes decide it)."""
    if op < 0x40:
        return 1 if (op & 7) == 4 else XI_Z if (op & 7) == 5 else 0
    if op == 0x68 or op == 0x69 or op == 0x81 or op == 0xA9 or op == 0xC7 or op == 0xE8 or \
            op == 0xE9:
        return XI_Z
    if op == 0x6A or op == 0x6B or 0x70 <= op <= 0x7F or op == 0x80 or op == 0x82 or \
            op == 0x83 or op == 0xA8 or 0xB0 <= op <= 0xB7 or op == 0xC0 or op == 0xC1 or \
            op == 0xC6 or op == 0xCD or op == 0xD4 or op == 0xD5 or 0xE0 <= op <= 0xE7 or \
            op == 0xEB:
        return 1
    if 0xB8 <= op <= 0xBF:
        return XI_V
    if 0xA0 <= op <= 0xA3:
        return XI_M
    if op == 0xC2 or op == 0xCA:
        return 2
    if op == 0xC8:
        return 3
    if op == 0xF6 or op == 0xF7:
        return XI_F6
    return 0


cdef inline int x86_two_modrm(int op) noexcept nogil:
    """Whether the 0F opcode ``op`` takes a ModRM byte."""
    return not (0x05 <= op <= 0x09 or op == 0x0B or op == 0x0E or 0x30 <= op <= 0x37 or
                op == 0x77 or 0x80 <= op <= 0x8F or op == 0xA0 or op == 0xA1 or op == 0xA2 or
                op == 0xA8 or op == 0xA9 or op == 0xAA or 0xC8 <= op <= 0xCF)


cdef inline int x86_two_imm(int op) noexcept nogil:
    if 0x80 <= op <= 0x8F:
        return XI_Z
    if 0x70 <= op <= 0x73 or op == 0xA4 or op == 0xAC or op == 0xBA or 0xC2 <= op <= 0xC6:
        return 1
    return 0


cdef inline uint64_t x86_size(uint64_t imm, uint64_t op, uint64_t modrm) noexcept nogil:
    """The immediate's size in bytes (``op``'s prefix bits decide XI_*)."""
    if imm < XI_Z:
        return imm
    if imm == XI_F6:
        if (modrm >> 3) & 6:
            return 0
        return 1 if (op & 0xFF) == 0xF6 else (2 if op & 0x1000 else 4)
    if imm == XI_V and op & 0x8000:
        return 8
    if imm == XI_M:
        return 4 if op & 0x2000 else 8
    return 2 if op & 0x1000 else 4


cdef inline void x86_end(uint64_t* s) noexcept nogil:
    """The instruction ends: the next byte is an opcode or prefix."""
    s[XS_PREV] = ((s[XS_PREV] << 12) | (s[XS_OP] & 0xFFF)) & 0xFFFFFFFFFFFFULL
    s[XS_LAST] = s[XS_INDEX]
    s[XS_STAGE] = XG_OP
    s[XS_OP] = s[XS_MODRM] = s[XS_LEFT] = s[XS_IMM] = s[XS_DATA] = 0
    s[XS_INDEX] = 0


cdef inline void x86_operands(uint64_t* s, uint64_t disp) noexcept nogil:
    """After the opcode, ModRM or SIB: ``disp`` displacement bytes, then the immediate."""
    s[XS_LEFT] = disp + x86_size(s[XS_IMM] & 31, s[XS_OP], s[XS_MODRM])
    if s[XS_LEFT]:
        s[XS_STAGE] = XG_DATA
    else:
        x86_end(s)


cdef inline void x86_opcode(uint64_t* s, uint64_t op, int modrm, int imm) noexcept nogil:
    """The opcode ``op`` (map << 8 | byte) with its ModRM and immediate."""
    s[XS_OP] = (s[XS_OP] & 0xF000) | op
    s[XS_IMM] = <uint64_t>imm
    if modrm:
        s[XS_STAGE] = XG_MODRM
    else:
        x86_operands(s, 0)


cdef inline void x86_update(uint64_t* s, int b) noexcept nogil:
    """After the byte ``b``."""
    cdef uint64_t stage = s[XS_STAGE] % XG_N, mod, rm
    if s[XS_INDEX] < 15:
        s[XS_INDEX] += 1
    if stage == XG_OP:
        if (b & 0xE7) == 0x26 or 0x64 <= b <= 0x67 or b == 0xF0 or b == 0xF2 or b == 0xF3 or \
                0x40 <= b <= 0x4F:  # a prefix
            if b == 0x66:
                s[XS_OP] |= 0x1000
            elif b == 0x67:
                s[XS_OP] |= 0x2000
            elif b == 0xF2 or b == 0xF3:
                s[XS_OP] |= 0x4000
            elif b >= 0x48 and b <= 0x4F:
                s[XS_OP] |= 0x8000
            if s[XS_INDEX] >= 15:  # too many: not code, start again
                x86_end(s)
        elif b == 0x0F:
            s[XS_STAGE] = XG_OP2
        elif b == 0xC4 or b == 0xC5:
            s[XS_STAGE] = XG_VEX
            s[XS_LEFT] = 2 if b == 0xC4 else 1
            s[XS_OP] = (s[XS_OP] & 0xF000) | (<uint64_t>b << 4)  # map 0F unless C4 says
        else:
            x86_opcode(s, <uint64_t>b, x86_one_modrm(b), x86_one_imm(b))
    elif stage == XG_OP2:
        if b == 0x38 or b == 0x3A:
            s[XS_STAGE] = XG_OP3
            s[XS_OP] = (s[XS_OP] & 0xF000) | (0x200 if b == 0x38 else 0x300)
        else:
            x86_opcode(s, 0x100 | <uint64_t>b, x86_two_modrm(b), x86_two_imm(b))
    elif stage == XG_OP3:
        mod = s[XS_OP] & 0x300
        x86_opcode(s, mod | <uint64_t>b, 1, 1 if mod == 0x300 else 0)
    elif stage == XG_VEX:
        if (s[XS_OP] & 0xFF0) == 0xC40 and s[XS_LEFT] == 2:  # C4's first payload: the map
            s[XS_OP] = (s[XS_OP] & 0xF000) | (0xC40 + (<uint64_t>b & 3))
        if s[XS_LEFT] == 2:  # (any other count, a model file's, ends the payload)
            s[XS_LEFT] = 1
        else:
            s[XS_LEFT] = 0
            mod = s[XS_OP] & 0xFFF
            s[XS_STAGE] = XG_OP3
            s[XS_OP] = (s[XS_OP] & 0xF000) | (0x300 if mod == 0xC43 else
                                              0x200 if mod == 0xC42 else 0x100)
            if mod != 0xC43 and mod != 0xC42:  # the 0F map: its own immediates
                s[XS_STAGE] = XG_OP2
    elif stage == XG_MODRM:
        s[XS_MODRM] = 0x100 | <uint64_t>b
        mod = <uint64_t>b >> 6
        rm = <uint64_t>b & 7
        if mod == 3:
            x86_operands(s, 0)
        elif rm == 4:
            s[XS_STAGE] = XG_SIB
        else:
            x86_operands(s, 4 if mod == 2 or (mod == 0 and rm == 5) else mod)
    elif stage == XG_SIB:
        mod = (s[XS_MODRM] >> 6) & 3
        x86_operands(s, 4 if mod == 2 or (mod == 0 and (b & 7) == 5) else mod)
    else:  # XG_DATA
        s[XS_DATA] = ((s[XS_DATA] << 8) | <uint64_t>b) & 0xFFFFFFFFULL
        if s[XS_LEFT] > 1 and s[XS_LEFT] <= 12:
            s[XS_LEFT] -= 1
        else:
            x86_end(s)


cdef enum:  # the instruction history (Context.x86h, code bits 13-16: kinds.x86h_hash)
    XH_CUR = 0     # a hash of the instruction's bytes so far (prefixes included)
    XH_PREV1 = 1   # ... of the previous instruction's bytes, whole
    XH_OPM = 2     # the previous three instructions' opcode (12 bits) and ModRM (9 bits; 0
                   # when the ModRM is the last byte: measured better than the ModRM there,
                   # 0.1% on four objects), 21 bits each, the newest lowest
    XH_T0 = 3      # the last four distinct targets of relative jumps (E9, EB, 70-7F, 0F 80-8F:
    XH_T3 = 6      # the position after the jump plus its offset), the newest first (3-6)
    XH_DISP = 7    # where this instruction's RIP-relative displacement starts (0: none)
    XH_BASE = 8    # the position of .text in the last ELF header seen (its start + 64)
    XH_RSTART = 9  # where the last relocation entry predicted began (0: none)
    XH_RPRED = 10  # ... its r_offset predicted (all ones: none) ...
    XH_RKIND = 11  # ... and the kind of the site that predicts it (XK_*)
    XH_SCORE = 12  # per immediate kind (4 bits each at 4 x kind): the times its site was
                   # passed over, less those it came true, 0-15 (from SKIP_SCORE on, its
                   # sites are skipped; the other kinds' never are: out-of-order entries pass
                   # them over too)
    XH_N = 13


cdef enum:  # the kinds of the sites of relocations (zero offsets and displacements)
    XK_CALL = 1    # E8 rel32
    XK_JMP = 2     # E9 rel32
    XK_JCC = 3     # 0F 80-8F rel32
    XK_RIP = 4     # a RIP-relative displacement: 4 + (8B: 1, 8D: 2, 89: 3, other maps: 4)
    XK_IMM = 9     # a zero imm32 (code without PIC): 9 + (B8-BF: 0, C7: 1, 68: 2)
    XK_IMM64 = 12  # a zero imm64 (REX.W B8-BF)
    SITE_SCAN = 4096  # how far past an r_offset the next site is looked for
    SKIP_SCORE = 3


cdef inline bint x86_rel_jump(uint64_t op) noexcept nogil:
    """Whether the opcode ``op`` (map << 8 | byte) is a relative jump (not a call: in an
    object file a call's offset is its relocation's)."""
    return op == 0xE9 or op == 0xEB or 0x70 <= op <= 0x7F or 0x180 <= op <= 0x18F


cdef inline void x86_target_seen(uint64_t* h, uint64_t t) noexcept nogil:
    """Jump target ``t`` moves to the front of XH_T0-T3."""
    cdef int i = XH_T0
    while i < XH_T3 and h[i] != t:
        i += 1
    while i > XH_T0:
        h[i] = h[i - 1]
        i -= 1
    h[XH_T0] = t


cdef inline void x86_track(uint64_t* h, const uint64_t* s, uint64_t op, uint64_t modrm,
                           uint64_t data, uint64_t pos, int b) noexcept nogil:
    """After ``x86_update(s, b)``: ``op``, ``modrm`` and ``data`` the decoder's words before
    it (XS_OP, XS_MODRM, XS_DATA: so no ModRM when ``b`` is it), ``pos`` the position after
    ``b``."""
    cdef uint64_t v, t
    h[XH_CUR] = (h[XH_CUR] + <uint64_t>b + 1) * 0x9E3779B97F4A7C15ULL
    h[XH_CUR] ^= h[XH_CUR] >> 29
    if s[XS_STAGE] % XG_N != XG_OP or s[XS_INDEX] != 0:
        return
    h[XH_PREV1] = h[XH_CUR]  # b ended an instruction
    h[XH_CUR] = 0
    h[XH_OPM] = ((h[XH_OPM] << 21) | (op & 0xFFF) | ((modrm & 0x1FF) << 12)) & \
        0x7FFFFFFFFFFFFFFFULL
    if not x86_rel_jump(op & 0xFFF):
        return
    v = ((data << 8) | <uint64_t>b) & 0xFFFFFFFFULL  # the offset's bytes, the last lowest
    if (op & 0xFFF) == 0xEB or (op & 0xFFF) < 0x80:  # rel8
        t = pos + <uint64_t>(<signed char>(v & 0xFF))
    else:
        t = pos + <uint64_t>(<int>(((v >> 24) & 0xFF) | ((v >> 8) & 0xFF00) |
                                   ((v << 8) & 0xFF0000) | ((v & 0xFF) << 24)))
    x86_target_seen(h, t)


cdef inline void x86_score(uint64_t* h, uint64_t kind, bint passed) noexcept nogil:
    """A predicted site of ``kind`` was passed over (``passed``) or came true."""
    cdef int shift = 4 * <int>(kind & 15)
    cdef uint64_t n = (h[XH_SCORE] >> shift) & 15
    n = min(n + 1, <uint64_t>15) if passed else (n - 1 if n else 0)
    h[XH_SCORE] = (h[XH_SCORE] & ~(<uint64_t>15 << shift)) | (n << shift)


cdef inline void x86_sites(uint64_t* h, const uint64_t* s, uint64_t stage, uint64_t op,
                           uint64_t pos, int b, uint64_t c8, uint8_t* sites,
                           const uint8_t* history, uint64_t mask) noexcept nogil:
    """After ``x86_track`` (``stage`` and ``op`` the decoder's before ``b``, ``c8`` the last
    8 bytes with ``b``): the sites of relocations (``sites``, a kind per history byte: an
    E8/E9/0F 8x rel32, a RIP-relative displacement or an immediate that is zero) and the
    relocation entries (Elf64_Rela, 24 bytes: r_offset, r_info, r_addend) whose r_offset,
    relative to .text (64 bytes past the last ELF header), names a site: the next entry's
    r_offset is then predicted as the next site's (of a kind not passed over more often than
    it came true: zero immediates are sites in code without PIC, rarely in code with it)."""
    cdef uint64_t q = 0, v = 0, base, opx = op & 0xFFF
    cdef uint8_t kind = 0
    cdef int i
    sites[(pos - 1) & mask] = 0
    if stage == XG_MODRM and (b & 0xC7) == 5:
        h[XH_DISP] = pos
    if s[XS_STAGE] % XG_N == XG_OP and s[XS_INDEX] == 0:  # b ended an instruction
        if (opx == 0xE8 or opx == 0xE9 or 0x180 <= opx <= 0x18F) and not op & 0x1000:
            q, kind = pos - 4, (XK_CALL if opx == 0xE8 else XK_JMP if opx == 0xE9 else XK_JCC)
        elif h[XH_DISP] and 4 <= pos - h[XH_DISP] <= 8:
            q = h[XH_DISP]
            kind = XK_RIP + (1 if opx == 0x8B else 2 if opx == 0x8D else 3 if opx == 0x89 else
                             4 if opx > 0xFF else 0)
        elif (0xB8 <= opx <= 0xBF or opx == 0xC7 or opx == 0x68) and not op & 0x1000:
            q, kind = pos - 4, XK_IMM + (1 if opx == 0xC7 else 2 if opx == 0x68 else 0)
            if opx <= 0xBF and op & 0x8000:
                q, kind = pos - 8, XK_IMM64
        if kind and (c8 >> (8 * (pos - q - 4))) & 0xFFFFFFFFULL == 0 and \
                (kind != XK_IMM64 or c8 == 0):
            sites[q & mask] = kind
        h[XH_DISP] = 0
    if c8 & 0xFFFFFFFFULL == 0x7F454C46:  # "\x7fELF"
        h[XH_BASE] = pos + 60
    base = h[XH_BASE]
    if base == 0 or pos < base + 24 or (h[XH_RSTART] and pos - h[XH_RSTART] < 24):
        return
    for i in range(8):
        v |= <uint64_t>history[(pos - 24 + <uint64_t>i) & mask] << (8 * i)
    if v >= pos - 24 - base or v >> 32 or sites[(base + v) & mask] == 0:
        return
    if h[XH_RSTART] == pos - 24 and h[XH_RPRED] != <uint64_t>-1 and v != h[XH_RPRED]:
        x86_score(h, h[XH_RKIND], v > h[XH_RPRED])  # its predicted site passed over
    elif h[XH_RSTART] == pos - 24 and v == h[XH_RPRED]:
        x86_score(h, h[XH_RKIND], False)
    h[XH_RSTART], h[XH_RPRED], h[XH_RKIND] = pos, <uint64_t>-1, 0
    for q in range(base + v + 1, min(base + v + SITE_SCAN, pos - 24)):
        kind = sites[q & mask]
        if kind and (kind < XK_IMM or
                     (h[XH_SCORE] >> (4 * (kind & 15))) & 15 < SKIP_SCORE):
            h[XH_RPRED], h[XH_RKIND] = q - base, kind
            break
