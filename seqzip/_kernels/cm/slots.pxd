# cython: language_level=3
# The slot hash table of the hashed contexts, and its journal for save points.
#
# 2^table_bits slots of 16 bytes in buckets of four (one 64-byte cache line): a check byte and
# 15 bit histories, one per node of a group of up to 4 bits.  A slot is found by a hash of its
# context and the bits of the symbol so far; a missing one replaces the least used of its
# bucket (a collision is rare and never fatal: it only mixes statistics).  While tracking save
# points (Predictor.probs), every slot is journalled before it is written or emptied, so a save
# point need not copy the table.
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport calloc
from libc.string cimport memcpy, memset
from seqzip._kernels.cm.tables cimport STATE_N0, STATE_N1, big_calloc

cdef enum:
    MAX_CONTEXTS = 64
    STATE_CONTEXTS = 48  # a state's per-context buffers hold at least 48 (the bound before
    # 64: the states of older builds keep their sizes and load)
    JOURNAL = 2 * 8 * MAX_CONTEXTS  # slots written or emptied below a save point

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SEQZIP_PREFETCH(p) __builtin_prefetch((p), 1, 1)
    #else
    #define SEQZIP_PREFETCH(p) ((void)(p))
    #endif
    static unsigned char seqzip_cm_empty_slot[16];
    """
    void prefetch "SEQZIP_PREFETCH"(const void* p) noexcept nogil
    uint8_t EMPTY_SLOT "seqzip_cm_empty_slot"[16]   # all-zero: the slot of a context never seen


cdef inline int state_contexts(int n_hashed) noexcept nogil:
    """The entries a state holds of each per-context buffer (``STATE_CONTEXTS``)."""
    return n_hashed if n_hashed > STATE_CONTEXTS else STATE_CONTEXTS


cdef struct SlotTable:
    uint8_t* table       # (4 * buckets, 16): check byte + 15 bit histories
    uint64_t bucket_mask
    bint tracking        # journal slots before writing them
    int jlen
    uint8_t* jaddr[JOURNAL]
    uint8_t jdata[JOURNAL][16]


cdef inline int st_init(SlotTable* t, int table_bits, int how) noexcept nogil:
    t.bucket_mask = ((<uint64_t>1 << table_bits) >> 2) - 1
    t.table = <uint8_t*>big_calloc((t.bucket_mask + 1) * 64, how)
    t.tracking = 0
    t.jlen = 0
    return -1 if t.table == NULL else 0


cdef inline uint64_t st_bytes(const SlotTable* t) noexcept nogil:
    return (t.bucket_mask + 1) * 64


cdef inline void st_prefetch(const SlotTable* t, uint64_t h) noexcept nogil:
    prefetch(t.table + ((h & t.bucket_mask) << 6))


cdef inline void st_journal(SlotTable* t, uint8_t* slot) noexcept nogil:
    """Keep the 16 bytes of ``slot`` before a write (only while tracking save points)."""
    if t.jlen < JOURNAL:
        t.jaddr[t.jlen] = slot
        memcpy(&t.jdata[t.jlen][0], slot, 16)
    t.jlen += 1


cdef inline void st_rewind(SlotTable* t, int jlen) noexcept nogil:
    """Undo the slot writes journalled since the journal held ``jlen`` entries."""
    cdef int k
    for k in range(t.jlen - 1, jlen - 1, -1):
        memcpy(t.jaddr[k], &t.jdata[k][0], 16)
    t.jlen = jlen


cdef inline uint8_t* st_lookup(SlotTable* t, uint64_t h) noexcept nogil:
    """The slot of hash ``h``: the one with its check byte in its bucket of four, or the
    least used of the four, emptied."""
    cdef uint8_t check = <uint8_t>(h >> 56)
    cdef uint8_t* base = t.table + ((h & t.bucket_mask) << 6)
    cdef int i, best = 0, used, least
    if check == 0:
        check = 1
    for i in range(4):
        if base[i << 4] == check:
            return base + (i << 4)
    least = STATE_N0[base[1]] + STATE_N1[base[1]]
    for i in range(1, 4):
        used = STATE_N0[base[(i << 4) + 1]] + STATE_N1[base[(i << 4) + 1]]
        if used < least:
            least = used
            best = i
    base = base + (best << 4)
    if t.tracking:
        st_journal(t, base)
    memset(base, 0, 16)
    base[0] = check
    return base


cdef inline uint8_t* st_find(const SlotTable* t, uint64_t h) noexcept nogil:
    """The slot of hash ``h`` if it exists, else an empty one (nothing is inserted)."""
    cdef uint8_t check = <uint8_t>(h >> 56)
    cdef uint8_t* base = t.table + ((h & t.bucket_mask) << 6)
    cdef int i
    if check == 0:
        check = 1
    for i in range(4):
        if base[i << 4] == check:
            return base + (i << 4)
    return EMPTY_SLOT


cdef inline void st_write(SlotTable* t, uint8_t* slot, int gnode, uint8_t state) noexcept nogil:
    """Set one bit history of a slot (journalled while tracking)."""
    if t.tracking:
        st_journal(t, slot)
    slot[gnode] = state
