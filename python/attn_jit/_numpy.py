"""NumPy arrays for _core: the runtime's host path (ATTN_DEVICE_HOST)."""
import numpy as np

from . import _capi


def dtype_name(x):
    return x.dtype.name


def describe(x):
    """Element strides and data pointer; no strides for byte-swapped arrays or
    strides that are not whole elements (the C API cannot read those)."""
    item = x.itemsize
    ok = x.dtype.isnative and all(s % item == 0 for s in x.strides)
    return (tuple(s // item for s in x.strides) if ok else None), x.__array_interface__["data"][0]


def contiguous(x):
    # A copy even when x is contiguous: its data may be misaligned.
    return np.array(x, dtype=x.dtype.newbyteorder("="), order="C", copy=True)


def empty(shape, order, like, lse):
    dtype = np.float32 if lse else like.dtype.newbyteorder("=")
    return np.empty([shape[i] for i in order], dtype=dtype).transpose(order)


def device(q, k, v):
    return _capi.DEVICE_HOST, None
