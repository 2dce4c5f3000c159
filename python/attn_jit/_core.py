"""torch's scaled_dot_product_attention semantics over attn_forward.

Two ways through, with one set of checks:
  * a plan per call signature (shapes, strides, dtypes, devices, flags):
    `prepare` validates a new signature once and prebuilds its attn_fwd_args;
    `launch` then only allocates the outputs, fills the data pointers (and
    the stream) and calls attn_forward. The adapters' attention() look plans
    up in `local.plans` (one dict a thread: a plan's arguments are written
    per call).
  * `forward`, the general path: every step every call. It serves the
    signatures whose operands need a copy (strides the C API cannot read)
    and calls whose data pointers are not aligned as in-place reading needs.
  * `forward_fp8` (attn_forward_fp8) takes only the general path.

Array kinds plug in through an adapter module (_numpy, _torch) with:
  dtype_name(x)         'float32', 'float16', 'bfloat16', ...
  strides(x)            strides in elements, or None when they are not whole
                        elements (e.g. a byte-swapped NumPy array)
  ptr(x)                the data pointer
  contiguous(x)         a new (B, H, N, D)-contiguous, aligned copy of x
  keys_contiguous(x)    (torch only: FP8) a new aligned copy of x with unit
                        stride along N and 16-byte rows of keys, the layout
                        of an FP8 call's V
  empty(shape, order, like, lse)  a new output: memory in `order`, indexed as
                        `shape`; float32 when lse, else like's dtype
  allocator(shape, order, like, lse)  a function of no arguments returning
                        what empty() would (same shape, strides and dtype)
  device(q, k, v)       (attn_device, CUstream or None) of q; raises unless
                        k and v are on q's device
  aux(x, name, dtype, q)  a variant's array x (alibi_slopes, document ids,
                        bias) as an array of q's kind on q's device (NumPy
                        converts sequences); raises InvalidArgumentError else

Attention variants (window, prefix_len, softcap, alibi_slopes, document_ids,
bias) travel as one Variant (None for plain attention). Their flags are part
of a call's signature (they select the compiled kernel); their values and
arrays are checked and written into attn_fwd_args every call.
"""
import collections
import ctypes
import math
import operator
import struct
import threading

from . import _capi
from .errors import InvalidArgumentError, UnsupportedError

# dtype name (NumPy's and torch's agree) -> (attn_dtype, bytes per element)
DTYPES = {"bfloat16": (_capi.DTYPE_BF16, 2), "float16": (_capi.DTYPE_F16, 2),
          "float32": (_capi.DTYPE_F32, 4)}
_SUPPORTED = "float16, bfloat16, float32 (float32 on the CPU only)"
# attn_forward_fp8's inputs (attn_jit.attention_fp8; torch's name).
FP8_DTYPES = {"float8_e4m3fn": (_capi.DTYPE_E4M3, 1)}
_FP8_SUPPORTED = "float8_e4m3fn (attn_jit.attention_fp8 takes FP8 q, k, v only)"

# Memory orders of (B, H, N, D) outputs; each is its own inverse permutation.
BHND = (0, 1, 2, 3)
BNHD = (0, 2, 1, 3)

# The C API reads scale 0 as 1/sqrt(D); torch's scale=0 means all scores are
# 0 (uniform weights). The smallest normal float gives scores below 1e-30,
# whose exp is exactly 1 in float32: the same result.
_FLT_MIN = 1.1754943508222875e-38

# Plans kept per thread; past this many the oldest is dropped (a workload
# whose lengths change every call, e.g. decoding, would grow it without end).
MAX_PLANS = 256

# A signature whose operands need copies: every call takes `forward`.
GENERAL = "general"


def check(q_shape, k_shape, v_shape, dtypes, enable_gqa, table=DTYPES, supported=_SUPPORTED):
    """Validates what the C API cannot see (it takes one set of sizes):
    returns (B, H, Hkv, Nq, Nk, D) and the attn_dtype. table: the dtypes
    this entry takes (DTYPES, or FP8_DTYPES), named by `supported`."""
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
    if names[0] not in table:
        raise UnsupportedError(f"dtype {names[0]} is not supported: {supported}")
    return (B, H, Hkv, Nq, Nk, D), table[names[0]][0]


def output_order(q_shape, q_strides):
    """O follows Q's memory order: (B, N, H, D) memory when Q is a transposed
    (B, N, H, D) tensor (as torch's flash backend does), so that the usual
    o.transpose(1, 2).reshape(B, N, H * D) costs no copy. With H = 1 or Nq = 1
    both orders are one memory layout: the plain one then, whatever strides
    torch left on the size-1 dim."""
    if q_strides is None or q_shape[1] == 1 or q_shape[2] == 1:
        return BHND
    return BNHD if q_strides[1] < q_strides[2] else BHND


