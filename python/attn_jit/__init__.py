"""attn_jit: fused forward attention compiled by attn-jit, from Python.

    import attn_jit
    o = attn_jit.attention(q, k, v, causal=True)      # as F.scaled_dot_product_attention

Pure Python over the C API of libattn-jit.so (ctypes): NumPy arrays run on the
CPU (the runtime's host path), torch tensors on their device: eager calls
directly, traced ones (torch.compile, fake tensors, autograd, dispatch modes)
through the custom op attn_jit::attention, which torch.compile traces without
a graph break. A call signature is validated once and its C arguments kept
(_core: plans); neither NumPy nor torch is imported before an array of theirs
is passed.

attn_jit.attention_varlen: variable-length (packed) batches, as
FlashAttention's flash_attn_varlen_func (the forward pass).

attn_jit.attention_fp8: the FP8 (e4m3) forward of torch float8_e4m3fn
tensors with descale factors, a bfloat16 output.

attn_jit.ring: context parallelism (ring attention over torch.distributed,
and a simulated ring of NumPy or torch arrays in one process).
"""
import importlib
import sys

from . import _capi, _core
from ._mods import TraceError, exp, exp2, log, log2, maximum, minimum, sqrt, tanh, where
from .errors import (AttnJitError, CompileError, DeviceError, InternalError, InvalidArgumentError,
                     LibraryNotFoundError, UnsupportedError)

_torch = None  # the submodule _torch once imported (importing it sets this)
# numpy.ndarray and attn_jit._numpy.attention once a NumPy array was passed.
_ndarray = _numpy_attention = None

__all__ = ["attention", "attention_varlen", "attention_backward", "attention_fp8", "version", "stats", "clear_memory_cache",
           "wait_for_compiles", "set_deterministic",
           "library_path",
           "AttnJitError", "InvalidArgumentError", "UnsupportedError", "DeviceError", "CompileError",
           "InternalError", "LibraryNotFoundError", "TraceError", "where", "exp", "exp2", "log", "log2",
           "tanh", "sqrt", "minimum", "maximum"]


def attention(q, k, v, *, causal=False, scale=None, enable_gqa=False, return_lse=False, window=None,
              prefix_len=None, softcap=None, alibi_slopes=None, document_ids=None, bias=None,
              score_mod=None, mask_mod=None):
    """softmax(scale * q kᵀ + mask) v, as torch.nn.functional.scaled_dot_product_attention.

    q: (B, H, Nq, D); k, v: (B, Hkv, Nk, D), with Hkv = H, or with
    enable_gqa=True any Hkv dividing H (query head h reads K/V head
    h // (H // Hkv)). Any strides with a unit last stride are read in place
    (e.g. a (B, N, H, D) tensor transposed to (B, H, N, D)); others are copied.
    causal: query i sees keys j <= i (torch's is_causal, top-left aligned).
    scale: None for 1 / sqrt(D); any finite value, negative or 0 too.
    dtypes: float16 and bfloat16 on CUDA; float32 too on the CPU.

    Variants (FlexAttention's score_mod / mask_mod, named; they combine).
    Query i's score for key j is scale * q_i.k_j, plus the ALiBi and bias
    terms, then soft-capped; masked keys are left out:
      window=(left, right): key j is seen when -left <= j - i <= right; None
        (or a negative bound) leaves that side unbounded. Mistral's sliding
        window W: causal=True, window=(W - 1, 0).
      prefix_len: with causal=True, keys j < prefix_len are seen by every query.
      document_ids: key j is seen only when q_ids[i] == kv_ids[j]; one int32
        array (Nq,) for both when Nq == Nk, or a tuple (q_ids, kv_ids). Packed
        sequences: the ids must never decrease (each query tile visits only
        its documents' keys; unsorted ids give wrong results).
      alibi_slopes: float32 (H,): score += alibi_slopes[h] * (j - i).
      bias: float32 (Nq, Nk), any strides, size-1 dims broadcast: score +=
        bias[i, j], the same for every batch and head.
      softcap: finite, > 0: score = softcap * tanh(score / softcap).
      score_mod(score, b, h, q_idx, kv_idx) -> score and mask_mod(b, h, q_idx,
        kv_idx) -> condition: Python functions (FlexAttention's), traced into
        the compiler's IR on their first call (attn_jit.where, exp, exp2,
        log, log2, tanh, sqrt, minimum, maximum, arithmetic, comparisons,
        & | ~; arrays they read through closure variables or module globals
        -- float32 or int32, on q's device -- are indexed by positions and
        passed as arguments, so new values never recompile). A mask_mod
        combines with causal and the named masks; a score_mod excludes
        softcap, alibi_slopes and bias. What the tracer cannot express
        raises attn_jit.TraceError naming it.
    Arrays are on q's device: NumPy arrays (or sequences) with NumPy q, torch
    tensors on q's device with torch q. The flags select the compiled kernel
    (a new combination compiles once); values and arrays may change freely.

    Returns O, shaped (B, H, Nq, D) in Q's memory order, and with
    return_lse=True also (O, LSE): the natural-log log-sum-exp of each row's
    final scores, (B, H, Nq) float32. A row that sees no key gives O = 0
    and LSE = -inf. NumPy arrays run on the CPU; torch tensors on their
    device, on the current CUDA stream. Failures raise AttnJitError
    subclasses with the runtime's message; InvalidArgumentError is a
    ValueError.

    Autograd: with torch tensors that need gradients, dQ, dK and dV come
    from attn-jit's backward pass (the probabilities recomputed from the
    LSE), for every variant above: bit-identical from run to run under
    torch.use_deterministic_algorithms(True), else dQ may be added with
    atomics (set_deterministic); a returned LSE carries no gradient (it
    does not require grad).
    """
    var = _variant(window, prefix_len, softcap, alibi_slopes, document_ids, bias, score_mod, mask_mod)
    # A plain isinstance check once attn_jit._torch is loaded: what
    # torch.compile traces best (then this call is just the op in its graph).
    if _torch is not None and isinstance(q, _torch.Tensor):
        return _torch.attention(q, k, v, causal, scale, enable_gqa, return_lse, var)
    if type(q) is _ndarray:
        return _numpy_attention(q, k, v, causal, scale, enable_gqa, return_lse, var)
    if type(q).__module__.startswith("torch"):  # torch was imported after attn_jit
        return _load_torch().attention(q, k, v, causal, scale, enable_gqa, return_lse, var)
    # The first NumPy array, a subclass of ndarray, or no array
    # (_numpy.attention raises the TypeError).
    return _load_numpy()(q, k, v, causal, scale, enable_gqa, return_lse, var)


