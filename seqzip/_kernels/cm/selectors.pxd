# cython: language_level=3
# The mixer's weight-set selectors: the small context that picks a set's row for each bit.
from seqzip._kernels.cm.component cimport Cursor
from seqzip._kernels.cm.context cimport W2_NEST, W2_POS, Context, byte_class
from seqzip._kernels.cm.image cimport image_pixel_row
from seqzip._kernels.cm.x86 cimport XG_DATA, XG_N, XS_LEFT, XS_OP, XS_STAGE
from seqzip._kernels.cm.m68k cimport MS_KIND, MS_LEFT, MS_OP, MW_N
from libc.stdint cimport uint64_t

cdef enum:
    SEL_NODE = 0         # the node of the symbol
    SEL_MATCH = 1        # the first match model's state
    SEL_C1 = 2           # the previous symbol
    SEL_ORDER = 3        # how many hashed contexts are known
    SEL_GATE = 4         # the gated set (one row: its weights come from the gates)
    SEL_C2 = 5           # the byte before the previous one
    SEL_WORD = 6         # letters into the word and the kind of the last byte
    SEL_NET = 7          # the signs of the network's first six units
    SEL_C1N = 8          # the previous byte's high nibble and the node of the symbol
    SEL_C12N = 9         # ... with the kind of the byte before it (letter, digit ...)
    SEL_ORDERN = 10      # how many hashed contexts are known (to 7) and the node
    SEL_CODE = 11        # 16-bit code: the lane, the opcode byte's high nibble, the node
    SEL_CODE32 = 12      # 32-bit code: the same in the aligned 32-bit word
    SEL_PIXEL = 13       # the 1-bit image's pixels around this one (image.pxd)
    SEL_X86 = 14         # x86 code: the decoder's stage and operand bytes left (x86.pxd)
    SEL_WORDS2 = 15      # the word's length, the last byte's kind, the word's place (words2)
    SEL_NETP = 16        # the network's P(1) for the bit in 16 buckets, the depth (netsel.pxd)
    SEL_NETTOP = 17      # the network's top symbol: agree, its next bit, confidence; the depth
    SEL_M68K = 18        # 68000 code: the decoder's kind of word, the lane, the node (m68k.pxd)
    N_SELECTORS = 19
    NET_PATTERNS = 64    # SEL_NET's patterns (six signs)


cdef inline dict selector_ids():
    """The selectors by the names configs give them (``CMConfig.sets``)."""
    return {"node": SEL_NODE, "match": SEL_MATCH, "c1": SEL_C1, "order": SEL_ORDER,
            "gate": SEL_GATE, "c2": SEL_C2, "word": SEL_WORD, "net": SEL_NET,
            "c1n": SEL_C1N, "c12n": SEL_C12N, "ordern": SEL_ORDERN, "code": SEL_CODE,
            "code32": SEL_CODE32, "pixel": SEL_PIXEL, "x86": SEL_X86,
            "words2": SEL_WORDS2, "netp": SEL_NETP, "nettop": SEL_NETTOP, "m68k": SEL_M68K}


cdef inline int selector_rows(int sel, int A, int B, int n_hashed) noexcept nogil:
    if sel == SEL_NODE:
        return 1 << B
    if sel == SEL_MATCH:
        return 48 * 8
    if sel == SEL_C1:
        return A
    if sel == SEL_ORDER:
        return (n_hashed + 1) * 8
    if sel == SEL_C2:
        return 256 * 8
    if sel == SEL_WORD:
        return 16 * 4 * 8
    if sel == SEL_NET:
        return NET_PATTERNS * 8
    if sel == SEL_C1N:
        return 16 << B
    if sel == SEL_C12N:
        return 64 << B
    if sel == SEL_ORDERN:
        return 8 << B
    if sel == SEL_CODE:
        return 64 << B
    if sel == SEL_CODE32:
        return 128 << B
    if sel == SEL_PIXEL:
        return 512
    if sel == SEL_X86 or sel == SEL_M68K:
        return 64 << B
    if sel == SEL_WORDS2:
        return 8 * 4 * 4 * 8
    if sel == SEL_NETP or sel == SEL_NETTOP:
        return 16 * 8  # their rows: netsel.ns_rows
    return 1


cdef inline int words2_row(const Context* c) noexcept nogil:
    """SEL_WORDS2's row without the depth (0..127): the word's length (0, 1, 2, 3, 4-5, 6-7,
    8-11, 12 or more), the last byte's kind, and the word's place: first in its sentence,
    inside brackets or quotes, first in its line, else (kind words2's trackers)."""
    cdef int n = c.word_len, place = 3
    n = n if n < 4 else 4 + (n >= 6) + (n >= 8) + (n >= 12)
    if (c.w2[W2_POS] & 0xFF) == 0:
        place = 0
    elif (c.w2[W2_NEST] >> 32) & 0xFF:
        place = 1
    elif ((c.w2[W2_POS] >> 8) & 0xFF) == 0:
        place = 2
    return (n * 4 + byte_class(<int>(c.c8 & 0xFF))) * 4 + place


