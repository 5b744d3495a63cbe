# cython: language_level=3
# The shared context state: what every context component reads, updated once per symbol.
#
# The history ring, the last 8 bytes (c8), the current and previous words (case folded), the
# separator after the last word, the sentence so far, line starts, the detected record length
# (a byte value seen twice at the same distance votes for that period) and the follow tables
# (the last two bytes that followed each byte and each pair of bytes); optionally a second
# record-length detector (scored repeat distances: ``periods``) and the text trackers (the
# third previous word, the bracket/quote/tag nesting: ``text``); optionally the row detector
# (a second, longer period: the distance at which 3-byte contexts repeat, scored: ``rows``).
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset
from seqzip._kernels.cm.bin2 cimport B2_WORDS, b2_update
from seqzip._kernels.cm.field cimport F_BYTES, F_INT, F_U64
from seqzip._kernels.cm.tables cimport BIG_HUGE, big_calloc, hash2
from seqzip._kernels.cm.x86 cimport (X86_N, XG_N, XH_BASE, XH_N, XS_DATA, XS_MODRM, XS_OP,
                                     XS_STAGE, x86_end, x86_sites, x86_track, x86_update)
from seqzip._kernels.cm.m68k cimport M68_N, m68k_update


cdef enum:
    PERIODS = 4096               # record=2: slots of the table of scored repeat distances
    PERIOD_MIN = 16              # the score a distance needs to become the record length
    RECORD_MAX = 65536           # the longest record length the run votes detect
    ROW_SLOTS = 65536            # rows: 3-byte contexts (hashed) whose repeats are timed
    ROW_MAX = 65535              # the longest row length
    ROW_WORDS = 2 * ROW_SLOTS + 2 * PERIODS + 4  # rows: the uint32 words of its state
    ROW_LEN = ROW_WORDS - 4      # ... the word of the row length (0: none yet)
    ROW_ABOVE = ROW_WORDS - 3    # ... of the distance to the row above here
    ROW_CELL = ROW_WORDS - 2     # ... of the best-scored distance of all (the cell)


cdef enum:  # markup contexts: the markup trackers, ``mk[]`` (uint64 words; ``ctx_markup``)
    MK_MODE = 0      # where in the markup: MM_TEXT ... MM_VALUE
    MK_DEPTH = 1     # open elements (0..MK_DEPTH_MAX; the stack keeps the last MK_STACK)
    MK_TAG = 2       # the hash of the current (or last) tag's name, case folded
    MK_ATTR = 3      # the hash of the current attribute's name
    MK_VALUE = 4     # the hash of the attribute value so far
    MK_LINE = 5      # the line: indent (bits 0-7), first non-blank byte (8-15), in the
                     # leading blanks (bit 16)
    MK_FLAGS = 6     # the tag closes an element (bit 0), is <!...> or <?...> (bit 1), the
                     # value's quote (bits 8-15: 0 for a value without quotes)
    MK_WORDS = 7     # the words since the last tag (capped at 255)
    MK_STACK0 = 8    # the open elements' names: element d at MK_STACK0 + (d & 7)
    MK_STACK = 8
    MK_PROSE1 = 16   # the last word ended outside tags (the words of the text, not of tags)
    MK_PROSE2 = 17   # ... and the one before it
    MK_STRIPPED = 18  # the last 8 bytes outside tags (newest lowest)
    MK_N = 19
    MK_SINCE = 19    # the bytes since the last tag ended (in text; capped at 255)
    MK_PVALUE = 20   # the hash of the last attribute value completed before this one
    MK_ELPREV = 21   # where the text of the last element opened began the time before (0: none)
    MK_ELPOS = 22    # where the text of the last element named n began: MK_ELPOS + (n >> 40 & 15),
                     # with n's top 16 bits (bits 48-63)
    MK_ALL = 38      # all the words: the state's "markup" the first MK_N, "markup2" the rest
    MK_DEPTH_MAX = 255
    MK_DEPTH_CHECK = 8   # a closing tag pops to its element if it is within this depth


