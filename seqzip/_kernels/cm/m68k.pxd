# cython: language_level=3
# A light 68000 decoder for the 68000 code contexts (code bits 18-22, ``m68k_hash``) and the
# predicted words (code bit 23, mpred.pxd): after each 16-bit big-endian word, what the next
# word is (an opcode, an immediate, an effective address's extension word, a branch
# displacement, a MOVEM mask...), the instruction's opcode, the previous instructions'
# opcodes, the recent branch and call targets and, per (opcode, word of the instruction), the
# word seen there last.  The extension words follow the opcode's effective addresses (modes
# 5-7: d16(An), d8(An,Xn), abs.W, abs.L, d16(PC), d8(PC,Xn), #imm by the operand size) and
# its own (immediates, bit numbers, MOVEM masks, LINK and Bcc/DBcc displacements); 68020
# full-format index words, Bcc.L, LINK.L, MULL/DIVL, bit fields and the FPU's general, branch
# and FMOVEM forms too.  Words are at even positions of the stream (an ELF object's .text,
# 52 bytes past its header, begins with an opcode); on data that is not code it goes wrong
# and resyncs within a few words.  Any state (a model file's) is a valid one: every word is
# masked where it is read.
from libc.stdint cimport uint64_t
from seqzip._kernels.cm.tables cimport hash2


cdef enum:  # the words of the state (Context.m68k)
    MS_KIND = 0    # what the next word is (MW_*)
    MS_OP = 1      # the instruction's opcode word
    MS_IDX = 2     # the next word's index in the instruction (0: the opcode), to 15
    MS_QUEUE = 3   # the kinds of the words still to come, 4 bits each, the next lowest
    MS_LEFT = 4    # ... how many (0: the next word is an opcode)
    MS_PREV = 5    # the previous instructions' opcode words, 16 bits each, the newest lowest
    MS_DATA = 6    # the instruction's words after the opcode so far, the newest lowest
    MS_BASE = 7    # where .text begins in the last ELF header seen (its start + 52)
    MS_HASH = 8    # a hash of the instruction's words so far
    MS_PHASH = 9   # ... of the previous instruction's, whole
    MS_T0 = 10     # the last four distinct branch targets (Bcc, BRA, DBcc, FBcc, JMP d16(PC))
    MS_C0 = 14     # the last four distinct call targets (BSR, JSR d16(PC))
    MS_MASK = 18   # the last MOVEM -(An) mask, its bits reversed (the registers' order)
    MS_AREG = 19   # the last d16 of d16(An) per An, 16 bits each (19: A0-A3, 20: A4-A7)
    MS_TRAP = 21   # the last two A-line traps (Toolbox and OS calls), the newest lowest
    MS_LAST = 22   # the word seen last after each (opcode, index): M68_SLOTS of 16 bits
    M68_SLOTS = 8192
    MS_TGT = MS_LAST + M68_SLOTS // 4  # the targets and absolute addresses seen, 32 bits each:
    M68_TGT = 4096                     # the last by their bits 8-31 (hashed), then by 16-31
    MS_LAST2 = MS_TGT + M68_TGT // 2 + M68_TGT // 8  # the word seen last after the same
    M68_N = MS_LAST2 + M68_SLOTS // 4                  # instruction so far (or whole, before)


cdef enum:  # the kinds of words
    MW_OP = 0
    MW_IMM = 1     # immediate data
    MW_D16 = 2     # d16(An)
    MW_IDX = 3     # an index word (d8(An,Xn), d8(PC,Xn); 68020: the full format's first)
    MW_ABSW = 4
    MW_ABSL = 5
    MW_PCD = 6     # d16(PC)
    MW_BR = 7      # a branch displacement (Bcc/BSR .W and .L, DBcc, FBcc)
    MW_EXT = 8     # a second opcode word (MOVEM's mask, LINK's size, MULL, bit fields...)
    MW_FULL = 9    # the full format's base and outer displacements
    MW_FEXT = 10   # the FPU's command word
    MW_NAME = 11   # a MacsBug name's (after RTS, JMP (A0) or RTD: 80 + its length, the name)
    MW_CLEN = 12   # ... its constants' length in bytes
    MW_DATA = 13   # ... the constants
    MW_N = 14


