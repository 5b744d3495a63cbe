# cython: language_level=3
# More general binary contexts (issue 20, round bin2): sparse contexts of kind sparse beyond
# its first six (``CMConfig.sparse2``, j = 6 + bit) and indirect ones of kind indirect beyond
# its first three (``CMConfig.indirect2``, j = 3 + bit), with the state the indirect ones
# read (``B2_*``: uint32 words, allocated only when one is on; ``ctx_update`` moves it).
#
# Sparse (bytes back: 1 the last): (6) 1 and 4; (7) 2 and 4; (8) 4; (9) the high nibbles
# of 1-4; (10) 1's high nibble and 2; (11) 2-4; (12) 2, 4, 6; (13) 1, 3, 5; (14) the low
# nibbles of 1-4; (15) 1 and the high nibbles of 2 and 3; (16) 1 and 8; (17) 1, 2, 5, 6.
# Indirect: (3) the last two bytes and the two that followed the last three bytes the last
# times (hashed to 2^16 histories); (4) the last byte and the three that followed the last
# two bytes the last times; (5) the last byte and how far back it came the time before
# (quantised); (6) the last two bytes and how far back they came the time before; (7) the
# last byte and the distance to the last 0x00; (8) the last byte and the distances to the
# last 0x00, space, newline and 0xFF (coarser); (9) the last three bytes and the two that
# followed them the last times; (10) the last byte and the three that followed it; (11) the
# last byte and the distances to the last newline and space.
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from seqzip._kernels.cm.tables cimport bit_length, hash2

cdef enum:
    B2_F3 = 0                    # 2^16 histories (3 bytes) of hashed 3-byte contexts
    B2_F2 = 65536                # 2^16 histories (3 bytes) of 2-byte contexts
    B2_F1 = 2 * 65536            # 256 histories (3 bytes) of bytes
    B2_LP1 = 2 * 65536 + 256     # each byte's last position + 1
    B2_LP2 = 2 * 65536 + 512     # each 2-byte context's last position + 1
    B2_MARK = 3 * 65536 + 512    # the last positions + 1 of 0x00, space, newline, 0xFF
    B2_D1 = B2_MARK + 4          # the last byte's distance to its time before (0: none)
    B2_D2 = B2_MARK + 5          # the last two bytes' distance to their time before
    B2_WORDS = B2_MARK + 6


cdef inline uint32_t b2_slot3(uint64_t c8) noexcept nogil:
    """The history slot of the last three bytes (hashed to 16 bits)."""
    return (<uint32_t>(c8 & 0xFFFFFF) * <uint32_t>0x9E3779B1) >> 16


cdef inline uint64_t b2_quantise(uint64_t d) noexcept nogil:
    """A distance in 0..47: itself below 8, else its length in bits and the bit after the
    top one (two steps an octave; every distance of 2^23 or more is 47)."""
    cdef uint64_t n = bit_length(d)
    if d < 8:
        return d
    return min(<uint64_t>47, 8 + 2 * (n - 4) + ((d >> (n - 2)) & 1))


cdef inline void b2_update(uint32_t* s, uint64_t c8, uint64_t here, uint8_t b) noexcept nogil:
    """After byte b at position ``here`` (``c8``: the bytes before it): the histories, the
    last positions and the distances the next symbol's contexts read."""
    cdef uint32_t i = b2_slot3(c8)
    cdef uint32_t w = <uint32_t>(((c8 << 8) | b) & 0xFFFF)
    s[B2_F3 + i] = ((s[B2_F3 + i] << 8) | b) & 0xFFFFFF
    s[B2_F2 + (c8 & 0xFFFF)] = ((s[B2_F2 + (c8 & 0xFFFF)] << 8) | b) & 0xFFFFFF
    s[B2_F1 + (c8 & 0xFF)] = ((s[B2_F1 + (c8 & 0xFF)] << 8) | b) & 0xFFFFFF
    s[B2_D1] = <uint32_t>(here + 1 - s[B2_LP1 + b]) if s[B2_LP1 + b] else 0
    s[B2_LP1 + b] = <uint32_t>(here + 1)
    s[B2_D2] = <uint32_t>(here + 1 - s[B2_LP2 + w]) if here and s[B2_LP2 + w] else 0
    s[B2_LP2 + w] = <uint32_t>(here + 1)
    if b == 0:
        s[B2_MARK] = <uint32_t>(here + 1)
    elif b == 32:
        s[B2_MARK + 1] = <uint32_t>(here + 1)
    elif b == 10:
        s[B2_MARK + 2] = <uint32_t>(here + 1)
    elif b == 255:
        s[B2_MARK + 3] = <uint32_t>(here + 1)


