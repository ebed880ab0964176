"""PyTorch convenience: out allocated by PyTorch, device calls on PyTorch's current stream, so
that they order with the surrounding work and are captured by torch.cuda.graph. Tensors are
read through their own fields (address, shape, strides), a few microseconds faster per call
than a DLPack export of each."""
import torch

from . import DEVICE, HOST, Operand


def _operand(t, what, dtype):
    if t.dtype is not dtype:
        raise TypeError(f'{what}: {t.dtype}, expected {dtype}')
    return Operand(t.data_ptr(), t.shape, t.stride())


def linear(ctx, x, w, out=None):
    """x [M,K] and w [N,K] bfloat16 tensors on one device -> out [M,N] float32 (allocated when
    None), computed by ctx (a bf16fp32.Context) on the current stream of that device. No
    gradients: with grad mode on, tensors that require them are refused rather than dropped (an
    out that does would be written behind autograd's back)."""
    if torch.is_grad_enabled() and (x.requires_grad or w.requires_grad or
                                    (out is not None and out.requires_grad)):
        raise RuntimeError('bf16fp32 computes no gradients: call it under torch.no_grad() or '
                           'torch.inference_mode(), or pass detached tensors')
    return _linear(ctx, x, w, out)


def _linear(ctx, x, w, out):
    # Per-call host time counts (tools/python-overhead.py): the checks read the tensors' flags
    # and device indices, not torch.device objects (0.4 us each).
    cuda = x.is_cuda
    if not cuda and not x.is_cpu:
        raise ValueError(f'x is on {x.device}: neither CPU nor CUDA')
    if out is None:
        if x.dim() != 2 or w.dim() != 2:
            raise ValueError(f'x and w must have 2 dimensions, not {x.dim()} and {w.dim()}')
        out = torch.empty((x.shape[0], w.shape[0]), dtype=torch.float32, device=x.device)
    index = x.get_device()
    if not (w.is_cuda and out.is_cuda and w.get_device() == index == out.get_device() if cuda
            else w.is_cpu and out.is_cpu):
        raise ValueError(f'x, w and out are on different devices: {x.device}, {w.device}, '
                         f'{out.device}')
    stream = torch.cuda.current_stream(index).cuda_stream if cuda else None
    ctx.run(DEVICE if cuda else HOST, _operand(x, 'x', torch.bfloat16),
            _operand(w, 'w', torch.bfloat16), _operand(out, 'out', torch.float32), stream)
    return out


def custom_op(ctx, name):
    """ctx's linear registered as the PyTorch operator `name` ("namespace::op", once per
    process) and returned: op(x, w) -> out. torch.compile traces it through its fake (an empty
    [M,N] float32 tensor) instead of breaking the graph at the library call."""

    @torch.library.custom_op(name, mutates_args=())
    def op(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return _linear(ctx, x, w, None)  # PyTorch's own autograd check covers the operator

    @op.register_fake
    def _(x, w):
        return x.new_empty((x.shape[0], w.shape[0]), dtype=torch.float32)

    return op