cdef enum:  # the word trackers of kind words2, ``w2[]`` (uint64 words; ``ctx_words2``)
    W2_T1 = 0        # the last token: a word's crude stem (-s -ed -ing -ly stripped) or,
    W2_T2 = 1        # for a number, the number class (W2_NUMBER); and the two before it
    W2_T3 = 2
    W2_P = 3         # W2_P + k: the current word's hash before its last k + 1 letters
    W2_DIGITS = 6    # the digits of the current number so far (0: not in a number)
    W2_POS = 7       # words since the sentence began (bits 0-7) and since the line did (8-15)
    W2_SFIRST = 8    # the sentence's first word
    W2_LFIRST = 9    # the line's first word
    W2_PLFIRST = 10  # the previous line's first word
    W2_NEST = 11     # open brackets and quotes: the innermost four (bytes 0-3, the innermost
                     # lowest), their depth (bits 32-39), the words since the innermost (40-47)
    W2_PHRASE = 12   # the bytes since the last punctuation (it included), hashed
    W2_CAPW = 13     # the last capitalised word not first in its sentence
    W2_SINCE = 14    # the words since it (bits 0-7) ...
    W2_SINCEH = 15   # ... and the bytes since it, hashed
    W2_ENTITY = 16   # the entity so far (&...; 0: not in one)
    W2_CASE = 17     # the current word: first letter upper (bit 0), all upper so far (bit 1);
                     # the case classes of the last four words (bits 8-15: 0 lower, 1
                     # capitalised, 2 all upper)
    W2_LENS = 18     # the lengths of the last three words (4 bits each, the newest lowest)
    W2_N = 19
    W2_NUMBER = 0x4E554D42  # the token of every number


cdef enum:  # the markup modes (mk[MK_MODE])
    MM_TEXT = 0      # outside tags
    MM_NAME = 1      # the tag's name ('<' seen)
    MM_TAG = 2       # inside the tag, between attributes
    MM_ANAME = 3     # an attribute's name
    MM_EQ = 4        # after the attribute's '='
    MM_VALUE = 5     # its value
    MM_MODES = 6


cdef struct Context:
    uint8_t* history
    uint64_t history_mask, pos
    uint64_t c8                  # the last 8 bytes, newest lowest
    int c1_index                 # the last symbol's alphabet index
    uint64_t line_start, prev_line_start
    uint64_t word0, word1, word2  # the current word's hash and the two before
    uint64_t separator, before_word, sentence
    int word_len
    bint records                 # detect the record length
    uint64_t last_pos[256]
    uint64_t last_dist[256]
    uint64_t record_len, record_candidate
    int record_votes, candidate_votes
    uint16_t follow1[256]        # the last two bytes that followed each byte
    uint16_t follow2[65536]      # ... and each pair of bytes
    bint periods                 # record=2: score repeat distances (needs ``records``)
    uint32_t period_d[PERIODS]   # scored repeat distances, by d % PERIODS
    uint32_t period_s[PERIODS]   # ... and their scores
    uint64_t period_len[1]       # the best-scored distance (0: none yet)
    bint text                    # text=1: track the nesting
    uint64_t text_state[2]       # the word before the previous two, the nesting
    bint markup                  # markup contexts: track tags, attributes, open elements
    bint markup2                 # ... and markup contexts 10-12's: the state's second part
    uint64_t mk[MK_ALL]          # ... their state (MK_*)
    bint words2                  # kind words2: the word trackers on
    uint64_t w2[W2_N]            # ... their state (W2_*)
    uint32_t* rows               # rows: the row detector's state (NULL: off), ROW_WORDS words:
                                 # each context's last position and distance (ROW_SLOTS each),
                                 # the scored distances and their scores (PERIODS each), the
                                 # row length, the distance to the row above, the cell, spare
    bint x86                     # x86 code contexts: decode instructions (x86.pxd)
    uint64_t x86s[X86_N]         # ... the decoder's state (XS_*)
    bint x86hist                 # code bits 13-16: the instruction history (XH_*) too
    uint64_t x86h[XH_N]
    uint8_t* x86sites            # ... and the relocation sites, a byte per history byte
    uint64_t* m68k               # 68000 code contexts: the decoder's state (m68k.pxd; NULL: off)
    uint32_t* bin2               # indirect2: its histories and distances (bin2.pxd; NULL: off)


cdef inline int ctx_rows_init(Context* c, bint rows) noexcept nogil:
    """With row contexts (after ``ctx_init``): the row detector's state, zeroed (the
    caller frees ``c.rows``); -1 when it cannot be allocated."""
    c.rows = NULL
    if rows:
        c.rows = <uint32_t*>calloc(ROW_WORDS, sizeof(uint32_t))
        if c.rows == NULL:
            return -1
    return 0


cdef inline int ctx_init(Context* c, int history_bits, bint records, bint periods,
                         bint text, bint rows=False) noexcept nogil:
    """The state at a stream's start (``rows``: with the row detector); -1 when out of
    memory (``ctx_free`` frees what was allocated)."""
    c.history_mask = (<uint64_t>1 << history_bits) - 1
    c.history = <uint8_t*>big_calloc(c.history_mask + 1, BIG_HUGE)
    c.bin2 = NULL  # ctx_bin2_init allocates it
    c.pos = 0
    c.c8 = 0
    c.c1_index = 0
    c.line_start = c.prev_line_start = 0
    c.word0 = c.word1 = c.word2 = 0
    c.separator = c.before_word = c.sentence = 0
    c.word_len = 0
    c.records = records
    memset(c.last_pos, 0, sizeof(c.last_pos))
    memset(c.last_dist, 0, sizeof(c.last_dist))
    c.record_len = c.record_candidate = 0
    c.record_votes = c.candidate_votes = 0
    memset(c.follow1, 0, sizeof(c.follow1))
    memset(c.follow2, 0, sizeof(c.follow2))
    c.periods = periods and records
    memset(c.period_d, 0, sizeof(c.period_d))
    memset(c.period_s, 0, sizeof(c.period_s))
    c.period_len[0] = 0
    c.text = text
    c.text_state[0] = c.text_state[1] = 0
    c.x86 = c.x86hist = False
    c.x86sites = NULL
    c.m68k = NULL
    c.words2 = False
    return -1 if c.history == NULL or ctx_rows_init(c, rows) < 0 else 0