cdef inline void mq_push(uint64_t* q, int* n, int kind) noexcept nogil:
    if n[0] < 15:
        q[0] |= <uint64_t>kind << (4 * n[0])
        n[0] += 1


cdef inline void mq_ea(uint64_t* q, int* n, int mode, int reg, int size) noexcept nogil:
    """The extension words of the effective address (``size``: 0 byte, 1 word, 2 long, 3
    none for an immediate: the FPU's command word gives it)."""
    if mode == 5:
        mq_push(q, n, MW_D16)
    elif mode == 6 or (mode == 7 and reg == 3):
        mq_push(q, n, MW_IDX)
    elif mode == 7 and reg == 0:
        mq_push(q, n, MW_ABSW)
    elif mode == 7 and reg == 1:
        mq_push(q, n, MW_ABSL)
        mq_push(q, n, MW_ABSL)
    elif mode == 7 and reg == 2:
        mq_push(q, n, MW_PCD)
    elif mode == 7 and reg == 4 and size < 3:
        mq_push(q, n, MW_IMM)
        if size == 2:
            mq_push(q, n, MW_IMM)


cdef inline uint64_t m68k_words(int w, int* n) noexcept nogil:
    """The kinds of the words after the opcode word ``w`` (``n``: how many)."""
    cdef uint64_t q = 0
    cdef int line = w >> 12, mode = (w >> 3) & 7, reg = w & 7, sz = (w >> 6) & 3, size
    n[0] = 0
    if line == 0:
        if w & 0x100:  # BTST/BCHG/BCLR/BSET Dn, MOVEP
            if mode == 1:
                mq_push(&q, n, MW_D16)
            else:
                mq_ea(&q, n, mode, reg, 0)
        elif (w >> 9) & 7 == 4:  # static bit numbers
            mq_push(&q, n, MW_EXT)
            mq_ea(&q, n, mode, reg, 0)
        elif (w >> 9) & 7 == 7 or sz == 3:  # MOVES, CMP2/CHK2/CAS
            mq_push(&q, n, MW_EXT)
            mq_ea(&q, n, mode, reg, 1)
        elif w & 0xFF == 0x3C or w & 0xFF == 0x7C:  # to CCR, SR
            mq_push(&q, n, MW_IMM)
        else:  # ORI ANDI SUBI ADDI EORI CMPI
            mq_ea(&q, n, 7, 4, sz)
            mq_ea(&q, n, mode, reg, sz)
    elif line <= 3:  # MOVE: the source's words, then the destination's
        size = 0 if line == 1 else 2 if line == 2 else 1
        mq_ea(&q, n, mode, reg, size)
        mq_ea(&q, n, (w >> 6) & 7, (w >> 9) & 7, size)
    elif line == 4:
        if w == 0x4E72 or w == 0x4E74 or 0x4E50 <= w <= 0x4E57 or w == 0x4E7A or w == 0x4E7B:
            mq_push(&q, n, MW_EXT)  # STOP, RTD, LINK, MOVEC
        elif 0x4E40 <= w <= 0x4E7F:
            pass
        elif 0x4808 <= w <= 0x480F:  # LINK.L
            mq_push(&q, n, MW_EXT)
            mq_push(&q, n, MW_EXT)
        elif (w & 0xFB80) == 0x4880 and mode >= 2 or (w & 0xFF80) == 0x4C00:  # MOVEM, MULL
            mq_push(&q, n, MW_EXT)
            mq_ea(&q, n, mode, reg, 2 if w & 0xFF80 == 0x4C00 else 1)
        elif (w & 0xF1C0) == 0x41C0 or (w & 0xFFC0) == 0x4E80 or (w & 0xFFC0) == 0x4EC0 or \
                (w & 0xFFC0) == 0x4840:  # LEA, JSR, JMP, PEA
            mq_ea(&q, n, mode, reg, 2)
        elif (w & 0xF140) == 0x4100:  # CHK
            mq_ea(&q, n, mode, reg, 2 if sz == 0 else 1)
        else:
            mq_ea(&q, n, mode, reg, 1 if sz == 3 else sz)
    elif line == 5:
        if sz != 3:  # ADDQ, SUBQ
            mq_ea(&q, n, mode, reg, sz)
        elif mode == 1:  # DBcc
            mq_push(&q, n, MW_BR)
        elif mode == 7 and 2 <= reg <= 3:  # TRAPcc
            mq_ea(&q, n, 7, 4, reg - 1)
        elif mode != 7 or reg < 2:  # Scc
            mq_ea(&q, n, mode, reg, 0)
    elif line == 6:  # Bcc, BRA, BSR: .W after a 0 byte, .L after FF
        if w & 0xFF == 0 or w & 0xFF == 0xFF:
            mq_push(&q, n, MW_BR)
            if w & 0xFF:
                mq_push(&q, n, MW_BR)
    elif line == 8 or line == 0xC:  # OR AND, DIVU/S MULU/S (sz 3: a word)
        if (w & 0x1F0) != 0x100 and (w & 0x130) != 0x100 or sz == 3:
            mq_ea(&q, n, mode, reg, 1 if sz == 3 else sz)
    elif line == 9 or line == 0xB or line == 0xD:  # SUB CMP EOR ADD, ...A (sz 3)
        if sz == 3:
            mq_ea(&q, n, mode, reg, 2 if w & 0x100 else 1)
        elif (w & 0x130) != 0x100 or line == 0xB:  # not SUBX/ADDX (CMPM: no words)
            mq_ea(&q, n, mode, reg, sz)
    elif line == 0xE and sz == 3:  # memory shifts; bit fields
        if w & 0x800:
            mq_push(&q, n, MW_EXT)
        mq_ea(&q, n, mode, reg, 1)
    elif line == 0xF:
        if (w & 0xFFC0) == 0xF200:  # the FPU's general: the command word, the EA
            mq_push(&q, n, MW_FEXT)
            mq_ea(&q, n, mode, reg, 3)
        elif (w & 0xFF80) == 0xF280:  # FBcc .W, .L
            mq_push(&q, n, MW_BR)
            if w & 0x40:
                mq_push(&q, n, MW_BR)
        elif (w & 0xFFC0) == 0xF240:  # FScc, FDBcc
            mq_push(&q, n, MW_EXT)
            if mode == 1:
                mq_push(&q, n, MW_BR)
            else:
                mq_ea(&q, n, mode, reg, 0)
        elif (w & 0xFF80) == 0xF300:  # FSAVE, FRESTORE
            mq_ea(&q, n, mode, reg, 1)
    return q


