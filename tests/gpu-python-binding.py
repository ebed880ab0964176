#!/usr/bin/env python3
"""The Python binding on device memory: every available device backend against the fp64 oracle
through DLPack (odd sizes, row pitches, M = 1 to 200, NaN/Inf, poisoned outputs) on a stream of
our own, and a call captured into a CUDA graph after prewarm. Exits 77 without a GPU."""
import ctypes
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
import bf16fp32  # noqa: E402
from checks import SKIP, Checks  # noqa: E402
from dlpack_buffer import (POISON, Buffer, check_against_oracle, cudart, random_rows,  # noqa: E402
                           rng)

ctx = bf16fp32.Context()
device = [b.name for b in ctx.backends() if b.where == bf16fp32.DEVICE and b.available]
rt = cudart()
if not device or rt is None:
    print('gpu-python-binding: no usable CUDA device, skipped')
    sys.exit(SKIP)

c = Checks()
r = rng(99)
handle = ctypes.c_void_p()
assert rt.cudaStreamCreate(ctypes.byref(handle)) == 0
stream = handle.value


def sync():
    assert rt.cudaStreamSynchronize(ctypes.c_void_p(stream)) == 0


def operands(m, n, k, pads, x=None, w=None):
    x = random_rows(m, k, r) if x is None else x
    w = random_rows(n, k, r) if w is None else w
    xb, wb = Buffer(m, k, 'bf16', k + pads[0], rt), Buffer(n, k, 'bf16', k + pads[1], rt)
    ob = Buffer(m, n, 'f32', n + pads[2], rt)
    xb.set_rows(x)
    wb.set_rows(w)
    ob.fill_bits(POISON)
    return x, w, xb, wb, ob


def verify(x, w, ob, what):
    c.expect(check_against_oracle(x, w, ob.rows_values(), what) == 0, f'{what}: oracle bound')
    c.expect(all(ob.poison_state()), f'{what}: every element of out written, nothing else')


for backend in device + ['auto']:
    ctx.force_backend(backend)
    for m, n, k, pads in ((1, 256, 512, (0, 0, 0)), (7, 48, 264, (8, 16, 8)),
                          (64, 32, 136, (0, 8, 0)), (200, 16, 72, (8, 0, 16)),
                          (3, 40, 129, (1, 3, 5))):
        x, w, xb, wb, ob = operands(m, n, k, pads)
        ctx.linear(xb, wb, ob, stream=stream)
        c.expect(xb.stream == stream, f'{backend}: exported for the call\'s stream')
        sync()
        verify(x, w, ob, f'{backend} {m}x{n}x{k} pads {pads}')
    x, w = random_rows(9, 64, r), random_rows(32, 64, r)
    x[0][3], x[1][5], w[2][7], w[3][0], x[2][0] = math.nan, math.inf, -math.inf, math.inf, 0.0
    x, w, xb, wb, ob = operands(9, 32, 64, (0, 0, 0), x, w)
    ctx.linear(xb, wb, ob, stream=stream)
    sync()
    verify(x, w, ob, f'{backend} NaN/Inf')
    if backend != 'auto':
        calls = {b.name: b.calls for b in ctx.backends()}
        c.expect(calls[backend] > 0, f'{backend} ran: {calls}')
ctx.force_backend(None)

# The default stream (None) works too.
x, w, xb, wb, ob = operands(4, 64, 128, (0, 0, 0))
ctx.linear(xb, wb, ob)
c.expect(xb.stream == 1, 'exported for the legacy default stream (DLPack 1)')
assert rt.cudaDeviceSynchronize() == 0
verify(x, w, ob, 'default stream')

# Captured into a CUDA graph after prewarm, replayed on new x.
m, n, k = 16, 256, 1024
ctx.prewarm(n, k, [m], stream=stream)
x, w, xb, wb, ob = operands(m, n, k, (0, 0, 0))
graph, graph_exec = ctypes.c_void_p(), ctypes.c_void_p()
assert rt.cudaStreamBeginCapture(ctypes.c_void_p(stream), 0) == 0  # global mode
ctx.linear(xb, wb, ob, stream=stream)
assert rt.cudaStreamEndCapture(ctypes.c_void_p(stream), ctypes.byref(graph)) == 0
assert rt.cudaGraphInstantiateWithFlags(ctypes.byref(graph_exec), graph,
                                        ctypes.c_ulonglong(0)) == 0
x = random_rows(m, k, r)
xb.set_rows(x)
assert rt.cudaGraphLaunch(graph_exec, ctypes.c_void_p(stream)) == 0
sync()
verify(x, w, ob, 'graph replay')
rt.cudaGraphExecDestroy(graph_exec)
rt.cudaGraphDestroy(graph)

# A host array with device arrays: refused before anything runs.
_, _, xb, wb, ob = operands(2, 16, 32, (0, 0, 0))
c.raises(ValueError, lambda: ctx.linear(Buffer(2, 32, 'bf16'), wb, ob, stream=stream),
         'host x with device w and out')
c.expect(ob.untouched(), 'mixed memories: out untouched')
c.expect(ctx.quarantine() == [], f'nothing quarantined: {ctx.quarantine()}')
rt.cudaStreamDestroy(ctypes.c_void_p(stream))
ctx.close()
c.finish('gpu-python-binding')
