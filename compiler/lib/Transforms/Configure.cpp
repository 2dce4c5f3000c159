//===- Configure.cpp - the kernel configuration, decided once -------------===//

#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/TilePolicy.h"
#include "attn/Transforms/Mask.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <type_traits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCONFIGURE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

namespace policy = ::attn::compiler;

policy::MaskKind toPolicy(MaskKind kind) {
  switch (kind) {
  case MaskKind::None:
    return policy::MaskKind::None;
  case MaskKind::Causal:
    return policy::MaskKind::Causal;
  case MaskKind::CausalBottomRight:
    return policy::MaskKind::CausalBottomRight;
  }
  return policy::MaskKind::None;
}

/// Whether a mod (`leading` arguments, the last four (b, h, q_idx, kv_idx))
/// loads a capture per score alike for every (batch, head): at indices that
/// depend on q_idx and kv_idx and on neither b nor h (a bias table).
bool readsTableSharedByHeads(Region &region, unsigned leading) {
  if (region.empty())
    return false;
  Block &block = region.front();
  enum : unsigned { kB = 1, kH = 2, kQ = 4, kKv = 8, kAny = 15 };
  // The coordinates each value depends on (the mods are straight-line:
  // an op with regions counts as depending on all of them).
  llvm::DenseMap<Value, unsigned> deps;
  for (unsigned i = 0; i < 4; ++i)
    deps[block.getArgument(leading - 4 + i)] = 1u << i;
  bool found = false;
  for (Operation &op : block) {
    unsigned d = op.getNumRegions() ? unsigned(kAny) : 0u;
    for (Value operand : op.getOperands())
      d |= deps.lookup(operand);
    for (Value result : op.getResults())
      deps[result] = d;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      unsigned at = 0;
      for (Value index : load.getIndices())
        at |= deps.lookup(index);
      found |= (at & (kQ | kKv)) == (kQ | kKv) && !(at & (kB | kH));
    }
  }
  return found;
}

struct AttnConfigurePass
    : mlir::attn::impl::AttnConfigureBase<AttnConfigurePass> {
  using Base::Base;

  void runOnOperation() override {
    if (target != "nvidia" && target != "host") {
      getOperation()->emitError("attn-configure: target must be nvidia or "
                                "host, got '")
          << target << "'";
      return signalPassFailure();
    }
    bool nvidia = target == "nvidia";
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<SdpaOp>(op))
        return configure(sdpa, nvidia);
      if (auto grad = dyn_cast<SdpaBackwardOp>(op))
        return configure(grad, nvidia);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// Attaches the configuration of `op` (attn.sdpa or attn.sdpa_backward)
  /// to its function.
  template <typename OpTy> WalkResult configure(OpTy op, bool nvidia) {
      auto fn = op->template getParentOfType<FunctionOpInterface>();
      if (!fn)
        return WalkResult::advance();
      policy::KernelConfig config;
      auto q = op.getQuery().getType();
      config.headDim = q.getDimSize(3);
      Type element = q.getElementType();
      config.dtype = element.isBF16()                  ? policy::DType::BF16
                     : element.isF16()                ? policy::DType::F16
                     : isa<Float8E4M3FNType>(element) ? policy::DType::E4M3
                                                      : policy::DType::F32;
      config.mask = toPolicy(op.getMask());
      config.arch = chip;
      config.tensorCore = tensorCore;
      config.blockM = blockM;
      config.blockN = blockN;
      config.warps = warps;
      config.stages = stages;
      config.positiveScale = op.getPositiveScale();
      config.backward = isa<SdpaBackwardOp>(op.getOperation());
      config.packGqa = packGqa;
      config.tma = tma;
      config.warpSpecialize = warpSpecialize;
      config.persistent = persistent;
      config.qStages = qStages;
      config.shortWorkTiles = shortWorkTiles;
      config.pagedDecode = pagedDecode;
      // A paged kernel keeps its sequence's key count and the block table
      // live as a packed batch keeps its offsets.
      if constexpr (std::is_same_v<OpTy, SdpaOp>) {
        config.varlen = op.isVarlen() || op.isPaged();
        if (op.isPaged())
          config.pageSize = op.getKey().getType().getDimSize(2);
        config.split = op.isSplit();
      } else {
        config.deterministic = !op.getGradQueryAccum();
      }
      // The policy sizes tiles by what the mods cost per score, which it
      // knows by the named variants' bits: a score_mod costs like a softcap,
      // or like a bias table when it loads; a mask_mod that loads, like
      // document ids.
      bool maskReads = false, scoreReads = false;
      op.getMaskMod().walk([&](memref::LoadOp) { maskReads = true; });
      op.getScoreMod().walk([&](memref::LoadOp) { scoreReads = true; });
      namespace abi = ::attn::abi;
      config.variants =
          (op.getScoreMod().empty() ? 0u
           : scoreReads             ? unsigned(abi::kBias)
                                    : unsigned(abi::kSoftcap)) |
          (maskReads ? unsigned(abi::kDocument) : 0u);
      if (nvidia && op.getValue().getType().getDimSize(3) != config.headDim) {
        op->emitOpError("the NVIDIA mapping needs Dv = D");
        return WalkResult::interrupt();
      }
      policy::KernelPlan plan;
      std::string error;
      if (!policy::planKernel(config, nvidia, plan, error)) {
        op->emitOpError("cannot be configured: ") << error;
        return WalkResult::interrupt();
      }
      if constexpr (std::is_same_v<OpTy, SdpaBackwardOp>) {
        if (op.getGradQueryAccum() &&
            !policy::mapsAtomicBackward(nvidia, plan.mapping, config.headDim)) {
          op->emitOpError("'dq_accum' (the atomic backward) is mapped on "
                          "the host and on wgmma (sm_90a) up to head dim ")
              << policy::kMaxBackwardJointHeadDim << "; the " << plan.mapping
              << " backward at head dim " << config.headDim
              << " is the deterministic one";
          return WalkResult::interrupt();
        }
      }
      // A per-score table alike for every (batch, head): its pairs run
      // together (grid_group_ctas), so that they share it in L2; so do
      // those of a mask whose runs of keys come from data (documents).
      plan.gridGroupCtas = policy::gridGroupCtas(
          nvidia, config.backward, config.split,
          readsTableSharedByHeads(op.getScoreMod(), kScoreModArgs) ||
              readsTableSharedByHeads(op.getMaskMod(), kMaskModArgs),
          MaskStructure(op.getMaskMod(), op.getCaptures()).hasDataRuns(),
          plan.persistent && plan.reverseGrid && !config.shortWorkTiles);
      auto attr = ConfigAttr::get(
          &getContext(), plan.mapping, plan.chip, plan.blockM, plan.blockN,
          plan.warps, plan.minCtasPerSm, plan.stages, plan.qInRegisters,
          plan.schedule,
          plan.orderedIssue, plan.reverseGrid, plan.packGqa,
          plan.conditionalRescale, plan.tma, plan.warpSpecialize,
          plan.barrierPerTile, plan.gridGroupCtas, plan.narrowCompares,
          plan.persistent, plan.qStages);
      if (auto old = fn->template getAttrOfType<ConfigAttr>(ConfigAttr::getAttrName());
          old && old != attr) {
        op->emitOpError("its function holds attention of two configurations: ")
            << old << " and " << attr;
        return WalkResult::interrupt();
      }
      fn->setAttr(ConfigAttr::getAttrName(), attr);
      return WalkResult::advance();
  }
};

} // namespace