cdef inline void ctx_free(Context* c) noexcept nogil:
    free(c.history)
    free(c.rows)
    free(c.bin2)
    free(c.x86sites)
    free(c.m68k)


cdef inline int ctx_bin2_init(Context* c, bint on) noexcept nogil:
    """With indirect2 contexts (after ``ctx_init``): their state, zeroed; -1 when it cannot
    be allocated."""
    if on:
        c.bin2 = <uint32_t*>calloc(B2_WORDS, sizeof(uint32_t))
        if c.bin2 == NULL:
            return -1
    return 0


cdef inline uint64_t ctx_back(const Context* c, uint64_t k) noexcept nogil:
    """The byte k positions back (1 = the last), 0 before the start."""
    if k > c.pos:
        return 0
    return c.history[(c.pos - k) & c.history_mask]


cdef inline uint64_t ctx_record_length(const Context* c) noexcept nogil:
    """The record length the record contexts use: the scored one once there is one, else the
    run-vote one (0: none)."""
    return c.period_len[0] if c.period_len[0] else c.record_len


cdef inline uint64_t ctx_row_length(const Context* c) noexcept nogil:
    """The row length the row contexts use: the detected one when longer than the record
    length (0: none, or no row detector)."""
    cdef uint64_t p = c.rows[ROW_LEN] if c.rows != NULL else 0
    return p if p > ctx_record_length(c) and p > c.rows[ROW_CELL] else 0


cdef inline uint64_t ctx_row_above(const Context* c) noexcept nogil:
    """The distance to the same place in the row above: the row length, or the distance at
    which the last context seen once a row repeated, when near it (rows of unequal
    lengths: kennedy.xls's rows are 2,963 bytes, some 2,969 or 2,975)."""
    cdef uint64_t p = ctx_row_length(c), q
    if p == 0:
        return 0
    q = c.rows[ROW_ABOVE]
    return q if p - p // 16 - 8 <= q <= p + p // 16 + 8 else p


cdef inline int byte_class(int b) noexcept nogil:
    """0 letter, 1 digit, 2 space or line break, 3 anything else."""
    if 97 <= (b | 32) <= 122 or b >= 128:
        return 0
    if 48 <= b <= 57:
        return 1
    if b == 32 or b == 10 or b == 13 or b == 9:
        return 2
    return 3


cdef inline void ctx_nest(Context* c, uint8_t b) noexcept nogil:
    """text=1: ``text_state[1]``, the nesting: depths of ( [ { (each 0..3, two bits at 0, 2,
    4), inside double quotes (bit 6), inside a markup tag < > (bit 7)."""
    cdef uint64_t n = c.text_state[1], d
    cdef int shift = -1
    if b == 40 or b == 41:
        shift = 0
    elif b == 91 or b == 93:
        shift = 2
    elif b == 123 or b == 125:
        shift = 4
    if shift >= 0:
        d = (n >> shift) & 3
        if b == 40 or b == 91 or b == 123:
            d = d + 1 if d < 3 else d
        elif d > 0:
            d -= 1
        n = (n & ~(<uint64_t>3 << shift)) | (d << shift)
    elif b == 34:
        n ^= 64
    elif b == 60:
        n |= 128
    elif b == 62:
        n &= ~(<uint64_t>128)
    elif b == 10 and not (n & 7):
        n &= ~(<uint64_t>64)  # a quote left open ends with its line, outside brackets
    c.text_state[1] = n


cdef inline void ctx_markup_init(Context* c, int markup) noexcept nogil:
    """With markup contexts (after ``ctx_init``): the markup trackers on (``markup`` bit 0;
    bit 1: contexts 10-12, whose trackers' words the state keeps apart), at a line's start."""
    c.markup = markup != 0
    c.markup2 = markup >= 2
    memset(c.mk, 0, sizeof(c.mk))
    c.mk[MK_LINE] = <uint64_t>1 << 16