cdef inline int code_row(const Context* c) noexcept nogil:
    """SEL_CODE's row without the node (0..63)."""
    cdef int k = <int>(c.pos & 1)
    cdef int first = <int>((c.c8 >> (8 - 8 * k)) & 0xFF)
    return (k * 16 + (first >> 4)) * 2 + (((c.c8 >> (8 * k)) & 0xFFFF) == 0)


cdef inline int code32_row(const Context* c) noexcept nogil:
    """SEL_CODE32's row without the node (0..127): the lane in the aligned 32-bit word, the
    high nibble of the word's first byte (the previous word's in lane 0), whether the
    previous 32 bits are 0."""
    cdef int k = <int>(c.pos & 3)
    cdef int first = <int>((c.c8 >> (8 * ((k - 1) & 3))) & 0xFF)
    return (k * 16 + (first >> 4)) * 2 + ((c.c8 & 0xFFFFFFFFULL) == 0)


cdef inline int x86_row(const Context* c) noexcept nogil:
    """SEL_X86's row without the node (0..55): the x86 decoder's stage (what the next byte
    is) and, in an operand, the bytes left (to 7), elsewhere the prefixes seen (67: 1, F2 or
    F3: 2, REX.W: 4)."""
    cdef const uint64_t* s = c.x86s
    cdef int stage = <int>(s[XS_STAGE] % XG_N)
    if stage == XG_DATA:
        return stage * 8 + <int>min(s[XS_LEFT] & 15, <uint64_t>7)
    return stage * 8 + <int>((s[XS_OP] >> 13) & 7)


cdef inline int m68k_row(const Context* c) noexcept nogil:
    """SEL_M68K's row without the node (0..63): in an opcode word the lane and the high nibble
    of its first byte (the previous opcode's in lane 0); in an operand the kind of word
    (m68k.pxd's MW_*), the lane and whether it is the instruction's last word."""
    cdef const uint64_t* m = c.m68k
    cdef int lane = <int>(c.pos & 1)
    if m[MS_LEFT] & 15 == 0:
        return (lane * 16 + <int>((c.c8 >> 4) & 15 if lane else (m[MS_OP] >> 12) & 15))
    return 32 + <int>(m[MS_KIND] % MW_N) * 2 + lane


cdef inline int selector_row(int sel, const Cursor* at, int n_known, int net_pattern,
                             int match_state) noexcept nogil:
    """The row of a set with selector ``sel`` for the bit at the cursor."""
    cdef int depth = at.depth
    if sel == SEL_NODE:
        return at.node
    if sel == SEL_C1:
        return at.ctx.c1_index
    if sel == SEL_ORDER:
        return n_known * 8 + depth
    if sel == SEL_C2:
        return <int>((at.ctx.c8 >> 8) & 0xFF) * 8 + depth
    if sel == SEL_NET:
        return net_pattern * 8 + depth
    if sel == SEL_WORD:
        return (min(at.ctx.word_len, 15) * 4 + byte_class(<int>(at.ctx.c8 & 0xFF))) * 8 + depth
    if sel == SEL_MATCH:
        return match_state * 8 + depth
    if sel == SEL_C1N:
        return <int>((at.ctx.c8 >> 4) & 0xF) << at.B | at.node
    if sel == SEL_C12N:
        return (<int>((at.ctx.c8 >> 4) & 0xF) * 4 +
                byte_class(<int>((at.ctx.c8 >> 8) & 0xFF))) << at.B | at.node
    if sel == SEL_ORDERN:
        return min(n_known, 7) << at.B | at.node
    if sel == SEL_CODE:  # the lane in the aligned 16-bit word, the high nibble of the word's
        # first byte (the previous word's in lane 0), whether the previous word is 0
        return code_row(at.ctx) << at.B | at.node
    if sel == SEL_CODE32:
        return code32_row(at.ctx) << at.B | at.node
    if sel == SEL_PIXEL:
        return image_pixel_row(at)
    if sel == SEL_X86:
        return x86_row(at.ctx) << at.B | at.node
    if sel == SEL_WORDS2:
        return words2_row(at.ctx) * 8 + depth
    if sel == SEL_M68K:
        return m68k_row(at.ctx) << at.B | at.node
    return 0


cdef inline void selector_rows_of(int* rows, const int* sel, int m, const Cursor* at, int n_known,
                                  int net_pattern, int match_state) noexcept nogil:
    """``selector_row`` of each of m sets."""
    cdef int k
    for k in range(m):
        rows[k] = selector_row(sel[k], at, n_known, net_pattern, match_state)
