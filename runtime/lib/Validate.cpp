//===- Validate.cpp - Checks on attn_forward's arguments ------------------===//

#include "Validate.h"
#include "Error.h"
#include "Variant.h"

#include "attn/Compiler/KernelABI.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <tuple>
#include <vector>
#include <type_traits>
#include <utility>

namespace attn::rt {

namespace {

/// A tensor argument as the checks see it.
struct TensorView {
  const char *name;        // "q", "k", "v", "o", "lse"
  const char *stridesName; // "q_strides", ...
  const void *data;
  int rank;
  int64_t sizes[4];
  const int64_t *strides;
};

/// The tensors of a forward call.
struct ForwardTensors {
  TensorView q, k, v, o, lse;
};

ForwardTensors forwardTensors(const attn_fwd_args &args) {
  int64_t kvHeads = kvHeadsOf(args);
  return {{"q", "q_strides", args.q, 4,
           {args.batch, args.heads, args.seqlen_q, args.head_dim},
           args.q_strides},
          {"k", "k_strides", args.k, 4,
           {args.batch, kvHeads, args.seqlen_k, args.head_dim},
           args.k_strides},
          {"v", "v_strides", args.v, 4,
           {args.batch, kvHeads, args.seqlen_k, args.head_dim},
           args.v_strides},
          {"o", "o_strides", args.o, 4,
           {args.batch, args.heads, args.seqlen_q, args.head_dim},
           args.o_strides},
          {"lse", "lse_strides", args.lse, 3,
           {args.batch, args.heads, args.seqlen_q, 0},
           args.lse_strides}};
}

/// The tensors a backward call adds.
struct BackwardTensors {
  TensorView dO, dq, dk, dv;
};

BackwardTensors backwardTensors(const attn_bwd_args &args) {
  const attn_fwd_args &fwd = args.fwd;
  int64_t kvHeads = kvHeadsOf(fwd);
  return {{"d_o", "do_strides", args.d_o, 4,
           {fwd.batch, fwd.heads, fwd.seqlen_q, fwd.head_dim},
           args.do_strides},
          {"dq", "dq_strides", args.dq, 4,
           {fwd.batch, fwd.heads, fwd.seqlen_q, fwd.head_dim},
           args.dq_strides},
          {"dk", "dk_strides", args.dk, 4,
           {fwd.batch, kvHeads, fwd.seqlen_k, fwd.head_dim},
           args.dk_strides},
          {"dv", "dv_strides", args.dv, 4,
           {fwd.batch, kvHeads, fwd.seqlen_k, fwd.head_dim},
           args.dv_strides}};
}

/// An enum field as the integer the caller stored: C callers (and FFI) may
/// store any int, and loading an out-of-range enum value is undefined.
template <typename Enum> int rawValue(const Enum &field) {
  std::underlying_type_t<Enum> raw;
  static_assert(sizeof raw == sizeof field);
  std::memcpy(&raw, &field, sizeof raw);
  return static_cast<int>(raw);
}

bool isElementCount(const TensorView &tensor) {
  for (int i = 0; i < tensor.rank; ++i)
    if (tensor.sizes[i] == 0)
      return false;
  return true;
}

/// `unitDim`: the dim of unit stride of a rank-4 tensor, the head dim (3),
/// or for an FP8 call's V the keys (2: attn_forward_fp8 reads Vᵀ).
Status checkStrides(const TensorView &tensor, bool cuda,
                    size_t elementBytes = 2, int unitDim = 3) {
  // Q, K, V and O rows are read as vectors: unit head-dim stride. The LSE is
  // written one f32 at a time, so any (B, H, Nq) strides do, e.g. (B, Nq, H).
  bool rows = tensor.rank == 4;
  if (rows && tensor.strides[unitDim] != 1)
    return unitDim == 3
               ? makeError(ATTN_ERROR_INVALID_ARGUMENT,
                           "{}[{}] = {}: the innermost stride must be 1",
                           tensor.stridesName, unitDim,
                           tensor.strides[unitDim])
               : makeError(ATTN_ERROR_INVALID_ARGUMENT,
                           "{}[{}] = {}: attn_forward_fp8 reads V with its "
                           "keys contiguous (stride 1; V_colmajor: a (B, "
                           "Hkv, D, Nk) tensor seen as (B, Hkv, Nk, D))",
                           tensor.stridesName, unitDim,
                           tensor.strides[unitDim]);
  for (int i = 0; i < tensor.rank; ++i) {
    if (rows && i == unitDim)
      continue;
    int64_t stride = tensor.strides[i];
    if (stride < 0)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{}[{}] = {}: strides must not be negative",
                       tensor.stridesName, i, stride);
    // LSE is stored one f32 at a time; only Q, K, V and O are copied in
    // 16-byte pieces (an FP8 V by TMA, whose strides are the same rule).
    if (cuda && rows && (stride * elementBytes) % 16 != 0)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{}[{}] = {}: on CUDA, strides must be multiples of "
                       "{} elements (rows are copied in 16-byte pieces)",
                       tensor.stridesName, i, stride, 16 / elementBytes);
  }
  return Status();
}