cdef inline void ctx_words2_init(Context* c, bint on) noexcept nogil:
    """With kind words2's contexts (after ``ctx_init``): its trackers on, zeroed."""
    c.words2 = on
    memset(c.w2, 0, sizeof(c.w2))


cdef inline bint w2_punct(int b) noexcept nogil:
    """Punctuation that ends a phrase: , ; : . ! ? ( ) [ ] { } and the double quote."""
    return b == 44 or b == 59 or b == 58 or b == 46 or b == 33 or b == 63 or b == 40 or \
        b == 41 or b == 91 or b == 93 or b == 123 or b == 125 or b == 34


cdef inline void w2_token(uint64_t* w, uint64_t token) noexcept nogil:
    w[W2_T3] = w[W2_T2]
    w[W2_T2] = w[W2_T1]
    w[W2_T1] = token


cdef inline void ctx_words2(Context* c, uint8_t b) noexcept nogil:
    """Kind words2's trackers (after ``c8`` took b, before the words move): tokens (crude
    stems, numbers as one class), the words' places in the sentence and the line, the first
    words of the sentence, the line and the line before, the open brackets and quotes, the
    phrase since the last punctuation, the last capitalised word, the entity, the words'
    case classes and lengths (``W2_*``)."""
    cdef uint64_t* w = c.w2
    cdef uint64_t folded = b | 0x20 if 65 <= b <= 90 else b, stem, n, spos, lpos, k
    cdef uint64_t l1, l2, l3
    cdef int cls, length = c.word_len
    cdef bint upper = 65 <= b <= 90
    if 97 <= folded <= 122 or b >= 128:  # a letter: the word's hashes before it, its case
        w[W2_P + 2] = w[W2_P + 1]
        w[W2_P + 1] = w[W2_P]
        w[W2_P] = c.word0 if length else 0
        if length == 0:
            w[W2_CASE] = (w[W2_CASE] & ~(<uint64_t>3)) | upper | (upper << 1)
        elif not upper:
            w[W2_CASE] &= ~(<uint64_t>2)
    elif length:  # a word ended: its stem, places, case class, length
        l1 = ((c.c8 >> 8) & 0xFF) | 0x20
        l2 = ((c.c8 >> 16) & 0xFF) | 0x20
        l3 = ((c.c8 >> 24) & 0xFF) | 0x20
        stem = c.word0
        if length >= 5 and l3 == 105 and l2 == 110 and l1 == 103:  # -ing
            stem = w[W2_P + 2]
        elif length >= 4 and (l2 == 101 and l1 == 100 or l2 == 108 and l1 == 121):  # -ed -ly
            stem = w[W2_P + 1]
        elif length >= 3 and l1 == 115 and l2 != 115:  # -s, not -ss
            stem = w[W2_P]
        w2_token(w, stem)
        spos = w[W2_POS] & 0xFF
        lpos = (w[W2_POS] >> 8) & 0xFF
        if spos == 0:
            w[W2_SFIRST] = c.word0
        if lpos == 0:
            w[W2_LFIRST] = c.word0
        w[W2_POS] = min(spos + 1, <uint64_t>255) | (min(lpos + 1, <uint64_t>255) << 8)
        cls = 0
        if w[W2_CASE] & 1:
            cls = 2 if w[W2_CASE] & 2 and length > 1 else 1
        w[W2_CASE] = (w[W2_CASE] & 0xFF) | ((((w[W2_CASE] >> 8) << 2) | cls) & 0xFF) << 8
        if cls and spos:
            w[W2_CAPW] = c.word0
            w[W2_SINCE] = 0
            w[W2_SINCEH] = 0
        elif w[W2_SINCE] < 255:
            w[W2_SINCE] += 1
        w[W2_LENS] = ((w[W2_LENS] << 4) | min(<uint64_t>length, <uint64_t>15)) & 0xFFF
        n = (w[W2_NEST] >> 40) & 0xFF
        w[W2_NEST] = (w[W2_NEST] & 0xFFFFFFFFFFULL) | (min(n + 1, <uint64_t>255) << 40)
    if 48 <= b <= 57:  # numbers: one token class
        w[W2_DIGITS] += 1
    elif w[W2_DIGITS]:
        w[W2_DIGITS] = 0
        w2_token(w, W2_NUMBER)
    if b == 46 or b == 33 or b == 63:
        w[W2_POS] &= ~(<uint64_t>0xFF)
    if b == 10:
        w[W2_PLFIRST] = w[W2_LFIRST]
        w[W2_LFIRST] = 0
        w[W2_POS] &= 0xFF
    n = w[W2_NEST]
    k = (n >> 32) & 0xFF
    if b == 40 or b == 91 or b == 123 or b == 34 and (n & 0xFF) != 34:  # ( [ { " open
        n = ((n << 8) & 0xFFFFFFFFULL) | b | (min(k + 1, <uint64_t>255) << 32)
    elif (b == 41 or b == 93 or b == 125 or b == 34) and k:  # ) ] } " close
        n = ((n & 0xFFFFFFFFULL) >> 8) | ((k - 1) << 32)
        if k - 1 >= 4:
            n |= <uint64_t>0x3F << 24  # deeper than four: the outer ones forgotten
    w[W2_NEST] = n if n == w[W2_NEST] else n & 0xFFFFFFFFFFULL  # a change: no words since
    if w2_punct(b):
        w[W2_PHRASE] = b
    else:
        w[W2_PHRASE] = hash2(w[W2_PHRASE] + 0x50, 32 if b == 10 else folded)
    w[W2_SINCEH] = hash2(w[W2_SINCEH] + 0x43, folded)
    if b == 38:
        w[W2_ENTITY] = 38
    elif w[W2_ENTITY] and (97 <= folded <= 122 or 48 <= b <= 57 or b == 35):
        w[W2_ENTITY] = hash2(w[W2_ENTITY], b)
    else:
        w[W2_ENTITY] = 0


