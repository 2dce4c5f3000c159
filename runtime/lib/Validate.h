//===- Validate.h - Checks on attn_forward's arguments --------------------===//
//
// Everything that can be checked without a driver: sizes, strides, dtypes,
// alignment, extents. A call that fails here has not touched any output.
// (Whether pointers are device memory needs the driver: see CudaDevice.h.)
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_VALIDATE_H
#define ATTN_RUNTIME_VALIDATE_H

#include "attn-jit/Runtime.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Dialect/Attn/IR/Limits.h"

#include <vector>

namespace attn::rt {

/// CUDA head dims: multiples of 8 in [8, 256]; host: [1, 512] (Limits.h).
inline constexpr int64_t kMaxCudaHeadDim = mlir::attn::kMaxNvidiaHeadDim;
inline constexpr int64_t kMaxHostHeadDim = mlir::attn::kMaxHostHeadDim;
/// Grid y (heads) and z (batch) limit.
inline constexpr int64_t kMaxGridYZ = 65535;

Status validateForward(const attn_fwd_args *args);

/// An FP8 call's descale factors (KernelABI.h's kFp8Scalars), in order.
struct Fp8Call {
  float descale[std::size(abi::kFp8Scalars)] = {1, 1, 1};
};
/// Checks an attn_forward_fp8 call (args->fwd by validateForward's checks
/// with e4m3 inputs, a bf16 O and V's keys contiguous) and fills `call`.
Status validateFp8(const attn_fp8_args *args, Fp8Call &call);

/// A variable-length call as the engine runs it: the packed tensors as one
/// batch of total rows (`packed`, batch 1, batch strides 0) and the
/// sequences' offsets (KernelABI.h's kVarlenArgs).
struct VarlenCall {
  attn_fwd_args packed;
  int64_t sequences = 0; // B
  int64_t maxSeqlenQ = 0, maxSeqlenK = 0;
  const int32_t *cuSeqlensQ = nullptr, *cuSeqlensK = nullptr;
  /// Over a paged K/V cache (attn_forward_paged; cuSeqlensK is null and
  /// `packed` has K and V as one page, seqlen_k the page size): the page
  /// size (0: not paged), the pages, the block table and the key counts.
  int64_t pageSize = 0, numPages = 0, maxPages = 0, blockTableStride = 0;
  const int32_t *blockTable = nullptr, *sequsedK = nullptr;

  /// The values of kVarlenArgs (kPagedArgs when paged), in order.
  std::vector<abi::CaptureValue> values() const;
};

/// Checks an attn_forward_varlen call (the packed tensors by
/// validateForward's checks; on the host the offsets' contents too) and
/// fills `call`.
Status validateVarlen(const attn_varlen_args *args, VarlenCall &call);
/// Checks an attn_forward_paged call (the queries as validateVarlen's, the
/// caches' sizes, strides and extents; on the host the tables' contents
/// too) and fills `call`.
Status validatePaged(const attn_paged_args *args, VarlenCall &call);
/// The forward's checks on args->fwd (its LSE required), then dO, dQ, dK,
/// dV as O, Q, K, V.
Status validateBackward(const attn_bwd_args *args);

/// Checks that no tensor capture of the user's mods (validated by
/// validateUserCaptures) overlaps an output of the call: O and the LSE of a
/// forward, or dQ, dK and dV of `backward` when it is not null.
Status validateCapturesApart(const attn_fwd_args &args,
                             const compiler::UserModsInfo &user,
                             const attn_bwd_args *backward);

/// Whether there is nothing to compute (batch, heads or seqlen_q is 0).
bool isEmptyForward(const attn_fwd_args &args);

/// The heads of K and V: kv_heads, or heads when kv_heads is 0.
int64_t kvHeadsOf(const attn_fwd_args &args);

/// args.scale, or 1/sqrt(head_dim) when it is 0.
float effectiveScale(const attn_fwd_args &args);

/// Bytes of an input element (Q, K, V) and of an output one (O: bf16 for
/// e4m3 inputs).
size_t elementSize(attn_dtype dtype);
size_t outputElementSize(attn_dtype dtype);
compiler::DType toCompilerDType(attn_dtype dtype);
compiler::MaskKind toCompilerMask(attn_mask mask);

} // namespace attn::rt

#endif // ATTN_RUNTIME_VALIDATE_H