/// Checks that the largest byte offset of the tensor fits in int64; its byte
/// count, first byte to the end of the last element, in `bytesOut` (0
/// without elements).
Status checkExtent(const TensorView &tensor, size_t elementBytes,
                   int64_t *bytesOut = nullptr) {
  if (bytesOut)
    *bytesOut = 0;
  if (!isElementCount(tensor))
    return Status();
  int64_t last = 0;
  for (int i = 0; i < tensor.rank; ++i) {
    int64_t term;
    if (__builtin_mul_overflow(tensor.sizes[i] - 1, tensor.strides[i], &term) ||
        __builtin_add_overflow(last, term, &last))
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{}: sizes times strides overflow 64-bit offsets",
                       tensor.name);
  }
  int64_t bytes;
  if (__builtin_add_overflow(last, int64_t(1), &bytes) ||
      __builtin_mul_overflow(bytes, static_cast<int64_t>(elementBytes), &bytes))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "{}: its extent overflows 64-bit byte offsets",
                     tensor.name);
  if (bytesOut)
    *bytesOut = bytes;
  return Status();
}

/// Outputs must not have two indices at one address: the kernel would race.
Status checkNoOverlap(const TensorView &tensor) {
  if (!isElementCount(tensor))
    return Status();
  std::array<std::pair<int64_t, int64_t>, 4> dims; // (stride, size)
  int count = 0;
  for (int i = 0; i < tensor.rank; ++i)
    if (tensor.sizes[i] > 1)
      dims[count++] = {tensor.strides[i], tensor.sizes[i]};
  std::sort(dims.begin(), dims.begin() + count);
  int64_t span = 0; // offsets reached by the inner dims: [0, span]
  for (int i = 0; i < count; ++i) {
    auto [stride, size] = dims[i];
    if (stride <= span)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{}: its strides make elements overlap (an output "
                       "needs a distinct address per element)",
                       tensor.name);
    span += (size - 1) * stride; // no overflow: checkExtent passed
  }
  return Status();
}

/// The bytes a tensor argument spans, [begin, end): from its pointer to the
/// end of its last element. Empty for a null pointer or no elements.
struct Extent {
  const char *name = "";
  uintptr_t begin = 0, end = 0;
};

/// The extent of `tensor`, whose strides are not negative (checkStrides, or
/// validateVariant for the variants' tensors).
Status extentOf(const TensorView &tensor, size_t elementBytes, Extent &out) {
  out = Extent{tensor.name};
  int64_t bytes = 0;
  if (Status s = checkExtent(tensor, elementBytes, &bytes); !s.ok())
    return s;
  if (!tensor.data || bytes == 0)
    return Status();
  uintptr_t begin = reinterpret_cast<uintptr_t>(tensor.data);
  if (__builtin_add_overflow(begin, static_cast<uintptr_t>(bytes), &out.end))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "{} = {}: its extent passes the end of the address space",
                     tensor.name, tensor.data);
  out.begin = begin;
  return Status();
}

bool overlap(const Extent &a, const Extent &b) {
  return a.begin < a.end && b.begin < b.end && a.begin < b.end &&
         b.begin < a.end;
}

/// Outputs share no byte with each other or with an input, judged by their
/// extents: the kernels read inputs while other tiles write outputs, and a
/// shared byte gave wrong results with ATTN_OK. Conservative: tensors
/// interleaved in one buffer without sharing an element are refused too.
/// A run of extents (C++17 has no std::span).
struct Extents {
  const Extent *data;
  size_t size;
  const Extent *begin() const { return data; }
  const Extent *end() const { return data + size; }
};

Status checkApart(Extents outputs, Extents inputs) {
  auto describe = [](const Extent &e) {
    return fmt::format("{} [{:#x}, {:#x})", e.name, e.begin, e.end);
  };
  for (auto out = outputs.begin(); out != outputs.end(); ++out) {
    for (auto other = out + 1; other != outputs.end(); ++other)
      if (overlap(*out, *other))
        return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                         "outputs {} and {} overlap: each output needs "
                         "memory of its own",
                         describe(*out), describe(*other));
    for (const Extent &input : inputs)
      if (overlap(*out, input))
        return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                         "output {} overlaps input {}: outputs must not "
                         "share memory with inputs (in place, O = Q, "
                         "included)",
                         describe(*out), describe(input));
  }
  return Status();
}

/// The largest number of inputs a call checks outputs against: Q, K, V, O,
/// LSE, dO and the variants' tensors.
constexpr size_t kMaxInputs = 6 + 4;

