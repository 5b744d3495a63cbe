# cython: language_level=3
# The hashed context kinds: each one function from the shared context state (and its
# parameter j) to a 64-bit context hash, computed once per symbol.  A kind's id is part of
# every hash it gives (the tag), so ids are fixed by the streams: a new kind takes the next id.
#
# Adding a kind: its function and id here and its case in ``kind_function`` (the
# registration), its name in ``KINDS`` (kernel.pyx); the config (seqzip/models/cm.py) says how
# many of it a level uses (a field, its range, one line building ``CMSpec.contexts``).
from libc.stdint cimport int64_t, uint64_t
from seqzip._kernels.cm.context cimport (MK_ATTR, MK_DEPTH, MK_DEPTH_MAX, MK_ELPREV, MK_FLAGS,
                                         MK_LINE, MK_MODE, MK_PROSE1, MK_PROSE2, MK_PVALUE,
                                         MK_SINCE, MK_STACK, MK_STACK0, MK_STRIPPED, MK_TAG,
                                         MK_VALUE, MK_WORDS, MM_MODES, MM_TEXT, W2_CAPW,
                                         W2_CASE, W2_ENTITY, W2_LENS, W2_LFIRST, W2_NEST,
                                         W2_PHRASE, W2_PLFIRST, W2_POS, W2_SFIRST, W2_SINCE,
                                         W2_SINCEH, W2_T1, W2_T2, W2_T3, Context, byte_class,
                                         ctx_back, ctx_record_length, ctx_row_above,
                                         ctx_row_length)
from seqzip._kernels.cm.bin2 cimport b2_indirect_hash, b2_sparse_hash
from seqzip._kernels.cm.tables cimport hash2
from seqzip._kernels.cm.m68k cimport m68k_hash
from seqzip._kernels.cm.x86 cimport (XG_DATA, XG_N, XG_OP, XH_BASE, XH_OPM, XH_RKIND, XH_RPRED,
                                     XH_RSTART, XH_T0, XS_DATA, XS_LEFT, XS_MODRM, XS_OP,
                                     XS_PREV, XS_STAGE, XS_INDEX, XS_LAST, x86_rel_jump)

ctypedef uint64_t (*kind_hash)(const Context* c, uint64_t tag, int j) noexcept nogil

cdef enum:  # context kinds (the tags' ids)
    K_ORDER = 0
    K_WORD = 1
    K_SPARSE = 2
    K_RECORD = 3
    K_INDIRECT = 4
    K_COLUMN = 5      # columns=1: the column in the record and 2-D neighbourhoods
    K_TEXT = 6        # text=1: longer and gapped word contexts, nesting, the column
    K_ALIGNED = 7     # aligned=1: 32-bit words (machine code of fixed-width instructions)
    K_ALIGNED16 = 8   # aligned16: 16-bit words (16-bit instruction sets, 16-bit samples)
    K_NUMERIC = 9     # numeric: the next sample predicted from the previous ones
    K_MARKUP = 10     # markup (bits): tags, attributes, open elements, lines, the text
    K_CODE = 11       # code (bits): machine code, 16-bit big-endian words and x86 (code_hash)
    K_ROWS = 12       # rows (bits): the bytes one and two rows above (the row detector)
    K_WORDS2 = 13     # words2 (bits): stems, places in sentence and line, nesting, verse
    N_KINDS = 14


cdef inline uint64_t order_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """The last j bytes."""
    cdef uint64_t h
    cdef int k
    if j <= 8:
        return hash2(tag, c.c8 & ((<uint64_t>-1) >> (64 - 8 * j)))
    h = hash2(tag, c.c8)
    for k in range(9, j + 1):
        h = hash2(h, ctx_back(c, k))
    return h