cdef inline bint mk_name_byte(int b) noexcept nogil:
    """A byte of a tag's or attribute's name: letters, digits, - _ : . and UTF-8."""
    return 97 <= (b | 32) <= 122 or 48 <= b <= 57 or b == 45 or b == 95 or b == 58 or \
        b == 46 or b >= 128


cdef inline void mk_end_tag(Context* c) noexcept nogil:
    """'>' ends a tag: an opening one pushes its element, a closing one pops to its element
    when it is among the MK_DEPTH_CHECK innermost (else nothing: an element never opened);
    self-closing tags, <!...> and <?...> leave the stack alone."""
    cdef uint64_t* m = c.mk
    cdef uint64_t depth = m[MK_DEPTH], tag = m[MK_TAG], k
    m[MK_MODE] = MM_TEXT
    m[MK_WORDS] = 0
    if tag == 0 or m[MK_FLAGS] & 2 or ((c.c8 >> 8) & 0xFF) == 47 or \
            (c.c8 & 0xFFFFFFFFFFULL) == 0x2F2667743BULL:  # <.../> or &lt;.../&gt;
        return
    if m[MK_FLAGS] & 1:
        for k in range(min(depth, <uint64_t>MK_DEPTH_CHECK)):
            if m[MK_STACK0 + ((depth - 1 - k) & (MK_STACK - 1))] == tag:
                m[MK_DEPTH] = depth - 1 - k
                return
    elif depth < MK_DEPTH_MAX:
        m[MK_STACK0 + (depth & (MK_STACK - 1))] = tag
        m[MK_DEPTH] = depth + 1
        k = m[MK_ELPOS + ((tag >> 40) & 15)]  # the name's top 16 bits with the position
        m[MK_ELPREV] = k & 0xFFFFFFFFFFFFULL if k >> 48 == tag >> 48 else 0
        m[MK_ELPOS + ((tag >> 40) & 15)] = (tag >> 48) << 48 | (c.pos & 0xFFFFFFFFFFFFULL)