cdef inline uint64_t b2_mark(const uint32_t* s, uint64_t pos, int k) noexcept nogil:
    """The quantised distance to the last byte of mark k (0: the last byte was one; 47:
    none yet or far)."""
    if s[B2_MARK + k] == 0:
        return 47
    return b2_quantise((pos - s[B2_MARK + k]) & 0xFFFFFFFFULL)


cdef inline uint64_t b2_sparse_hash(uint64_t c8, uint64_t tag, int j) noexcept nogil:
    """Sparse contexts j >= 6 (the header's list)."""
    if j == 6:
        return hash2(tag, (c8 & 0xFF) | ((c8 >> 16) & 0xFF00))
    if j == 7:
        return hash2(tag, ((c8 >> 8) & 0xFF) | ((c8 >> 16) & 0xFF00))
    if j == 8:
        return hash2(tag, (c8 >> 24) & 0xFF)
    if j == 9:
        return hash2(tag, c8 & 0xF0F0F0F0ULL)
    if j == 10:
        return hash2(tag, ((c8 & 0xF0) >> 4) | ((c8 >> 4) & 0xFF0))
    if j == 11:
        return hash2(tag, c8 & 0xFFFFFF00ULL)
    if j == 12:
        return hash2(tag, c8 & 0xFF00FF00FF00ULL)
    if j == 13:
        return hash2(tag, c8 & 0xFF00FF00FFULL)
    if j == 14:
        return hash2(tag, c8 & 0x0F0F0F0FULL)
    if j == 15:
        return hash2(tag, c8 & 0xF0F0FFULL)
    if j == 16:
        return hash2(tag, (c8 & 0xFF) | ((c8 >> 48) & 0xFF00))
    return hash2(tag, c8 & 0xFFFF0000FFFFULL)


cdef inline uint64_t b2_indirect_hash(const uint32_t* s, uint64_t c8, uint64_t pos,
                                      uint64_t tag, int j) noexcept nogil:
    """Indirect contexts j >= 3 (the header's list)."""
    if j == 3:
        return hash2(tag, (c8 & 0xFFFF) | (<uint64_t>(s[B2_F3 + b2_slot3(c8)] & 0xFFFF) << 16))
    if j == 4:
        return hash2(tag, (c8 & 0xFF) | (<uint64_t>s[B2_F2 + (c8 & 0xFFFF)] << 8))
    if j == 5:
        return hash2(tag, (c8 & 0xFF) | (b2_quantise(s[B2_D1]) << 8))
    if j == 6:
        return hash2(tag, (c8 & 0xFFFF) | (b2_quantise(s[B2_D2]) << 16))
    if j == 7:
        return hash2(tag, (c8 & 0xFF) | (b2_mark(s, pos, 0) << 8))
    if j == 8:
        return hash2(tag, (c8 & 0xFF) | ((b2_mark(s, pos, 0) >> 2) << 8) |
                     ((b2_mark(s, pos, 1) >> 2) << 16) | ((b2_mark(s, pos, 2) >> 2) << 24) |
                     ((b2_mark(s, pos, 3) >> 2) << 32))
    if j == 9:
        return hash2(tag, (c8 & 0xFFFFFF) | (<uint64_t>(s[B2_F3 + b2_slot3(c8)] & 0xFFFF) << 24))
    if j == 10:
        return hash2(tag, (c8 & 0xFF) | (<uint64_t>s[B2_F1 + (c8 & 0xFF)] << 8))
    return hash2(tag, (c8 & 0xFF) | (b2_mark(s, pos, 2) << 8) | (b2_mark(s, pos, 1) << 16))