cdef inline uint64_t word_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Words (between words, the current "word" is the last two bytes, case folded)."""
    cdef uint64_t h, column, above
    h = c.word0 if c.word_len else hash2(tag, (c.c8 & 0xFFFF) | 0x2020)
    if j == 0:
        return hash2(tag, h)
    if j == 1:
        return hash2(hash2(tag, h), c.word1)
    if j == 2:
        return hash2(hash2(hash2(tag, h), c.word1), c.word2)
    if j == 3:  # the column in the line and the byte above it in the previous line
        column = c.pos - c.line_start
        above = 0
        if c.line_start > c.prev_line_start and column < c.line_start - c.prev_line_start:
            above = c.history[(c.prev_line_start + column) & c.history_mask]
        return hash2(tag, (above << 16) | (min(column, <uint64_t>255) << 8) | (c.c8 & 0xFF))
    if j == 4:  # the word before the previous one, skipping it
        return hash2(hash2(tag, h), c.word2)
    if j == 5:  # the previous word and the separator after it
        return hash2(hash2(tag, c.word1), c.separator)
    if j == 6:  # the current word and the byte before it started
        return hash2(hash2(tag, h), c.before_word)
    # j == 7: the sentence so far (all words since the last end of sentence)
    return hash2(hash2(tag, h), c.sentence)


cdef inline uint64_t sparse_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Bytes further back, skipping the nearest (j >= 6: ``bin2.b2_sparse_hash``)."""
    if j >= 6:
        return b2_sparse_hash(c.c8, tag, j)
    if j == 0:
        return hash2(tag, (c.c8 >> 8) & 0xFF)
    if j == 1:
        return hash2(tag, (c.c8 >> 16) & 0xFF)
    if j == 2:
        return hash2(tag, (c.c8 >> 8) & 0xFFFF)
    if j == 3:
        return hash2(tag, (c.c8 & 0xFF) | ((c.c8 >> 8) & 0xFF00))
    if j == 4:
        return hash2(tag, (c.c8 >> 16) & 0xFFFF)
    return hash2(tag, (c.c8 >> 24) & 0xFFFFFFFFULL)


cdef inline uint64_t record_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """The bytes one and two records above (the record length is detected)."""
    cdef uint64_t r = ctx_record_length(c)
    if r == 0:
        return hash2(tag, 0)
    if j == 0:
        return hash2(tag, (ctx_back(c, r) << 8) | (c.c8 & 0xFF))
    if j == 1:
        return hash2(tag, (ctx_back(c, r) << 8) | ctx_back(c, 2 * r))
    return hash2(tag, (ctx_back(c, r) << 16) | (ctx_back(c, r - 1) << 8) |
                 ctx_back(c, r + 1) | (r << 24))


cdef inline uint64_t indirect_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """What followed the last byte(s) the previous times (j >= 3: ``bin2.b2_indirect_hash``)."""
    if j >= 3:
        return b2_indirect_hash(c.bin2, c.c8, c.pos, tag, j)
    if j == 0:
        return hash2(tag, (c.c8 & 0xFF) | (<uint64_t>c.follow1[c.c8 & 0xFF] << 8))
    if j == 1:
        return hash2(tag, (c.c8 & 0xFFFF) | (<uint64_t>c.follow2[c.c8 & 0xFFFF] << 16))
    return hash2(tag, (c.c8 & 0xFFFF) | (<uint64_t>(c.follow1[c.c8 & 0xFF] & 0xFF) << 16))


cdef inline uint64_t column_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """The column in the record (pos mod the record length) and 2-D neighbourhoods."""
    cdef uint64_t r = ctx_record_length(c)
    if r == 0:
        return hash2(tag, 0)
    if j == 0:  # the column and the byte above
        return hash2(tag, ((c.pos % r) << 8) | ctx_back(c, r))
    if j == 1:  # the column and the byte before
        return hash2(tag, ((c.pos % r) << 8) | (c.c8 & 0xFF))
    if j == 2:  # above, above-left, above-right, two rows above, and the byte before
        return hash2(tag, (ctx_back(c, r) << 32) | (ctx_back(c, r + 1) << 24) |
                     (ctx_back(c, r - 1) << 16) | (ctx_back(c, 2 * r) << 8) | (c.c8 & 0xFF))
    # j == 3: the byte above and the two before
    return hash2(tag, (ctx_back(c, r) << 16) | (c.c8 & 0xFFFF))