/// Appends the extents of Q, K, V and the named variants' tensors of `args`
/// (validated) to `inputs`.
Status forwardInputExtents(const attn_fwd_args &args, const TensorView &q,
                           const TensorView &k, const TensorView &v,
                           std::array<Extent, kMaxInputs> &inputs,
                           size_t &count) {
  size_t bytes = elementSize(args.dtype);
  for (const TensorView *tensor : {&q, &k, &v})
    if (Status s = extentOf(*tensor, bytes, inputs[count++]); !s.ok())
      return s;
  if (!(args.variant.flags & abi::kAllVariants))
    return Status();
  std::vector<abi::CaptureValue> values = captureValues(args);
  size_t next = 0;
  for (const abi::CaptureArg &arg : abi::kCaptureArgs) {
    if (!(args.variant.flags & arg.variant))
      continue;
    const abi::CaptureValue &value = values[next++];
    if (arg.rank == 0)
      continue;
    TensorView tensor{arg.name, "", value.data, arg.rank, {}, value.strides};
    std::copy(value.sizes, value.sizes + arg.rank, tensor.sizes);
    // f32 and i32 elements.
    if (Status s = extentOf(tensor, 4, inputs[count++]); !s.ok())
      return s;
  }
  return Status();
}

/// The extents of a call's outputs: O and the LSE of a forward, or dQ, dK
/// and dV of `backward` when it is not null.
struct OutputExtents {
  Extent extents[3];
  size_t size = 0;
  Extents all() const { return {extents, size}; }
};

Status outputExtents(const attn_fwd_args &args, const attn_bwd_args *backward,
                     OutputExtents &out) {
  size_t bytes = outputElementSize(args.dtype);
  std::pair<const TensorView *, size_t> tensors[3];
  ForwardTensors fwd = forwardTensors(args);
  BackwardTensors bwd{};
  if (backward) {
    bwd = backwardTensors(*backward);
    tensors[0] = {&bwd.dq, bytes};
    tensors[1] = {&bwd.dk, bytes};
    tensors[2] = {&bwd.dv, bytes};
    out.size = 3;
  } else {
    tensors[0] = {&fwd.o, bytes};
    tensors[1] = {&fwd.lse, sizeof(float)};
    out.size = 2;
  }
  for (size_t i = 0; i < out.size; ++i)
    if (Status s = extentOf(*tensors[i].first, tensors[i].second,
                            out.extents[i]);
        !s.ok())
      return s;
  return Status();
}

Status checkPointer(const TensorView &tensor, size_t alignment,
                    const char *why) {
  if (!tensor.data)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "{} is a null pointer",
                     tensor.name);
  auto address = reinterpret_cast<uintptr_t>(tensor.data);
  if (address % alignment != 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "{} = {} is not {}-byte aligned ({})", tensor.name,
                     tensor.data, alignment, why);
  return Status();
}

} // namespace

size_t elementSize(attn_dtype dtype) {
  return dtype == ATTN_DTYPE_F32 ? 4 : dtype == ATTN_DTYPE_E4M3 ? 1 : 2;
}

size_t outputElementSize(attn_dtype dtype) {
  return dtype == ATTN_DTYPE_E4M3 ? 2 : elementSize(dtype);
}

compiler::DType toCompilerDType(attn_dtype dtype) {
  switch (dtype) {
  case ATTN_DTYPE_BF16:
    return compiler::DType::BF16;
  case ATTN_DTYPE_F16:
    return compiler::DType::F16;
  case ATTN_DTYPE_E4M3:
    return compiler::DType::E4M3;
  case ATTN_DTYPE_F32:
    break;
  }
  return compiler::DType::F32;
}

compiler::MaskKind toCompilerMask(attn_mask mask) {
  switch (mask) {
  case ATTN_MASK_NONE:
    return compiler::MaskKind::None;
  case ATTN_MASK_CAUSAL:
    return compiler::MaskKind::Causal;
  case ATTN_MASK_CAUSAL_BOTTOM_RIGHT:
    break;
  }
  return compiler::MaskKind::CausalBottomRight;
}

int64_t kvHeadsOf(const attn_fwd_args &args) {
  return args.kv_heads == 0 ? args.heads : args.kv_heads;
}

float effectiveScale(const attn_fwd_args &args) {
  if (args.scale != 0)
    return args.scale;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(args.head_dim)));
}

bool isEmptyForward(const attn_fwd_args &args) {
  return args.batch == 0 || args.heads == 0 || args.seqlen_q == 0;
}

namespace {

/// validateForward, or with `fp8` attn_forward_fp8's rules for args->fwd.
Status validateForwardArgs(const attn_fwd_args *argsPtr, bool fp8) {
  if (!argsPtr)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "args is a null pointer");
  const attn_fwd_args &args = *argsPtr;