cdef inline void ctx_markup(Context* c, uint8_t b) noexcept nogil:
    """With markup contexts (after the words): the line's indent and first non-blank byte,
    the words since the last tag, the last two words and eight bytes outside tags, and where
    in the markup the byte leaves us (``MM_*``): the tag's name, the attribute's name and its
    value so far, the stack of open elements.  A '<' not followed by a name (or '/', '!',
    '?') is text; a tag broken by a '<' starts anew; the escaped tags of XML text (&lt; and
    &gt;, as in Wikipedia's dumps) count as tags."""
    cdef uint64_t* m = c.mk
    cdef uint64_t mode = m[MK_MODE], line = m[MK_LINE]
    cdef uint64_t folded = b | 0x20 if 65 <= b <= 90 else b
    cdef bint blank = b == 32 or b == 9 or b == 10 or b == 13
    if mode == MM_TEXT and c.word_len == 0 and byte_class(<int>((c.c8 >> 8) & 0xFF)) == 0:
        m[MK_PROSE2] = m[MK_PROSE1]  # a word of the text ended
        m[MK_PROSE1] = c.word1
    if mode != MM_TEXT:
        m[MK_SINCE] = 0
    elif m[MK_SINCE] < 255:
        m[MK_SINCE] += 1
    if b == 59 and (c.c8 & 0xFFFFFFFFULL) == 0x266C743BULL:  # &lt; is '<'
        b = 60
    elif b == 59 and (c.c8 & 0xFFFFFFFFULL) == 0x2667743BULL:  # &gt; is '>'
        b = 62
    if b == 10:
        line = <uint64_t>1 << 16
    elif line >> 16:
        if b == 32 or b == 9:
            line += (line & 0xFF) < 255
        else:
            line = (line & 0xFF) | (<uint64_t>b << 8)
    m[MK_LINE] = line
    if mode == MM_TEXT and b != 60:
        m[MK_STRIPPED] = (m[MK_STRIPPED] << 8) | b
    if b == 60 and mode != MM_VALUE or b == 60 and m[MK_FLAGS] >> 8 == 0:
        m[MK_MODE] = MM_NAME
        m[MK_TAG] = m[MK_ATTR] = m[MK_VALUE] = m[MK_FLAGS] = 0
        return
    if mode == MM_TEXT:
        if c.word_len == 1 and m[MK_WORDS] < 255:
            m[MK_WORDS] += 1
    elif b == 62 and (mode != MM_VALUE or m[MK_FLAGS] >> 8 == 0):
        mk_end_tag(c)
    elif mode == MM_NAME:
        if m[MK_TAG] == 0 and b == 47 and not m[MK_FLAGS] & 1:
            m[MK_FLAGS] |= 1
        elif m[MK_TAG] == 0 and (b == 33 or b == 63):
            m[MK_FLAGS] |= 2
            m[MK_TAG] = hash2(0x3C, folded)
        elif mk_name_byte(b):
            m[MK_TAG] = hash2(m[MK_TAG] + 0x3C, folded)
        elif m[MK_TAG] == 0:
            m[MK_MODE] = MM_TEXT  # '<' and no name: text
        else:
            m[MK_MODE] = MM_TAG
    elif mode == MM_TAG or mode == MM_ANAME:
        if b == 61:
            m[MK_MODE] = MM_EQ
        elif mk_name_byte(b):
            m[MK_ATTR] = hash2(m[MK_ATTR] + 0x3D if mode == MM_ANAME else 0x3D, folded)
            m[MK_MODE] = MM_ANAME
        elif b == 34 or b == 39:
            m[MK_MODE] = MM_VALUE
            m[MK_FLAGS] = (m[MK_FLAGS] & 0xFF) | (<uint64_t>b << 8)
            m[MK_VALUE] = 0
        else:
            m[MK_MODE] = MM_TAG
    elif mode == MM_EQ:
        if b == 34 or b == 39:
            m[MK_MODE] = MM_VALUE
            m[MK_FLAGS] = (m[MK_FLAGS] & 0xFF) | (<uint64_t>b << 8)
            m[MK_VALUE] = 0
        elif not blank:
            m[MK_MODE] = MM_VALUE  # unquoted: to a blank or '>'
            m[MK_FLAGS] &= 0xFF
            m[MK_VALUE] = hash2(0x22, b)
    else:  # MM_VALUE
        if b == m[MK_FLAGS] >> 8 or m[MK_FLAGS] >> 8 == 0 and blank:
            m[MK_MODE] = MM_TAG
            m[MK_FLAGS] &= 0xFF
            m[MK_PVALUE] = m[MK_VALUE]  # (MK_VALUE itself stays until the next tag)
        else:
            m[MK_VALUE] = hash2(m[MK_VALUE] + 0x22, b)


cdef inline void ctx_vote_period(Context* c, uint8_t b, uint64_t here) noexcept nogil:
    """record=2 (before the run-vote detector moves ``last_pos``/``last_dist``): a byte value
    seen twice at the same distance d (2..65535) scores d in a table of PERIODS slots (slot
    d % PERIODS; another distance in the slot loses one point per vote and is replaced at
    zero).  ``period_len`` becomes the best-scored distance once its score is at least
    PERIOD_MIN and exceeds the current one's by more than 2.  Scores are halved when one
    reaches 2^16, so that the length can follow a change of format."""
    cdef uint64_t d, r = c.period_len[0]
    cdef uint32_t current
    cdef int slot, i
    if c.last_pos[b] == 0:
        return
    d = here + 1 - c.last_pos[b]
    if d != c.last_dist[b] or not 2 <= d <= 65535:
        return
    slot = <int>(d % PERIODS)
    if c.period_d[slot] == d:
        c.period_s[slot] += 1
    elif c.period_s[slot] > 0:
        c.period_s[slot] -= 1
    else:
        c.period_d[slot] = <uint32_t>d
        c.period_s[slot] = 1
    if c.period_d[slot] == d and d != r:
        current = 0
        if r and c.period_d[r % PERIODS] == r:
            current = c.period_s[r % PERIODS]
        if c.period_s[slot] > current + 2 and c.period_s[slot] >= PERIOD_MIN:
            c.period_len[0] = d
    if c.period_s[slot] >= 65536:
        for i in range(PERIODS):
            c.period_s[i] >>= 1


cdef inline uint32_t _row_score(const uint32_t* ds, const uint32_t* ss, uint32_t d) noexcept nogil:
    return ss[d % PERIODS] if d and ds[d % PERIODS] == d else 0