cdef inline uint64_t m68k_tslot(uint64_t t, int shift) noexcept nogil:
    """The slot (32-bit) of the address seen last whose bits from ``shift`` (8 or 16) are
    ``t``'s."""
    cdef uint64_t h = hash2(0x6810 + <uint64_t>shift, (t & 0xFFFFFFFFULL) >> shift)
    return h >> 52 if shift == 8 else M68_TGT + (h >> 54)


cdef inline uint64_t m68k_tget(const uint64_t* m, uint64_t slot) noexcept nogil:
    return (m[MS_TGT + (slot >> 1)] >> (32 * (slot & 1))) & 0xFFFFFFFFULL


cdef inline void m68k_tput(uint64_t* m, uint64_t t) noexcept nogil:
    """Address ``t`` (a target, an absolute address) seen: the last by its bits 8-31, 16-31."""
    cdef uint64_t slot
    cdef int shift
    for shift in range(8, 24, 8):
        slot = m68k_tslot(t, shift)
        m[MS_TGT + (slot >> 1)] = (m[MS_TGT + (slot >> 1)] &
                                   ~(<uint64_t>0xFFFFFFFFULL << (32 * (slot & 1)))) | \
            ((t & 0xFFFFFFFFULL) << (32 * (slot & 1)))


cdef inline void m68k_target(uint64_t* m, int first, uint64_t t) noexcept nogil:
    """Target ``t`` moves to the front of the four from ``first``."""
    cdef int i = first
    m68k_tput(m, t)
    while i < first + 3 and m[i] != t:
        i += 1
    while i > first:
        m[i] = m[i - 1]
        i -= 1
    m[first] = t