def _variant(window, prefix_len, softcap, alibi_slopes, document_ids, bias, score_mod, mask_mod):
    """The call's _core.Variant, or None for plain attention."""
    if (window is None and prefix_len is None and softcap is None and alibi_slopes is None
            and document_ids is None and bias is None and score_mod is None and mask_mod is None):
        return None
    traced = None
    if (score_mod is not None or mask_mod is not None) and _torch is not None and _torch.compiling():
        traced = _torch.traced_mods(score_mod, mask_mod)
    return _core.variant(window, prefix_len, softcap, alibi_slopes, document_ids, bias, score_mod, mask_mod,
                         traced)


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *, causal=False,
                     scale=None, enable_gqa=False, return_lse=False, window=None, softcap=None,
                     alibi_slopes=None, prefix_len=None, score_mod=None, mask_mod=None, document_ids=None,
                     bias=None):
    """Attention over a variable-length (packed, unpadded) batch, as
    FlashAttention's flash_attn_varlen_func (the C API's attn_forward_varlen).

    q: (total_q, H, D); k, v: (total_k, Hkv, D), with Hkv = H, or with
    enable_gqa=True any Hkv dividing H (query head h reads K/V head
    h // (H // Hkv)). Sequence b is the query rows
    [cu_seqlens_q[b], cu_seqlens_q[b + 1]) and the key rows
    [cu_seqlens_k[b], cu_seqlens_k[b + 1]); it attends to its own keys only.
    Any strides with a unit last stride are read in place (e.g. q = qkv[:, 0]
    of a packed (total, 3, H, D) tensor): the C API takes them in its
    (batch, head, row, dim) order as [-, head stride, row stride, 1] of one
    batch of total rows (attn_set_varlen_strides' layout when contiguous);
    others are copied.
    cu_seqlens_q, cu_seqlens_k: int32 (B + 1,), B >= 1, on q's device (NumPy:
    an int32 array or a sequence of ints). max_seqlen_q, max_seqlen_k: ints,
    at least every sequence's length and at most the packed rows (the launch
    covers B x H x ceil(max_seqlen_q / block) query tiles). The offsets'
    values are data, never part of the compiled kernel (new batches never
    recompile). On the CPU the C API checks them (0 first, non-decreasing,
    the last <= total, every length <= its maximum) and raises
    InvalidArgumentError; on CUDA they stay on the device and are not
    checked: the kernel clamps them to the packed rows, so wrong offsets or
    maxima give wrong (or, past max_seqlen_q, unwritten) rows but never read
    or write outside the tensors.
    causal: bottom-right aligned per sequence, as FlashAttention's: query i
    of a sequence with Nq_b queries and Nk_b keys sees keys
    j <= i + Nk_b - Nq_b (chunked prefill: the queries are the sequence's
    last tokens). With Nq_b > Nk_b the first rows see no key.
    scale: None for 1 / sqrt(D); any finite value, negative or 0 too.
    dtypes: float16 and bfloat16 on CUDA; float32 too on the CPU.

    Variants, per sequence with positions relative to its start (i, j: a
    query's and a key's position in their sequence; shift = Nk_b - Nq_b with
    causal, else 0), as attention()'s: window=(left, right): key j is seen
    when -left <= j - (i + shift) <= right (-1 or None: unbounded; as
    FlashAttention's window_size with causal=True, or with Nq_b == Nk_b:
    FlashAttention aligns a window bottom-right without causal too);
    prefix_len (with causal=True); softcap;
    alibi_slopes float32 (H,): score += slope[h] * (j - i); score_mod /
    mask_mod (b is the sequence, q_idx and kv_idx positions in it).
    document_ids and bias are not supported (UnsupportedError): the
    sequences already keep documents apart.

    Returns O (total_q, H, D), contiguous, in q's dtype, and with
    return_lse=True also (O, LSE): the natural-log log-sum-exp of each row,
    float32 (H, total_q) as FlashAttention's softmax_lse. A row that sees no
    key (a sequence without keys) gives O = 0 and LSE = -inf. Rows of q
    past cu_seqlens_q[B] belong to no sequence: their O (and LSE) are not
    written (left uninitialised).

    The forward pass only: torch tensors that require grad, with grad mode
    on, raise UnsupportedError (call under torch.no_grad() or detach them).
    Under torch.compile the call is the custom op attn_jit::attention_varlen
    (fullgraph=True traces it without a graph break).
    """
    for name, x in (("document_ids", document_ids), ("bias", bias)):
        if x is not None:
            raise UnsupportedError(f"{name} is not supported by attention_varlen: per-position arrays over "
                                   "packed sequences (the sequences already keep documents apart)")
    var = _variant(window, prefix_len, softcap, alibi_slopes, None, None, score_mod, mask_mod)
    if _torch is not None and isinstance(q, _torch.Tensor):
        return _torch.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                       causal, scale, enable_gqa, return_lse, var)
    if type(q).__module__.startswith("torch"):  # torch was imported after attn_jit
        return _load_torch().attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                              max_seqlen_k, causal, scale, enable_gqa, return_lse, var)
    numpy_adapter = importlib.import_module(__name__ + "._numpy")
    return numpy_adapter.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                          causal, scale, enable_gqa, return_lse, var)


