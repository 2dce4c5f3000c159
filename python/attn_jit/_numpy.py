"""NumPy arrays for _core: the runtime's host path (ATTN_DEVICE_HOST)."""
import functools
import sys

import numpy as np

from . import _capi, _core
from .errors import InvalidArgumentError

ndarray = np.ndarray  # what attn_jit.attention dispatches here
_FLOAT32 = np.dtype(np.float32)


def attention(q, k, v, causal, scale, enable_gqa, return_lse, var=None):
    """attn_jit.attention for NumPy arrays: through the plan of the call's
    signature (the variant's flags included), validated and built on its
    first call. var: the call's _core.Variant or None."""
    _check_arrays("attention", q, k, v)
    if scale is not None and type(scale) is not float:
        scale = float(scale)
    key = (q.shape, q.strides, q.dtype, k.shape, k.strides, k.dtype, v.shape, v.strides, v.dtype,
           causal, scale, enable_gqa, return_lse, (var.flags, var.mods) if var is not None else 0)
    plan = _core.local.plans.get(key)
    if plan is None:
        plan = _core.remember(key, _core.prepare(_self, q, k, v, causal, scale, enable_gqa, return_lse,
                                                 var))
    out = _core.launch(plan, q, k, v, None, var) if plan is not _core.GENERAL else None
    o, lse = out or _core.forward(_self, q, k, v, causal, scale, enable_gqa, return_lse, var)
    return (o, lse) if return_lse else o


def attention_varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, enable_gqa, return_lse, var=None):
    """attn_jit.attention_varlen for NumPy arrays, through the plan of the
    call's signature as attention()."""
    _check_arrays("attention_varlen", q, k, v)
    cu_q, cu_k, batch = _core.check_offsets(_self, cu_q, cu_k, q)
    if scale is not None and type(scale) is not float:
        scale = float(scale)
    key = ("varlen", q.shape, q.strides, q.dtype, k.shape, k.strides, k.dtype, v.shape, v.strides, v.dtype,
           batch, causal, scale, enable_gqa, return_lse, (var.flags, var.mods) if var is not None else 0)
    plan = _core.local.plans.get(key)
    if plan is None:
        plan = _core.remember(key, _core.prepare_varlen(_self, q, k, v, batch, causal, scale, enable_gqa,
                                                        return_lse, var))
    out = (_core.launch_varlen(plan, q, k, v, cu_q, cu_k, max_q, max_k, None, var)
           if plan is not _core.GENERAL else None)
    o, lse = out or _core.forward_varlen(_self, q, k, v, cu_q, cu_k, max_q, max_k, batch, causal, scale,
                                         enable_gqa, return_lse, var)
    return (o, lse) if return_lse else o


def _check_arrays(function, q, k, v):
    if not (type(q) is ndarray and type(k) is ndarray and type(v) is ndarray):
        for name, x in (("q", q), ("k", k), ("v", v)):
            if not isinstance(x, ndarray):
                raise TypeError(f"attn_jit.{function} takes NumPy arrays or torch tensors; {name} is a "
                                f"{type(x).__name__}")


# --- the adapter of _core -------------------------------------------------


def dtype_name(x):
    return _dtype_name(x.dtype)


_dtype_name = functools.lru_cache(maxsize=64)(lambda dtype: dtype.name)  # NumPy's is slow


def strides(x):
    """Element strides; None for byte-swapped arrays or strides that are not
    whole elements (the C API cannot read those)."""
    item = x.itemsize
    ok = x.dtype.isnative and all(s % item == 0 for s in x.strides)
    return tuple(s // item for s in x.strides) if ok else None


def ptr(x):
    return x.ctypes.data


def contiguous(x):
    # A copy even when x is contiguous: its data may be misaligned.
    return np.array(x, dtype=x.dtype.newbyteorder("="), order="C", copy=True)


def allocator(shape, order, like, lse):
    dtype = _FLOAT32 if lse else like.dtype.newbyteorder("=")
    memory = tuple(shape[i] for i in order)
    if order == tuple(range(len(order))):
        return functools.partial(np.empty, memory, dtype)
    return lambda: np.empty(memory, dtype).transpose(order)


def empty(shape, order, like, lse):
    return allocator(shape, order, like, lse)()


def device(q, k, v):
    return _capi.DEVICE_HOST, None


def aux(x, name, dtype, q):
    """A variant's array: NumPy arrays as they are; sequences converted
    (integers to int32, numbers to float32 when dtype asks); torch tensors
    refused (q is a host array)."""
    if isinstance(x, ndarray):
        return x
    if type(x).__module__.split(".")[0] == "torch":
        raise InvalidArgumentError(f"{name} is a torch tensor and q a NumPy array: pass a NumPy array")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as ex:
        raise InvalidArgumentError(f"{name}: not an array ({ex})") from None
    if a.dtype.kind in ("iu" if dtype == "int32" else "iuf"):
        a = a.astype(dtype)
    return a


_self = sys.modules[__name__]  # this module: the adapter _core calls back