def _c_strides(shape, strides, unit=3):
    """Strides as the C API checks them. A size-1 dim is never stepped over,
    so its stride (which torch leaves arbitrary) may be any: give the one every
    check accepts (1 for the unit-stride dim `unit`, the last one of an
    LSE's 3-D shape). Likewise for an array without elements (NumPy's has
    0s)."""
    if 0 in shape:
        out = [0] * len(shape)
        out[min(unit, len(shape) - 1)] = 1
        return out
    return [(1 if i == unit else 0) if n == 1 else s for i, (n, s) in enumerate(zip(shape, strides))]


def _in_place(ad, x, cuda, unit=3, itemsize=2):
    """x's C strides when the C API reads x as it is laid out (what
    runtime/lib/Validate.cpp's checkStrides asks: unit stride along `unit`,
    the head dim, or the keys for an FP8 call's V; none negative; on CUDA
    16-byte pieces, the other strides multiples of 16 bytes), else None.
    The data pointer is checkPointer's: see _alignment."""
    strides = ad.strides(x)
    return None if strides is None else _readable(_c_strides(x.shape, strides, unit), cuda, unit, itemsize)


def _readable(strides, cuda, unit=3, itemsize=2):
    """C strides as they are when the C API reads them in place, else None."""
    others = [s for i, s in enumerate(strides) if i != unit]
    if strides[unit] != 1 or min(others) < 0:
        return None
    if cuda and any(s * itemsize % 16 for s in others):
        return None
    return strides


def _alignment(cuda, itemsize):
    """The low bits a data pointer read in place must have clear: 16-byte
    aligned on CUDA, element-aligned on the host."""
    return 15 if cuda else itemsize - 1


def _operand(ad, x, align, cuda, unit=3, itemsize=2):
    """(array the call reads, its C strides, its pointer): x itself when the C
    API takes its layout, else a copy with unit stride along `unit` (the
    head dim: contiguous; the keys: an FP8 call's V)."""
    strides = _in_place(ad, x, cuda, unit, itemsize)
    if strides is not None:
        ptr = ad.ptr(x)
        if not ptr & align:
            return x, strides, ptr
    x = ad.contiguous(x) if unit == 3 else ad.keys_contiguous(x)
    return x, _c_strides(x.shape, ad.strides(x), unit), ad.ptr(x)


def _fill(a, dims, dtype, mask, scale, device, var):
    """Writes an attn_fwd_args' sizes (B, H, Hkv, Nq, Nk, D), dtype, mask,
    scale, device and the variant's flags."""
    a.batch, a.heads, a.kv_heads, a.seqlen_q, a.seqlen_k, a.head_dim = dims
    a.dtype, a.mask, a.device = dtype, mask, device
    a.scale = 0.0 if scale is None else (float(scale) if scale != 0 else _FLT_MIN)
    a.variant.flags = var.flags if var is not None else 0


def _setup(ad, a, q, k, v, causal, scale, enable_gqa, return_lse, var):
    """Checks a call and fills all of `a` but the data pointers, the stream
    and the variant's values (only its flags). Returns (attn_device, stream,
    pointer alignment mask, O's (shape, order), LSE's or None)."""
    names = [ad.dtype_name(x) for x in (q, k, v)]
    (B, H, Hkv, Nq, Nk, D), dtype = check(q.shape, k.shape, v.shape, names, enable_gqa)
    check_variant_flags(var, causal)
    device, stream = ad.device(q, k, v)
    _fill(a, (B, H, Hkv, Nq, Nk, D), dtype, _capi.MASK_CAUSAL if causal else _capi.MASK_NONE, scale,
          device, var)
    align = _alignment(device == _capi.DEVICE_CUDA, DTYPES[names[0]][1])
    # The output's layout is Q's as given, before any copy (the fake tensors of
    # torch.compile only see that).
    o_spec = (B, H, Nq, D), output_order(q.shape, ad.strides(q))
    lse_spec = ((B, H, Nq), BHND[:3]) if return_lse else None
    return device, stream, align, o_spec, lse_spec


def _set_output_strides(ad, a, o, lse):
    a.o_strides[:] = _c_strides(o.shape, ad.strides(o))
    if lse is not None:
        a.lse_strides[:] = _c_strides(lse.shape, ad.strides(lse))


