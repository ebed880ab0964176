"""bf16fp32 from Python: out[M,N] (fp32) = x[M,K] (bf16) . w[N,K]^T (bf16), fp32 accumulation,
on the backend the library chooses per shape. A thin layer over libbf16fp32.so: arrays come in
through DLPack (PyTorch, JAX, CuPy, NumPy for uint16 bit patterns), every decision stays in C.

    ctx = bf16fp32.Context()
    ctx.linear(x, w, out)          # x [M,K] bf16, w [N,K] bf16, out [M,N] fp32, one device
    bf16fp32.torch.linear(ctx, x, w)   # the same, out allocated by PyTorch
"""
import collections
import ctypes
import operator
import os

from . import _dlpack
from ._capi import (DEVICE, HOST, BackendInfo, Error, LogFn, Options, QuarantineEntry, check,
                    lib)

__all__ = ['Context', 'Error', 'HOST', 'DEVICE', 'Backend', 'Quarantined', 'Operand', 'version']


def version():
    """The loaded library's version (bf16fp32_version)."""
    return lib.bf16fp32_version().decode()


Backend = collections.namedtuple('Backend', 'name where available reason calls failures')
Quarantined = collections.namedtuple('Quarantined', 'backend where m n k ldx ldw ldo status')
Operand = collections.namedtuple('Operand', 'address shape strides')  # for Context.run

_WHERE = {_dlpack.CPU: HOST, _dlpack.CUDA_HOST: HOST,
          _dlpack.CUDA: DEVICE, _dlpack.CUDA_MANAGED: DEVICE}
_BF16_BITS = ((_dlpack.BFLOAT, 16, 1), (_dlpack.UINT, 16, 1))  # bf16, or its bit patterns
_FP32 = (_dlpack.FLOAT, 32, 1)


def _c_int(value, what, bits=64):
    """value as a C integer of that many bits; ctypes would wrap one out of range silently."""
    v = operator.index(value)  # an integer (TypeError for 1.5, '2', ...)
    if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
        raise OverflowError(f'{what}={v} does not fit a {bits}-bit C integer')
    return v


def _int64s(values, what):
    values = [_c_int(v, what) for v in values]
    return (ctypes.c_int64 * max(len(values), 1))(*values), len(values)


def _c_path(path, what):
    """A path (str, bytes or os.PathLike) as C bytes, or None; a NUL would cut it short."""
    if path is None:
        return None
    raw = os.fsencode(path)
    if b'\0' in raw:
        raise ValueError(f'{what}: a NUL character inside {path!r}')
    return raw


