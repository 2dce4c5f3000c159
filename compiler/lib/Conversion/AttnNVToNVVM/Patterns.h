//===- Patterns.h - attn_nv to NVVM, one pattern family per file -*- C++
//-*-===//
//
// convert-attn-nv-to-nvvm lowers each op of the NVIDIA tile program by its
// own conversion pattern. Tiles with a register layout become the values
// each thread holds (1:N, in the order of Layouts.h), shared-memory buffers
// their i32 byte offset, memref kernel arguments the parameters of
// KernelABI.h. The families:
//   Kernel.cpp       func -> gpu.func (the ABI), attn.tile_grid, memref.dim
//   Elementwise.cpp  attn.map, splat constants, attn_nv.convert_layout
//   Reduce.cpp       attn.reduce, attn_nv.warp_any
//   MmaSync.cpp      attn_nv.mma, attn_nv.load_operand
//   Wgmma.cpp        attn_nv.wgmma, attn_nv.wgmma_wait, attn_nv.warpgroup_turn
//   Copies.cpp       attn_nv.alloc_shared, attn_nv.slot, attn_nv.copy_async,
//                    attn_nv.store_shared
//   Tma.cpp          attn_nv.alloc_barriers, init_barriers, copy_tma,
//                    wait_barrier (mbarriers, cp.async.bulk.tensor)
//   TableCopies.cpp  attn_nv.copy_table_async, attn_nv.load_shared (a
//                    captured table's tiles through shared memory)
//   GlobalAccess.cpp attn.store_tile, attn.load_tile into registers
//   Math.cpp         math.exp2 / math.log2 -> the approximate NVVM intrinsics
// Hardware details shared by several (the shared-memory base, ldmatrix,
// inline PTX) are the helpers below.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNNVTONVVM_PATTERNS_H
#define ATTN_CONVERSION_ATTNNVTONVVM_PATTERNS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/AttnNV/IR/AttnNV.h"
#include "attn/Dialect/AttnNV/IR/Layouts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::attn::nv {

/// Name of the dynamic shared-memory array of every kernel.
inline constexpr const char *kSharedMemoryName = "attn_smem";

/// Types of the NVIDIA tile program as values per thread.
class TileTypeConverter : public TypeConverter {
public:
  explicit TileTypeConverter(MLIRContext *ctx);
};

void populateKernelPatterns(TileTypeConverter &converter,
                            RewritePatternSet &patterns);
void populateElementwisePatterns(TileTypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateReducePatterns(TileTypeConverter &converter,
                            RewritePatternSet &patterns);
void populateMmaSyncPatterns(TileTypeConverter &converter,
                             RewritePatternSet &patterns);
void populateWgmmaPatterns(TileTypeConverter &converter,
                           RewritePatternSet &patterns);
void populateCopyPatterns(TileTypeConverter &converter,
                          RewritePatternSet &patterns);
void populateTmaPatterns(TileTypeConverter &converter,
                         RewritePatternSet &patterns);
void populateTableCopyPatterns(TileTypeConverter &converter,
                               RewritePatternSet &patterns);
void populateWarpSpecializePatterns(TileTypeConverter &converter,
                                    RewritePatternSet &patterns);
void populateGlobalAccessPatterns(TileTypeConverter &converter,
                           RewritePatternSet &patterns);
void populateMathPatterns(TileTypeConverter &converter,
                          RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// Helpers shared by the patterns
//===----------------------------------------------------------------------===//

/// The CTA's shared memory: the dynamic array, its base aligned to 1024
/// bytes when the kernel holds swizzled tiles (wgmma), as a pointer and as
/// a 32-bit shared-window address.
struct SharedBase {
  Value ptr;     // !llvm.ptr<3>
  Value address; // i32

  static SharedBase get(OpBuilder &b, Location loc, Operation *inKernel);
  /// Pointer to byte `offset` (i32) of the aligned shared memory.
  Value at(OpBuilder &b, Location loc, Value offset) const;
};

/// A [batch, heads, rows, cols] kernel argument as its converted operands
/// (KernelABI.h: pointer, sizes, strides in elements).
struct GlobalTensor {
  Value ptr; // !llvm.ptr
  ValueRange strides;
  int64_t elementBytes;

  GlobalTensor(ValueRange params, MemRefType type);
  /// Element offset (index) of row `row` of [batch, head].
  Value rowElements(OpBuilder &b, Location loc, Value batch, Value head,
                    Value row) const;
  /// Pointer to element offset `elements` plus `extraBytes` (index values).
  Value address(OpBuilder &b, Location loc, Value elements,
                Value extraBytes = {}) const;
};

/// The kernel's configuration (#attn.config of the enclosing function).
ConfigAttr configOf(Operation *op);

/// Thread index, warp, lane as i32.
Value threadId(OpBuilder &b, Location loc);

/// ldmatrix of `num` 8x8 b16 matrices at shared byte offset `offset` (i32);
/// the registers as mma operands of element type `element` (i32 holding
/// two bf16, or vector<2xf16>).
SmallVector<Value> ldmatrix(OpBuilder &b, Location loc, const SharedBase &smem,
                            Value offset, int num, bool transpose,
                            Type element);

/// shfl.sync.bfly of `v` with lane mask `mask` over the whole warp.
Value shuffleXor(OpBuilder &b, Location loc, Value v, int mask);

/// `lo` and `hi` as a vector<2x their type> (an 8-byte f32 pair to store).
Value vectorPair(OpBuilder &b, Location loc, Value lo, Value hi);

/// fence.proxy.async.shared::cta: this thread's shared-memory writes
/// (generic proxy) become visible to the async proxy (wgmma, bulk copies).
void fenceForAsyncProxy(OpBuilder &b, Location loc);

/// Two scalars as one 32-bit mma operand of `element` (bf16: i32; f16:
/// vector<2xf16>); f32 inputs are rounded (cvt.rn, both in one instruction).
Value packPair(OpBuilder &b, Location loc, Value lo, Value hi, Type element);

/// One builder for inline PTX.
struct Ptx {
  /// Volatile inline PTX `text` returning `result` (null: nothing).
  static LLVM::InlineAsmOp emit(OpBuilder &b, Location loc, Type result,
                                ValueRange operands, StringRef text,
                                StringRef constraints);
  /// Inline PTX `text` that `values` (f32, i32 or 32-bit vectors) pass
  /// through as tied registers: LLVM cannot move their definitions or uses
  /// across it.
  static SmallVector<Value> through(OpBuilder &b, Location loc, StringRef text,
                                    ValueRange values);
};

/// A buffer of shared memory (alloc_shared, alloc_barriers) is its byte
/// offset, which attn-nv-allocate-shared placed.
template <typename AllocOp>
struct AllocatedOffset : OpConversionPattern<AllocOp> {
  using OpConversionPattern<AllocOp>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AllocOp op, typename AllocOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> offset = op.getOffset();
    if (!offset)
      return op.emitOpError("has no offset: run attn-nv-allocate-shared "
                            "first");
    rewriter.replaceOp(op, constI32(rewriter, op.getLoc(), *offset));
    return success();
  }
};

/// Flattens a 1:N adaptor operand list.
SmallVector<Value> flatten(ArrayRef<ValueRange> values);

} // namespace mlir::attn::nv

#endif // ATTN_CONVERSION_ATTNNVTONVVM_PATTERNS_H