  int device = rawValue(args.device), dtype = rawValue(args.dtype),
      mask = rawValue(args.mask);
  if (device != ATTN_DEVICE_CUDA && device != ATTN_DEVICE_HOST)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "device = {} is not an attn_device", device);
  bool cuda = device == ATTN_DEVICE_CUDA;
  if (dtype != ATTN_DTYPE_BF16 && dtype != ATTN_DTYPE_F16 &&
      dtype != ATTN_DTYPE_F32 && dtype != ATTN_DTYPE_E4M3)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "dtype = {} is not an attn_dtype", dtype);
  if (fp8 != (dtype == ATTN_DTYPE_E4M3))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     fp8 ? "attn_forward_fp8 takes dtype ATTN_DTYPE_E4M3, "
                           "got {}"
                         : "dtype {} (ATTN_DTYPE_E4M3) takes "
                           "attn_forward_fp8, with its descale factors",
                     dtype);
  if (cuda && dtype == ATTN_DTYPE_F32)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "dtype f32 is supported on the host device only; CUDA "
                     "takes bf16 or f16");
  if (mask != ATTN_MASK_NONE && mask != ATTN_MASK_CAUSAL &&
      mask != ATTN_MASK_CAUSAL_BOTTOM_RIGHT)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "mask = {} is not an attn_mask", mask);

  std::pair<const char *, int64_t> counts[] = {{"batch", args.batch},
                                               {"heads", args.heads},
                                               {"kv_heads", args.kv_heads},
                                               {"seqlen_q", args.seqlen_q},
                                               {"seqlen_k", args.seqlen_k}};
  for (auto [name, value] : counts)
    if (value < 0)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{} = {}: sizes must not be negative", name, value);
  // Grouped-query attention: query head h reads K/V head h / (H / Hkv).
  if (args.kv_heads != 0 &&
      (args.kv_heads > args.heads || args.heads % args.kv_heads != 0))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "kv_heads = {} with heads = {}: kv_heads must divide "
                     "heads (1 <= kv_heads <= heads, heads % kv_heads == 0; "
                     "0 means kv_heads = heads)",
                     args.kv_heads, args.heads);
  if (args.head_dim < 1)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "head_dim = {}: must be positive", args.head_dim);
  if (cuda && (args.head_dim % 8 != 0 || args.head_dim > kMaxCudaHeadDim))
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "head_dim = {} is not supported on CUDA (multiples of 8 "
                     "from 8 to {})",
                     args.head_dim, kMaxCudaHeadDim);
  if (!cuda && args.head_dim > kMaxHostHeadDim)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "head_dim = {} is not supported on the host (1 to {})",
                     args.head_dim, kMaxHostHeadDim);
  // Tile-size overrides: the NVIDIA mapping gives each of its 4 warps whole
  // 16-row m tiles and reads K/V in 16-key k blocks.
  if (args.block_m < 0 || args.block_n < 0 ||
      args.block_m > mlir::attn::kMaxTileSide ||
      args.block_n > mlir::attn::kMaxTileSide)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "block_m = {}, block_n = {}: tile sizes must be in "
                     "[0, {}] (0: the default)",
                     args.block_m, args.block_n, mlir::attn::kMaxTileSide);
  if (cuda && (args.block_m % 64 != 0 || args.block_m > 256 ||
               args.block_n % 16 != 0 || args.block_n > 256))
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "block_m = {}, block_n = {}: on CUDA block_m must be a "
                     "multiple of 64 up to 256 and block_n a multiple of 16 "
                     "up to 256 (0: the default)",
                     args.block_m, args.block_n);
  // The kernel addresses rows inside one (batch, head) with 32-bit offsets:
  // a tile of up to 256 rows must span less than 2^31 bytes.
  constexpr int64_t kMaxCudaRowStride = int64_t(1) << 22;
  const std::pair<const char *, int64_t> rowStrides[] = {
      {"q_strides[2]", args.q_strides[2]},
      {"k_strides[2]", args.k_strides[2]},
      {"v_strides[2]", args.v_strides[2]}};
  for (auto [name, stride] : rowStrides)
    if (cuda && stride >= kMaxCudaRowStride)
      return makeError(ATTN_ERROR_UNSUPPORTED,
                       "{} = {}: on CUDA the sequence stride must be below "
                       "{} elements",
                       name, stride, kMaxCudaRowStride);
  if (cuda && (args.seqlen_q > INT32_MAX || args.seqlen_k > INT32_MAX))
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "seqlen_q = {}, seqlen_k = {}: on CUDA each must be "
                     "below 2^31",
                     args.seqlen_q, args.seqlen_k);
  if (cuda && (args.batch > kMaxGridYZ || args.heads > kMaxGridYZ))
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "batch = {}, heads = {}: each must be at most {} on CUDA "
                     "(grid dimensions z and y)",
                     args.batch, args.heads, kMaxGridYZ);
  if (!std::isfinite(args.scale))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "scale = {}: must be finite (0: 1/sqrt(head_dim); "
                     "negative scales are allowed)",
                     args.scale);

  auto [q, k, v, o, lse] = forwardTensors(args);
  size_t bytes = elementSize(args.dtype);
  for (const TensorView *tensor : {&q, &k, &v, &o}) {
    size_t tensorBytes =
        tensor == &o ? outputElementSize(args.dtype) : bytes;
    Status s = checkStrides(*tensor, cuda, tensorBytes,
                            fp8 && tensor == &v ? 2 : 3);
    if (!s.ok())
      return s;
    if (s = checkExtent(*tensor, tensorBytes); !s.ok())
      return s;
  }
  if (Status s = checkNoOverlap(o); !s.ok())
    return s;
  if (args.lse) {
    if (Status s = checkStrides(lse, cuda); !s.ok())
      return s;
    if (Status s = checkExtent(lse, sizeof(float)); !s.ok())
      return s;
    if (Status s = checkNoOverlap(lse); !s.ok())
      return s;
  }

  if (Status s = validateVariant(args); !s.ok())
    return s;
  std::array<Extent, kMaxInputs> inputs;
  size_t numInputs = 0;
  OutputExtents outputs;
  if (Status s = forwardInputExtents(args, q, k, v, inputs, numInputs);
      !s.ok())
    return s;
  if (Status s = outputExtents(args, nullptr, outputs); !s.ok())
    return s;
  if (Status s = checkApart(outputs.all(), {inputs.data(), numInputs});
      !s.ok())
    return s;
  // Empty tensors may come with null pointers (as PyTorch's do).
  if (isEmptyForward(args))
    return Status();
  size_t alignment = cuda ? 16 : bytes;
  const char *why = cuda ? "CUDA kernels copy 16-byte pieces"
                         : "the host kernel loads whole elements";
  for (const TensorView *tensor : {&q, &o})
    if (Status s = checkPointer(*tensor, alignment, why); !s.ok())
      return s;
  // With no keys, K and V are never read (O = 0, LSE = -inf).
  if (args.seqlen_k > 0)
    for (const TensorView *tensor : {&k, &v})
      if (Status s = checkPointer(*tensor, alignment, why); !s.ok())
        return s;
  if (args.lse && reinterpret_cast<uintptr_t>(args.lse) % alignof(float) != 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "lse = {} is not 4-byte aligned",
                     static_cast<const void *>(args.lse));
  return Status();
}

} // namespace

