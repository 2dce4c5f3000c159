"""torch's scaled_dot_product_attention semantics over attn_forward.

Array kinds plug in through an adapter module (_numpy, _torch) with:
  dtype_name(x)         'float32', 'float16', 'bfloat16', ...
  describe(x)           (strides in elements, or None when they are not whole
                        elements, e.g. a byte-swapped NumPy array; data pointer)
  contiguous(x)         a new (B, H, N, D)-contiguous, aligned copy of x
  empty(shape, order, like, lse)  a new output: memory in `order`, indexed as
                        `shape`; float32 when lse, else like's dtype
  device(q, k, v)       (attn_device, CUstream or None) of q; raises unless
                        k and v are on q's device
"""
from . import _capi
from .errors import InvalidArgumentError, UnsupportedError

# dtype name (NumPy's and torch's agree) -> (attn_dtype, bytes per element)
DTYPES = {"bfloat16": (_capi.DTYPE_BF16, 2), "float16": (_capi.DTYPE_F16, 2),
          "float32": (_capi.DTYPE_F32, 4)}

# Memory orders of (B, H, N, D) outputs; each is its own inverse permutation.
BHND = (0, 1, 2, 3)
BNHD = (0, 2, 1, 3)

# The C API reads scale 0 as 1/sqrt(D); torch's scale=0 means all scores are
# 0 (uniform weights). The smallest normal float gives scores below 1e-30,
# whose exp is exactly 1 in float32: the same result.
_FLT_MIN = 1.1754943508222875e-38


def check(q_shape, k_shape, v_shape, dtypes, enable_gqa):
    """Validates what the C API cannot see (it takes one set of sizes):
    returns (B, H, Hkv, Nq, Nk, D) and the attn_dtype."""
    for name, shape in zip("qkv", (q_shape, k_shape, v_shape)):
        if len(shape) != 4:
            raise InvalidArgumentError(
                f"{name} has shape {tuple(shape)}: attn_jit.attention takes 4-D (B, H, N, D) tensors")
    B, H, Nq, D = q_shape
    Bk, Hkv, Nk, Dk = k_shape
    if tuple(v_shape[:3]) != (Bk, Hkv, Nk):
        raise InvalidArgumentError(
            f"k {tuple(k_shape)} and v {tuple(v_shape)} must agree in (B, Hkv, Nk)")
    if Bk != B:
        raise InvalidArgumentError(f"q has batch {B}, k and v have batch {Bk}")
    if Dk != D:
        raise InvalidArgumentError(f"q has head dim {D}, k has {Dk}")
    if v_shape[3] != D:
        raise UnsupportedError(f"v has head dim {v_shape[3]}, q and k have {D}: Dv != D is not supported")
    if Hkv != H:
        if not enable_gqa:
            raise InvalidArgumentError(
                f"q has {H} heads, k and v have {Hkv}: pass enable_gqa=True for "
                "grouped-query attention (as torch's scaled_dot_product_attention)")
        if Hkv == 0:  # the C API reads kv_heads = 0 as "H": never pass it for a 0-head k
            raise InvalidArgumentError(f"k and v have 0 heads, q has {H}")
    names = tuple(dtypes)
    if len(set(names)) != 1:
        raise InvalidArgumentError("q, k and v must have one dtype; got " +
                                   ", ".join(f"{n} {d}" for n, d in zip("qkv", names)))
    if names[0] not in DTYPES:
        raise UnsupportedError(f"dtype {names[0]} is not supported: float16, bfloat16, "
                               "float32 (float32 on the CPU only)")
    return (B, H, Hkv, Nq, Nk, D), DTYPES[names[0]][0]


def output_order(q_shape, q_strides):
    """O follows Q's memory order: (B, N, H, D) memory when Q is a transposed
    (B, N, H, D) tensor (as torch's flash backend does), so that the usual
    o.transpose(1, 2).reshape(B, N, H * D) costs no copy. With H = 1 or Nq = 1
    both orders are one memory layout: the plain one then, whatever strides
    torch left on the size-1 dim."""
    if q_strides is None or q_shape[1] == 1 or q_shape[2] == 1:
        return BHND
    return BNHD if q_strides[1] < q_strides[2] else BHND


def _c_strides(shape, strides):
    """Strides as the C API checks them. A size-1 dim is never stepped over,
    so its stride (which torch leaves arbitrary) may be any: give the one every
    check accepts. Likewise for an array without elements (NumPy's has 0s)."""
    if 0 in shape:
        return [0] * (len(shape) - 1) + [1]
    return [(1 if i == 3 else 0) if n == 1 else s for i, (n, s) in enumerate(zip(shape, strides))]


def _accepted(strides, ptr, itemsize, cuda):
    """What runtime/lib/Validate.cpp asks of Q, K, V (checkStrides,
    checkPointer): unit innermost stride, no negative stride, and on CUDA
    16-byte pieces (strides multiples of 8 elements, 16-byte aligned data)."""
    if strides[3] != 1 or min(strides[:3]) < 0:
        return False
    if cuda:
        return ptr % 16 == 0 and all(s % 8 == 0 for s in strides[:3])
    return ptr % itemsize == 0


def _operand(ad, x, itemsize, cuda):
    """(array the call reads, its C strides, its pointer): x itself when the C
    API takes its layout, else a contiguous copy."""
    strides, ptr = ad.describe(x)
    if strides is not None:
        strides = _c_strides(x.shape, strides)
        if _accepted(strides, ptr, itemsize, cuda):
            return x, strides, ptr
    x = ad.contiguous(x)
    strides, ptr = ad.describe(x)
    return x, _c_strides(x.shape, strides), ptr


def forward(ad, q, k, v, causal, scale, enable_gqa, return_lse):
    """O (B, H, Nq, D), and the natural-log LSE (B, H, Nq) float32 or None."""
    (B, H, Hkv, Nq, Nk, D), dtype = check(
        q.shape, k.shape, v.shape, (ad.dtype_name(x) for x in (q, k, v)), enable_gqa)
    device, stream = ad.device(q, k, v)
    cuda = device == _capi.DEVICE_CUDA
    itemsize = DTYPES[ad.dtype_name(q)][1]
    # The output's layout is Q's as given, before any copy (the fake tensors of
    # torch.compile only see that).
    o = ad.empty((B, H, Nq, D), output_order(q.shape, ad.describe(q)[0]), q, False)
    lse = ad.empty((B, H, Nq), BHND[:3], q, True) if return_lse else None

    a = _capi.AttnFwdArgs()
    # Named locals keep the copies alive until the call returns (on CUDA the
    # allocator orders their reuse after the kernel on this stream).
    q_, a.q_strides[:], a.q = _operand(ad, q, itemsize, cuda)
    k_, a.k_strides[:], a.k = _operand(ad, k, itemsize, cuda)
    v_, a.v_strides[:], a.v = _operand(ad, v, itemsize, cuda)
    o_strides, a.o = ad.describe(o)
    a.o_strides[:] = _c_strides(o.shape, o_strides)
    if lse is not None:
        lse_strides, a.lse = ad.describe(lse)
        a.lse_strides[:] = _c_strides(lse.shape, lse_strides)
    a.batch, a.heads, a.kv_heads = B, H, Hkv
    a.seqlen_q, a.seqlen_k, a.head_dim = Nq, Nk, D
    a.dtype = dtype
    a.mask = _capi.MASK_CAUSAL if causal else _capi.MASK_NONE
    a.scale = 0.0 if scale is None else (float(scale) if scale != 0 else _FLT_MIN)
    a.device, a.stream = device, stream
    _capi.library().forward(a)
    return o, lse