cdef inline uint64_t text_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Longer and gapped word contexts, the nesting and the column (the text trackers)."""
    cdef uint64_t h = c.word0 if c.word_len else hash2(tag, (c.c8 & 0xFFFF) | 0x2020)
    if j == 0:  # the word and the three before it
        return hash2(hash2(hash2(hash2(tag, h), c.word1), c.word2), c.text_state[0])
    if j == 1:  # the word, the previous one and the third previous (the second skipped)
        return hash2(hash2(hash2(tag, h), c.word1), c.text_state[0])
    if j == 2:  # the word and the nesting of brackets, quotes and tags
        return hash2(hash2(tag, h), c.text_state[1])
    # j == 3: the word and the column in the line
    return hash2(hash2(tag, h), min(c.pos - c.line_start, <uint64_t>127))


cdef inline uint64_t aligned_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """The lane in the aligned 32-bit word (pos mod 4) and the word's bytes so far, with the
    previous word (j = 0), the word before it (1), the first bytes of the previous two (2)."""
    cdef int k = <int>(c.pos & 3)
    cdef uint64_t h = hash2(tag, (c.c8 & ((<uint64_t>1 << (8 * k)) - 1)) | (<uint64_t>k << 32))
    cdef uint64_t r = (c.c8 >> (8 * k)) & 0xFFFFFFFFULL  # the previous word
    if j == 0:
        return hash2(h, r)
    if j == 1:
        return hash2(h, (ctx_back(c, k + 5) << 24) | (ctx_back(c, k + 6) << 16) |
                     (ctx_back(c, k + 7) << 8) | ctx_back(c, k + 8))
    return hash2(h, (r >> 24 << 8) | ctx_back(c, k + 8))


cdef inline uint64_t aligned16_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """The lane in the aligned 16-bit word (pos mod 2) and the word's byte so far, with the
    previous word (j = 0), the previous two (1), the word before the previous (2), the
    previous three (3), the top nibbles of the previous four and the previous word (4)."""
    cdef int k = <int>(c.pos & 1)
    cdef uint64_t h = hash2(tag, (c.c8 & ((<uint64_t>1 << (8 * k)) - 1)) | (<uint64_t>k << 16))
    cdef uint64_t w = c.c8 >> (8 * k)  # the previous words, the newest lowest
    if j == 0:
        return hash2(h, w & 0xFFFF)
    if j == 1:
        return hash2(h, w & 0xFFFFFFFFULL)
    if j == 2:
        return hash2(h, (w >> 16) & 0xFFFF)
    if j == 3:
        return hash2(h, w & 0xFFFFFFFFFFFFULL)
    return hash2(h, (w & 0xFFFF) | ((w >> 12) & 0xF) << 16 | ((w >> 28) & 0xF) << 20 |
                 ((w >> 44) & 0xF) << 24 | (ctx_back(c, k + 7) >> 4) << 28)


cdef inline int64_t numeric_value(const Context* c, uint64_t back, int s, bint big) noexcept nogil:
    """The signed s-byte sample whose last byte is ``back`` bytes back (big or little
    endian)."""
    cdef uint64_t v = 0
    cdef int i
    for i in range(s):
        if big:
            v |= ctx_back(c, back + i) << (8 * i)
        else:
            v |= ctx_back(c, back + s - 1 - i) << (8 * i)
    if v >> (8 * s - 1):
        return <int64_t>v - (<int64_t>1 << (8 * s))
    return <int64_t>v


cdef inline uint64_t numeric_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Samples of s bytes (2 or 4, big- or little-endian, aligned to the file's start): the
    next one predicted from the previous ones, the context the predicted byte of this lane,
    whether the bytes so far agreed with the prediction (their error, clamped), and the
    lane.  j: 0 s=2 big-endian, linear (2 v1 - v2); 1 s=2 big, v1 with the size of the last
    step; 2 s=4 big, linear; 3 s=4 big, v1 with the last step; 4 s=2 little, linear; 5 s=4
    little, linear; 6 s=2 big, the mean of linear and v1."""
    cdef int s = 4 if j == 2 or j == 3 or j == 5 else 2
    cdef bint big = j != 4 and j != 5
    cdef int k = <int>(c.pos % <uint64_t>s), lane, step = 0
    cdef int64_t v1, v2, p, e
    cdef uint64_t cur = 0, d
    cdef int i
    v1 = numeric_value(c, k + 1, s, big)
    v2 = numeric_value(c, k + 1 + s, s, big)
    if j == 1 or j == 3:
        p = v1
        d = <uint64_t>(v1 - v2 if v1 >= v2 else v2 - v1)
        while d and step < 15:
            d >>= 1
            step += 1
    elif j == 6:
        p = v1 + (v1 - v2) // 2
    else:
        p = 2 * v1 - v2
    if big:  # the bytes of this sample so far, and the lane's byte (the k-th from the top)
        lane = 8 * (s - 1 - k)
        for i in range(k):
            cur = (cur << 8) | ctx_back(c, k - i)
        e = <int64_t>cur - <int64_t>((<uint64_t>p >> (lane + 8)) &
                                     ((<uint64_t>1 << (8 * k)) - 1)) if k else 0
    else:  # little-endian: the low bytes come first
        lane = 8 * k
        for i in range(k):
            cur = (cur << 8) | ctx_back(c, i + 1)
        e = <int64_t>cur - <int64_t>(<uint64_t>p & ((<uint64_t>1 << (8 * k)) - 1)) if k else 0
    if e > 2:
        e = 3
    elif e < -2:
        e = -3
    return hash2(tag, ((<uint64_t>p >> lane) & 0xFF) | (<uint64_t>(e + 3) << 8) |
                 (<uint64_t>k << 12) | (<uint64_t>step << 16))


