"""torch tensors for _core, and the custom op attn_jit::attention.

Imported only when torch is: by attn_jit's import when torch was imported
first, else by the first call with a torch tensor. Only torch's Python API is
used (data pointers, strides, the current stream, and a few of its private
Python functions where present, each with a public fallback): no C++ ABI
coupling.

Two ways in. An eager call on plain tensors (not traced by torch.compile, no
input needing autograd, no dispatch or function mode, no functorch
transform) skips the op's dispatch: it runs the plan of its signature
(_core.prepare and _core.launch) directly. Every other call goes through the
custom op attn_jit::attention: torch.compile puts it in its graph, its fake
implementation serves fake and meta tensors, and its autograd registration
runs attn_jit::attention_backward (attn_backward: dQ, dK, dV recomputed from
the LSE, which the op then always returns). The op's real implementation runs
the same plans.
"""
import sys
from functools import partial
from typing import Optional, Tuple

import torch

from . import _capi, _core, _mods
from .errors import InvalidArgumentError, UnsupportedError

Tensor = torch.Tensor  # what attn_jit.attention dispatches here


def _torch_function(owner, name, fallback):
    """torch's (private) function owner.name where this torch has it, else
    fallback (public API doing the same, or a conservative answer)."""
    f = getattr(owner, name, None)
    return f if callable(f) else fallback


_C = torch._C
_is_compiling = torch.compiler.is_compiling
# Without these queries every call is taken to need the op.
_dispatch_modes = _torch_function(_C, "_len_torch_dispatch_stack", lambda: 1)
_function_modes = _torch_function(_C, "_is_torch_function_mode_enabled", lambda: True)
_functorch_transforms = _torch_function(_C, "_are_functorch_transforms_active", lambda: True)
_current_device = _torch_function(_C, "_cuda_getDevice", lambda: torch.cuda.current_device())
_raw_stream = _torch_function(_C, "_cuda_getCurrentRawStream",
                              lambda index: torch.cuda.current_stream(index).cuda_stream)
# What inductor's generated code allocates with: torch.empty_strided without
# its argument parsing (the CUDA one allocates on the current device).
_guards = getattr(getattr(_C, "_dynamo", None), "guards", None)
_EMPTY_STRIDED = {"cuda": _torch_function(_guards, "_empty_strided_cuda", None),
                  "cpu": _torch_function(_guards, "_empty_strided_cpu", None)}

# A signature on devices the plans do not serve (meta, ...): the op's own
# kernels take it (the fake implementation for meta).
_OP = "op"


def attention(q, k, v, causal, scale, enable_gqa, return_lse, var=None):
    """attn_jit.attention for torch tensors: directly in eager calls, else
    through the op (the OpOverload, which torch.compile puts in its graph as
    it is). While torch.compile traces, is_compiling() is True, so it never
    reads the direct path. var: the call's _core.Variant or None; a variant
    tensor needing autograd, or of a subclass, takes the op too."""
    if (_is_compiling() or type(q) is not Tensor or type(k) is not Tensor or type(v) is not Tensor
            or q.requires_grad or k.requires_grad or v.requires_grad
            or _dispatch_modes() or _function_modes() or _functorch_transforms()
            or (var is not None and _variant_needs_op(var))):
        return _through_op(q, k, v, causal, scale, enable_gqa, return_lse, var)
    out = _run(q, k, v, causal, scale, enable_gqa, return_lse, var)
    if out is None:
        return _through_op(q, k, v, causal, scale, enable_gqa, return_lse, var)
    o, lse = out
    return (o, lse) if return_lse else o


compiling = _is_compiling


# Under torch.compile, dynamo runs attn_jit's Python symbolically and cannot
# run the tracer (it reads functions' closures and globals and makes new
# functions). So the mods are traced once, at compile time, by a call that
# dynamo makes for real and takes the result of as a constant (their text
# and where each captured array is read from); the arrays themselves are
# then read along those paths in code dynamo follows, so they are graph
# inputs (new values never recompile, as in eager calls). The functions must
# exist before the compiled code runs (module level, or made by a factory):
# dynamo cannot hand a function defined inside the compiled code to a call.
@torch.compiler.assume_constant_result
def _mods_plan(score_mod, mask_mod):
    return _mods.traced(score_mod, mask_mod)[0], _mods.capture_paths(score_mod, mask_mod)


