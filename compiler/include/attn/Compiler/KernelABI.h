//===- KernelABI.h - The forward kernel's parameters and launch -*- C++ -*-===//
//
// One description of how the runtime calls a compiled kernel, MLIR-free:
// attn-create-kernel builds the kernel function from it, the NVIDIA lowering
// turns each memref argument into the parameters it lists, and the runtime
// packs its launch arguments from it. Change it here and all three follow.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_KERNELABI_H
#define ATTN_COMPILER_KERNELABI_H

#include <cstdint>

namespace attn::abi {

/// Name of the forward kernel (the function the runtime launches or calls).
inline constexpr const char *kForwardKernel = "attn_fwd";

/// A tensor argument: a memref of `rank` dims with dynamic sizes and strides
/// (unit innermost stride for rank 4). On NVIDIA it becomes the kernel
/// parameters (pointer to its first element, sizes[rank], strides[rank] in
/// elements), all 64-bit; an optional tensor may be passed as a null pointer.
struct TensorArg {
  const char *name;
  int rank;
  bool optional;
};

/// The forward kernel's tensors, in order: Q, K, V, O are (B, H or Hkv, N,
/// D); LSE is (B, H, Nq), null to skip it. Then its scalars.
inline constexpr TensorArg kForwardTensors[] = {
    {"q", 4, false}, {"k", 4, false}, {"v", 4, false},
    {"o", 4, false}, {"lse", 3, true}};
inline constexpr int kForwardTensorCount = 5;
/// Scalars after the tensors: the f32 softmax scale.
inline constexpr const char *kForwardScalars[] = {"scale"};
inline constexpr int kForwardScalarCount = 1;

/// Kernel parameters of one tensor argument.
constexpr int paramsOf(const TensorArg &t) { return 1 + 2 * t.rank; }

/// 64-bit parameters of all tensors together.
constexpr int forwardTensorParams() {
  int n = 0;
  for (const TensorArg &t : kForwardTensors)
    n += paramsOf(t);
  return n;
}

/// Launch: grid (ceil(Nq / block_m), H, B), or with packed heads
/// (ceil(H / Hkv · Nq / block_m), Hkv, B); the kernel's threads per CTA and
/// dynamic shared bytes. The lowering records them on each gpu.func under
/// these attribute names; the compiler library reads them back.
inline constexpr const char *kThreadsAttr = "attn.threads";
inline constexpr const char *kBlockMAttr = "attn.block_m";
inline constexpr const char *kSharedBytesAttr = "attn.shared_bytes";
inline constexpr const char *kPackGqaAttr = "attn.pack_gqa";

} // namespace attn::abi

#endif // ATTN_COMPILER_KERNELABI_H