def forward(ad, q, k, v, causal, scale, enable_gqa, return_lse, var=None):
    """The general path: O (B, H, Nq, D), and the natural-log LSE (B, H, Nq)
    float32 or None."""
    a = _capi.AttnFwdArgs()
    device, stream, align, o_spec, lse_spec = _setup(ad, a, q, k, v, causal, scale, enable_gqa,
                                                      return_lse, var)
    cuda = device == _capi.DEVICE_CUDA
    # The variant's arrays (and copies of them) stay alive until the call returns.
    if var is not None:
        aux = fill_variant(ad, a.variant, var, q, a.heads, a.seqlen_q, a.seqlen_k)  # noqa: F841
    o = ad.empty(*o_spec, q, False)
    lse = ad.empty(*lse_spec, q, True) if lse_spec else None
    _set_output_strides(ad, a, o, lse)
    # Named locals keep the copies alive until the call returns (on CUDA the
    # allocator orders their reuse after the kernel on this stream).
    q_, a.q_strides[:], a.q = _operand(ad, q, align, cuda)
    k_, a.k_strides[:], a.k = _operand(ad, k, align, cuda)
    v_, a.v_strides[:], a.v = _operand(ad, v, align, cuda)
    a.o = ad.ptr(o)
    a.lse = ad.ptr(lse) if lse is not None else None
    a.stream = stream
    _capi.library().forward(a)
    return o, lse


def backward(ad, q, k, v, o, lse, do, causal, scale, enable_gqa, var=None, deterministic=None):
    """The gradients (dQ, dK, dV), contiguous (B, H, N, D) and shaped as Q, K, V,
    of the attention whose forward gave O and the LSE, for dO (attn_backward).
    deterministic: the backward's form for this and later calls
    (attn_set_deterministic); None keeps the process's."""
    b = _capi.AttnBwdArgs()
    a = b.fwd
    device, stream, align, _, _ = _setup(ad, a, q, k, v, causal, scale, enable_gqa, True, var)
    _check_backward_operands(ad, q, o, lse, do)
    cuda = device == _capi.DEVICE_CUDA
    if var is not None:
        aux = fill_variant(ad, a.variant, var, q, a.heads, a.seqlen_q, a.seqlen_k)  # noqa: F841
    B, H, Hkv, Nq, Nk, D = a.batch, a.heads, a.kv_heads, a.seqlen_q, a.seqlen_k, a.head_dim
    grads = [ad.empty((B, h, n, D), BHND, q, False) for h, n in ((H, Nq), (Hkv, Nk), (Hkv, Nk))]
    # Named locals keep the copies alive until the call returns.
    q_, a.q_strides[:], a.q = _operand(ad, q, align, cuda)
    k_, a.k_strides[:], a.k = _operand(ad, k, align, cuda)
    v_, a.v_strides[:], a.v = _operand(ad, v, align, cuda)
    o_, a.o_strides[:], a.o = _operand(ad, o, align, cuda)
    do_, b.do_strides[:], b.d_o = _operand(ad, do, align, cuda)
    a.lse_strides[:] = _c_strides(lse.shape, ad.strides(lse))
    a.lse = ad.ptr(lse)
    for name, g in zip(("dq", "dk", "dv"), grads):
        setattr(b, name, ad.ptr(g))
        getattr(b, name + "_strides")[:] = _c_strides(g.shape, ad.strides(g))
    a.stream = stream
    # A library before issue 12 has the deterministic form only.
    if deterministic is not None and hasattr(_capi.library().lib, "attn_set_deterministic"):
        _capi.library().set_deterministic(deterministic)
    _capi.library().backward(b)
    return tuple(grads)


def check_fp8(ad, q, k, v, enable_gqa):
    """check() for attn_forward_fp8's e4m3 inputs: (B, H, Hkv, Nq, Nk, D)."""
    names = [ad.dtype_name(x) for x in (q, k, v)]
    return check(q.shape, k.shape, v.shape, names, enable_gqa, FP8_DTYPES, _FP8_SUPPORTED)[0]


def forward_fp8(ad, q, k, v, dims, o, lse, descale, causal, scale):
    """attn_forward_fp8 (the FP8 forward, Q, K and V e4m3, sizes `dims` from
    check_fp8) into o, a bfloat16 (B, H, Nq, D) array, and lse, float32 (B,
    H, Nq) or None; descale: the (q, k, v) factors that dequantise each
    tensor. V is read with its keys contiguous (the C API's rule): another
    layout is copied into it first."""
    b = _capi.AttnFp8Args()
    a = b.fwd
    device, stream = ad.device(q, k, v)
    _fill(a, dims, _capi.DTYPE_E4M3, _capi.MASK_CAUSAL if causal else _capi.MASK_NONE, scale, device,
          None)
    cuda = device == _capi.DEVICE_CUDA
    align = _alignment(cuda, 1)
    # Named locals keep the copies alive until the call returns.
    q_, a.q_strides[:], a.q = _operand(ad, q, align, cuda, itemsize=1)
    k_, a.k_strides[:], a.k = _operand(ad, k, align, cuda, itemsize=1)
    v_, a.v_strides[:], a.v = _operand(ad, v, align, cuda, unit=2, itemsize=1)
    _set_output_strides(ad, a, o, lse)
    a.o = ad.ptr(o)
    a.lse = ad.ptr(lse) if lse is not None else None
    b.q_descale, b.k_descale, b.v_descale = descale
    a.stream = stream
    _capi.library().forward_fp8(b)