def traced_mods(score_mod, mask_mod):
    """(text, captured arrays) of the mods, as _mods.traced gives them, in
    code that torch.compile traces."""
    text, paths = _mods_plan(score_mod, mask_mod)
    fns = (score_mod, mask_mod)
    return text, tuple(fns[i].__closure__[key].cell_contents if where == "cell" else fns[i].__globals__[key]
                       for i, where, key in paths)


def _variant_needs_op(var):
    return any(isinstance(x, Tensor) and (type(x) is not Tensor or x.requires_grad)
               for x in [a for _, a in _core.variant_arrays(var)] + list(var.captures))


def _through_op(q, k, v, causal, scale, enable_gqa, return_lse, var=None):
    op = torch.ops.attn_jit.attention.default
    # The backward needs the LSE: with gradients to compute the op returns it.
    with_lse = return_lse or (torch.is_grad_enabled()
                              and (q.requires_grad or k.requires_grad or v.requires_grad))
    if var is None:
        o, lse = op(q, k, v, causal, scale, enable_gqa, with_lse)
    else:
        for name, x in _core.variant_arrays(var):   # the dispatcher's TypeError names no argument
            if not isinstance(x, Tensor):
                raise InvalidArgumentError(f"{name} must be a torch tensor on q's device ({q.device}); "
                                           f"got {type(x).__name__}")
        o, lse = op(q, k, v, causal, scale, enable_gqa, with_lse, *_op_variant_args(var))
    return (o, lse) if return_lse else o


def _op_variant_args(var):
    """The op's variant arguments (after return_lse) of a Variant."""
    f = var.flags
    window = (var.window_left, var.window_right) if f & _capi.VARIANT_WINDOW else (None, None)
    return (*window, var.prefix_len if f & _capi.VARIANT_PREFIX_LM else None,
            var.softcap if f & _capi.VARIANT_SOFTCAP else None, var.alibi_slopes, var.q_doc_ids,
            var.kv_doc_ids, var.bias, var.mods, *_op_captures(var.captures))


# The op takes a Python mod's captured arrays as this many optional tensors
# (its schema has no optional lists).
MAX_OP_CAPTURES = 4


def _op_captures(captures):
    if len(captures) > MAX_OP_CAPTURES:
        raise UnsupportedError(f"a Python score_mod / mask_mod captures {len(captures)} arrays; "
                               f"torch tensors allow at most {MAX_OP_CAPTURES}")
    return tuple(captures) + (None,) * (MAX_OP_CAPTURES - len(captures))


def _variant_of_op(window_left, window_right, prefix_len, softcap, alibi_slopes, q_doc_ids, kv_doc_ids,
                   bias, mods=None, *captures):
    """The Variant (or None) of the op's variant arguments (mods: traced
    text, captures: the arrays it reads)."""
    window = None if window_left is None and window_right is None else (window_left, window_right)
    docs = None if q_doc_ids is None and kv_doc_ids is None else (q_doc_ids, kv_doc_ids)
    var = _core.variant(window, prefix_len, softcap, alibi_slopes, docs, bias)
    if mods is None:
        return var
    if var is None:
        var = _core.Variant(0, -1, -1, 0, 0.0, None, None, None, None)
    return var._replace(mods=mods, captures=tuple(c for c in captures if c is not None))