Status validateForward(const attn_fwd_args *args) {
  return validateForwardArgs(args, /*fp8=*/false);
}

Status validateFp8(const attn_fp8_args *args, Fp8Call &call) {
  if (!args)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "args is a null pointer");
  const float factors[] = {args->q_descale, args->k_descale, args->v_descale};
  static_assert(std::size(factors) == std::size(abi::kFp8Scalars));
  for (size_t i = 0; i < std::size(factors); ++i) {
    if (!std::isfinite(factors[i]) || !(factors[i] > 0))
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{} = {}: a descale factor must be finite and > 0",
                       abi::kFp8Scalars[i], factors[i]);
    call.descale[i] = factors[i];
  }
  const attn_fwd_args &fwd = args->fwd;
  if (fwd.variant.flags != 0 || fwd.variant.mods)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "attn_forward_fp8 computes plain or causal attention: "
                     "no variant (flags {:#x}{})",
                     fwd.variant.flags, fwd.variant.mods ? ", mods" : "");
  return validateForwardArgs(&fwd, /*fp8=*/true);
}

std::vector<abi::CaptureValue> VarlenCall::values() const {
  if (pageSize) {
    static_assert(std::size(abi::kPagedArgs) == 4,
                  "VarlenCall::values passes cu_seqlens_q, max_seqlen_q, "
                  "block_table and seqused_k: update it with KernelABI.h");
    abi::CaptureValue q, max, table, used;
    q.data = cuSeqlensQ;
    q.sizes[0] = sequences + 1;
    q.strides[0] = 1;
    max.i64 = maxSeqlenQ;
    table.data = blockTable;
    table.sizes[0] = sequences;
    table.sizes[1] = maxPages;
    table.strides[0] = blockTableStride;
    table.strides[1] = 1;
    used.data = sequsedK;
    used.sizes[0] = sequences;
    used.strides[0] = 1;
    return {q, max, table, used};
  }
  static_assert(std::size(abi::kVarlenArgs) == 3,
                "VarlenCall::values passes cu_seqlens_q, cu_seqlens_k and "
                "max_seqlen_q: update it with KernelABI.h");
  abi::CaptureValue q, k, max;
  q.data = cuSeqlensQ;
  k.data = cuSeqlensK;
  q.sizes[0] = k.sizes[0] = sequences + 1;
  q.strides[0] = k.strides[0] = 1;
  max.i64 = maxSeqlenQ;
  return {q, k, max};
}

