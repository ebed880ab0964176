"""The C library through ctypes: where it is loaded from, its structs and prototypes, and the
status codes turned into exceptions. Mirrors include/bf16fp32.h and nothing more."""
import ctypes
import ctypes.util
import os

HOST, DEVICE = 0, 1  # bf16fp32_location


class Error(Exception):
    """A call returned a status other than OK. status (int) and name ("BAD_SIZE", ...) say which;
    detail is the library's thread-local last-error text (call, file:line, vendor message)."""

    def __init__(self, status, name, message, detail):
        super().__init__(f'{name}: {message}' + (f' ({detail})' if detail else ''))
        self.status, self.name, self.message, self.detail = status, name, message, detail

    def __reduce__(self):  # pickle and copy (a worker's error sent back) rebuild it whole
        return Error, (self.status, self.name, self.message, self.detail)


# bf16fp32_log_fn: (user, level, line)
LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


class Options(ctypes.Structure):
    _fields_ = [('device', ctypes.c_int), ('cpu_threads', ctypes.c_int),
                ('algo', ctypes.c_char_p), ('use_pdl', ctypes.c_int),
                ('workspace_bytes', ctypes.c_size_t), ('tune_file', ctypes.c_char_p),
                ('log_level', ctypes.c_int), ('log_fn', LogFn),
                ('log_user', ctypes.c_void_p)]


class BackendInfo(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char_p), ('where', ctypes.c_int), ('available', ctypes.c_int),
                ('reason', ctypes.c_char * 160), ('calls', ctypes.c_uint64),
                ('failures', ctypes.c_uint64)]


class QuarantineEntry(ctypes.Structure):
    _fields_ = [('backend', ctypes.c_char_p), ('where', ctypes.c_int), ('m', ctypes.c_int64),
                ('n', ctypes.c_int64), ('k', ctypes.c_int64), ('ldx', ctypes.c_int64),
                ('ldw', ctypes.c_int64), ('ldo', ctypes.c_int64), ('status', ctypes.c_int)]


def _library_path():
    """BF16FP32_LIBRARY if set, else a libbf16fp32.so beside this package, else the source
    tree's build/ (python/ sits beside it), else the system's search path."""
    path = os.environ.get('BF16FP32_LIBRARY')
    if path is not None:
        if not os.path.isfile(path):
            raise ImportError(f'BF16FP32_LIBRARY={path!r} is not a file')
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, 'libbf16fp32.so'),
                      os.path.join(here, '..', '..', 'build', 'libbf16fp32.so')):
        if os.path.isfile(candidate):
            return os.path.normpath(candidate)
    found = ctypes.util.find_library('bf16fp32')
    if found is None:
        raise ImportError('libbf16fp32.so not found: build it (`make`) or set BF16FP32_LIBRARY '
                          'to its path')
    return found


def _declare(lib):
    i64, i32, vp, cp = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
    p64 = ctypes.POINTER(ctypes.c_int64)
    protos = {
        'bf16fp32_status_name': (cp, [i32]),
        'bf16fp32_status_message': (cp, [i32]),
        'bf16fp32_last_error': (cp, []),
        'bf16fp32_options_init': (None, [ctypes.POINTER(Options)]),
        'bf16fp32_create': (i32, [ctypes.POINTER(vp), ctypes.POINTER(Options)]),
        'bf16fp32_destroy': (None, [vp]),
        'bf16fp32_reset': (i32, [vp]),
        'bf16fp32_linear': (i32, [vp, i32, i64, i64, i64, vp, i64, vp, i64, vp, i64, vp]),
        'bf16fp32_prewarm': (i32, [vp, i32, i64, i64, p64, i32, vp]),
        'bf16fp32_force_backend': (i32, [vp, cp]),
        'bf16fp32_select': (i32, [vp, i32, i64, i64, i64, ctypes.POINTER(cp), cp,
                                  ctypes.c_size_t]),
        'bf16fp32_backend_count': (i32, []),
        'bf16fp32_backend_info_get': (i32, [vp, i32, ctypes.POINTER(BackendInfo)]),
        'bf16fp32_quarantine_list': (i32, [vp, ctypes.POINTER(QuarantineEntry), i32,
                                           ctypes.POINTER(i32)]),
        'bf16fp32_describe': (i32, [vp, cp, ctypes.c_size_t]),
        'bf16fp32_version': (cp, []),
        'bf16fp32_tune': (i32, [vp, i32, p64, i32, p64, i32, cp]),
        'bf16fp32_tune_step_fillers': (i32, [vp, p64, ctypes.POINTER(i32), i32, p64, i32, i32,
                                             i32, cp]),
    }
    for name, (restype, argtypes) in protos.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


# ctypes.CDLL releases the GIL during each call, so Python threads call the library at once.
lib = _declare(ctypes.CDLL(_library_path()))


def check(status):
    """Raises Error for a status other than OK, with this thread's last-error detail."""
    if status != 0:
        raise Error(status, lib.bf16fp32_status_name(status).decode(),
                    lib.bf16fp32_status_message(status).decode(),
                    lib.bf16fp32_last_error().decode(errors='replace'))