cdef inline void ctx_vote_row(Context* c) noexcept nogil:
    """rows (after the history and ``c8`` took the byte): the last three bytes, hashed to
    one of ROW_SLOTS contexts, seen again at the distance they were seen at the time before
    (2..ROW_MAX) vote for that distance, scored as ``ctx_vote_period`` scores the record
    length (slot d % PERIODS; another distance in the slot loses a point per vote and is
    replaced at zero; scores halve at 2^16).  Two distances are kept: the cell, the best of
    all, and the row, the best longer than the cell and the record length; each becomes a
    distance that scores at least PERIOD_MIN and more than it + 2.  A table's rows repeat
    their cells' addresses and formats: in kennedy.xls the cell is 13 bytes, the row 2,963.
    A context seen at a distance near the row's (within 1/16 + 8) says where the row above
    is here (``ctx_row_above``)."""
    cdef uint32_t* last = c.rows
    cdef uint32_t* dist = c.rows + ROW_SLOTS
    cdef uint32_t* ds = c.rows + 2 * ROW_SLOTS
    cdef uint32_t* ss = c.rows + 2 * ROW_SLOTS + PERIODS
    cdef uint32_t here = <uint32_t>c.pos, d, prev, r = c.rows[ROW_LEN], cell = c.rows[ROW_CELL]
    cdef uint32_t h = ((<uint32_t>(c.c8 & 0xFFFFFF) * <uint32_t>0x9E3779B1) >> 16) & \
        (ROW_SLOTS - 1)
    cdef uint64_t low = max(ctx_record_length(c), <uint64_t>cell)
    cdef int slot, i
    if c.pos < 3:
        return
    prev = last[h]
    last[h] = here
    d = here - prev if prev else 0
    if r > low and d > low and r - r // 16 - 8 <= d <= r + r // 16 + 8:
        c.rows[ROW_ABOVE] = d  # a context once a row: the row above is d back here
    if d != dist[h] or d < 2 or d > ROW_MAX:
        dist[h] = d
        return
    slot = <int>(d % PERIODS)
    if ds[slot] == d:
        ss[slot] += 1
    elif ss[slot] > 0:
        ss[slot] -= 1
    else:
        ds[slot] = d
        ss[slot] = 1
    if ds[slot] == d and ss[slot] >= PERIOD_MIN:
        if d != cell and ss[slot] > _row_score(ds, ss, cell) + 2:
            c.rows[ROW_CELL] = cell = d
            low = max(low, <uint64_t>cell)
        if d > low and d != r and ss[slot] > (_row_score(ds, ss, r) if r > low else 0) + 2:
            c.rows[ROW_LEN] = d
    if ss[slot] >= 65536:
        for i in range(PERIODS):
            ss[i] >>= 1


cdef inline void ctx_update(Context* c, uint8_t b, int x) noexcept nogil:
    """After symbol x (byte b): every tracker, once."""
    cdef uint8_t folded
    cdef uint64_t here = c.pos, d, xo, xm, xd, xs
    if c.bin2 != NULL:
        b2_update(c.bin2, c.c8, here, b)
    c.follow1[c.c8 & 0xFF] = <uint16_t>((c.follow1[c.c8 & 0xFF] << 8) | b)
    c.follow2[c.c8 & 0xFFFF] = <uint16_t>((c.follow2[c.c8 & 0xFFFF] << 8) | b)
    c.history[here & c.history_mask] = b
    c.pos += 1
    c.c8 = (c.c8 << 8) | b
    c.c1_index = x
    # words: letters (ASCII, case folded, and bytes >= 128 for UTF-8 text)
    if c.words2:
        ctx_words2(c, b)
    folded = b | 0x20 if 65 <= b <= 90 else b
    if 97 <= folded <= 122 or b >= 128:
        if c.word_len == 0:
            c.before_word = (c.c8 >> 8) & 0xFF
        c.word0 = hash2(c.word0 + 0x57, folded)
        c.word_len += 1
    else:
        if c.word_len:
            c.text_state[0] = c.word2
            c.word2 = c.word1
            c.word1 = c.word0
            c.sentence = hash2(c.sentence, c.word0)
            c.word0 = 0
            c.word_len = 0
            c.separator = 0
        c.separator = ((c.separator << 8) | b) & 0xFFFFFF
        if b == 46 or b == 33 or b == 63:  # . ! ? end a sentence
            c.sentence = 0
    if c.text:
        ctx_nest(c, b)
    if c.markup:
        ctx_markup(c, b)
    if c.x86:
        xo, xm, xd, xs = c.x86s[XS_OP], c.x86s[XS_MODRM], c.x86s[XS_DATA], c.x86s[XS_STAGE]
        x86_update(c.x86s, b)
        if c.x86hist:
            x86_track(c.x86h, c.x86s, xo, xm, xd, c.pos, b)
            x86_sites(c.x86h, c.x86s, xs % XG_N, xo, c.pos, b, c.c8, c.x86sites, c.history,
                      c.history_mask)
            if c.pos == c.x86h[XH_BASE]:  # .text begins with an instruction
                x86_end(c.x86s)
    if c.m68k != NULL:
        m68k_update(c.m68k, c.c8, c.pos)
    if b == 10:
        c.prev_line_start = c.line_start
        c.line_start = c.pos
    if c.rows != NULL:
        ctx_vote_row(c)
    # records: a byte value seen twice at the same distance votes for that period
    if c.periods:
        ctx_vote_period(c, b, here)
    if c.records:
        if c.last_pos[b]:
            d = here + 1 - c.last_pos[b]
            if d == c.last_dist[b] and 2 <= d <= RECORD_MAX:
                if d == c.record_len:
                    if c.record_votes < 64:
                        c.record_votes += 1
                elif d == c.record_candidate:
                    c.candidate_votes += 1
                    if c.candidate_votes > c.record_votes:
                        c.record_candidate = c.record_len
                        c.record_len = d
                        c.record_votes, c.candidate_votes = c.candidate_votes, 0
                else:
                    c.record_candidate = d
                    c.candidate_votes = 1
            c.last_dist[b] = d
        c.last_pos[b] = here + 1


