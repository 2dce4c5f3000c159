"""torch tensors for _core, and the custom op attn_jit::attention.

Imported only when torch is: by attn_jit's import when torch was imported
first, else by the first call with a torch tensor. Only torch's Python API is
used (data pointers, strides, the current stream): no C++ ABI coupling.
"""
import sys
from typing import Optional, Tuple

import torch

from . import _capi, _core
from .errors import InvalidArgumentError, UnsupportedError

Tensor = torch.Tensor  # what attn_jit.attention dispatches here

# --- the adapter of _core -------------------------------------------------


def dtype_name(x):
    return str(x.dtype).rpartition(".")[2]


def describe(x):
    return x.stride(), x.data_ptr()


def contiguous(x):
    # A copy even when x is contiguous: its data may be misaligned.
    return x.clone(memory_format=torch.contiguous_format)


def empty(shape, order, like, lse):
    dtype = torch.float32 if lse else like.dtype
    t = torch.empty([shape[i] for i in order], dtype=dtype, device=like.device)
    return t.permute(order) if order == _core.BNHD else t


def device(q, k, v):
    if not q.device == k.device == v.device:
        raise InvalidArgumentError(f"q, k and v must be on one device; got {q.device}, {k.device}, "
                                   f"{v.device}")
    if q.device.type == "cuda":
        return _capi.DEVICE_CUDA, torch.cuda.current_stream(q.device).cuda_stream
    if q.device.type == "cpu":
        return _capi.DEVICE_HOST, None
    raise UnsupportedError(f"tensors on {q.device} are not supported: CUDA or CPU")


# --- the custom op --------------------------------------------------------
# Positional arguments only; attention() below gives the keyword interface.
# LSE is always an output (an op's outputs are fixed); empty without return_lse.


@torch.library.custom_op("attn_jit::attention", mutates_args=())
def _op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: Optional[float],
        enable_gqa: bool, return_lse: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    this = sys.modules[__name__]
    if q.is_cuda and q.get_device() != torch.cuda.current_device():
        # The runtime runs in the caller's current CUDA context: make it q's device's.
        with torch.cuda.device(q.device):
            o, lse = _core.forward(this, q, k, v, causal, scale, enable_gqa, return_lse)
    else:
        o, lse = _core.forward(this, q, k, v, causal, scale, enable_gqa, return_lse)
    return o, (lse if return_lse else _no_lse(q))


@_op.register_fake
def _fake(q, k, v, causal, scale, enable_gqa, return_lse):
    # The same checks and output layouts as the real call, so that
    # torch.compile reports a bad call while tracing.
    dims, _dtype = _core.check(q.shape, k.shape, v.shape, map(dtype_name, (q, k, v)), enable_gqa)
    B, H, _hkv, Nq, _nk, D = dims
    o = empty((B, H, Nq, D), _core.output_order(q.shape, q.stride()), q, False)
    return o, (empty((B, H, Nq), _core.BHND[:3], q, True) if return_lse else _no_lse(q))


def _no_lse(q):
    return q.new_empty((0,), dtype=torch.float32)


def _no_backward(ctx, grad_o, grad_lse):
    raise NotImplementedError(
        "attn_jit.attention has no backward pass: attn-jit compiles forward attention only "
        "(README, Status: the backward pass is not done yet). Call it under torch.no_grad() or "
        "torch.inference_mode(), or train with torch.nn.functional.scaled_dot_product_attention")


_op.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


def attention(q, k, v, causal, scale, enable_gqa, return_lse):
    """attn_jit.attention for torch tensors: one call of the op (the OpOverload,
    which torch.compile puts in its graph as it is)."""
    o, lse = torch.ops.attn_jit.attention.default(q, k, v, causal, scale, enable_gqa, return_lse)
    return (o, lse) if return_lse else o