cdef inline uint64_t mk_above(const Context* c) noexcept nogil:
    """In text, the two bytes at this place in the element's text the time before (0: none,
    not in text, more than 63 bytes in, or the place not before this one in the history)."""
    cdef uint64_t ref = c.mk[MK_ELPREV], at = ref + c.mk[MK_SINCE]
    if c.mk[MK_MODE] != MM_TEXT or ref == 0 or c.mk[MK_SINCE] > 63 or at + 1 >= c.pos or \
            c.pos - ref > c.history_mask:
        return 0
    return c.history[at & c.history_mask] | <uint64_t>c.history[(at + 1) & c.history_mask] << 8


cdef inline uint64_t markup_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """The markup trackers (``ctx_markup``), each with the markup mode: in a tag its name,
    the attribute's name and its value so far; in text the open elements with the word or
    the last bytes; the line's indent and first byte; the last tag and the words since; the
    words and bytes outside tags (``CMConfig.markup`` lists the contexts by j)."""
    cdef const uint64_t* m = c.mk
    cdef uint64_t d = m[MK_DEPTH], mode = m[MK_MODE]
    cdef uint64_t top = m[MK_STACK0 + ((d - 1) & (MK_STACK - 1))] if d else 0
    cdef uint64_t h = c.word0 if c.word_len else hash2(tag, (c.c8 & 0xFFFF) | 0x2020)
    cdef uint64_t base = hash2(tag, mode | ((m[MK_FLAGS] & 3) << 8))
    if j == 0:  # in text the element and the word; in a tag its name, attribute, value
        if mode == MM_TEXT:
            return hash2(hash2(base, top), h)
        return hash2(hash2(hash2(base, m[MK_TAG]), m[MK_ATTR]), m[MK_VALUE])
    if j == 1:  # the two innermost elements (in a tag: the tag) and the last two bytes
        if mode == MM_TEXT:
            return hash2(hash2(hash2(base, top),
                               m[MK_STACK0 + ((d - 2) & (MK_STACK - 1))] if d > 1 else 0),
                         c.c8 & 0xFFFF)
        return hash2(hash2(base, m[MK_TAG]), c.c8 & 0xFFFF)
    if j == 2:  # the line's indent and first byte, the last two bytes
        return hash2(hash2(base, m[MK_LINE] & 0xFFFF), c.c8 & 0xFFFF)
    if j == 4:  # the word and the previous word of the text (words in tags skipped)
        return hash2(hash2(base, h), m[MK_PROSE1])
    if j == 5:  # the word and the two before it in the text
        return hash2(hash2(hash2(base, h), m[MK_PROSE1]), m[MK_PROSE2])
    if j == 6:  # the last 3 bytes outside tags
        return hash2(base, m[MK_STRIPPED] & 0xFFFFFF)
    if j == 7:  # the last 5 bytes outside tags
        return hash2(base, m[MK_STRIPPED] & 0xFFFFFFFFFFULL)
    if j == 8:  # the last tag, the words since it (up to 3) and the last two bytes
        return hash2(hash2(base, m[MK_TAG] + min(m[MK_WORDS], <uint64_t>3)), c.c8 & 0xFFFF)
    if j == 10:  # in text the start tag's name, last attribute and value, the word; in a
        # tag its name, attribute, the value before this one and this one so far
        if mode == MM_TEXT:
            return hash2(hash2(hash2(hash2(base, m[MK_TAG]), m[MK_ATTR]), m[MK_VALUE]), h)
        return hash2(hash2(hash2(hash2(base, m[MK_TAG]), m[MK_ATTR]), m[MK_PVALUE]),
                     m[MK_VALUE])
    if j == 11:  # the element, the bytes since its tag (up to 63) and the last byte
        return hash2(hash2(base, top), min(m[MK_SINCE], <uint64_t>63) | (c.c8 & 0xFF) << 8)
    if j == 12:  # the element, the bytes since its tag and the two bytes at that place in
        # the text of the element of its name before (0: none, too far back, or past it)
        return hash2(hash2(base, top), min(m[MK_SINCE], <uint64_t>63) |
                     (c.c8 & 0xFF) << 8 | mk_above(c) << 16)
    if j == 9:  # as j = 3 with the previous word of the text
        return hash2(hash2(hash2(hash2(base, top), m[MK_TAG] + min(m[MK_WORDS], <uint64_t>3)),
                           h), m[MK_PROSE1])
    # j == 3: the element, the last tag, the words since it (up to 3) and the word
    return hash2(hash2(hash2(base, top), m[MK_TAG] + min(m[MK_WORDS], <uint64_t>3)), h)