cdef inline list ctx_fields(Context* c):
    """Its state for get/set (``component.pxd``'s fields); the history and the trackers that
    move only when a symbol ends are heavy (not in save points)."""
    out = [("ctx." + name, F_INT, address, sizeof(int), False) for name, address in (
        ("c1_index", <size_t>&c.c1_index), ("word_len", <size_t>&c.word_len),
        ("record_votes", <size_t>&c.record_votes),
        ("candidate_votes", <size_t>&c.candidate_votes))]
    out += [("ctx." + name, F_U64, address, 8, False) for name, address in (
        ("pos", <size_t>&c.pos), ("c8", <size_t>&c.c8), ("line_start", <size_t>&c.line_start),
        ("prev_line_start", <size_t>&c.prev_line_start), ("word0", <size_t>&c.word0),
        ("word1", <size_t>&c.word1), ("word2", <size_t>&c.word2),
        ("separator", <size_t>&c.separator), ("before_word", <size_t>&c.before_word),
        ("sentence", <size_t>&c.sentence), ("record_len", <size_t>&c.record_len),
        ("record_candidate", <size_t>&c.record_candidate))]
    out += [("history", F_BYTES, <size_t>c.history, c.history_mask + 1, True),
            ("last_pos", F_BYTES, <size_t>&c.last_pos[0], sizeof(c.last_pos), True),
            ("last_dist", F_BYTES, <size_t>&c.last_dist[0], sizeof(c.last_dist), True),
            ("follow1", F_BYTES, <size_t>&c.follow1[0], sizeof(c.follow1), True),
            ("follow2", F_BYTES, <size_t>&c.follow2[0], sizeof(c.follow2), True)]
    if c.periods:
        out += [("period_d", F_BYTES, <size_t>&c.period_d[0], sizeof(c.period_d), True),
                ("period_s", F_BYTES, <size_t>&c.period_s[0], sizeof(c.period_s), True),
                ("period_len", F_BYTES, <size_t>&c.period_len[0], sizeof(c.period_len), True)]
    if c.text:
        out.append(("text_state", F_BYTES, <size_t>&c.text_state[0], sizeof(c.text_state),
                    True))
    if c.markup:
        out.append(("markup", F_BYTES, <size_t>&c.mk[0], MK_N * sizeof(uint64_t), True))
    if c.markup2:
        out.append(("markup2", F_BYTES, <size_t>&c.mk[MK_N], (MK_ALL - MK_N) * 8, True))
    if c.x86:
        out.append(("x86", F_BYTES, <size_t>&c.x86s[0], sizeof(c.x86s), True))
    if c.x86hist:
        out += [("x86h", F_BYTES, <size_t>&c.x86h[0], sizeof(c.x86h), True),
                ("x86sites", F_BYTES, <size_t>c.x86sites, c.history_mask + 1, True)]
    if c.m68k != NULL:
        out.append(("m68k", F_BYTES, <size_t>c.m68k, M68_N * sizeof(uint64_t), True))
    if c.words2:
        out.append(("words2", F_BYTES, <size_t>&c.w2[0], sizeof(c.w2), True))
    if c.rows != NULL:
        out.append(("rows", F_BYTES, <size_t>c.rows, ROW_WORDS * sizeof(uint32_t), True))
    if c.bin2 != NULL:
        out.append(("bin2", F_BYTES, <size_t>c.bin2, B2_WORDS * sizeof(uint32_t), True))
    return out