def _run(q, k, v, causal, scale, enable_gqa, return_lse, var=None):
    """(O, LSE or None) through the plan of the call's signature, validated and
    built on its first call, or the general path where a plan cannot serve
    (copies, another current device); None for devices that the op's other
    kernels serve."""
    if scale is not None and type(scale) is not float:
        scale = float(scale)
    key = (q.shape, q.stride(), q.dtype, q.device, k.shape, k.stride(), k.dtype, k.device,
           v.shape, v.stride(), v.dtype, v.device, causal, scale, enable_gqa, return_lse,
           (var.flags, var.mods) if var is not None else 0)
    plan = _core.local.plans.get(key)
    if plan is None:
        plan = _core.remember(key, _prepare(q, k, v, causal, scale, enable_gqa, return_lse, var))
    if plan is _OP:
        return None
    if plan is not _core.GENERAL:
        index = plan.device_index
        if index < 0:
            out = _core.launch(plan, q, k, v, None, var)
        elif index == _current_device():
            out = _core.launch(plan, q, k, v, _raw_stream(index), var)
        else:
            out = None
        if out is not None:
            return out
    return _forward(q, k, v, causal, scale, enable_gqa, return_lse, var)


def _prepare(q, k, v, causal, scale, enable_gqa, return_lse, var):
    if not all(x.device.type in ("cpu", "cuda") for x in (q, k, v)):
        return _OP
    plan = _core.prepare(_self, q, k, v, causal, scale, enable_gqa, return_lse, var)
    if plan is not _core.GENERAL and q.is_cuda:
        plan.device_index = q.get_device()
    return plan


def _forward(q, k, v, causal, scale, enable_gqa, return_lse, var=None):
    return _on_device(q, _core.forward, _self, q, k, v, causal, scale, enable_gqa, return_lse, var)


def _on_device(q, fn, *args):
    """fn(*args) with q's CUDA device current: the runtime runs in the
    caller's current CUDA context."""
    if q.is_cuda and q.get_device() != _current_device():
        with torch.cuda.device(q.device):
            return fn(*args)
    return fn(*args)


# --- variable-length batches ----------------------------------------------


_VARLEN_NO_GRAD = ("attn_jit.attention_varlen has no backward pass yet: q, k or v requires grad "
                   "(call it under torch.no_grad() or on detached tensors)")


def _varlen_refuses_grad():
    raise UnsupportedError(_VARLEN_NO_GRAD)


# Run eagerly, at a graph break: dynamo (torch 2.11) fails with its own
# AssertionError when it traces the raise of our exception in a resumed
# frame. Under fullgraph=True the graph break is the error, with this reason.
try:
    _varlen_refuses_grad = torch.compiler.disable(_varlen_refuses_grad, reason=_VARLEN_NO_GRAD)
except TypeError:  # a torch without disable(reason=)
    _varlen_refuses_grad = torch.compiler.disable(_varlen_refuses_grad)


def attention_varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse, var=None):
    """attn_jit.attention_varlen for torch tensors: as attention(), directly
    in eager calls, else through the op attn_jit::attention_varlen. It has no
    backward: inputs that need gradients raise."""
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        _varlen_refuses_grad()
    if (_is_compiling() or type(q) is not Tensor or type(k) is not Tensor or type(v) is not Tensor
            or type(cu_q) is not Tensor or type(cu_k) is not Tensor
            or _dispatch_modes() or _function_modes() or _functorch_transforms()
            or (var is not None and _variant_needs_op(var))):
        return _varlen_through_op(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse,
                                  var)
    out = _run_varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse, var)
    if out is None:
        return _varlen_through_op(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse,
                                  var)
    o, lse = out
    return (o, lse) if return_lse else o


def _varlen_through_op(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse, var):
    arrays = [("cu_seqlens_q", cu_q), ("cu_seqlens_k", cu_k)] + (_core.variant_arrays(var) if var else [])
    for name, x in arrays:
        if not isinstance(x, Tensor):   # the dispatcher's TypeError names no argument
            raise InvalidArgumentError(f"{name} must be a torch tensor on q's device ({q.device}); "
                                       f"got {type(x).__name__}")
    if not _is_compiling():   # the op's schema takes ints (traced: ints or SymInts already)
        max_q, max_k = _core._int(max_q, "max_seqlen_q"), _core._int(max_k, "max_seqlen_k")
    args = (q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse)
    if var is not None:
        # The op's variant arguments are attn_jit::attention's less the
        # document ids and the bias (attention_varlen refuses both).
        window_left, window_right, prefix_len, softcap, alibi_slopes, _q_ids, _kv_ids, _bias, *mods = \
            _op_variant_args(var)
        args += (window_left, window_right, prefix_len, softcap, alibi_slopes, *mods)
    o, lse = torch.ops.attn_jit.attention_varlen.default(*args)
    return (o, lse) if return_lse else o


