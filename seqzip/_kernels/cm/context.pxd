# cython: language_level=3
# The shared context state: what every context component reads, updated once per symbol.
#
# The history ring, the last 8 bytes (c8), the current and previous words (case folded), the
# separator after the last word, the sentence so far, line starts, the detected record length
# (a byte value seen twice at the same distance votes for that period) and the follow tables
# (the last two bytes that followed each byte and each pair of bytes).
from libc.stdint cimport uint8_t, uint16_t, uint64_t
from libc.stdlib cimport calloc
from libc.string cimport memset
from seqzip._kernels.cm.tables cimport hash2


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


cdef inline int ctx_init(Context* c, int history_bits, bint records) noexcept nogil:
    c.history_mask = (<uint64_t>1 << history_bits) - 1
    c.history = <uint8_t*>calloc(c.history_mask + 1, 1)
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
    return -1 if c.history == NULL else 0


cdef inline uint64_t ctx_back(const Context* c, uint64_t k) noexcept nogil:
    """The byte k positions back (1 = the last), 0 before the start."""
    if k > c.pos:
        return 0
    return c.history[(c.pos - k) & c.history_mask]


cdef inline int byte_class(int b) noexcept nogil:
    """0 letter, 1 digit, 2 space or line break, 3 anything else."""
    if 97 <= (b | 32) <= 122 or b >= 128:
        return 0
    if 48 <= b <= 57:
        return 1
    if b == 32 or b == 10 or b == 13 or b == 9:
        return 2
    return 3


cdef inline void ctx_update(Context* c, uint8_t b, int x) noexcept nogil:
    """After symbol x (byte b): every tracker, once."""
    cdef uint8_t folded
    cdef uint64_t here = c.pos, d
    c.follow1[c.c8 & 0xFF] = <uint16_t>((c.follow1[c.c8 & 0xFF] << 8) | b)
    c.follow2[c.c8 & 0xFFFF] = <uint16_t>((c.follow2[c.c8 & 0xFFFF] << 8) | b)
    c.history[here & c.history_mask] = b
    c.pos += 1
    c.c8 = (c.c8 << 8) | b
    c.c1_index = x
    # words: letters (ASCII, case folded, and bytes >= 128 for UTF-8 text)
    folded = b | 0x20 if 65 <= b <= 90 else b
    if 97 <= folded <= 122 or b >= 128:
        if c.word_len == 0:
            c.before_word = (c.c8 >> 8) & 0xFF
        c.word0 = hash2(c.word0 + 0x57, folded)
        c.word_len += 1
    else:
        if c.word_len:
            c.word2 = c.word1
            c.word1 = c.word0
            c.sentence = hash2(c.sentence, c.word0)
            c.word0 = 0
            c.word_len = 0
            c.separator = 0
        c.separator = ((c.separator << 8) | b) & 0xFFFFFF
        if b == 46 or b == 33 or b == 63:  # . ! ? end a sentence
            c.sentence = 0
    if b == 10:
        c.prev_line_start = c.line_start
        c.line_start = c.pos
    # records: a byte value seen twice at the same distance votes for that period
    if c.records:
        if c.last_pos[b]:
            d = here + 1 - c.last_pos[b]
            if d == c.last_dist[b] and 2 <= d <= 65536:
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