def _c_name(name, what):
    """A backend name (str) as C bytes, or None."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f'{what}: a backend name (str), not {type(name).__name__}')
    if '\0' in name:
        raise ValueError(f'{what}: a NUL character inside {name!r}')
    return name.encode()


def _pairs(pairs, what, size):
    """Each item of pairs as a tuple of exactly size values."""
    result = []
    for item in pairs:
        item = tuple(item)
        if len(item) != size:
            raise ValueError(f'{what}: {item!r} has {len(item)} values, expected {size}')
        result.append(item)
    return result


def _leading_dim(view, what):
    """The row pitch of a 2-D view in elements; its rows must be contiguous."""
    rows, cols = view.shape
    if rows == 0 or cols == 0:  # no elements: any strides (numpy exports 0); the C call reads none
        return cols
    if cols > 1 and view.strides[1] != 1:
        raise ValueError(f'{what}: elements of a row must be contiguous (stride '
                         f'{view.strides[1]}, not 1)')
    return view.strides[0] if rows > 1 else cols


class Context:
    """One library context (one device). The options are bf16fp32_options' fields (None: the
    library's default), log a function log(level, line) for the lines that log_level asks
    for (None: they go to stderr); environment variables (BF16FP32_ALGO, ...)
    override them, read at creation and at reset(). Calls may come from many threads at once
    (the library runs without the GIL); reset() and close() must not overlap other calls."""

    def __init__(self, device=None, cpu_threads=None, algo=None, use_pdl=None,
                 workspace_bytes=None, tune_file=None, log_level=None, log=None):
        opt = Options()
        lib.bf16fp32_options_init(ctypes.byref(opt))
        for name, value in (('device', device), ('cpu_threads', cpu_threads),
                            ('use_pdl', use_pdl), ('workspace_bytes', workspace_bytes),
                            ('log_level', log_level)):
            if value is not None:
                v = operator.index(value)  # an integer (TypeError for 1.5, '2', ...)
                setattr(opt, name, v)
                if getattr(opt, name) != v:  # ctypes wraps what the C field cannot hold
                    raise ValueError(f'{name}={v} does not fit the C option')
        self._keep = [_c_name(algo, 'algo'), _c_path(tune_file, 'tune_file')]
        opt.algo, opt.tune_file = self._keep
        if log is not None:  # log(level, line), from whichever thread logs
            if not callable(log):
                raise TypeError(f'log: a function log(level, line), not {type(log).__name__}')
            self._log = LogFn(lambda user, level, line: log(level, line.decode(errors='replace')))
            opt.log_fn = self._log
        handle = ctypes.c_void_p()
        check(lib.bf16fp32_create(ctypes.byref(handle), ctypes.byref(opt)))
        self._ctx = handle

    def close(self):
        """Destroys the context (bf16fp32_destroy); later calls raise ValueError."""
        if getattr(self, '_ctx', None):
            lib.bf16fp32_destroy(self._ctx)
            self._ctx = None

    __del__ = close

    def __reduce__(self):  # a copy would hold the same handle and destroy it a second time
        raise TypeError('a bf16fp32.Context cannot be copied or pickled')

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not getattr(self, '_ctx', None):
            raise ValueError('the context is closed')
        return self._ctx

    def linear(self, x, w, out, stream=None):
        """out = x . w^T with fp32 accumulation; returns out. x [M,K] and w [N,K] bf16 (or
        uint16 bit patterns), out [M,N] fp32, all on the CPU or all on one CUDA device, rows
        contiguous (any row pitch). stream: for device arrays, the cudaStream_t as an int
        (None or 0: the legacy default stream); the arrays are exported for that stream."""
        kinds = [_dlpack.device_of(a) for a in (x, w, out)]
        if kinds[0][0] not in _WHERE:
            raise ValueError(f'x is on DLPack device type {kinds[0][0]}: neither CPU nor CUDA')
        if kinds.count(kinds[0]) != 3:
            raise ValueError(f'x, w and out are on different devices: {kinds}')
        where = _WHERE[kinds[0][0]]
        dl_stream = (stream or 1) if where == DEVICE else None  # DLPack: 1 = legacy default
        xv, wv, ov = (_dlpack.View(a, dl_stream) for a in (x, w, out))
        if ov.read_only:
            raise ValueError('out is read-only')
        if ov.copied:  # the results would go to the copy, and out would keep what it held
            raise ValueError('out was exported as a copy (DLPack IS_COPIED): it cannot be written')
        for view, what, allowed in ((xv, 'x', _BF16_BITS), (wv, 'w', _BF16_BITS),
                                    (ov, 'out', (_FP32,))):
            if view.dtype not in allowed:
                raise TypeError(f'{what}: DLPack type {view.dtype} (code, bits, lanes); expected '
                                f'{"bfloat16 or uint16" if what != "out" else "float32"}')
        self.run(where, xv, wv, ov, stream)
        return out

    def run(self, where, x, w, out, stream=None):
        """The call on operands already known to be of the right types and on `where` (HOST or
        DEVICE): each has .address (int), .shape and .strides (elements), like Operand. For
        adapters (bf16fp32.torch reads a tensor's fields directly, faster than DLPack)."""
        ctx = self._handle()
        if len(x.shape) != 2 or len(w.shape) != 2 or len(out.shape) != 2:
            what, op = next(p for p in (('x', x), ('w', w), ('out', out)) if len(p[1].shape) != 2)
            raise ValueError(f'{what}: {len(op.shape)} dimensions, expected 2')
        (m, k), (n, kw), (om, on) = x.shape, w.shape, out.shape
        if kw != k:
            raise ValueError(f'x is [{m},{k}] and w [{n},{kw}]: K differs')
        if om != m or on != n:
            raise ValueError(f'out is {list(out.shape)}, expected [{m},{n}]')
        check(lib.bf16fp32_linear(ctx, where, m, n, k, x.address, _leading_dim(x, 'x'),
                                  w.address, _leading_dim(w, 'w'), out.address,
                                  _leading_dim(out, 'out'), stream or None))

    def prewarm(self, n, k, ms, where=DEVICE, stream=None):
        """Every piece of lazy work for weight shape (n, k) at each M of ms, on stream, before
        a CUDA graph capture (bf16fp32_prewarm)."""
        arr, count = _int64s(ms, 'm')
        check(lib.bf16fp32_prewarm(self._handle(), _c_int(where, 'where', 32), _c_int(n, 'n'),
                                   _c_int(k, 'k'), arr, _c_int(count, 'len(ms)', 32),
                                   stream or None))

    def select(self, m, n, k, where=DEVICE):
        """(backend name, why): what a contiguous call would try first; a forced backend comes
        first where it can take the shape."""
        name, why = ctypes.c_char_p(), ctypes.create_string_buffer(512)
        check(lib.bf16fp32_select(self._handle(), _c_int(where, 'where', 32), _c_int(m, 'm'),
                                  _c_int(n, 'n'), _c_int(k, 'k'), ctypes.byref(name), why,
                                  len(why)))
        return name.value.decode(), why.value.decode()

    def force_backend(self, name):
        """Forces a backend by name for calls of its location; None or "auto": automatic."""
        check(lib.bf16fp32_force_backend(self._handle(), _c_name(name, 'name')))

    def reset(self):
        """Frees every backend's state, clears plans, quarantine and counters, re-reads the
        environment (an engine calls it when it rebuilds)."""
        check(lib.bf16fp32_reset(self._handle()))

    def backends(self):
        """Every backend in registry order: Backend(name, where, available, reason, calls,
        failures)."""
        ctx, info, result = self._handle(), BackendInfo(), []
        for i in range(lib.bf16fp32_backend_count()):
            check(lib.bf16fp32_backend_info_get(ctx, i, ctypes.byref(info)))
            result.append(Backend(info.name.decode(), info.where, bool(info.available),
                                  info.reason.decode(), info.calls, info.failures))
        return result

    def quarantine(self):
        """The (backend, shape) pairs a recoverable failure took out of service."""
        ctx, count = self._handle(), ctypes.c_int()
        check(lib.bf16fp32_quarantine_list(ctx, None, 0, ctypes.byref(count)))
        entries = (QuarantineEntry * max(count.value, 1))()
        check(lib.bf16fp32_quarantine_list(ctx, entries, count.value, ctypes.byref(count)))
        return [Quarantined(e.backend.decode(), e.where, e.m, e.n, e.k, e.ldx, e.ldw, e.ldo,
                            lib.bf16fp32_status_name(e.status).decode())
                for e in entries[:min(count.value, len(entries))]]

    def describe(self):
        """The machine, its CPU features and each backend's availability (`bf16fp32 info`)."""
        buf = ctypes.create_string_buffer(1 << 16)
        check(lib.bf16fp32_describe(self._handle(), buf, len(buf)))
        return buf.value.decode(errors='replace')

    def tune(self, pairs, ms, out_path=None, where=DEVICE):
        """Times every backend at each (n, k) of pairs and M bucket of ms into the tuning file
        (bf16fp32_tune; out_path None: the context's). Seconds to minutes."""
        flat, count = _int64s((v for pair in _pairs(pairs, 'pairs', 2) for v in pair), 'n, k')
        marr, mcount = _int64s(ms, 'm')
        check(lib.bf16fp32_tune(self._handle(), _c_int(where, 'where', 32), flat,
                                _c_int(count // 2, 'len(pairs)', 32), marr,
                                _c_int(mcount, 'len(ms)', 32), _c_path(out_path, 'out_path')))

    def tune_step(self, gemms, ms, out_path=None, filler_kb=0, trigger='end'):
        """Tunes a workload's step of device GEMMs together (bf16fp32_tune_step_fillers):
        gemms lists (n, k, calls per step) in layer order; filler_kb and trigger ('end',
        'entry', 'none') the kernel put before every call. Minutes."""
        gemms = _pairs(gemms, 'gemms', 3)
        flat, count = _int64s((v for n, k, _ in gemms for v in (n, k)), 'n, k')
        calls = (ctypes.c_int * max(len(gemms), 1))(*[_c_int(g[2], 'calls', 32) for g in gemms])
        marr, mcount = _int64s(ms, 'm')
        triggers = {'end': 0, 'entry': 1, 'none': 2}
        if trigger not in triggers:
            raise ValueError(f'trigger {trigger!r}: one of {", ".join(triggers)}')
        check(lib.bf16fp32_tune_step_fillers(
            self._handle(), flat, calls, _c_int(count // 2, 'len(gemms)', 32), marr,
            _c_int(mcount, 'len(ms)', 32), _c_int(filler_kb, 'filler_kb', 32),
            triggers[trigger], _c_path(out_path, 'out_path')))