def attention_backward(q, k, v, o, lse, do, *, causal=False, scale=None, enable_gqa=False):
    """(dQ, dK, dV) of attention(q, k, v, causal=, scale=, enable_gqa=) for
    the output gradient dO, recomputed from the inputs, O and the LSE
    (attn_backward), without autograd: what a caller that keeps O and the
    LSE itself needs (attn_jit.ring's backward, whose O and LSE are the
    merged ones of the whole ring). Plain attention only (no variants).

    o, lse: the forward's O and float32 (B, H, Nq) LSE (attn_jit.ring passes
    the whole row's final ones, with K/V a block of its keys: the result is
    then that block's exact share of the gradients); do: dO, shaped and
    typed as o. Returns contiguous arrays shaped and typed as q, k, v (dK, dV with
    k's Hkv heads under GQA): NumPy arrays on the CPU, torch tensors on
    their device (through the op attn_jit::attention_backward).
    """
    if type(q).__module__.startswith("torch"):
        torch_adapter = _torch or _load_torch()
        return torch_adapter.torch.ops.attn_jit.attention_backward.default(q, k, v, o, lse, do, causal,
                                                                           scale, enable_gqa)
    numpy_adapter = importlib.import_module(__name__ + "._numpy")
    for name, x in (("q", q), ("k", k), ("v", v), ("o", o), ("lse", lse), ("do", do)):
        if not isinstance(x, numpy_adapter.ndarray):
            raise TypeError(f"attn_jit.attention_backward takes NumPy arrays or torch tensors; {name} is a "
                            f"{type(x).__name__}")
    return _core.backward(numpy_adapter, q, k, v, o, lse, do, causal, scale, enable_gqa)