namespace {

/// On the host the offsets are host memory: every rule attn_jit.h states
/// is checked, so a bad array is an error rather than a wrong result.
Status checkHostOffsets(const char *name, const int32_t *cu, int64_t count,
                        int64_t total, int64_t maxLength,
                        const char *maxName) {
  if (cu[0] != 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "{}[0] = {}: the offsets must start at 0", name, cu[0]);
  for (int64_t b = 0; b + 1 < count; ++b) {
    int64_t length = int64_t(cu[b + 1]) - cu[b];
    if (length < 0)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{}[{}] = {} < {}[{}] = {}: the offsets must not "
                       "decrease",
                       name, b + 1, cu[b + 1], name, b, cu[b]);
    if (length > maxLength)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "sequence {} has {} rows in {}, more than {} = {}", b,
                       length, name, maxName, maxLength);
  }
  if (cu[count - 1] > total)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "{}[{}] = {}: past the {} packed rows", name, count - 1,
                     cu[count - 1], total);
  return Status();
}

/// What a packed batch of queries (varlen, paged) needs of `fwd`: at least
/// one sequence, no variant indexed by position, and attn_forward's checks
/// on one batch of the packed rows (the batch strides do not matter; K and
/// V as `packed` has them). Sets call.packed and call.sequences.
Status checkPackedBatch(const attn_fwd_args &fwd, const attn_fwd_args &packed,
                        VarlenCall &call) {
  if (fwd.batch < 1)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "fwd.batch = {}: a variable-length batch holds at least "
                     "one sequence",
                     fwd.batch);
  unsigned unsupported = ATTN_VARIANT_DOCUMENT | ATTN_VARIANT_BIAS;
  if (fwd.variant.flags & unsupported)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "variant.flags = {:#x}: the document and bias variants "
                     "index per-position arrays and are not supported with "
                     "variable-length batches (the sequences already keep "
                     "documents apart)",
                     fwd.variant.flags);
  call = VarlenCall();
  call.packed = packed;
  call.packed.batch = 1;
  for (int64_t *strides : {call.packed.q_strides, call.packed.k_strides,
                           call.packed.v_strides, call.packed.o_strides,
                           call.packed.lse_strides})
    strides[0] = 0;
  if (Status s = validateForward(&call.packed); !s.ok())
    return s;
  if (fwd.device == ATTN_DEVICE_CUDA && fwd.batch > kMaxGridYZ)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "fwd.batch = {}: at most {} sequences on CUDA (grid "
                     "dimension z)",
                     fwd.batch, kMaxGridYZ);
  call.sequences = fwd.batch;
  return Status();
}

/// An int32 array argument: not null, 4-byte aligned.
Status checkInt32Array(const char *name, const int32_t *array) {
  if (!array)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "{} is a null pointer",
                     name);
  if (reinterpret_cast<uintptr_t>(array) % alignof(int32_t) != 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "{} = {} is not 4-byte aligned", name,
                     static_cast<const void *>(array));
  return Status();
}

/// One side's offsets of a packed batch: `maxName` = `max` in [0, `total`]
/// (fwd.`totalName`), the array `cuName` readable, and on the host (not
/// `cuda`) its B + 1 offsets by checkHostOffsets.
Status checkPackedRows(const char *cuName, const int32_t *cu,
                       const char *maxName, int64_t max,
                       const char *totalName, int64_t total, int64_t batch,
                       bool cuda) {
  if (max < 0 || max > total)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "{} = {}: must be in [0, fwd.{} = {}] (the packed "
                     "rows)",
                     maxName, max, totalName, total);
  if (Status s = checkInt32Array(cuName, cu); !s.ok())
    return s;
  if (cuda)
    return Status();
  return checkHostOffsets(cuName, cu, batch + 1, total, max, maxName);
}

} // namespace

Status validateVarlen(const attn_varlen_args *argsPtr, VarlenCall &call) {
  if (!argsPtr)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "args is a null pointer");
  const attn_varlen_args &args = *argsPtr;
  const attn_fwd_args &fwd = args.fwd;
  if (Status s = checkPackedBatch(fwd, fwd, call); !s.ok())
    return s;
  bool cuda = fwd.device == ATTN_DEVICE_CUDA;
  if (Status s = checkPackedRows("cu_seqlens_q", args.cu_seqlens_q,
                                 "max_seqlen_q", args.max_seqlen_q,
                                 "seqlen_q", fwd.seqlen_q, fwd.batch, cuda);
      !s.ok())
    return s;
  if (Status s = checkPackedRows("cu_seqlens_k", args.cu_seqlens_k,
                                 "max_seqlen_k", args.max_seqlen_k,
                                 "seqlen_k", fwd.seqlen_k, fwd.batch, cuda);
      !s.ok())
    return s;
  call.maxSeqlenQ = args.max_seqlen_q;
  call.maxSeqlenK = args.max_seqlen_k;
  call.cuSeqlensQ = args.cu_seqlens_q;
  call.cuSeqlensK = args.cu_seqlens_k;
  return Status();
}