def _check_backward_operands(ad, q, o, lse, do):
    """O and dO shaped and typed as Q, the LSE float32 (B, H, Nq): the C API
    reads them with Q's sizes, so a smaller one would be read past its end."""
    for name, x in (("o", o), ("do", do)):
        if tuple(x.shape) != tuple(q.shape) or ad.dtype_name(x) != ad.dtype_name(q):
            raise InvalidArgumentError(f"{name} is {ad.dtype_name(x)} {tuple(x.shape)}; the backward needs "
                                       f"q's {ad.dtype_name(q)} {tuple(q.shape)}")
    if tuple(lse.shape) != tuple(q.shape[:3]) or ad.dtype_name(lse) != "float32":
        raise InvalidArgumentError(f"lse is {ad.dtype_name(lse)} {tuple(lse.shape)}; the backward needs "
                                   f"float32 {tuple(q.shape[:3])} (B, H, Nq)")
    if ad.strides(lse) is None:
        raise InvalidArgumentError("lse's strides are not whole elements (byte-swapped?)")


class Plan:
    """A call signature's prebuilt arguments, built by prepare, run by launch.

    args: the attn_fwd_args (varlen: attn_varlen_args), all filled but the
    data pointers and the stream (ref: ctypes.byref(args); buf: its bytes,
    where the pointers are packed); fwd: the attn_fwd_args in args (args
    itself, or args.fwd); fn: attn_forward (attn_forward_varlen); ptr: the
    adapter's ptr; align: the low bits that q, k
    and v's pointers must have clear for the in-place reading that the
    strides in args describe; new_o, new_lse: the outputs' allocators
    (new_lse None without return_lse); device_index: the adapter's (torch:
    the CUDA device; -1 on the host); ad: the adapter. The variant's flags
    are in args; its values are written by each launch."""

    __slots__ = ("args", "fwd", "ref", "buf", "fn", "ptr", "align", "new_o", "new_lse", "device_index", "ad")


# The five data pointers lead attn_fwd_args: one pack_into writes them.
assert [getattr(_capi.AttnFwdArgs, n).offset for n in "q k v o lse".split()] == [0, 8, 16, 24, 32]
_PACK_POINTERS = struct.Struct("=5Q").pack_into


def prepare(ad, q, k, v, causal, scale, enable_gqa, return_lse, var=None):
    """The Plan of the call's signature (its variant flags included), or
    GENERAL when an operand's strides need a copy. Raises as forward does for
    a bad signature; the variant's arrays are checked by each launch."""
    a = _capi.AttnFwdArgs()
    device, _stream, align, o_spec, lse_spec = _setup(ad, a, q, k, v, causal, scale, enable_gqa,
                                                       return_lse, var)
    cuda = device == _capi.DEVICE_CUDA
    strides = [_in_place(ad, x, cuda) for x in (q, k, v)]
    if None in strides:
        return GENERAL
    a.q_strides[:], a.k_strides[:], a.v_strides[:] = strides
    p = Plan()
    p.new_o = ad.allocator(*o_spec, q, False)
    p.new_lse = ad.allocator(*lse_spec, q, True) if lse_spec else None
    _set_output_strides(ad, a, p.new_o(), p.new_lse() if lse_spec else None)
    lib = _capi.library()
    p.args, p.fwd, p.ref, p.buf, p.fn = a, a, ctypes.byref(a), memoryview(a).cast("B"), lib.lib.attn_forward
    p.ptr, p.align, p.device_index, p.ad = ad.ptr, align, -1, ad
    return p


