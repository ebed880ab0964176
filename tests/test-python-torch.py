#!/usr/bin/env python3
"""The Python binding with PyTorch tensors: bf16fp32.torch.linear and Context.linear against
PyTorch's fp64 product with the element-wise bound (views with a row pitch, M = 1, NaN/Inf),
PyTorch's own refusals passed on, the registered operator (opcheck, torch.compile), and on a
GPU: the current stream, a side stream and torch.cuda.graph capture after prewarm. Exits 77
where PyTorch is not installed."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
from checks import SKIP, Checks  # noqa: E402

try:
    import torch
except ImportError:
    print('test-python-torch: PyTorch is not installed, skipped')
    sys.exit(SKIP)
import bf16fp32  # noqa: E402
import bf16fp32.torch  # noqa: E402
from dlpack_buffer import error_bound  # noqa: E402

c = Checks()
gen = torch.Generator().manual_seed(7)


def rand(rows, cols, device, pitch=None):
    """A bf16 [rows, cols] tensor, a view of [rows, pitch] storage when pitch is given."""
    full = (torch.rand(rows, pitch or cols, generator=gen) * 4 - 2).to(torch.bfloat16)
    return full.to(device)[:, :cols]  # sliced after the copy, which would drop the pitch


def within_bound(x, w, out, what):
    """out against the fp64 product: |out - ref| within the contract's error_bound element-wise,
    NaN and the infinities where the reference has them."""
    xd, wd = x.double().cpu(), w.double().cpu()
    ref = xd @ wd.T
    bound = error_bound(x.shape[1], xd.abs() @ wd.abs().T)
    got = out.double().cpu()
    finite = torch.isfinite(ref)
    ok = ((got - ref).abs() <= bound) | ~finite
    ok &= torch.where(torch.isnan(ref), torch.isnan(got), torch.ones_like(ok))
    ok &= torch.where(torch.isinf(ref), got == ref, torch.ones_like(ok))
    c.expect(bool(ok.all()), f'{what}: {int((~ok).sum())} elements outside the bound')


def suite(ctx, device):
    for m, n, k, pitch in ((1, 256, 512, None), (7, 48, 264, 272), (33, 40, 129, None),
                           (128, 64, 1024, 1032), (3, 16, 0, None)):
        x, w = rand(m, k, device, pitch), rand(n, k, device, pitch)
        c.expect(pitch is None or x.stride(0) == w.stride(0) == pitch, f'{device}: pitch kept')
        out = bf16fp32.torch.linear(ctx, x, w)
        c.expect(out.shape == (m, n) and out.dtype == torch.float32, f'{device}: out [{m},{n}]')
        within_bound(x, w, out, f'{device} {m}x{n}x{k} pitch {pitch}')
    x, w = rand(5, 64, 'cpu'), rand(24, 64, 'cpu')
    x[0, 3], x[1, 5], w[2, 7], w[3, 0], x[2, 0] = float('nan'), float('inf'), float('-inf'), \
        float('inf'), 0.0
    x, w = x.to(device), w.to(device)
    out = torch.full((5, 24), 12345.0, device=device)
    c.expect(ctx.linear(x, w, out, stream=stream_of(x)) is out, f'{device}: returns out')
    within_bound(x, w, out, f'{device} NaN/Inf')
    # Refusals: w transposed (columns strided), float inputs, a tensor that needs grad.
    x, w = rand(4, 32, device), rand(8, 32, device)
    column_major = w.T.contiguous().T  # w's values, each row's elements N apart
    e = c.raises(ValueError, lambda: bf16fp32.torch.linear(ctx, x, column_major),
                 f'{device}: w [N,K] with K strided')
    c.expect(e is not None and 'contiguous' in str(e), f'{device}: says why: {e}')
    c.raises(TypeError, lambda: bf16fp32.torch.linear(ctx, x.float(), w),
             f'{device}: fp32 x')
    c.raises(ValueError, lambda: bf16fp32.torch.linear(ctx, x[0, 0], w), f'{device}: 0-dim x')
    for other in ('meta',) + (('cpu',) if device != 'cpu' else ()):  # w, then out elsewhere
        c.raises(ValueError, lambda: bf16fp32.torch.linear(ctx, x, w.to(other)),
                 f'{device}: w on {other}')
        c.raises(ValueError, lambda: bf16fp32.torch.linear(
            ctx, x, w, torch.empty(4, 8, device=other)), f'{device}: out on {other}')
    c.raises(ValueError, lambda: bf16fp32.torch.linear(ctx, x.to('meta'), w.to('meta')),
             f'{device}: x and w on meta')
    c.raises(BufferError,
             lambda: ctx.linear(x.requires_grad_(), w, torch.empty(4, 8, device=device)),
             f'{device}: x that requires grad (PyTorch refuses to export it)')
    c.raises(RuntimeError, lambda: bf16fp32.torch.linear(ctx, x, w),
             f'{device}: x that requires grad, grad mode on')
    c.raises(RuntimeError, lambda: bf16fp32.torch.linear(ctx, x.detach(), w.requires_grad_()),
             f'{device}: w that requires grad, grad mode on')
    c.raises(RuntimeError, lambda: bf16fp32.torch.linear(
        ctx, x.detach(), w.detach(), torch.empty(4, 8, device=device, requires_grad=True)),
             f'{device}: out that requires grad, grad mode on')
    with torch.no_grad():
        within_bound(x, w, bf16fp32.torch.linear(ctx, x, w), f'{device}: under no_grad')


def stream_of(t):
    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else None


def operator(op, device):
    """The registered operator: PyTorch's own checks (schema, fake, AOT dispatch), then traced
    whole by torch.compile (fullgraph: a graph break fails) and against the oracle."""
    x, w = rand(6, 96, device, 104), rand(40, 96, device)
    try:
        result = torch.library.opcheck(op, (x, w))
    except Exception as e:  # opcheck raises on the first failed check
        result = {'raised': f'{type(e).__name__}: {e}'}
    c.expect(all(v == 'SUCCESS' for v in result.values()), f'{device}: opcheck {result}')
    compiled = torch.compile(lambda a, b: op(a, b) * 2.0, fullgraph=True, backend='aot_eager')
    within_bound(x, w, compiled(x, w) / 2.0, f'{device}: compiled operator')


with bf16fp32.Context() as ctx:
    suite(ctx, 'cpu')
    op = bf16fp32.torch.custom_op(ctx, 'bf16fp32_test::linear')
    operator(op, 'cpu')
    if torch.cuda.is_available() and any(b.available and b.where == bf16fp32.DEVICE
                                         for b in ctx.backends()):
        suite(ctx, 'cuda')
        # A side stream: the call runs on PyTorch's current stream there.
        side = torch.cuda.Stream()
        x, w = rand(16, 1024, 'cuda'), rand(256, 1024, 'cuda')
        side.wait_stream(torch.cuda.current_stream())  # x and w were made on the current one
        with torch.cuda.stream(side):
            out = bf16fp32.torch.linear(ctx, x, w)
        side.synchronize()
        within_bound(x, w, out, 'side stream')
        # torch.cuda.graph after prewarm on the capture stream, replayed on new x.
        m, n, k = 8, 512, 4096
        x, w = rand(m, k, 'cuda'), rand(n, k, 'cuda')
        out = torch.empty(m, n, device='cuda')
        capture = torch.cuda.Stream()
        ctx.prewarm(n, k, [m], stream=capture.cuda_stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=capture):
            bf16fp32.torch.linear(ctx, x, w, out)
        x.copy_(rand(m, k, 'cuda'))
        graph.replay()
        torch.cuda.synchronize()
        within_bound(x, w, out, 'graph replay')
        operator(op, 'cuda')
        c.expect(ctx.quarantine() == [], f'nothing quarantined: {ctx.quarantine()}')
    else:
        print('test-python-torch: no GPU, the CUDA part skipped')
c.finish('test-python-torch')