cdef inline uint64_t code_words(const Context* c, int k, int n, int shift, uint64_t mask) noexcept nogil:
    """The first bytes of the previous n aligned 16-bit words (k: the lane), each shifted
    right by ``shift`` and masked, packed 8 bits apart (the newest lowest)."""
    cdef uint64_t out = 0
    cdef int i
    for i in range(n):
        out |= ((ctx_back(c, <uint64_t>(k + 2 * i + 2)) >> shift) & mask) << (8 * i)
    return out


cdef inline uint64_t x86_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """x86 code by the decoder's state (x86.pxd): what the next byte is (the stage), the
    opcode with its prefixes, the ModRM, the operand bytes left, with (6) the previous
    instruction's opcode; (7) the last two bytes; (8) the previous two instructions'
    opcodes; (9) the instruction's bytes so far (before an opcode: the previous
    instruction's, whole)."""
    cdef const uint64_t* s = c.x86s
    cdef uint64_t stage = s[XS_STAGE] % XG_N, op = s[XS_OP] & 0xFFFF
    cdef uint64_t state = stage | (op << 4) | ((s[XS_LEFT] & 15) << 20), h
    cdef int n, i
    if j == 6:
        return hash2(tag, state | ((s[XS_MODRM] & 0x1FF) << 24) | ((s[XS_PREV] & 0xFFF) << 36))
    if j == 7:
        return hash2(tag, state | ((c.c8 & 0xFFFF) << 24))
    if j == 8:
        return hash2(hash2(tag, state), s[XS_PREV] & 0xFFFFFF)
    # j == 9: the instruction's bytes so far (before an opcode: the previous instruction's)
    n = <int>(s[XS_INDEX] & 15) if s[XS_INDEX] & 15 else <int>(s[XS_LAST] & 15)
    h = hash2(tag, state | (<uint64_t>n << 24))
    for i in range(1, n + 1):
        h = hash2(h, ctx_back(c, <uint64_t>i))
    return h


cdef inline uint64_t x86_target(const Context* c, uint64_t t, int k, int n) noexcept nogil:
    """The jump target ``t`` as the next byte of a relative jump's offset (its byte ``k`` of
    ``n``, the instruction ending ``n - k`` bytes on): the byte it predicts, bit 8 set while
    the offset's bytes so far agree with it (else 0)."""
    cdef uint64_t d = t - (c.pos + <uint64_t>(n - k)), sofar = 0
    cdef int i
    for i in range(k):
        sofar |= ((c.x86s[XS_DATA] >> (8 * (k - 1 - i))) & 0xFF) << (8 * i)
    if k and (d & ((<uint64_t>1 << (8 * k)) - 1)) != sofar:
        return 0
    return 0x100 | ((d >> (8 * k)) & 0xFF)


cdef inline uint64_t x86_reloc(const Context* c, uint64_t tag, uint64_t state) noexcept nogil:
    """Code bit 14: in a relocation entry whose r_offset the relocation sites predict (x86.pxd,
    ``x86_sites``), the entry's byte k (0-23) with, in r_offset, the byte predicted while the
    bytes so far agree, after it whether it came true, the site's kind, the last byte and the
    3 bytes before the site (its instruction's opcode and ModRM: the symbol); else the state."""
    cdef const uint64_t* x = c.x86h
    cdef uint64_t k = c.pos - x[XH_RSTART], pred = x[XH_RPRED], sofar = 0
    cdef uint64_t i, n, site, before = 0
    if x[XH_RSTART] == 0 or k >= 24 or pred == <uint64_t>-1:
        return hash2(tag, state)
    n = k if k < 8 else 8
    for i in range(n):
        sofar |= ctx_back(c, k - i) << (8 * i)
    if k < 8:
        pred = 0x100 | ((pred >> (8 * k)) & 0xFF) if sofar == pred & (
            (<uint64_t>1 << (8 * k)) - 1) else 0
        return hash2(tag, (k << 32) | (pred << 8) | x[XH_RKIND])
    site = x[XH_BASE] + sofar  # the 3 bytes before the site (its instruction's opcode)
    if sofar < c.pos - x[XH_BASE] and c.pos - site < c.history_mask:
        before = (ctx_back(c, c.pos - site + 1) << 16) | (ctx_back(c, c.pos - site + 2) << 8) | \
            ctx_back(c, c.pos - site + 3) | 0x1000000
    return hash2(tag, (k << 32) | (<uint64_t>(sofar == pred) << 24) | ((c.c8 & 0xFF) << 8) |
                 x[XH_RKIND] | (before << 40))