def attention_fp8(q, k, v, *, q_descale=1.0, k_descale=1.0, v_descale=1.0, causal=False, scale=None,
                  enable_gqa=False, return_lse=False):
    """The FP8 (e4m3) forward: softmax(scale · Q Kᵀ + mask) V of the
    dequantised inputs, Q = q · q_descale, K = k · k_descale, V = v ·
    v_descale (attn_forward_fp8; FlashAttention-3's FP8 forward).

    q: (B, H, Nq, D); k, v: (B, Hkv, Nk, D) torch float8_e4m3fn tensors on
    one device (CUDA: sm_90a's FP8 tensor cores; the CPU runs the same
    roundings), with Hkv = H or, with enable_gqa=True, any Hkv dividing H.
    D a multiple of 32 on CUDA. V is read with its keys contiguous
    (v.stride(2) == 1, e.g. v = vt.transpose(2, 3) of a (B, Hkv, D, Nk)
    tensor); another layout is copied into that one first, as are q and k
    when their last stride is not 1.
    q_descale, k_descale, v_descale: per-tensor factors, finite and > 0,
    Python numbers (a one-element tensor is read with float(), which waits
    for its device).
    causal, scale, enable_gqa, return_lse: as attention() (no variants).

    Returns O, bfloat16 (B, H, Nq, D) in Q's memory order, and with
    return_lse=True also the float32 (B, H, Nq) natural-log LSE of the
    dequantised scores. P is rounded to e4m3 before P·V (as FlashAttention-3
    does): against float64 the error is several times bf16's
    (docs/BENCHMARKS.md). No backward pass: inputs requiring grad raise
    UnsupportedError. Through the custom op attn_jit::attention_fp8, so
    torch.compile keeps it in its graph.
    """
    if not type(q).__module__.startswith("torch"):
        raise TypeError(f"attn_jit.attention_fp8 takes torch float8_e4m3fn tensors (NumPy has no FP8 "
                        f"dtype); q is a {type(q).__name__}")
    descale = tuple(float(x) for x in (q_descale, k_descale, v_descale))
    return (_torch or _load_torch()).attention_fp8(q, k, v, descale, causal, scale, enable_gqa, return_lse)


def version():
    """The compiler version hash that is part of every kernel cache key."""
    return _capi.library().version()


def stats():
    """The runtime's counters: compiles, memory_hits, disk_hits, launches, ..."""
    return _capi.library().stats()


def set_deterministic(deterministic):
    """The backward pass's form from now on (attn_set_deterministic; the
    initial one from ATTN_JIT_DETERMINISTIC, default True): True gives
    bit-identical gradients; False lets dQ be added with atomics (fewer
    products; the CPU kernels, and CUDA ones only with
    ATTN_JIT_GPU_ATOMIC_BACKWARD=1). Torch
    backward calls set it from torch.are_deterministic_algorithms_enabled()."""
    _capi.library().set_deterministic(bool(deterministic))


def clear_memory_cache():
    """Forgets the kernels held in memory (the disk cache stays)."""
    _capi.library().clear_memory_cache()


def wait_for_compiles():
    """Returns once no kernel builds in the background: a forward's first
    call runs a quick kernel while its own compiles (unless
    ATTN_JIT_TIERED=0); time calls after this."""
    _capi.library().wait_for_compiles()


def library_path():
    """The path of the libattn-jit.so in use (loading it if needed)."""
    return _capi.library().path


def _load_torch():
    """Imports the submodule _torch (registering the custom op), which also
    sets the global _torch."""
    # Not `from . import _torch`: that returns the package attribute _torch
    # (None until the submodule is loaded) without importing anything.
    return importlib.import_module(__name__ + "._torch")


def _load_numpy():
    """Imports the submodule _numpy (and NumPy): its attention function."""
    global _ndarray, _numpy_attention
    numpy_adapter = importlib.import_module(__name__ + "._numpy")
    _ndarray, _numpy_attention = numpy_adapter.ndarray, numpy_adapter.attention
    return _numpy_attention


# With torch already imported, register the custom op now, before any
# torch.compile traces a call; otherwise the first torch tensor does it.
if sys.modules.get("torch") is not None:
    _load_torch()
