"""Test support for the Python binding (a module, hence the underscore): arrays exported through
DLPack without any array library (host memory, or device memory through the CUDA runtime), bf16
conversions, and the fp64 oracle with the element-wise bound of the numerical contract. The
counting of expectations is checks.py's."""
import ctypes
import math
import os
import random
import struct

from bf16fp32 import _dlpack

POISON = 0x7FC0DEAD  # a NaN no backend computes: an output element left unwritten keeps it

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CAPSULE_NAME = b'dltensor'  # module-level: the capsule keeps a pointer to it
_VERSIONED_NAME = b'dltensor_versioned'


class _ManagedVersioned(ctypes.Structure):  # DLManagedTensorVersioned of DLPack 1.x
    _fields_ = [('major', ctypes.c_uint32), ('minor', ctypes.c_uint32),
                ('manager_ctx', ctypes.c_void_p), ('deleter', ctypes.c_void_p),
                ('flags', ctypes.c_uint64), ('dl_tensor', _dlpack._Tensor)]

DTYPES = {'bf16': ((_dlpack.BFLOAT, 16, 1), 2), 'u16': ((_dlpack.UINT, 16, 1), 2),
          'f32': ((_dlpack.FLOAT, 32, 1), 4)}


def bf16_bits(value):
    """The bf16 bit pattern nearest to value (ties to even; NaN stays NaN)."""
    u = struct.unpack('<I', struct.pack('<f', value))[0]
    if math.isnan(value):
        return (u >> 16) | 0x40
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def bf16_value(bits):
    return struct.unpack('<f', struct.pack('<I', bits << 16))[0]


def cudart():
    """The CUDA runtime the library itself loaded (None in a CPU-only build)."""
    with open('/proc/self/maps') as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith('libcudart.so'):
                return ctypes.CDLL(path)
    return None