cdef inline uint64_t x86h_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """x86 code by the instruction history (x86.pxd's XH_*) and the decoder's state: (13) in a
    relative jump's offset, the bytes the third and fourth last jump targets predict, else the
    state; (14) relocation entries (``x86_reloc``); (15) the previous three instructions'
    opcodes and ModRMs and this one's ModRM; (16) as 13 with the last two jump targets."""
    cdef const uint64_t* s = c.x86s
    cdef const uint64_t* x = c.x86h
    cdef uint64_t stage = s[XS_STAGE] % XG_N, op = s[XS_OP] & 0xFFFF
    cdef uint64_t state = stage | (op << 4) | ((s[XS_LEFT] & 15) << 20)
    cdef int n, k, t = XH_T0 if j == 16 else XH_T0 + 2
    if j == 14:
        return x86_reloc(c, tag, state)
    if j == 15:
        return hash2(hash2(tag, state | ((s[XS_MODRM] & 0x1FF) << 24)), x[XH_OPM])
    if stage != XG_DATA or not x86_rel_jump(op & 0xFFF) or not 1 <= (s[XS_LEFT] & 15) <= 4:
        return hash2(tag, state)
    n = 1 if (op & 0xFFF) == 0xEB or (op & 0xFFF) < 0x80 else 4
    k = n - <int>(s[XS_LEFT] & 15)
    if k < 0:
        return hash2(tag, state)
    return hash2(tag, state | (x86_target(c, x[t], k, n) << 24) |
                 (x86_target(c, x[t + 1], k, n) << 33) | (<uint64_t>k << 42))


cdef inline uint64_t risc_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Fixed-width 32-bit big-endian instructions (SPARC, MIPS, PowerPC): the lane (pos mod
    4) and the word's bytes so far, with (10) the previous word's top 19 bits (SPARC's op,
    rd, op2/op3, rs1 and i; MIPS's and PowerPC's opcode and first two registers); (11) the
    top 13 bits of the previous two words (the opcode fields); (12) the top bytes of the
    previous three words."""
    cdef int k = <int>(c.pos & 3)
    cdef uint64_t h = hash2(tag, (c.c8 & ((<uint64_t>1 << (8 * k)) - 1)) | (<uint64_t>k << 32))
    cdef uint64_t r = (c.c8 >> (8 * k)) & 0xFFFFFFFFULL, r2 = (c.c8 >> (8 * k + 32)) & 0xFFFFFFFFULL
    if j == 10:
        return hash2(h, r >> 13)
    if j == 11:
        return hash2(h, (r >> 19) | ((r2 >> 19) << 13))
    return hash2(h, (r >> 24) | ((r2 >> 24) << 8) | (ctx_back(c, <uint64_t>(k + 12)) << 16))


cdef inline uint64_t code_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Machine code.  j = 0-4: instruction streams of 16-bit big-endian words (68000): the
    lane (pos mod 2) and the word's byte so far with (0) the top nibbles of the previous four
    words' first bytes (the instruction classes), (1) the previous word and the first byte of
    the one before, (2) the first bytes of the previous three words (the opcode bytes), (3)
    the previous word without its low 6 bits (the effective address) and the class of the
    one before, (4) the words since the last return or frame set-up (4E75, 4E56; up to 8
    words back) and the previous word.  j = 5: x86, the position in the 32-bit operand of a
    CALL/JMP rel32 (E8, E9) or a near Jcc (0F 8x) within the last four bytes and the operand's
    bytes so far (0: none, then the last byte).  j = 6-9: x86 with the light decoder's state
    (x86.pxd, ``x86_hash``); j = 10-12: 32-bit big-endian RISC words (``risc_hash``); j =
    13-16: x86 with the instruction history (``x86h_hash``); j = 18-22: 68000 with the light
    decoder's state (m68k.pxd, ``m68k_hash``)."""
    cdef int k = <int>(c.pos & 1), i, n
    cdef uint64_t h, w
    if j >= 18:
        return m68k_hash(c.m68k, c.c8, c.pos, tag, j)
    if j >= 13:
        return x86h_hash(c, tag, j)
    if j >= 10:
        return risc_hash(c, tag, j)
    if j >= 6:
        return x86_hash(c, tag, j)
    if j == 5:
        for i in range(1, 5):
            w = ctx_back(c, <uint64_t>i)
            if i <= c.pos and (w == 0xE8 or w == 0xE9 or
                               (0x80 <= w <= 0x8F and ctx_back(c, <uint64_t>(i + 1)) == 0x0F)):
                return hash2(tag, (<uint64_t>i << 40) | (w << 32) |
                             (c.c8 & ((<uint64_t>1 << (8 * (i - 1))) - 1)))
        return hash2(tag, c.c8 & 0xFF)
    h = hash2(tag, (c.c8 & ((<uint64_t>1 << (8 * k)) - 1)) | (<uint64_t>k << 16))
    w = (c.c8 >> (8 * k)) & 0xFFFF  # the previous word
    if j == 0:
        return hash2(h, code_words(c, k, 4, 4, 0xF))
    if j == 1:
        return hash2(h, w | (ctx_back(c, <uint64_t>(k + 4)) << 16))
    if j == 2:
        return hash2(h, code_words(c, k, 3, 0, 0xFF))
    if j == 3:
        return hash2(h, (w & 0xFFC0) | ((ctx_back(c, <uint64_t>(k + 4)) >> 4) << 16))
    n = 8  # j == 4: words back to the last 4E75 or 4E56 (8: none within 8 or the start)
    for i in range(min(8, <int>(c.pos >> 1))):
        if ctx_back(c, <uint64_t>(k + 2 * i + 2)) == 0x4E and \
                (ctx_back(c, <uint64_t>(k + 2 * i + 1)) == 0x75 or
                 ctx_back(c, <uint64_t>(k + 2 * i + 1)) == 0x56):
            n = i
            break
    return hash2(h, w | (<uint64_t>n << 16))


