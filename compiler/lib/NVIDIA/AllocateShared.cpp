//===- AllocateShared.cpp - place each kernel's shared-memory buffers -----===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Compiler/KernelABI.h"
#include "attn/Compiler/TilePolicy.h"
#include "attn/Dialect/AttnNV/IR/SharedTileBytes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVALLOCATESHARED
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// The swizzle pattern follows address bits: swizzled tiles start on a
/// 1024-byte boundary, and the kernel aligns the base of dynamic shared
/// memory (which promises 16 bytes) at run time, within this slack.
constexpr int64_t kSwizzleAlign = 1024;
constexpr int64_t kChunkAlign = 16;

struct AttnNVAllocateSharedPass
    : mlir::attn::nv::impl::AttnNVAllocateSharedBase<AttnNVAllocateSharedPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](FunctionOpInterface fn) {
      int64_t end = 0;
      bool swizzled = false;
      Builder b(fn.getContext());
      fn->walk([&](Operation *op) {
        if (auto alloc = dyn_cast<AllocSharedOp>(op)) {
          auto type = cast<SmemType>(alloc.getType());
          bool swizzle = type.getLayout() == SharedLayout::Swizzle128B;
          swizzled |= swizzle;
          int64_t align = swizzle ? kSwizzleAlign : kChunkAlign;
          int64_t offset = (end + align - 1) / align * align;
          alloc.setOffsetAttr(b.getI64IntegerAttr(offset));
          end = offset + type.getBytes();
        } else if (auto bars = dyn_cast<AllocBarriersOp>(op)) {
          int64_t offset = (end + kMbarrierBytes - 1) / kMbarrierBytes *
                           kMbarrierBytes;
          bars.setOffsetAttr(b.getI64IntegerAttr(offset));
          end = offset + kMbarrierBytes * bars.getType().getCount();
        }
      });
      if (end == 0)
        return WalkResult::advance();
      int64_t total = end + (swizzled ? kSwizzleAlign : 0);
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
