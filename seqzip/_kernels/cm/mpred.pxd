# cython: language_level=3
# 68000 predicted words (code bit 23): the bytes the 68000 decoder (m68k.pxd) predicts, as
# mixer inputs in the way of a match model: (0) the word seen last at this place (after the
# same opcode at the same index; for an opcode, after the same two opcodes: ``m68k_last``),
# (1, 2) a branch's displacement from the last and second last targets (``m68k_pred``), (3)
# a branch's displacement or an abs.L's low word from the addresses seen (``m68k_seen``), (4)
# the word seen last after the same instruction so far (before an opcode, after the same
# last instruction: ``m68k_slot2``).  The inputs are predicted.pxd's, one confidence per
# (source, kind of word and byte of it, hits in a row, expected bit).
from libc.stdint cimport uint64_t
from seqzip._kernels.cm.component cimport Component, Cursor
from seqzip._kernels.cm.context cimport Context
from seqzip._kernels.cm.m68k cimport (MS_KIND, MS_LAST2, MW_N, m68k_get, m68k_last, m68k_pred,
                                      m68k_seen, m68k_slot2)
from seqzip._kernels.cm.predicted cimport pb_build

cdef enum:
    MP_CLASSES = 32  # the kind of word and which byte of it


cdef inline int mp_byte(const Context* c, int source, int* k) noexcept nogil:
    """The byte ``source`` predicts next (-1: none) and (``k``) the kind of word and byte."""
    cdef const uint64_t* m = c.m68k
    cdef uint64_t v, lane = c.pos & 1
    if m == NULL:
        return -1
    k[0] = <int>((m[MS_KIND] % MW_N) * 2 + lane)
    if source == 0 or source == 4:
        v = m68k_last(m) if source == 0 else m68k_get(m, MS_LAST2, m68k_slot2(m))
        if lane == 0:
            return <int>(v >> 8)
        return <int>(v & 0xFF) if (v >> 8) == c.c8 & 0xFF else -1
    v = m68k_pred(m, c.c8, c.pos, source - 1) if source < 3 else m68k_seen(m, c.c8, c.pos)
    return <int>(v & 0xFF) if v else -1


cdef inline int mp_build(Component* c, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """The 68000 predicted words' inputs (code bit 23, ``CMSpec.m68k_pred``)."""
    return pb_build(c, mp_byte, MP_CLASSES, 1)