cdef inline uint64_t rows_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Tables whose rows are longer than their records (``ctx_vote_row``): the byte one row
    above (a), two rows above (a2), the record above (u: one record length back), with
    (0) the last byte; (1) a2 and the last byte; (2) the byte after a (above-right) and the
    last two bytes; (3) u and the last byte; (4) the column in the row; (5) whether a
    agreed with a2 and u with the byte above it, and the last byte; (6) above-left,
    above-right and the last byte; (7) the last three bytes."""
    cdef uint64_t p = ctx_row_above(c), r = ctx_record_length(c), a, a2, u, n = ctx_row_length(c)
    if p == 0:
        return hash2(tag, 0)
    a = ctx_back(c, p)
    if j == 0:
        return hash2(tag, (a << 8) | (c.c8 & 0xFF))
    if j == 1:
        return hash2(tag, (a << 16) | (ctx_back(c, p + n) << 8) | (c.c8 & 0xFF))
    if j == 2:
        return hash2(tag, (a << 24) | (ctx_back(c, p - 1) << 16) | (c.c8 & 0xFFFF))
    if j == 3:
        u = ctx_back(c, r) if r else 0
        return hash2(tag, (a << 16) | (u << 8) | (c.c8 & 0xFF) | (r << 24))
    if j == 4:
        return hash2(tag, (a << 16) | (c.pos % n))
    if j == 5:
        a2 = ctx_back(c, p + n)
        u = ctx_back(c, r) if r else 0
        return hash2(tag, (a << 8) | (c.c8 & 0xFF) | (<uint64_t>(a == a2) << 16) |
                     (<uint64_t>(r and u == ctx_back(c, r + p)) << 17) | (u << 24))
    if j == 6:
        return hash2(tag, (a << 24) | (ctx_back(c, p + 1) << 16) | (ctx_back(c, p - 1) << 8) |
                     (c.c8 & 0xFF))
    return hash2(tag, (a << 24) | (c.c8 & 0xFFFFFF))


cdef inline uint64_t w2_word_above(const Context* c) noexcept nogil:
    """The word (letters, case folded; up to 12 each way) at this column of the line
    above, hashed (0: no such column)."""
    cdef uint64_t column = c.pos - c.line_start, a, h = 0, b, k
    if c.line_start <= c.prev_line_start or column >= c.line_start - c.prev_line_start:
        return 0
    a = c.prev_line_start + column
    k = 0
    while k < 12 and a > c.prev_line_start and \
            byte_class(c.history[(a - 1) & c.history_mask]) == 0:
        a -= 1
        k += 1
    for k in range(24):
        if a >= c.line_start:
            break
        b = c.history[a & c.history_mask]
        if byte_class(<int>b) != 0:
            break
        h = hash2(h + 0x41, b | 0x20 if 65 <= b <= 90 else b)
        a += 1
    return h + 1


cdef inline uint64_t words2_hash(const Context* c, uint64_t tag, int j) noexcept nogil:
    """Kind words2 (``ctx_words2``'s trackers), each with the current word (between
    words the last two bytes): (0) the last two tokens (crude stems; a number is one class);
    (1) the last token; (2) the two before it (the last skipped); (3) the word's place in
    the sentence and in the line; (4) the sentence's first word and the place in it; (5) the
    line above's first word and the place in the line; (6) the open brackets and quotes and
    the words since the innermost; (7) the word at this column in the line above; (8) the
    bytes since the last punctuation (no word: they include it); (9) the last capitalised
    word and the words since; (10) the markup mode, tag and attribute and the entity so far;
    (11) the case classes of the last four words and this one's; (12) the lengths of the
    last three words; (13) the column and the bytes above and above-right; (14) the line's
    first word and the previous word; (15) the bytes since the last capitalised word."""
    cdef const uint64_t* w = c.w2
    cdef uint64_t h = c.word0 if c.word_len else hash2(tag, (c.c8 & 0xFFFF) | 0x2020)
    cdef uint64_t p = w[W2_POS], column, above
    if j == 0:
        return hash2(hash2(hash2(tag, h), w[W2_T1]), w[W2_T2])
    if j == 1:
        return hash2(hash2(tag, h), w[W2_T1])
    if j == 2:
        return hash2(hash2(hash2(tag, h), w[W2_T2]), w[W2_T3])
    if j == 3:
        return hash2(hash2(tag, h), min(p & 0xFF, <uint64_t>15) | min(p >> 8, <uint64_t>15) << 4)
    if j == 4:
        return hash2(hash2(hash2(tag, h), w[W2_SFIRST]), min(p & 0xFF, <uint64_t>15))
    if j == 5:
        return hash2(hash2(hash2(tag, h), w[W2_PLFIRST]), min(p >> 8, <uint64_t>15))
    if j == 6:
        return hash2(hash2(tag, h), (w[W2_NEST] & 0xFFFFFFFFFFULL) |
                     min(w[W2_NEST] >> 40, <uint64_t>7) << 40)
    if j == 7:
        return hash2(hash2(tag, h), w2_word_above(c))
    if j == 8:
        return hash2(tag, w[W2_PHRASE])
    if j == 9:
        return hash2(hash2(hash2(tag, h), w[W2_CAPW]), min(w[W2_SINCE], <uint64_t>7))
    if j == 10:
        return hash2(hash2(hash2(hash2(hash2(tag, h), c.mk[MK_MODE] if c.markup else 9),
                                c.mk[MK_TAG] if c.markup else 0),
                          c.mk[MK_ATTR] if c.markup else 0), w[W2_ENTITY])
    if j == 11:
        return hash2(hash2(tag, h), w[W2_CASE] & 0xFF03)
    if j == 12:
        return hash2(hash2(tag, h), w[W2_LENS] | <uint64_t>min(c.word_len, 15) << 12)
    if j == 13:
        column = c.pos - c.line_start
        above = 0
        if c.line_start > c.prev_line_start and column + 1 < c.line_start - c.prev_line_start:
            above = c.history[(c.prev_line_start + column) & c.history_mask] | \
                c.history[(c.prev_line_start + column + 1) & c.history_mask] << 8
        return hash2(hash2(tag, h), (above << 8) | min(column, <uint64_t>255))
    if j == 14:
        return hash2(hash2(hash2(tag, h), w[W2_LFIRST]), c.word1)
    return hash2(tag, w[W2_SINCEH])


cdef inline kind_hash kind_function(int kind) noexcept nogil:
    """The registration of the kinds: id -> function (NULL for an unknown id)."""
    if kind == K_ORDER:
        return order_hash
    if kind == K_WORD:
        return word_hash
    if kind == K_SPARSE:
        return sparse_hash
    if kind == K_RECORD:
        return record_hash
    if kind == K_INDIRECT:
        return indirect_hash
    if kind == K_COLUMN:
        return column_hash
    if kind == K_TEXT:
        return text_hash
    if kind == K_ALIGNED:
        return aligned_hash
    if kind == K_ALIGNED16:
        return aligned16_hash
    if kind == K_NUMERIC:
        return numeric_hash
    if kind == K_MARKUP:
        return markup_hash
    if kind == K_CODE:
        return code_hash
    if kind == K_ROWS:
        return rows_hash
    if kind == K_WORDS2:
        return words2_hash
    return NULL


cdef inline uint64_t kind_tag(int kind, int j) noexcept nogil:
    return <uint64_t>(kind * 64 + j + 1) << 48


cdef inline tuple x86_trackers(contexts, bint predicted=False):
    """Whether the contexts ((kind, j) pairs) need the x86 decoder (code 6-9, 13-16) and its
    instruction history (13-16, and the predicted bytes' inputs: ``predicted``, code bit 17):
    ``ctx_x86_init``'s flags."""
    cdef bint decoder = predicted, history = predicted
    for kind, j in contexts:
        if kind == K_CODE and (6 <= j <= 9 or 13 <= j <= 16):
            decoder = True
            history = history or j >= 13
    return decoder, history


cdef inline bint m68k_on(contexts):
    """Whether the contexts ((kind, j) pairs) need the 68000 decoder (code 18-22)."""
    for kind, j in contexts:
        if kind == K_CODE and (18 <= j <= 22 or j == 24):
            return True
    return False