class Buffer:
    """rows x cols elements of dtype ('bf16', 'u16' or 'f32') at a row pitch (elements), in
    host memory or, with rt (cudart()), on the current CUDA device, exported through DLPack.
    shape, strides and offset (bytes) may be overridden to describe the memory wrongly, as a
    careless producer would; drop names the export's pointer fields left NULL ('shape',
    'strides'), device the (DLPack device type, id) it claims. stream records what the last
    export was asked for. versioned: exports DLPack 1.x records when asked (max_version),
    marked read-only if read_only and a copy if copied."""

    def __init__(self, rows, cols, dtype, pitch=None, rt=None, shape=None, strides=None,
                 offset=0, null=False, versioned=False, read_only=False, drop=(), device=None,
                 copied=False):
        self.versioned, self.read_only, self.drop, self.device = versioned, read_only, drop, device
        self.copied = copied
        self.rows, self.cols, self.dtype, self.rt = rows, cols, dtype, rt
        self.pitch = cols if pitch is None else pitch
        self.code, self.size = DTYPES[dtype]
        self.nbytes = max(rows * self.pitch * self.size, 1) + 64
        self.shape = (rows, cols) if shape is None else shape
        self.strides = (self.pitch, 1) if strides is None else strides
        self.offset, self.null, self.stream, self._exports = offset, null, None, []
        if rt is None:
            self._host = (ctypes.c_char * self.nbytes)()
            self.address = ctypes.addressof(self._host)
        else:
            ptr = ctypes.c_void_p()
            if rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(self.nbytes)) != 0:
                raise MemoryError('cudaMalloc')
            self.address = ptr.value

    def __del__(self):
        if self.rt is not None:
            self.rt.cudaFree(ctypes.c_void_p(self.address))

    def __dlpack_device__(self):
        if self.device is not None:
            return self.device
        return (_dlpack.CPU if self.rt is None else _dlpack.CUDA, 0)

    def __dlpack__(self, stream=None, **versions):
        if versions and not self.versioned:  # as a DLPack 0.x producer: no max_version
            raise TypeError('__dlpack__() got an unexpected keyword argument')
        self.stream = stream
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        strides = (ctypes.c_int64 * len(self.strides))(*self.strides)
        versioned = self.versioned and versions.get('max_version', (0, 0)) >= (1, 0)
        managed = _ManagedVersioned() if versioned else _dlpack._ManagedTensor()
        if versioned:
            managed.major, managed.minor = 1, 0
            managed.flags = (1 if self.read_only else 0) | (2 if self.copied else 0)
        t = managed.dl_tensor
        t.data = None if self.null else self.address
        t.device.device_type, t.device.device_id = self.__dlpack_device__()
        t.ndim = len(self.shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = self.code
        t.shape, t.strides, t.byte_offset = shape, strides, self.offset
        for field in self.drop:
            setattr(t, field, None)
        self._exports.append((managed, shape, strides))  # alive as long as the buffer
        return _new_capsule(ctypes.addressof(managed),
                            _VERSIONED_NAME if versioned else _CAPSULE_NAME, None)

    def _raw(self):
        if self.rt is None:
            return bytes(self._host)
        host = (ctypes.c_char * self.nbytes)()
        assert self.rt.cudaMemcpy(host, ctypes.c_void_p(self.address),
                                  ctypes.c_size_t(self.nbytes), 2) == 0  # device to host
        return bytes(host)

    def _store(self, raw):
        if self.rt is None:
            ctypes.memmove(self._host, raw, self.nbytes)
        else:
            assert self.rt.cudaMemcpy(ctypes.c_void_p(self.address), raw,
                                      ctypes.c_size_t(self.nbytes), 1) == 0  # host to device

    def fill_bits(self, pattern):
        """Every element, padding included, set to the bit pattern (poison)."""
        self.poison = pattern & (0xFFFF if self.size == 2 else 0xFFFFFFFF)
        fmt = '<H' if self.size == 2 else '<I'
        self._store(struct.pack(fmt, self.poison) * (self.nbytes // self.size))

    def untouched(self):
        """Whether every element still holds the poison of the last fill_bits."""
        return all(v == self.poison for v in self.words())

    def poison_state(self):
        """(every element of the rows x cols region overwritten since the last fill_bits,
        every other element, the row padding and the tail included, still its poison)."""
        region = {r * self.pitch + c for r in range(self.rows) for c in range(self.cols)}
        words = self.words()
        return (all(v != self.poison for i, v in enumerate(words) if i in region),
                all(v == self.poison for i, v in enumerate(words) if i not in region))

    def set_rows(self, values):
        """values[r][c] (Python floats) into the elements, bf16-rounded for 16-bit types."""
        raw = bytearray(self._raw())
        for r, row in enumerate(values):
            for c, v in enumerate(row):
                at = (r * self.pitch + c) * self.size
                raw[at:at + self.size] = (struct.pack('<H', bf16_bits(v)) if self.size == 2
                                          else struct.pack('<f', v))
        self._store(bytes(raw))

    def words(self):
        """Every element's bits, padding included (for the poison check)."""
        raw, fmt = self._raw(), '<H' if self.size == 2 else '<I'
        return [struct.unpack_from(fmt, raw, i)[0]
                for i in range(0, self.nbytes - self.size + 1, self.size)]

    def rows_values(self):
        raw = self._raw()
        out = []
        for r in range(self.rows):
            row = []
            for c in range(self.cols):
                at = (r * self.pitch + c) * self.size
                if self.size == 2:
                    row.append(bf16_value(struct.unpack_from('<H', raw, at)[0]))
                else:
                    row.append(struct.unpack_from('<f', raw, at)[0])
            out.append(row)
        return out


def random_rows(rows, cols, rng):
    """Values that bf16 holds exactly, spread over a few binades of both signs."""
    return [[bf16_value(bf16_bits(rng.uniform(-2.0, 2.0))) for _ in range(cols)]
            for _ in range(rows)]


FLT_MIN = 2.0 ** -126  # the smallest normal fp32


def error_bound(k, mag):
    """The numerical contract's bound on |out - fp64 sum| for k products whose magnitudes add to
    mag (a number or a tensor), as src/oracle.c's bf16fp32__error_bound: gamma_(k+1) * mag with
    u = 2^-24, plus k + 1 smallest normals for what flush-to-zero hardware drops."""
    ku = (k + 1) * 2.0 ** -24
    gamma = ku / (1 - ku) if ku < 0.5 else 1.0
    return gamma * mag + (k + 1) * FLT_MIN


def check_against_oracle(x, w, out, what):
    """Every out[i][j] within error_bound of the fp64 sum (NaN where it is NaN, the same
    infinity where it is infinite). Returns the number of violations, each printed."""
    k = len(x[0]) if x else 0
    bad = 0
    for i, xr in enumerate(x):
        for j, wr in enumerate(w):
            terms = [a * b for a, b in zip(xr, wr)]  # exact: bf16 products fit fp64
            finite = all(math.isfinite(t) for t in terms)
            exact = math.fsum(terms) if finite else sum(terms)  # IEEE: NaN or the infinity
            mag = math.fsum(abs(t) for t in terms) if finite else 0.0
            got = out[i][j]
            if math.isnan(exact):
                ok = math.isnan(got)
            elif math.isinf(exact):
                ok = got == exact
            else:
                ok = abs(got - exact) <= error_bound(k, mag)
            if not ok:
                bad += 1
                if bad <= 5:
                    print(f'  {what}: out[{i}][{j}] = {got!r}, oracle {exact!r} '
                          f'(bound {error_bound(k, mag):.3g})')
    return bad


def rng(seed=1234):
    return random.Random(seed)
