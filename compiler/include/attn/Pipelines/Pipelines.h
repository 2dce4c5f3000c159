//===- Pipelines.h - attn's named pass pipelines ----------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn/Dialect/Attn/IR/Limits.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::attn {

/// Options shared by every pipeline: the kernel configuration (used only when
/// the input module is empty, see attn-create-kernel) and the tile sizes.
template <typename Derived>
struct KernelPipelineOptions : public PassPipelineOptions<Derived> {
  ::mlir::detail::PassOptions::Option<int64_t> headDim{
      *this, "head-dim",
      llvm::cl::desc("Build the canonical kernel for this head dim when the "
                     "module is empty (0: compile the input)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<std::string> dtype{
      *this, "dtype",
      llvm::cl::desc("Element type: bf16, f16, f32 or e4m3 (FP8 Q, K, V "
                     "with descale factors, bf16 O)"),
      llvm::cl::init("bf16")};
  ::mlir::detail::PassOptions::Option<bool> causal{
      *this, "causal", llvm::cl::desc("Causal mask (shorthand for mask=causal)"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<std::string> mask{
      *this, "mask",
      llvm::cl::desc("Mask: none, causal or causal_bottom_right"),
      llvm::cl::init("none")};
  ::mlir::detail::PassOptions::Option<std::string> variants{
      *this, "variants",
      llvm::cl::desc("Named variants, comma-separated: window, prefix_lm, "
                     "document, alibi, bias, softcap"),
      llvm::cl::init("")};
  ::mlir::detail::PassOptions::Option<int64_t> blockM{
      *this, "block-m", llvm::cl::desc("Query rows per tile (0: default)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<int64_t> blockN{
      *this, "block-n", llvm::cl::desc("Keys per K/V tile (0: default)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<bool> positiveScale{
      *this, "positive-scale",
      llvm::cl::desc("The canonical kernel is called with a scale > 0 (the "
                     "softmax then takes the row max before scaling)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> packGqa{
      *this, "pack-gqa",
      llvm::cl::desc("Pack the query heads of each K/V head into one query "
                     "tile (grouped-query decoding)"),
      llvm::cl::init(false)};

  ::mlir::detail::PassOptions::Option<bool> backward{
      *this, "backward",
      llvm::cl::desc("The canonical kernel is the backward pass (dQ, dK, "
                     "dV) of the configuration"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<bool> varlen{
      *this, "varlen",
      llvm::cl::desc("The canonical kernel takes a variable-length (packed) "
                     "batch: cu_seqlens_q, cu_seqlens_k, max_seqlen_q"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<int64_t> pageSize{
      *this, "page-size",
      llvm::cl::desc("The canonical kernel reads K and V from a paged cache "
                     "of this page size (with varlen queries; 0: contiguous "
                     "K and V)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<bool> split{
      *this, "split",
      llvm::cl::desc("Split-KV: the canonical kernel divides the keys over "
                     "num_splits programs and merges their partials"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("With backward: dQ without atomics, bit-identical from "
                     "run to run (false: added over the K/V tiles into an "
                     "f32 accumulator with atomics; the host only)"),
      llvm::cl::init(true)};

  std::string maskName() const { return causal ? "causal" : mask.getValue(); }
};

/// attn-to-ptx: attn IR (or a configuration) to PTX for NVIDIA GPUs.
struct AttnToPTXOptions : public KernelPipelineOptions<AttnToPTXOptions> {
  ::mlir::detail::PassOptions::Option<std::string> chip{
      *this, "arch", llvm::cl::desc("Target SM: sm_90a (default), sm_80, ..."),
      llvm::cl::init("sm_90a")};
  ::mlir::detail::PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("LLVM NVPTX features, e.g. +ptx86 (auto: the lowest PTX "
                     "ISA version that supports the chip, at least 8.0)"),
      llvm::cl::init("auto")};
  ::mlir::detail::PassOptions::Option<int64_t> warps{
      *this, "warps",
      llvm::cl::desc("Warps per CTA (0: 4 for mma.sync, block-m / 16 for "
                     "wgmma)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("Shared-memory stages of the K/V copies (0: as many as "
                     "fit, 2 or 3)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<std::string> tensorCore{
      *this, "tensor-core",
      llvm::cl::desc("Tensor-core instructions: auto (wgmma on sm_90a where "
                     "the tiles allow it, else mma.sync), mma.sync, wgmma"),
      llvm::cl::init("auto")};
  ::mlir::detail::PassOptions::Option<bool> tma{
      *this, "tma",
      llvm::cl::desc("Load K/V tiles with TMA (cp.async.bulk.tensor) and "
                     "mbarriers: sm_90a wgmma forward kernels over contiguous "
                     "K/V (elsewhere cp.async, as without it)"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<bool> warpSpecialize{
      *this, "warp-specialize",
      llvm::cl::desc("With tma: a producer warpgroup issues the K/V copies "
                     "while the other warpgroups compute (setmaxnreg moves "
                     "its registers to them); without tma, ignored"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<bool> persistent{
      *this, "persistent",
      llvm::cl::desc("With warp-specialize: each forward CTA loops over the "
                     "grid's work tiles (attn-nv-persist), launched with "
                     "min(tiles, SMs) CTAs"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<int64_t> qStages{
      *this, "q-stages",
      llvm::cl::desc("With persistent: Q's shared buffers, 1 or 2 (0: two "
                     "where two K/V stages fit beside them)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<bool> shortWorkTiles{
      *this, "short-work-tiles",
      llvm::cl::desc("With persistent: each work tile visits a few K/V "
                     "tiles, so a causal grid keeps the query tile its "
                     "fastest index instead of sorting across heads"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<bool> pagedDecode{
      *this, "paged-decode",
      llvm::cl::desc("With page-size: the kernel decodes (each K/V head's "
                     "queries fit one 64-row tile), so tiles left at 0 take "
                     "the runtime's decode tiles (pagedDecodeTiles)"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<unsigned> llvmOptLevel{
      *this, "llvm-opt-level",
      llvm::cl::desc("LLVM's optimisation level for the PTX, 0 to 3 (0: a "
                     "tiered first call's quick kernel)"),
      llvm::cl::init(kMaxLlvmOptLevel)};
  ::mlir::detail::PassOptions::Option<std::string> ptxFile{
      *this, "ptx-file", llvm::cl::desc("Write the PTX to this file (- for stdout)"),
      llvm::cl::init("")};
};

/// attn-to-host: attn IR (or a configuration) to the LLVM dialect for the
/// CPU, ready for MLIR's ExecutionEngine.
struct AttnToHostOptions : public KernelPipelineOptions<AttnToHostOptions> {};

void buildAttnToPTXPipeline(OpPassManager &pm, const AttnToPTXOptions &options);
/// attn-to-ptx without its last step (attn-emit-ptx): ends with the kernels
/// in a gpu.module in the NVVM and LLVM dialects.
void buildAttnToNVVMPipeline(OpPassManager &pm,
                             const AttnToPTXOptions &options);
void buildAttnToHostPipeline(OpPassManager &pm,
                             const AttnToHostOptions &options);

/// Registers attn-to-ptx and attn-to-host with the pass registry.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