def _run_varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse, var=None):
    """(O, LSE or None) through the plan of the call's signature, or the
    general path where a plan cannot serve (copies, another current device);
    None for devices that the op's other kernels serve (meta)."""
    cu_q, cu_k, batch = _core.check_offsets(_self, cu_q, cu_k, q)
    if scale is not None and type(scale) is not float:
        scale = float(scale)
    key = ("varlen", q.shape, q.stride(), q.dtype, q.device, k.shape, k.stride(), k.dtype, k.device,
           v.shape, v.stride(), v.dtype, v.device, batch, causal, scale, enable_gqa, return_lse,
           (var.flags, var.mods) if var is not None else 0)
    plan = _core.local.plans.get(key)
    if plan is None:
        plan = _core.remember(key, _prepare_varlen(q, k, v, batch, causal, scale, enable_gqa, return_lse,
                                                   var))
    if plan is _OP:
        return None
    if plan is not _core.GENERAL:
        index = plan.device_index
        out = None
        if index < 0:
            out = _core.launch_varlen(plan, q, k, v, cu_q, cu_k, max_q, max_k, None, var)
        elif index == _current_device():
            out = _core.launch_varlen(plan, q, k, v, cu_q, cu_k, max_q, max_k, _raw_stream(index), var)
        if out is not None:
            return out
    return _on_device(q, _core.forward_varlen, _self, q, k, v, cu_q, cu_k, max_q, max_k, batch, causal, scale,
                      enable_gqa, return_lse, var)


def _prepare_varlen(q, k, v, batch, causal, scale, enable_gqa, return_lse, var):
    if not all(x.device.type in ("cpu", "cuda") for x in (q, k, v)):
        return _OP
    plan = _core.prepare_varlen(_self, q, k, v, batch, causal, scale, enable_gqa, return_lse, var)
    if plan is not _core.GENERAL and q.is_cuda:
        plan.device_index = q.get_device()
    return plan


# --- the adapter of _core -------------------------------------------------


def dtype_name(x):
    return str(x.dtype).rpartition(".")[2]


def strides(x):
    return x.stride()


ptr = Tensor.data_ptr


def contiguous(x):
    # A copy even when x is contiguous: its data may be misaligned.
    return x.clone(memory_format=torch.contiguous_format)


