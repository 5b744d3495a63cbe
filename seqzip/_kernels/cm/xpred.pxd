# cython: language_level=3
# x86 predicted bytes (code bit 17): the bytes the instruction history (x86.pxd's XH_*,
# ``kinds.x86_reloc`` and ``x86_target``) predicts, as mixer inputs in the way of a match
# model: (0) a relocation entry's r_offset from the relocation sites, (1, 2) a relative
# jump's offset from the last and second last jump targets.  A hashed context keyed by the
# predicted byte learns each value apart; these inputs (predicted.pxd's) learn one confidence
# per (source, byte of the field, hits in a row, expected bit) for every value.  Also the
# decoders' set-up on the context state (x86 and 68000).
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport calloc
from libc.string cimport memset
from seqzip._kernels.cm.component cimport Component, Cursor
from seqzip._kernels.cm.context cimport Context, ctx_back
from seqzip._kernels.cm.kinds cimport m68k_on, x86_target, x86_trackers
from seqzip._kernels.cm.m68k cimport M68_N
from seqzip._kernels.cm.predicted cimport pb_build
from seqzip._kernels.cm.selectors cimport SEL_M68K, SEL_X86
from seqzip._kernels.cm.x86 cimport (XG_DATA, XG_N, XH_RPRED, XH_RSTART, XH_T0, XS_LEFT, XS_OP,
                                     XS_STAGE, x86_rel_jump)

cdef enum:
    XP_CLASSES = 8  # which byte of the field


cdef inline int xp_byte(const Context* c, int source, int* k) noexcept nogil:
    """The byte ``source`` predicts next (-1: none) and (``k``) which of its field."""
    cdef const uint64_t* x = c.x86h
    cdef const uint64_t* s = c.x86s
    cdef uint64_t pred, sofar = 0, op = s[XS_OP] & 0xFFF, i, j, left = s[XS_LEFT] & 15
    cdef int n
    if not c.x86hist:
        return -1
    if source == 0:
        j = c.pos - x[XH_RSTART]
        pred = x[XH_RPRED]
        if x[XH_RSTART] == 0 or j >= 8 or pred == <uint64_t>-1:
            return -1
        for i in range(j):
            sofar |= ctx_back(c, j - i) << (8 * i)
        k[0] = <int>j
        return <int>((pred >> (8 * j)) & 0xFF) if sofar == pred & (
            (<uint64_t>1 << (8 * j)) - 1) else -1
    if s[XS_STAGE] % XG_N != XG_DATA or not x86_rel_jump(op) or not 1 <= left <= 4:
        return -1
    n = 1 if op == 0xEB or op < 0x80 else 4
    if n < <int>left:
        return -1
    k[0] = n - <int>left
    pred = x86_target(c, x[XH_T0 + source - 1], k[0], n)
    return <int>(pred & 0xFF) if pred else -1


cdef inline int xp_build(Component* c, const Cursor* at, object spec, object arg,
                         int index) except -1:
    """The x86 predicted bytes' inputs (code bit 17, ``CMSpec.x86_pred``; the 68000 ones:
    mpred.pxd's ``mp_build``)."""
    return pb_build(c, xp_byte, XP_CLASSES, 0)


cdef inline int ctx_x86_init(Context* c, bint x86, bint hist=False) noexcept nogil:
    """With x86 code contexts (after ``ctx_init``): the decoder on, before an opcode (and with
    ``hist`` its instruction history and relocation sites, x86.pxd's XH_*); -1 when out of
    memory."""
    c.x86 = x86
    c.x86hist = hist and x86
    memset(c.x86s, 0, sizeof(c.x86s))
    memset(c.x86h, 0, sizeof(c.x86h))
    if c.x86hist:
        c.x86sites = <uint8_t*>calloc(c.history_mask + 1, 1)
        if c.x86sites == NULL:
            return -1
    return 0


cdef inline int ctx_m68k_init(Context* c, bint on) noexcept nogil:
    """With 68000 code contexts (after ``ctx_init``): the decoder's state (m68k.pxd), zeroed;
    -1 when out of memory.  ``ctx_free`` frees it."""
    if on:
        c.m68k = <uint64_t*>calloc(M68_N, sizeof(uint64_t))
        if c.m68k == NULL:
            return -1
    return 0


cdef inline int xp_context_init(Context* c, spec) except -1:
    """The x86 decoder on the context state when ``spec``'s contexts (code bits 6-9, 13-16),
    its weight sets (x86) or the predicted bytes (``x86_pred``) read it, and its instruction
    history and relocation sites when bits 13-17 do; the 68000 decoder (m68k.pxd) when code
    bits 18-23 do."""
    x86 = x86_trackers(spec.contexts, getattr(spec, "x86_pred", False))
    if ctx_x86_init(c, x86[0] or SEL_X86 in spec.selectors, x86[1]):
        raise MemoryError()
    if ctx_m68k_init(c, m68k_on(spec.contexts) or getattr(spec, "m68k_pred", False) or
                     SEL_M68K in spec.selectors):
        raise MemoryError()
    return 0