def launch(plan, q, k, v, stream, var=None):
    """One call through a plan: (O, LSE or None), as forward. None when q, k
    or v's data pointer is not aligned as in-place reading needs: the caller
    then takes forward, which copies it. var: the call's Variant, of the
    plan's flags (its values and arrays are checked and written here)."""
    ptr = plan.ptr
    qp, kp, vp = ptr(q), ptr(k), ptr(v)
    if (qp | kp | vp) & plan.align:
        return None
    if var is not None:
        a = plan.fwd
        aux = fill_variant(plan.ad, a.variant, var, q, a.heads, a.seqlen_q, a.seqlen_k)  # noqa: F841
    o = plan.new_o()
    if plan.new_lse is None:
        _PACK_POINTERS(plan.buf, 0, qp, kp, vp, ptr(o), 0)
        lse = None
    else:
        lse = plan.new_lse()
        _PACK_POINTERS(plan.buf, 0, qp, kp, vp, ptr(o), ptr(lse))
    if stream is not None:
        plan.fwd.stream = stream
    status = plan.fn(plan.ref)
    if status:
        _capi.library().check(status)
    return o, lse


class _Local(threading.local):
    def __init__(self):
        self.plans = {}


local = _Local()


def remember(key, plan):
    """Stores a plan in this thread's plans (dropping the oldest when full)."""
    plans = local.plans
    if len(plans) >= MAX_PLANS:
        del plans[next(iter(plans))]
    plans[key] = plan
    return plan


# --- variable-length batches (attn_forward_varlen) ------------------------
# Q, O packed (total_q, H, D), K, V (total_k, Hkv, D): the C API reads them as
# one batch of total rows, strides in its (batch, head, row, dim) order
# [ignored, head, row, 1]; the LSE is (H, total_q). Sequence b is rows
# [cu_seqlens[b], cu_seqlens[b + 1]). A plan per signature as above (the
# number of sequences B is part of it); the offsets and maxima are written by
# each launch.


def check_varlen(q_shape, k_shape, v_shape, dtypes, enable_gqa):
    """`check`'s rules on packed (total, heads, D) operands, one batch of
    their rows: returns (H, Hkv, total_q, total_k, D) and the attn_dtype."""
    for name, shape in zip("qkv", (q_shape, k_shape, v_shape)):
        if len(shape) != 3:
            raise InvalidArgumentError(f"{name} has shape {tuple(shape)}: attn_jit.attention_varlen takes "
                                       "3-D packed (total, heads, D) tensors")
    if tuple(k_shape[:2]) != tuple(v_shape[:2]):
        raise InvalidArgumentError(f"k {tuple(k_shape)} and v {tuple(v_shape)} must agree in (total_k, Hkv)")
    (_, H, Hkv, Tq, Tk, D), dtype = check(*((1, s[1], s[0], s[2]) for s in (q_shape, k_shape, v_shape)),
                                          dtypes, enable_gqa)
    return (H, Hkv, Tq, Tk, D), dtype


def check_offsets(ad, cu_seqlens_q, cu_seqlens_k, q):
    """The call's offsets as arrays of q's kind on its device (ad.aux: NumPy
    converts sequences), each int32 (B + 1,) with B >= 1, the same B: returns
    (cu_q, cu_k, B). Their values are the C API's to check (on the host) or
    to clamp (on CUDA, where they stay on the device)."""
    out = []
    for name, x in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        x = ad.aux(x, name, "int32", q)
        if ad.dtype_name(x) != "int32":
            raise InvalidArgumentError(f"{name} must be int32 (as FlashAttention's); got {ad.dtype_name(x)}")
        if len(x.shape) != 1 or x.shape[0] < 2:
            raise InvalidArgumentError(f"{name} has shape {tuple(x.shape)}: must be (B + 1,), the offsets of "
                                       "B >= 1 sequences")
        out.append(x)
    if out[0].shape[0] != out[1].shape[0]:
        raise InvalidArgumentError(f"cu_seqlens_q has {out[0].shape[0]} offsets and cu_seqlens_k "
                                   f"{out[1].shape[0]}: both are (B + 1,)")
    return out[0], out[1], out[0].shape[0] - 1


def check_maxima(max_seqlen_q, max_seqlen_k, total_q, total_k):
    """The maxima as ints in [0, total] (the C API checks the same, and on
    the host every sequence's length against them)."""
    out = []
    for name, x, total, rows in (("max_seqlen_q", max_seqlen_q, total_q, "q"),
                                 ("max_seqlen_k", max_seqlen_k, total_k, "k")):
        x = _int(x, name)
        if not 0 <= x <= total:
            raise InvalidArgumentError(f"{name} = {x}: must be in [0, {total}] ({rows}'s packed rows)")
        out.append(x)
    return out


def _packed_c_strides(shape, strides):
    """C strides of a packed (total, heads, D) array."""
    return _c_strides((1, shape[1], shape[0], shape[2]), (0, strides[1], strides[0], strides[2]))