def keys_contiguous(x):
    """A copy of the (B, H, N, D) tensor x stored (B, H, D, N'): its keys
    contiguous, as attn_forward_fp8 reads V, each row of keys padded to
    whole 16-byte pieces (N' a multiple of 16 / itemsize: the C API's
    stride rule on CUDA)."""
    B, H, N, D = x.shape
    per_piece = max(1, 16 // x.element_size())
    rows = torch.empty((B, H, D, N + (-N) % per_piece), dtype=x.dtype, device=x.device)[..., :N]
    rows.copy_(x.transpose(2, 3))
    return rows.transpose(2, 3)


def empty(shape, order, like, lse, dtype=None):
    """_core's empty(); dtype: the output's when it is neither float32 (an
    LSE) nor like's (FP8's bfloat16 O)."""
    dtype = torch.float32 if lse else (dtype or like.dtype)
    t = torch.empty([shape[i] for i in order], dtype=dtype, device=like.device)
    return t.permute(order) if order == _core.BNHD else t


def allocator(shape, order, like, lse):
    """New tensors as empty() gives, by one empty_strided call."""
    t = empty(shape, order, like, lse)
    size, stride = tuple(t.shape), t.stride()
    fast = _EMPTY_STRIDED.get(like.device.type)
    if fast is not None:
        return partial(fast, size, stride, t.dtype)
    return partial(torch.empty_strided, size, stride, dtype=t.dtype, device=like.device)


def device(q, k, v):
    if not q.device == k.device == v.device:
        raise InvalidArgumentError(f"q, k and v must be on one device; got {q.device}, {k.device}, "
                                   f"{v.device}")
    if q.device.type == "cuda":
        return _capi.DEVICE_CUDA, _raw_stream(q.get_device())
    if q.device.type == "cpu":
        return _capi.DEVICE_HOST, None
    raise UnsupportedError(f"tensors on {q.device} are not supported: CUDA or CPU")


def aux(x, name, dtype, q):
    """A variant's tensor, which must be on q's device."""
    if not isinstance(x, Tensor):
        raise InvalidArgumentError(f"{name} must be a torch tensor on q's device ({q.device}); "
                                   f"got {type(x).__name__}")
    if x.device != q.device:
        raise InvalidArgumentError(f"{name} is on {x.device} and q on {q.device}: pass it on q's device")
    return x


_self = sys.modules[__name__]  # this module: the adapter _core calls back

# --- the custom op --------------------------------------------------------
# Positional arguments; attention() above gives the keyword interface. The
# variant arguments default to None (plain attention): window_left and
# window_right (None or -1: unbounded; both None: no window), prefix_len,
# softcap, and the tensors alibi_slopes, q_doc_ids, kv_doc_ids (both or
# neither), bias. LSE is always an output (an op's outputs are fixed); empty
# without return_lse.


@torch.library.custom_op("attn_jit::attention", mutates_args=())
def _op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: Optional[float],
        enable_gqa: bool, return_lse: bool, window_left: Optional[int] = None,
        window_right: Optional[int] = None, prefix_len: Optional[int] = None,
        softcap: Optional[float] = None, alibi_slopes: Optional[torch.Tensor] = None,
        q_doc_ids: Optional[torch.Tensor] = None, kv_doc_ids: Optional[torch.Tensor] = None,
        bias: Optional[torch.Tensor] = None, mods: Optional[str] = None,
        capture0: Optional[torch.Tensor] = None, capture1: Optional[torch.Tensor] = None,
        capture2: Optional[torch.Tensor] = None,
        capture3: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    var = _variant_of_op(window_left, window_right, prefix_len, softcap, alibi_slopes, q_doc_ids,
                         kv_doc_ids, bias, mods, capture0, capture1, capture2, capture3)
    out = _run(q, k, v, causal, scale, enable_gqa, return_lse, var)
    o, lse = out if out is not None else _forward(q, k, v, causal, scale, enable_gqa, return_lse, var)
    return o, (lse if return_lse else _no_lse(q))


@_op.register_fake
def _fake(q, k, v, causal, scale, enable_gqa, return_lse, window_left=None, window_right=None,
          prefix_len=None, softcap=None, alibi_slopes=None, q_doc_ids=None, kv_doc_ids=None, bias=None,
          mods=None, capture0=None, capture1=None, capture2=None, capture3=None):
    # The same checks and output layouts as the real call, so that
    # torch.compile reports a bad call while tracing.
    dims, _dtype = _core.check(q.shape, k.shape, v.shape, map(dtype_name, (q, k, v)), enable_gqa)
    B, H, _hkv, Nq, Nk, D = dims
    var = _variant_of_op(window_left, window_right, prefix_len, softcap, alibi_slopes, q_doc_ids,
                         kv_doc_ids, bias, mods, capture0, capture1, capture2, capture3)
    if var is not None:
        _core.check_variant_flags(var, causal)
        _core.check_variant(_self, var, q, H, Nq, Nk)
    o = empty((B, H, Nq, D), _core.output_order(q.shape, strides(q)), q, False)
    return o, (empty((B, H, Nq), _core.BHND[:3], q, True) if return_lse else _no_lse(q))


@torch.library.custom_op("attn_jit::attention_backward", mutates_args=())
def _backward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                 grad_o: torch.Tensor, causal: bool, scale: Optional[float], enable_gqa: bool,
                 window_left: Optional[int] = None, window_right: Optional[int] = None,
                 prefix_len: Optional[int] = None, softcap: Optional[float] = None,
                 alibi_slopes: Optional[torch.Tensor] = None, q_doc_ids: Optional[torch.Tensor] = None,
                 kv_doc_ids: Optional[torch.Tensor] = None,
                 bias: Optional[torch.Tensor] = None, mods: Optional[str] = None,
                 capture0: Optional[torch.Tensor] = None, capture1: Optional[torch.Tensor] = None,
                 capture2: Optional[torch.Tensor] = None, capture3: Optional[torch.Tensor] = None
                 ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    var = _variant_of_op(window_left, window_right, prefix_len, softcap, alibi_slopes, q_doc_ids,
                         kv_doc_ids, bias, mods, capture0, capture1, capture2, capture3)
    # torch's switch picks the form, as for its own kernels: atomics unless
    # torch.use_deterministic_algorithms(True).
    return _on_device(q, _core.backward, _self, q, k, v, o, lse, grad_o, causal, scale, enable_gqa, var,
                      torch.are_deterministic_algorithms_enabled())


@_backward_op.register_fake
def _backward_fake(q, k, v, o, lse, grad_o, causal, scale, enable_gqa, window_left=None,
                   window_right=None, prefix_len=None, softcap=None, alibi_slopes=None, q_doc_ids=None,
                   kv_doc_ids=None, bias=None, mods=None, capture0=None, capture1=None, capture2=None,
                   capture3=None):
    # Contiguous (B, H, N, D), as _core.backward allocates them.
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape))


