"""Reads an array's memory through the DLPack protocol (`__dlpack__`, `__dlpack_device__`): its
address, device, element type, shape and strides, without copying or taking ownership."""
import ctypes

# DLDeviceType and DLDataTypeCode values of dlpack.h that this package accepts.
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
UINT, FLOAT, BFLOAT = 1, 2, 4


class _Device(ctypes.Structure):
    _fields_ = [('device_type', ctypes.c_int), ('device_id', ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [('code', ctypes.c_uint8), ('bits', ctypes.c_uint8), ('lanes', ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device', _Device), ('ndim', ctypes.c_int32),
                ('dtype', _DataType), ('shape', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('byte_offset', ctypes.c_uint64)]


class _ManagedTensor(ctypes.Structure):
    _fields_ = [('dl_tensor', _Tensor), ('manager_ctx', ctypes.c_void_p),
                ('deleter', ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_named = ctypes.pythonapi.PyCapsule_IsValid
_capsule_named.restype = ctypes.c_int
_capsule_named.argtypes = [ctypes.py_object, ctypes.c_char_p]

# DLManagedTensorVersioned (DLPack 1.x): version (two uint32), manager_ctx, deleter, then the
# flags (uint64; bit 0: read-only, bit 1: a copy of the array) and the DLTensor.
_VERSIONED_FLAGS, _VERSIONED_TENSOR, _READ_ONLY, _IS_COPIED = 24, 32, 1, 2


class View:
    """One array as the library sees it: address (int, byte offset applied), DLPack type (code,
    bits, lanes), shape and strides in elements (row-major when the producer gave none),
    read_only and copied (what a DLPack 1.x producer says; False from older ones). Holds
    the producer's capsule: the memory stays valid while it lives, and the producer frees its
    record when it goes (the capsule is read, not consumed)."""

    def __init__(self, array, stream):
        if not hasattr(array, '__dlpack__'):
            raise TypeError(f'{type(array).__name__} does not export DLPack (__dlpack__)')
        try:  # DLPack 1.x, which exports read-only arrays too (numpy's frombuffer, mmap, ...)
            self._capsule = array.__dlpack__(stream=stream, max_version=(1, 0))
        except TypeError:  # a producer of DLPack 0.x only
            self._capsule = array.__dlpack__(stream=stream)
        self.read_only = self.copied = False
        # The DLTensor is read in place in the managed record; pointer slices read shape and
        # strides in one step each.
        if _capsule_named(self._capsule, b'dltensor_versioned'):
            record = _capsule_pointer(self._capsule, b'dltensor_versioned')
            flags = ctypes.c_uint64.from_address(record + _VERSIONED_FLAGS).value
            self.read_only = bool(flags & _READ_ONLY)
            self.copied = bool(flags & _IS_COPIED)
            t = _Tensor.from_address(record + _VERSIONED_TENSOR)
        else:
            t = _Tensor.from_address(_capsule_pointer(self._capsule, b'dltensor'))
        ndim, shape = t.ndim, t.shape
        if not 0 <= ndim <= 8 or (ndim and not shape):
            raise ValueError(f'malformed DLPack export: ndim {ndim}, shape '
                             f'{"NULL" if not shape else "given"}')
        data = t.data
        self.address = data + t.byte_offset if data else 0  # NULL stays NULL for the C check
        dtype = t.dtype
        self.dtype = (dtype.code, dtype.bits, dtype.lanes)
        self.shape = tuple(shape[:ndim])
        strides = t.strides
        self.strides = tuple(strides[:ndim]) if strides else _row_major(self.shape)


def _row_major(shape):
    strides, stride = [], 1
    for size in reversed(shape):
        strides.append(stride)
        stride *= size
    return tuple(reversed(strides))


def device_of(array):
    """(device type, id) from `__dlpack_device__`, which a producer answers without exporting."""
    if not hasattr(array, '__dlpack_device__'):
        raise TypeError(f'{type(array).__name__} does not export DLPack (__dlpack_device__)')
    kind, index = array.__dlpack_device__()
    return int(kind), int(index)
