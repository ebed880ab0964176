"""PyTorch convenience: out allocated by PyTorch, device calls on PyTorch's current stream, so
that they order with the surrounding work and are captured by torch.cuda.graph."""
import torch


def linear(ctx, x, w, out=None):
    """x [M,K] and w [N,K] bfloat16 tensors on one device -> out [M,N] float32 (allocated when
    None), computed by ctx (a bf16fp32.Context) on the current stream of that device."""
    if out is None:
        out = torch.empty((x.shape[0], w.shape[0]), dtype=torch.float32, device=x.device)
    stream = torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else None
    return ctx.linear(x, w, out, stream=stream)


def custom_op(ctx, name):
    """ctx's linear registered as the PyTorch operator `name` ("namespace::op", once per
    process) and returned: op(x, w) -> out. torch.compile traces it through its fake (an empty
    [M,N] float32 tensor) instead of breaking the graph at the library call."""

    @torch.library.custom_op(name, mutates_args=())
    def op(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return linear(ctx, x, w)

    @op.register_fake
    def _(x, w):
        return x.new_empty((x.shape[0], w.shape[0]), dtype=torch.float32)

    return op
