# cython: language_level=3
# The types of the fields a component names for get/set state (``component.pxd``): each
# field is ``(name, type, address, bytes, heavy)``; heavy fields (the large tables that move
# only when a symbol ends, or are journalled) are left out of save points.
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy
from seqzip._core cimport raw_get

cdef enum:
    F_INT = 0        # a C int scalar
    F_LONG = 1       # a C long scalar
    F_U64 = 2        # a uint64_t scalar
    F_F64 = 3        # a double scalar
    F_BYTES = 4      # a buffer of ``bytes`` bytes


cdef inline object field_read(int kind, size_t address, size_t size):
    """A field's value: a Python number, or a copy of a buffer (a uint8 array)."""
    if kind == F_INT:
        return (<int*>address)[0]
    if kind == F_LONG:
        return (<long*>address)[0]
    if kind == F_U64:
        return (<uint64_t*>address)[0]
    if kind == F_F64:
        return (<double*>address)[0]
    return raw_get(<void*>address, size)


cdef inline void field_write(int kind, size_t address, object value):
    """Set a scalar field, or a buffer from a uint8 array of its size."""
    cdef const uint8_t[::1] v
    if kind == F_INT:
        (<int*>address)[0] = value
    elif kind == F_LONG:
        (<long*>address)[0] = value
    elif kind == F_U64:
        (<uint64_t*>address)[0] = value
    elif kind == F_F64:
        (<double*>address)[0] = value
    else:
        v = value
        if v.shape[0]:
            memcpy(<void*>address, &v[0], v.shape[0])