def _packed_in_place(ad, x, cuda):
    strides = ad.strides(x)
    return None if strides is None else _readable(_packed_c_strides(x.shape, strides), cuda)


def prepare_varlen(ad, q, k, v, batch, causal, scale, enable_gqa, return_lse, var=None, copies=False):
    """The Plan of a variable-length signature of `batch` sequences, or
    GENERAL when an operand's strides need a copy (copies: q, k, v are
    forward_varlen's, taken as they are; the C API judges them). causal is
    bottom-right per sequence (ATTN_MASK_CAUSAL_BOTTOM_RIGHT, FlashAttention's)."""
    a = _capi.AttnVarlenArgs()
    f = a.fwd
    names = [ad.dtype_name(x) for x in (q, k, v)]
    (H, Hkv, Tq, Tk, D), dtype = check_varlen(q.shape, k.shape, v.shape, names, enable_gqa)
    check_variant_flags(var, causal)
    device, _stream = ad.device(q, k, v)
    _fill(f, (batch, H, Hkv, Tq, Tk, D), dtype,
          _capi.MASK_CAUSAL_BOTTOM_RIGHT if causal else _capi.MASK_NONE, scale, device, var)
    cuda = device == _capi.DEVICE_CUDA
    if copies:
        strides = [_packed_c_strides(x.shape, ad.strides(x)) for x in (q, k, v)]
    else:
        strides = [_packed_in_place(ad, x, cuda) for x in (q, k, v)]
        if None in strides:
            return GENERAL
    f.q_strides[:], f.k_strides[:], f.v_strides[:] = strides
    p = Plan()
    p.new_o = ad.allocator((Tq, H, D), (0, 1, 2), q, False)
    p.new_lse = ad.allocator((H, Tq), (0, 1), q, True) if return_lse else None
    o = p.new_o()
    f.o_strides[:] = _packed_c_strides(o.shape, ad.strides(o))
    if return_lse:
        lse = p.new_lse()
        f.lse_strides[:] = _c_strides((1, H, Tq), (0,) + tuple(ad.strides(lse)))
    lib = _capi.library()
    p.args, p.fwd, p.ref, p.buf = a, f, ctypes.byref(a), memoryview(a).cast("B")
    p.fn = lib.lib.attn_forward_varlen
    p.ptr, p.align, p.device_index, p.ad = ad.ptr, _alignment(cuda, DTYPES[names[0]][1]), -1, ad
    return p


# attn_varlen_args: fwd first (its pointers where launch packs them), then
# the offsets' pointers and the maxima, which one pack_into writes.
assert _capi.AttnVarlenArgs.fwd.offset == 0
_OFFSETS_AT = _capi.AttnVarlenArgs.cu_seqlens_q.offset
assert [getattr(_capi.AttnVarlenArgs, n).offset - _OFFSETS_AT for n in
        ("cu_seqlens_k", "max_seqlen_q", "max_seqlen_k")] == [8, 16, 24]
_PACK_OFFSETS = struct.Struct("=2Q2q").pack_into


def launch_varlen(plan, q, k, v, cu_q, cu_k, max_q, max_k, stream, var=None):
    """launch for a plan of prepare_varlen, with the offsets (as
    check_offsets gives them; copied unless contiguous and aligned) and the
    maxima (checked here) of the call."""
    f = plan.fwd
    max_q, max_k = check_maxima(max_q, max_k, f.seqlen_q, f.seqlen_k)
    ad = plan.ad
    cu_q, cu_k = (x if _aux_strides(ad, x, tuple(x.shape), 4) is not None else ad.contiguous(x)
                  for x in (cu_q, cu_k))
    _PACK_OFFSETS(plan.buf, _OFFSETS_AT, ad.ptr(cu_q), ad.ptr(cu_k), max_q, max_k)
    return launch(plan, q, k, v, stream, var)


def forward_varlen(ad, q, k, v, cu_q, cu_k, max_q, max_k, batch, causal, scale, enable_gqa, return_lse,
                   var=None):
    """The general path of a signature that prepare_varlen accepted: the
    operands it cannot read in place (strides, or a misaligned pointer)
    copied, then a plan of the copies, used once. (O, LSE or None)."""
    device, stream = ad.device(q, k, v)
    cuda = device == _capi.DEVICE_CUDA
    align = _alignment(cuda, DTYPES[ad.dtype_name(q)][1])
    # Named locals keep the copies alive until the call returns.
    q, k, v = (x if _packed_in_place(ad, x, cuda) is not None and not ad.ptr(x) & align else ad.contiguous(x)
               for x in (q, k, v))
    plan = prepare_varlen(ad, q, k, v, batch, causal, scale, enable_gqa, return_lse, var, copies=True)
    return launch_varlen(plan, q, k, v, cu_q, cu_k, max_q, max_k, stream, var)