# --- FP8 -----------------------------------------------------------------


def attention_fp8(q, k, v, descale, causal, scale, enable_gqa, return_lse):
    """attn_jit.attention_fp8 for torch tensors, through the op
    attn_jit::attention_fp8 (torch.compile puts it in its graph)."""
    if q.requires_grad or k.requires_grad or v.requires_grad:
        raise UnsupportedError("attn_jit.attention_fp8 has no backward pass: q, k or v requires grad")
    o, lse = _fp8_op(q, k, v, *descale, causal, scale, enable_gqa, return_lse)
    return (o, lse) if return_lse else o


def _fp8_outputs(q, dims, return_lse):
    """New outputs of a checked call (dims: _core.check_fp8's): O bfloat16
    (B, H, Nq, D) in Q's memory order, the LSE float32 (B, H, Nq) (empty
    without return_lse)."""
    B, H, _hkv, Nq, _nk, D = dims
    o = empty((B, H, Nq, D), _core.output_order(q.shape, strides(q)), q, False, torch.bfloat16)
    return o, (empty((B, H, Nq), _core.BHND[:3], q, True) if return_lse else _no_lse(q))


@torch.library.custom_op("attn_jit::attention_fp8", mutates_args=())
def _fp8_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, q_descale: float, k_descale: float,
            v_descale: float, causal: bool, scale: Optional[float], enable_gqa: bool,
            return_lse: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    dims = _core.check_fp8(_self, q, k, v, enable_gqa)
    o, lse = _fp8_outputs(q, dims, return_lse)
    _on_device(q, _core.forward_fp8, _self, q, k, v, dims, o, lse if return_lse else None,
               (q_descale, k_descale, v_descale), causal, scale)
    return o, lse


@_fp8_op.register_fake
def _fp8_fake(q, k, v, q_descale, k_descale, v_descale, causal, scale, enable_gqa, return_lse):
    # The real call's checks and output layouts, so that torch.compile
    # reports a bad call while tracing.
    return _fp8_outputs(q, _core.check_fp8(_self, q, k, v, enable_gqa), return_lse)


def _no_lse(q):
    return q.new_empty((0,), dtype=torch.float32)


_VARIANT_ARGS = 9 + MAX_OP_CAPTURES   # the op's arguments after return_lse


def _setup_context(ctx, inputs, output):
    q, k, v, causal, scale, enable_gqa, return_lse, *variant = inputs
    variant = list(variant) + [None] * (_VARIANT_ARGS - len(variant))
    o, lse = output
    # The variant's tensors (alibi_slopes, document ids, bias) travel as
    # saved tensors; its scalars, the mods' text and captures as attributes.
    ctx.save_for_backward(q, k, v, o, lse, *variant[4:8])
    # No gradient flows through the LSE: declared, not checked in the
    # backward (a check of grad_lse's values cannot be traced by AOT
    # autograd under torch.compile).
    ctx.mark_non_differentiable(lse)
    ctx.args = (causal, scale, enable_gqa, return_lse, *variant[:4])
    ctx.mods = tuple(variant[8:])