namespace {

/// On the host the tables are host memory: every entry a sequence uses is
/// checked, so a bad table is an error rather than a wrong result.
Status checkHostPages(const attn_paged_args &args, int64_t tableStride) {
  int64_t capacity = args.max_pages * args.page_size;
  for (int64_t b = 0; b < args.fwd.batch; ++b) {
    int64_t used = args.seqused_k[b];
    if (used < 0 || used > capacity)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "seqused_k[{}] = {}: must be in [0, max_pages * "
                       "page_size = {}]",
                       b, used, capacity);
    for (int64_t j = 0; j * args.page_size < used; ++j) {
      int64_t page = args.block_table[b * tableStride + j];
      if (page < 0 || page >= args.num_pages)
        return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                         "block_table[{}][{}] = {}: sequence {} uses it, and "
                         "pages are in [0, num_pages = {})",
                         b, j, page, b, args.num_pages);
    }
  }
  return Status();
}

} // namespace

Status validatePaged(const attn_paged_args *argsPtr, VarlenCall &call) {
  if (!argsPtr)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "args is a null pointer");
  const attn_paged_args &args = *argsPtr;
  const attn_fwd_args &fwd = args.fwd;
  if (args.page_size < 1 || args.num_pages < 1 || args.max_pages < 1)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "page_size = {}, num_pages = {}, max_pages = {}: each "
                     "must be positive",
                     args.page_size, args.num_pages, args.max_pages);
  if (!mlir::attn::isValidPageSize(args.page_size))
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "page_size = {}: pages of {} to {} rows in steps of {} "
                     "are supported",
                     args.page_size, mlir::attn::kMinPageSize,
                     mlir::attn::kMaxPageSize, mlir::attn::kPageSizeStep);
  int64_t tableStride =
      args.block_table_stride ? args.block_table_stride : args.max_pages;
  if (tableStride < args.max_pages)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "block_table_stride = {}: rows of max_pages = {} "
                     "entries must not overlap (0: max_pages)",
                     args.block_table_stride, args.max_pages);
  int64_t tableEntries;
  if (__builtin_mul_overflow(fwd.batch, tableStride, &tableEntries))
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "fwd.batch = {} rows of block_table_stride = {} "
                     "overflow 64-bit offsets",
                     fwd.batch, tableStride);
  // The queries and one page of K and V (its strides, alignment and the
  // outputs apart from it) by the packed batch's checks, then the caches
  // whole.
  attn_fwd_args onePage = fwd;
  onePage.seqlen_k = args.page_size;
  if (Status s = checkPackedBatch(fwd, onePage, call); !s.ok())
    return s;
  // The kernel steps from page to page by the caches' first stride.
  call.packed.k_strides[0] = fwd.k_strides[0];
  call.packed.v_strides[0] = fwd.v_strides[0];
  int64_t kvHeads = kvHeadsOf(fwd);
  size_t bytes = elementSize(fwd.dtype);
  Extent caches[2];
  const TensorView views[2] = {
      {"k", "k_strides", fwd.k, 4,
       {args.num_pages, kvHeads, args.page_size, fwd.head_dim},
       fwd.k_strides},
      {"v", "v_strides", fwd.v, 4,
       {args.num_pages, kvHeads, args.page_size, fwd.head_dim},
       fwd.v_strides}};
  bool cuda = fwd.device == ATTN_DEVICE_CUDA;
  for (int i = 0; i < 2; ++i) {
    if (Status s = checkStrides(views[i], cuda); !s.ok())
      return s;
    if (Status s = extentOf(views[i], bytes, caches[i]); !s.ok())
      return s;
  }
  if (!isEmptyForward(call.packed)) {
    OutputExtents outputs;
    if (Status s = outputExtents(call.packed, nullptr, outputs); !s.ok())
      return s;
    if (Status s = checkApart(outputs.all(), {caches, 2}); !s.ok())
      return s;
  }
  if (Status s = checkPackedRows("cu_seqlens_q", args.cu_seqlens_q,
                                 "max_seqlen_q", args.max_seqlen_q,
                                 "seqlen_q", fwd.seqlen_q, fwd.batch, cuda);
      !s.ok())
    return s;
  const std::pair<const char *, const int32_t *> tables[] = {
      {"block_table", args.block_table}, {"seqused_k", args.seqused_k}};
  for (auto [name, array] : tables)
    if (Status s = checkInt32Array(name, array); !s.ok())
      return s;
  if (!cuda)
    if (Status s = checkHostPages(args, tableStride); !s.ok())
      return s;
  call.maxSeqlenQ = args.max_seqlen_q;
  call.cuSeqlensQ = args.cu_seqlens_q;
  call.pageSize = args.page_size;
  call.numPages = args.num_pages;
  call.maxPages = args.max_pages;
  call.blockTableStride = tableStride;
  call.blockTable = args.block_table;
  call.sequsedK = args.seqused_k;
  return Status();
}