cdef inline uint64_t m68k_slot(const uint64_t* m) noexcept nogil:
    """The slot of the word seen last where the next word is (its opcode and index; for an
    opcode, the previous two opcodes)."""
    if m[MS_LEFT] & 15 == 0:
        return hash2(0x6800, ((m[MS_PREV] << 16) | (m[MS_OP] & 0xFFFF)) & 0xFFFFFFFFULL) >> 51
    return hash2(0x6801, (m[MS_OP] & 0xFFFF) | ((m[MS_IDX] & 15) << 16)) >> 51


cdef inline uint64_t m68k_slot2(const uint64_t* m) noexcept nogil:
    """The slot of the word seen last after the same words: the instruction's so far (for an
    opcode, the last instruction's, whole)."""
    return hash2(0x6802 + (m[MS_LEFT] & 15 == 0), m[MS_HASH]) >> 51


cdef inline uint64_t m68k_get(const uint64_t* m, int first, uint64_t s) noexcept nogil:
    return (m[first + (s >> 2)] >> (16 * (s & 3))) & 0xFFFF


cdef inline void m68k_put(uint64_t* m, int first, uint64_t s, uint64_t w) noexcept nogil:
    m[first + (s >> 2)] = (m[first + (s >> 2)] & ~(<uint64_t>0xFFFF << (16 * (s & 3)))) | \
        (w << (16 * (s & 3)))


cdef inline uint64_t m68k_last(const uint64_t* m) noexcept nogil:
    """The word seen last where the next word is (``m68k_slot``); in a MOVEM to registers,
    the mask of the last MOVEM to -(An), in the other order (a function's registers restored
    as it saved them)."""
    cdef uint64_t s = m68k_slot(m)
    if m[MS_IDX] & 15 == 1 and m[MS_LEFT] & 15 and (m[MS_OP] & 0xFF80) == 0x4C80:
        return m[MS_MASK] & 0xFFFF
    return (m[MS_LAST + (s >> 2)] >> (16 * (s & 3))) & 0xFFFF


cdef inline int m68k_areg(const uint64_t* m) noexcept nogil:
    """The address register of the next word when it is a d16(An)'s (a MOVE's source when
    its first word, else its destination; other instructions' EA)."""
    cdef uint64_t op = m[MS_OP] & 0xFFFF
    if 1 <= op >> 12 <= 3 and not ((op >> 3) & 7 == 5 and m[MS_IDX] & 15 == 1):
        return <int>((op >> 9) & 7)
    return <int>(op & 7)


cdef inline uint64_t m68k_d16(const uint64_t* m, int r) noexcept nogil:
    """The last d16 of d16(A``r``)."""
    return (m[MS_AREG + (r >> 2)] >> (16 * (r & 3))) & 0xFFFF


cdef inline void m68k_end(uint64_t* m) noexcept nogil:
    """The instruction ends: the next word is an opcode."""
    m[MS_KIND] = MW_OP
    m[MS_LEFT] = m[MS_QUEUE] = m[MS_IDX] = 0