def _attention_backward(ctx, grad_o, grad_lse):
    q, k, v, o, lse, *tensors = ctx.saved_tensors
    causal, scale, enable_gqa, _return_lse, *scalars = ctx.args
    if lse.numel() == 0 and o.numel() != 0:
        raise RuntimeError("attn_jit.attention: the forward did not keep the log-sum-exp that the "
                           "backward needs (call attn_jit.attention, not the op with return_lse=False, "
                           "when gradients are needed)")
    dq, dk, dv = torch.ops.attn_jit.attention_backward.default(
        q, k, v, o, lse, grad_o, causal, scale, enable_gqa, *scalars, *tensors, *ctx.mods)
    return (dq, dk, dv) + (None,) * (4 + _VARIANT_ARGS)


_op.register_autograd(_attention_backward, setup_context=_setup_context)


# attn_jit::attention_varlen: attn_jit.attention_varlen's positional form,
# the variant arguments as attn_jit::attention's less q_doc_ids, kv_doc_ids
# and bias. O (total_q, H, D) and LSE (H, total_q), both contiguous; LSE
# empty without return_lse. No autograd: attention_varlen() refuses inputs
# that need gradients before calling it.


@torch.library.custom_op("attn_jit::attention_varlen", mutates_args=())
def _varlen_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
               cu_seqlens_k: torch.Tensor, max_seqlen_q: int, max_seqlen_k: int, causal: bool,
               scale: Optional[float], enable_gqa: bool, return_lse: bool, window_left: Optional[int] = None,
               window_right: Optional[int] = None, prefix_len: Optional[int] = None,
               softcap: Optional[float] = None, alibi_slopes: Optional[torch.Tensor] = None,
               mods: Optional[str] = None, capture0: Optional[torch.Tensor] = None,
               capture1: Optional[torch.Tensor] = None, capture2: Optional[torch.Tensor] = None,
               capture3: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    var = _variant_of_op(window_left, window_right, prefix_len, softcap, alibi_slopes, None, None, None, mods,
                         capture0, capture1, capture2, capture3)
    args = (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, enable_gqa,
            return_lse, var)
    out = _run_varlen(*args)
    if out is None:   # a device that is neither CPU nor CUDA: refused with its name
        cu_q, cu_k, batch = _core.check_offsets(_self, cu_seqlens_q, cu_seqlens_k, q)
        out = _core.forward_varlen(_self, q, k, v, cu_q, cu_k, max_seqlen_q, max_seqlen_k, batch, causal,
                                   scale, enable_gqa, return_lse, var)
    o, lse = out
    return o, (lse if return_lse else _no_lse(q))


@_varlen_op.register_fake
def _varlen_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale, enable_gqa,
                 return_lse, window_left=None, window_right=None, prefix_len=None, softcap=None,
                 alibi_slopes=None, mods=None, capture0=None, capture1=None, capture2=None, capture3=None):
    # The real call's checks on what fake tensors show, and its outputs.
    (H, _hkv, Tq, Tk, D), _dtype = _core.check_varlen(q.shape, k.shape, v.shape, map(dtype_name, (q, k, v)),
                                                      enable_gqa)
    _core.check_offsets(_self, cu_seqlens_q, cu_seqlens_k, q)
    if isinstance(max_seqlen_q, int) and isinstance(max_seqlen_k, int):   # not SymInts
        _core.check_maxima(max_seqlen_q, max_seqlen_k, Tq, Tk)
    var = _variant_of_op(window_left, window_right, prefix_len, softcap, alibi_slopes, None, None, None, mods,
                         capture0, capture1, capture2, capture3)
    if var is not None:
        _core.check_variant_flags(var, causal)
        _core.check_variant(_self, var, q, H, Tq, Tk)
    o = q.new_empty((Tq, H, D))
    return o, (q.new_empty((H, Tq), dtype=torch.float32) if return_lse else _no_lse(q))
