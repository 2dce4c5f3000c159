//===- AllocateShared.cpp - place each kernel's shared-memory buffers -----===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Compiler/KernelABI.h"
#include "attn/Compiler/TilePolicy.h"
#include "attn/NVIDIA/SharedPlacement.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVALLOCATESHARED
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct AttnNVAllocateSharedPass
    : mlir::attn::nv::impl::AttnNVAllocateSharedBase<AttnNVAllocateSharedPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](FunctionOpInterface fn) {
      SharedPlacement placement;
      Builder b(fn.getContext());
      fn->walk([&](Operation *op) {
        if (auto alloc = dyn_cast<AllocSharedOp>(op)) {
          auto type = cast<SmemType>(alloc.getType());
          int64_t offset = placement.placeTiles(
              type.getBytes(), type.getLayout() == SharedLayout::Swizzle128B);
          alloc.setOffsetAttr(b.getI64IntegerAttr(offset));
        } else if (auto bars = dyn_cast<AllocBarriersOp>(op)) {
          int64_t offset = placement.placeBarriers(bars.getType().getCount());
          bars.setOffsetAttr(b.getI64IntegerAttr(offset));
        }
      });
      if (placement.empty())
        return WalkResult::advance();
      int64_t total = placement.total();
      ConfigAttr config = ConfigAttr::lookup(fn);
      int64_t limit = ::attn::compiler::maxSharedBytesPerBlock(
          config ? config.getChip() : "");
      if (total > limit) {
        fn->emitOpError("needs ")
            << total << " bytes of shared memory; "
            << (config ? config.getChip() : StringRef("the chip"))
            << " gives a CTA at most " << limit;
        return WalkResult::interrupt();
      }
      fn->setAttr(::attn::abi::kSharedBytesAttr, b.getI32IntegerAttr(total));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