cdef inline void m68k_update(uint64_t* m, uint64_t c8, uint64_t pos) noexcept nogil:
    """After a byte (``c8`` the last 8 bytes with it, ``pos`` the bytes so far)."""
    cdef uint64_t w = c8 & 0xFFFF, s, kind, op, q, t
    cdef int n = 0, extra = 0, areg
    if c8 & 0xFFFFFFFFULL == 0x7F454C46:  # "\x7fELF"
        m[MS_BASE] = pos + 48
    if pos & 1 == 0:
        m68k_put(m, MS_LAST, m68k_slot(m), w)
        m68k_put(m, MS_LAST2, m68k_slot2(m), w)
        if m[MS_LEFT] & 15 == 0:  # an opcode
            op = m[MS_OP] & 0xFFFF
            m[MS_PHASH] = m[MS_HASH]
            m[MS_PREV] = (m[MS_PREV] << 16) | (m[MS_OP] & 0xFFFF)
            m[MS_OP], m[MS_DATA], m[MS_HASH] = w, 0, hash2(0x68, w)
            if (op == 0x4E75 or op == 0x4ED0 or op == 0x4E74) and 0x81 <= w >> 8 <= 0x9F and \
                    (0x41 <= (w & 0xDF) <= 0x5A or w & 0xFF == 0x5F or w & 0xFF == 0x2E):
                q = 0  # a MacsBug name: to an even length, then its constants' length
                for n in range(<int>(((w >> 8) & 0x1F) + 2) // 2 - 1):
                    q |= <uint64_t>MW_NAME << (4 * n)
                n = <int>(((w >> 8) & 0x1F) + 2) // 2 - 1
                m[MS_QUEUE] = q | (<uint64_t>MW_CLEN << (4 * n)) if n < 15 else q
                n = min(n + 1, 15)
            else:
                m[MS_QUEUE] = m68k_words(<int>w, &n)
            m[MS_LEFT], m[MS_IDX] = <uint64_t>n, 1
            if w >> 12 == 0xA:
                m[MS_TRAP] = ((m[MS_TRAP] << 16) | w) & 0xFFFFFFFFULL
            if w >> 12 == 6 and w & 0xFF != 0 and w & 0xFF != 0xFF:  # Bcc.S, BRA.S, BSR.S
                m68k_target(m, MS_C0 if w >> 8 == 0x61 else MS_T0,
                            pos + <uint64_t>(<signed char>(w & 0xFF)))
        else:
            op = m[MS_OP] & 0xFFFF
            kind = m[MS_QUEUE] & 15
            areg = m68k_areg(m)
            m[MS_QUEUE] >>= 4
            m[MS_LEFT] = (m[MS_LEFT] & 15) - 1
            m[MS_DATA] = (m[MS_DATA] << 16) | w
            m[MS_HASH] = hash2(m[MS_HASH] + 0x68, w)
            if m[MS_IDX] < 15:
                m[MS_IDX] += 1
            q = 0
            if kind == MW_IDX and w & 0x100:  # the full format: its displacements
                n = <int>((w >> 4) & 3)
                extra = (1 if n == 2 else 2 if n == 3 else 0) + \
                    (1 if w & 3 == 2 else 2 if w & 3 == 3 else 0)
                q = (<uint64_t>0x99999 >> (4 * (5 - extra))) if extra else 0
            elif kind == MW_FEXT and op & 0x3F == 0x3C and w & 0xE000 == 0x4000:
                extra = (0x01416622 >> (4 * ((w >> 10) & 7))) & 15  # #imm by its format
                q = (<uint64_t>0x111111 >> (4 * (6 - extra))) if extra else 0
            if extra and m[MS_LEFT] + <uint64_t>extra <= 15:
                m[MS_QUEUE] = q | (m[MS_QUEUE] << (4 * extra))
                m[MS_LEFT] += <uint64_t>extra
            if kind == MW_BR and m[MS_LEFT] == 0:  # the displacement's last word
                if op >> 12 == 6 and op & 0xFF:  # .L: from its first word
                    t = pos - 4 + <uint64_t>(<int>(m[MS_DATA] & 0xFFFFFFFFULL))
                else:
                    t = pos - 2 + <uint64_t>(<short>w)
                m68k_target(m, MS_C0 if op >> 8 == 0x61 else MS_T0, t)
            elif kind == MW_CLEN and 0 < w <= 28:  # the constants
                extra = <int>m[MS_LEFT] & 15
                for n in range(<int>(w + 1) // 2):
                    mq_push(&m[MS_QUEUE], &extra, MW_DATA)
                m[MS_LEFT] = <uint64_t>extra
            elif kind == MW_D16:  # the register's last d16 (m68k_areg before this word)
                n = areg
                m[MS_AREG + (n >> 2)] = (m[MS_AREG + (n >> 2)] & ~(<uint64_t>0xFFFF <<
                                         (16 * (n & 3)))) | (w << (16 * (n & 3)))
                m68k_tput(m, ((0xA500 | <uint64_t>n) << 16) | w)  # as an address of its own
            elif kind == MW_EXT and (op & 0xFFB8) == 0x48A0:  # MOVEM to -(An): its mask
                m[MS_MASK] = 0
                for n in range(16):
                    m[MS_MASK] |= ((w >> n) & 1) << (15 - n)
            elif kind == MW_ABSL and m[MS_QUEUE] & 15 != MW_ABSL:  # abs.L's last word
                m68k_tput(m, m[MS_DATA])
            elif kind == MW_PCD and (op == 0x4EBA or op == 0x4EFA):  # JSR, JMP d16(PC)
                m68k_target(m, MS_C0 if op == 0x4EBA else MS_T0, pos - 2 + <uint64_t>(<short>w))
        m[MS_KIND] = m[MS_QUEUE] & 15 if m[MS_LEFT] & 15 else MW_OP
        if m[MS_LEFT] & 15 == 0:
            m[MS_IDX] = 0
    if pos == m[MS_BASE]:  # .text begins with an opcode
        m68k_end(m)


cdef inline uint64_t m68k_pred(const uint64_t* m, uint64_t c8, uint64_t pos, int source) noexcept nogil:
    """The byte a target predicts next (bit 8 set; 0: none): in a branch's displacement
    (Bcc/BRA/DBcc .W or .L, Bcc.S's byte) the last (``source`` 0) or second last (1)
    branch target's, in a BSR's the last or second last call target's."""
    cdef uint64_t kind = m[MS_KIND] % MW_N, op = m[MS_OP] & 0xFFFF, d, ps, lane = pos & 1
    cdef int list_
    if m[MS_LEFT] & 15 == 0:  # an opcode: Bcc.S's displacement byte
        if not lane or (c8 & 0xF0) != 0x60:
            return 0
        list_ = MS_C0 if c8 & 0xFF == 0x61 else MS_T0
        d = m[list_ + source] - (pos + 1)
        if d + 128 >= 256 or d == 0 or d == <uint64_t>-1:
            return 0
        return 0x100 | (d & 0xFF)
    if kind != MW_BR:
        return 0
    list_ = MS_C0 if op >> 8 == 0x61 else MS_T0
    ps = pos - lane  # the word's position
    if op >> 12 == 6 and op & 0xFF:  # .L: its high word, then its low word
        if m[MS_LEFT] & 15 == 2:
            d = (m[list_ + source] - ps) >> 16
        else:
            d = m[list_ + source] - (ps - 2)
            if (d >> 16) & 0xFFFF != m[MS_DATA] & 0xFFFF:
                return 0
        d &= 0xFFFF
    else:
        d = m[list_ + source] - ps
        if d + 32768 >= 65536:
            return 0
    if lane == 0:
        return 0x100 | ((d >> 8) & 0xFF)
    return 0x100 | (d & 0xFF) if (d >> 8) & 0xFF == c8 & 0xFF else 0


cdef inline uint64_t m68k_known(const uint64_t* m, uint64_t base, uint64_t d, int shift,
                                int bits) noexcept nogil:
    """The byte of ``base`` + the displacement at bits ``shift`` - 8 .. shift - 1 (bit 8 set; 0:
    none) by an address seen whose bits from ``shift`` are those of ``base + d`` or the next
    (a carry), when its displacement from ``base`` (``bits`` wide) has the known bits of
    ``d`` (from ``shift``)."""
    cdef uint64_t t, e, i, mask = (<uint64_t>1 << bits) - 1
    for i in range(2):
        t = m68k_tget(m, m68k_tslot(((base + d) >> shift) + i << shift, shift))
        e = (t - base) & 0xFFFFFFFFULL
        if (e & mask) >> shift == (d & mask) >> shift and t:
            return 0x100 | ((e >> (shift - 8)) & 0xFF)
    return 0


cdef inline uint64_t m68k_seen(const uint64_t* m, uint64_t c8, uint64_t pos) noexcept nogil:
    """The byte an address seen predicts (bit 8 set; 0: none): in a branch's displacement,
    .W's second byte, .L's low word; in an abs.L, its low word (``m68k_known``)."""
    cdef uint64_t kind = m[MS_KIND] % MW_N, op = m[MS_OP] & 0xFFFF, lane = pos & 1
    cdef uint64_t ps = pos - lane, left = m[MS_LEFT] & 15, hi
    if kind == MW_ABSL and (m[MS_QUEUE] >> 4) & 15 != MW_ABSL:  # its high word known
        hi = (m[MS_DATA] & 0xFFFF) << 16
        if lane:
            return m68k_known(m, 0, hi | ((c8 & 0xFF) << 8), 8, 32)
        return m68k_known(m, 0, hi, 16, 32)
    if kind == MW_D16 and lane:  # a d16(An) seen with this high byte (``m68k_tput``)
        return m68k_known(m, 0, ((0xA500 | <uint64_t>m68k_areg(m)) << 16) | ((c8 & 0xFF) << 8),
                          8, 32)
    if kind != MW_BR:
        return 0
    if op >> 12 == 6 and op & 0xFF == 0xFF:  # .L
        if left != 1:
            return 0
        hi = (m[MS_DATA] & 0xFFFF) << 16
        if lane:
            return m68k_known(m, ps - 2, hi | ((c8 & 0xFF) << 8), 8, 32)
        return m68k_known(m, ps - 2, hi, 16, 32)
    if lane == 0:
        return 0
    hi = <uint64_t>(<signed char>(c8 & 0xFF)) << 8
    return m68k_known(m, ps, hi, 8, 16)


cdef inline uint64_t m68k_hash(const uint64_t* m, uint64_t c8, uint64_t pos, uint64_t tag,
                               int j) noexcept nogil:
    """68000 code by the decoder's state (the kind of the next word, its index in the
    instruction, the word's byte so far) with (18) the opcode (before an opcode: the previous
    one); (19) the previous two opcodes (in an operand: the opcode and the word before); (20)
    the word seen last at this place (``m68k_last``) and the opcode; (21) in a branch's
    displacement the bytes the last two targets and an address seen predict (``m68k_pred``,
    ``m68k_seen``; in an abs.L, the latter), else the previous
    three opcodes' high bytes; (22) the previous instruction's words, whole, and the opcode
    (before an opcode: the instruction before the last); (24) in a d16(An), An and its last
    d16 (``m68k_areg``), else the opcode's line and size and the previous opcode's low 12
    bits (before an opcode, with the last two A-line traps)."""
    cdef uint64_t lane = pos & 1, left = m[MS_LEFT] & 15
    cdef uint64_t op = 0 if left == 0 else m[MS_OP] & 0xFFFF
    cdef uint64_t state = (m[MS_KIND] % MW_N) | ((m[MS_IDX] & 15) << 4) | \
        ((0x100 | (c8 & 0xFF)) << 8 if lane else 0)
    cdef uint64_t prev = m[MS_PREV], h
    if left == 0:  # an opcode: the previous one
        prev = (prev << 16) | (m[MS_OP] & 0xFFFF)
    if j == 18:
        return hash2(tag, state | (op << 20) | ((prev & 0xFFFF) << 36))
    if j == 19:
        if left == 0:
            return hash2(hash2(tag, state), prev & 0xFFFFFFFFULL)
        return hash2(tag, state | (op << 20) | ((m[MS_DATA] & 0xFFFF) << 36))
    if j == 20:
        return hash2(tag, state | (m68k_last(m) << 20) | (op << 36))
    if j == 21:
        if left or (lane and (c8 & 0xF0) == 0x60):
            return hash2(hash2(tag, state | (op << 20) | (m68k_pred(m, c8, pos, 0) << 36) |
                               (m68k_pred(m, c8, pos, 1) << 45)), m68k_seen(m, c8, pos))
        return hash2(tag, state | ((prev >> 8) & 0xFF) << 20 | ((prev >> 24) & 0xFF) << 28 |
                     ((prev >> 40) & 0xFF) << 36)
    if j == 22:
        return hash2(hash2(tag, state | (op << 20)), m[MS_PHASH])
    if m[MS_KIND] % MW_N == MW_D16:  # j == 24: d16(An) by An's last d16
        return hash2(tag, state | (<uint64_t>m68k_areg(m) << 20) |
                     (m68k_d16(m, m68k_areg(m)) << 24) | ((op & 0xF1C0) << 40))
    h = hash2(tag, state | ((op & 0xF0C0) << 20) | ((prev & 0xFFF) << 36))
    return hash2(h, m[MS_TRAP]) if left == 0 and m[MS_TRAP] else h  # an opcode: the traps
