#!/usr/bin/env python3
"""Host time per call of the Python binding, with nothing for the library to compute (M = 0, so
only the binding and the C entry's checks run): Context.linear (DLPack), bf16fp32.torch.linear
(the tensors' own fields) and the bare ctypes call. Median of 7 runs of 5,000 calls each.

usage: PYTHONPATH=python tools/python-overhead.py [--device cuda]   (needs PyTorch)
"""
import argparse
import statistics
import time

import torch

import bf16fp32
import bf16fp32.torch


def per_call_us(fn, calls=5000, runs=7):
    for _ in range(200):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--device', default='cpu')
    device = parser.parse_args().device
    where = bf16fp32.DEVICE if device == 'cuda' else bf16fp32.HOST
    ctx = bf16fp32.Context()
    x = torch.zeros(0, 4096, dtype=torch.bfloat16, device=device)
    w = torch.zeros(256, 4096, dtype=torch.bfloat16, device=device)
    out = torch.empty(0, 256, device=device)
    stream = torch.cuda.current_stream().cuda_stream if device == 'cuda' else None
    handle = ctx._handle()
    cases = (('Context.linear (DLPack)', lambda: ctx.linear(x, w, out, stream=stream)),
             ('bf16fp32.torch.linear', lambda: bf16fp32.torch.linear(ctx, x, w, out)),
             ('bf16fp32_linear through ctypes alone',
              lambda: bf16fp32.lib.bf16fp32_linear(handle, where, 0, 256, 4096, None, 4096,
                                                   w.data_ptr(), 4096, None, 256, stream)))
    for name, fn in cases:
        print(f'{name}: {per_call_us(fn):.2f} us per call')


if __name__ == '__main__':
    main()