# --- attention variants ---------------------------------------------------


# The variant arguments of one call (see variant()): flags (attn_variant
# flags), window_left, window_right (-1: unbounded), prefix_len, softcap (0.0
# when unused), and the arrays as given (None when unused; q_doc_ids is
# kv_doc_ids when one array was given for both). A named tuple: what
# torch.compile traces without a graph break.
# mods: the MLIR text of a Python score_mod / mask_mod (_mods.py), captures
# the arrays they read (its capture arguments, in order).
Variant = collections.namedtuple("Variant", ["flags", "window_left", "window_right", "prefix_len", "softcap",
                                             "alibi_slopes", "q_doc_ids", "kv_doc_ids", "bias", "mods",
                                             "captures"], defaults=(None, ()))
_ARRAYS = ("alibi_slopes", "q_doc_ids", "kv_doc_ids", "bias")


def variant_arrays(var):
    """(name, array) of the arrays a Variant was given."""
    return [(n, getattr(var, n)) for n in _ARRAYS if getattr(var, n) is not None]


def _int(x, name):
    if isinstance(x, int):
        return int(x)
    if hasattr(x, "__index__"):   # NumPy integers
        return operator.index(x)
    raise InvalidArgumentError(f"{name} must be an int; got {type(x).__name__}")


def variant(window=None, prefix_len=None, softcap=None, alibi_slopes=None, document_ids=None,
            bias=None, score_mod=None, mask_mod=None, traced=None):
    """The Variant of attention()'s variant keywords, its scalars checked
    (the arrays are checked against the operands by check_variant); None
    when all are None. A window with both sides unbounded is no window.
    score_mod / mask_mod are traced (_mods.py), unless traced gives their
    (text, captured arrays) already."""
    if (window is None and prefix_len is None and softcap is None and alibi_slopes is None
            and document_ids is None and bias is None and score_mod is None and mask_mod is None):
        return None
    mods, captures = None, ()
    if score_mod is not None or mask_mod is not None:
        if score_mod is not None and (softcap is not None or alibi_slopes is not None or bias is not None):
            raise InvalidArgumentError("a score_mod cannot be combined with softcap, alibi_slopes or "
                                       "bias: write them into the score_mod")
        if traced is None:
            from . import _mods
            traced = _mods.traced(score_mod, mask_mod)
        mods, captures = traced[0], tuple(traced[1])
    flags = 0
    left = right = -1
    if window is not None:
        if not isinstance(window, (tuple, list)) or len(window) != 2:
            raise InvalidArgumentError(f"window must be a pair (left, right); got {window!r}")
        left = -1 if window[0] is None else max(_int(window[0], "window's left bound"), -1)
        right = -1 if window[1] is None else max(_int(window[1], "window's right bound"), -1)
        if left >= 0 or right >= 0:
            flags |= _capi.VARIANT_WINDOW
    prefix = 0
    if prefix_len is not None:
        prefix = _int(prefix_len, "prefix_len")
        if prefix < 0:
            raise InvalidArgumentError(f"prefix_len = {prefix}: must be >= 0")
        flags |= _capi.VARIANT_PREFIX_LM
    cap = 0.0
    if softcap is not None:
        if not isinstance(softcap, (int, float)) and not hasattr(softcap, "__float__"):
            raise InvalidArgumentError(f"softcap must be a number; got {type(softcap).__name__}")
        cap = float(softcap)
        if not (cap > 0 and cap < math.inf):   # NaN fails both
            raise InvalidArgumentError(f"softcap = {cap}: must be finite and > 0")
        flags |= _capi.VARIANT_SOFTCAP
    if alibi_slopes is not None:
        flags |= _capi.VARIANT_ALIBI
    q_ids = kv_ids = None
    if document_ids is not None:
        if isinstance(document_ids, tuple):
            if len(document_ids) != 2 or document_ids[0] is None or document_ids[1] is None:
                raise InvalidArgumentError("document_ids must be one array (Nq == Nk) or a tuple of "
                                           f"two, (q_ids, kv_ids); got a tuple of {len(document_ids)}")
            q_ids, kv_ids = document_ids
        else:
            q_ids = kv_ids = document_ids
        flags |= _capi.VARIANT_DOCUMENT
    if bias is not None:
        flags |= _capi.VARIANT_BIAS
    return Variant(flags, left, right, prefix, cap, alibi_slopes, q_ids, kv_ids, bias, mods, captures)


