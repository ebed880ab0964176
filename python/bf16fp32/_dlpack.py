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


class View:
    """One array as the library sees it: address (int, byte offset applied), DLPack type (code,
    bits, lanes), shape and strides in elements (row-major when the producer gave none). Holds
    the producer's capsule: the memory stays valid while it lives, and the producer frees its
    record when it goes (the capsule is read, not consumed)."""

    def __init__(self, array, stream):
        if not hasattr(array, '__dlpack__'):
            raise TypeError(f'{type(array).__name__} does not export DLPack (__dlpack__)')
        self._capsule = array.__dlpack__(stream=stream)
        # The DLTensor opens the managed record, so it is read in place (faster than the
        # record's field); pointer slices read shape and strides in one step each.
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
