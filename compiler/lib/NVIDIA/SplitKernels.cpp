//===- SplitKernels.cpp - one kernel function per tile grid ---------------===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Compiler/KernelABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVSPLITKERNELS
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct AttnNVSplitKernelsPass
    : mlir::attn::nv::impl::AttnNVSplitKernelsBase<AttnNVSplitKernelsPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> functions;
    getOperation()->walk([&](func::FuncOp fn) {
      auto config = fn->getAttrOfType<ConfigAttr>(ConfigAttr::getAttrName());
      if (config && !config.isHost() &&
          llvm::range_size(fn.getBody().getOps<TileGridOp>()) > 1)
        functions.push_back(fn);
    });
    for (func::FuncOp fn : functions) {
      int count = llvm::range_size(fn.getBody().getOps<TileGridOp>());
      OpBuilder b(fn);
      for (int i = 0; i < count; ++i) {
        auto kernel = cast<func::FuncOp>(b.clone(*fn));
        kernel.setName(::attn::abi::kernelName(fn.getName().str().c_str(), i));
        // Grid i stays; the others run in the other kernels.
        auto grids = llvm::to_vector(kernel.getBody().getOps<TileGridOp>());
        for (auto [j, grid] : llvm::enumerate(grids)) {
          if (int(j) == i) {
            if (Attribute over = grid->getAttr(::attn::abi::kGridAttr))
              kernel->setAttr(::attn::abi::kGridAttr, over);
            continue;
          }
          grid->erase();
        }
        // What only the other grids used goes too: one walk, uses before
        // the values they use (reverse post-order), so a def is dead by the
        // time it is reached.
        kernel.walk<WalkOrder::PostOrder, ReverseIterator>([&](Operation *op) {
          if (op != kernel && !isa<TileGridOp>(op) && isOpTriviallyDead(op))
            op->erase();
        });
      }
      fn.erase();
    }
  }
};

} // namespace