Status validateBackward(const attn_bwd_args *argsPtr) {
  if (!argsPtr)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT, "args is a null pointer");
  const attn_bwd_args &args = *argsPtr;
  const attn_fwd_args &fwd = args.fwd;
  if (Status s = validateForward(&fwd); !s.ok())
    return s;
  if (!fwd.lse && fwd.seqlen_q > 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "fwd.lse is a null pointer: the backward pass needs the "
                     "forward's log-sum-exp");
  bool cuda = fwd.device == ATTN_DEVICE_CUDA;
  auto [dO, dq, dk, dv] = backwardTensors(args);
  size_t bytes = elementSize(fwd.dtype);
  for (const TensorView *tensor : {&dO, &dq, &dk, &dv}) {
    if (Status s = checkStrides(*tensor, cuda); !s.ok())
      return s;
    if (Status s = checkExtent(*tensor, bytes); !s.ok())
      return s;
  }
  for (const TensorView *tensor : {&dq, &dk, &dv})
    if (Status s = checkNoOverlap(*tensor); !s.ok())
      return s;
  // The gradients are written while Q, K, V, O, LSE and dO are still read
  // (the K/V tiles' kernel reads Q after the query tiles' kernel wrote dQ).
  // The row terms' workspace is the runtime's own allocation.
  ForwardTensors in = forwardTensors(fwd);
  std::array<Extent, kMaxInputs> inputs;
  size_t numInputs = 0;
  if (Status s =
          forwardInputExtents(fwd, in.q, in.k, in.v, inputs, numInputs);
      !s.ok())
    return s;
  if (Status s = extentOf(in.o, bytes, inputs[numInputs++]); !s.ok())
    return s;
  if (Status s = extentOf(in.lse, sizeof(float), inputs[numInputs++]);
      !s.ok())
    return s;
  if (Status s = extentOf(dO, bytes, inputs[numInputs++]); !s.ok())
    return s;
  OutputExtents outputs;
  if (Status s = outputExtents(fwd, &args, outputs); !s.ok())
    return s;
  if (Status s = checkApart(outputs.all(), {inputs.data(), numInputs});
      !s.ok())
    return s;
  size_t alignment = cuda ? 16 : bytes;
  const char *why = cuda ? "CUDA kernels copy 16-byte pieces"
                         : "the host kernel loads whole elements";
  if (fwd.batch == 0 || fwd.heads == 0)
    return Status();
  if (fwd.seqlen_q > 0)
    for (const TensorView *tensor : {&dO, &dq})
      if (Status s = checkPointer(*tensor, alignment, why); !s.ok())
        return s;
  // With no keys there is no dK or dV to write; with keys K and V are read
  // even without queries (their gradients are then zeros).
  if (fwd.seqlen_k > 0)
    for (const TensorView *tensor : {&in.k, &in.v, &dk, &dv})
      if (Status s = checkPointer(*tensor, alignment, why); !s.ok())
        return s;
  return Status();
}

Status validateCapturesApart(const attn_fwd_args &args,
                             const compiler::UserModsInfo &user,
                             const attn_bwd_args *backward) {
  std::array<Extent, abi::kMaxUserCaptures> captures;
  size_t numCaptures = 0;
  for (size_t i = 0; i < user.captures.size(); ++i) {
    const attn_capture &c = args.variant.captures[i];
    int rank = user.captures[i].rank;
    if (rank == 0)
      continue;
    static constexpr const char *kNames[] = {
        "captures[0]",  "captures[1]",  "captures[2]",  "captures[3]",
        "captures[4]",  "captures[5]",  "captures[6]",  "captures[7]",
        "captures[8]",  "captures[9]",  "captures[10]", "captures[11]",
        "captures[12]", "captures[13]", "captures[14]", "captures[15]"};
    static_assert(std::size(kNames) == abi::kMaxUserCaptures);
    TensorView tensor{kNames[i], "", c.data, rank, {}, c.strides};
    std::copy(c.sizes, c.sizes + rank, tensor.sizes);
    // f32 and i32 elements.
    if (Status s = extentOf(tensor, 4, captures[numCaptures++]); !s.ok())
      return s;
  }
  if (numCaptures == 0)
    return Status();
  OutputExtents outputs;
  if (Status s = outputExtents(args, backward, outputs); !s.ok())
    return s;
  return checkApart(outputs.all(), {captures.data(), numCaptures});
}

} // namespace attn::rt