def check_variant_flags(var, causal):
    """What the flags ask of the signature: a prefix-LM needs the causal mask."""
    if var is not None and var.flags & _capi.VARIANT_PREFIX_LM and not causal:
        raise InvalidArgumentError("prefix_len needs causal=True: keys j < prefix_len are seen by "
                                   "every query in addition to the causal mask")


# name -> (dtype name, whether size-1 dims broadcast (2-D bias))
_AUX = {"alibi_slopes": ("float32", False), "q_doc_ids": ("int32", False),
        "kv_doc_ids": ("int32", False), "bias": ("float32", True)}


def check_variant(ad, var, q, H, Nq, Nk):
    """The variant's arrays of a call as ad.aux gives them, checked for
    dtype and shape (what fake tensors show too): [(name, array, shape)]."""
    out = []
    if var.q_doc_ids is not None and var.q_doc_ids is var.kv_doc_ids and Nq != Nk:
        raise InvalidArgumentError(f"document_ids: one array serves Nq == Nk only (here Nq = {Nq}, "
                                   f"Nk = {Nk}): pass a tuple (q_ids, kv_ids)")
    shapes = {"alibi_slopes": (H,), "q_doc_ids": (Nq,), "kv_doc_ids": (Nk,), "bias": (Nq, Nk)}
    for name, x in variant_arrays(var):
        dtype, bcast = _AUX[name]
        shown = "document_ids" if name.endswith("doc_ids") and var.q_doc_ids is var.kv_doc_ids else name
        x = ad.aux(x, shown, dtype, q)
        got = ad.dtype_name(x)
        if got != dtype:
            raise InvalidArgumentError(f"{shown} must be {dtype}; got {got}")
        shape, want = tuple(x.shape), shapes[name]
        if len(shape) != len(want) or any(n != w and not (bcast and n == 1) for n, w in zip(shape, want)):
            raise InvalidArgumentError(
                f"{shown} has shape {shape}; expected {want}" + (" (or size 1 to broadcast)" if bcast else ""))
        out.append((name, x, shape))
    for i, x in enumerate(var.captures):
        name = f"the mods' captured array #{i}"
        want = str(getattr(x, "dtype", "")).rpartition(".")[2]
        x = ad.aux(x, name, want if want in ("float32", "int32") else "float32", q)
        out.append((i, x, tuple(x.shape)))
    return out


def _aux_strides(ad, x, shape, itemsize):
    """x's element strides as the C API takes them, or None when x needs a
    copy: 1-D arrays contiguous, the bias with strides >= 0 (0 along a
    broadcast size-1 dim), the pointer element-aligned."""
    s = ad.strides(x)
    if s is None or ad.ptr(x) % itemsize:
        return None
    if len(shape) == 1:
        return s if shape[0] <= 1 or s[0] == 1 else None
    s = [0 if n == 1 else st for n, st in zip(shape, s)]
    return s if min(s) >= 0 else None


def fill_variant(ad, v, var, q, H, Nq, Nk):
    """Checks the call's variant arrays against its sizes and writes the
    variant's values into v (an AttnVariant), flags included. Returns the
    arrays the call reads (the caller keeps them alive until it returns)."""
    v.flags = var.flags
    v.window_left, v.window_right = var.window_left, var.window_right
    v.prefix_len, v.softcap = var.prefix_len, var.softcap
    v.alibi_slopes = v.q_doc_ids = v.kv_doc_ids = v.bias = None
    v.bias_strides[:] = (0, 0)
    keep = []
    captures = []
    for name, x, shape in check_variant(ad, var, q, H, Nq, Nk):
        if isinstance(name, int):   # a captured array of the mods
            s = ad.strides(x)
            if s is None or ad.ptr(x) % 4 or min(s) < 0:
                x = ad.contiguous(x)
                s = ad.strides(x)
            keep.append(x)
            c = _capi.AttnCapture()
            c.data = ad.ptr(x)
            c.sizes[:len(shape)] = shape
            c.strides[:len(shape)] = s
            captures.append(c)
            continue
        strides = _aux_strides(ad, x, shape, 4)
        if strides is None:
            x = ad.contiguous(x)
            strides = _aux_strides(ad, x, shape, 4)
        keep.append(x)
        setattr(v, name, ad.ptr(x))
        if name == "bias":
            v.bias_strides[:] = strides
    v.mods = var.mods.encode() if var.mods else None
    if captures:
        table = (_capi.AttnCapture * len(captures))(*captures)
        keep.append(table)
        v.captures = ctypes.cast(table, ctypes.POINTER(_capi.AttnCapture))
    else:
        v.captures = None
    v.num_captures = len(captures)
    return keep
