//===- Fragments.h - per-thread tile fragments for mma.sync -----*- C++ -*-===//
//
// How the NVIDIA mapping distributes tiles over a CTA (W warps, 32·W threads;
// g = lane / 4, t = lane % 4; warp w owns query rows [16w, 16w + 16)):
//
//  * a warp owns M = BM / (16·W) m tiles of 16 rows: rows 16·(w·M + i) + r;
//  * accumulator layout (scores S, output acc; BM×X f32): per m tile i, X/8
//    column blocks of 4 values per thread, value e of block j at row
//    g + 8·(e / 2) of the m tile and column 8j + 2t + e % 2 (the C/D layout
//    of mma.m16n8k16), stored at ((i·X/8) + j)·4 + e;
//  * row state (m, l, alpha; BM f32): 2 values per m tile and thread, rows g
//    and g + 8, replicated over the 4 threads of a quad. `l` is the exception: each
//    thread keeps the partial sum of its own columns and the quad reduction
//    is done once, in finalize;
//  * A operands (Q, P): per 16-wide k block, the 4 registers of mma's A
//    fragment (i32 holding bf16x2, or vector<2xf16>);
//  * K and V tiles stay in shared memory and are read with ldmatrix (K plain,
//    V transposed) right before each mma.
//
// Shared memory (dynamic, one array): Q tile, then K stages, then V stages;
// rows of D (padded to 16) elements plus 16 bytes, so that the 8 rows an
// ldmatrix reads fall into 8 different bank groups.
//
// With wgmma (sm_90a, Wgmma.cpp) warp w of warpgroup w / 4 still owns rows
// [16w, 16w + 16) and the accumulators keep the layout above (M = 1); the
// tiles are stored as head-dim / 64 blocks of rows x 128 bytes, 16-byte chunk
// c of row r at chunk c ^ (r % 8): wgmma's 128-byte swizzle, from a
// 1024-byte-aligned base.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTONVVM_FRAGMENTS_H
#define ATTN_CONVERSION_ATTNTONVVM_FRAGMENTS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::nvidia {

struct TileConfig {
  int64_t warps = 4;
  int64_t stages = 2;
  int64_t blockM = 64;
  int64_t blockN = 64;
  int64_t headDim = 64;
  Type elementType;

  /// Warpgroup MMA (sm_90a) instead of mma.sync.
  bool wgmma = false;
  /// A causal mask (of either kind) applies.
  bool masked = false;

  int64_t paddedDim() const { return (headDim + 15) / 16 * 16; }
  /// Bytes per tile row (with wgmma, the rows of all 64-column blocks).
  int64_t pitch() const {
    return wgmma ? paddedDim() * 2 : paddedDim() * 2 + 16;
  }
  int64_t queryOffset() const { return 0; }
  int64_t queryBytes() const { return blockM * pitch(); }
  int64_t kvTileBytes() const { return blockN * pitch(); }
  int64_t sharedBytes() const {
    // wgmma: room to align the base to 1024 bytes.
    return queryBytes() + 2 * stages * kvTileBytes() + (wgmma ? 1024 : 0);
  }
  int64_t threads() const { return 32 * warps; }
  /// 16-row m tiles per warp.
  int64_t mTiles() const { return blockM / (16 * warps); }
  /// Rescale the accumulator only when a row max of the warp moved (a
  /// vote.any and a branch). On an H200 it cost 9-13% on unmasked kernels
  /// and 3-10% on masked ones with D <= 64 or one m tile, but it is what
  /// lets masked kernels with two m tiles and D = 128 (128x32 tiles) fit in
  /// 255 registers without spilling; the mapping enables it there only
  /// (docs/BENCHMARKS.md).
  bool conditionalRescale = false;
  /// wgmma with three stages: the K/V loop is software-pipelined
  /// (AttnToNVVM.cpp, emitPipelinedKvLoop), so a P·V runs on while the next
  /// tile's work starts; its V must stay in its stage while the tile after
  /// is copied: three stages.
  bool pipelined() const { return wgmma && stages >= 3; }
  /// The pipelined schedule: the softmax of tile j while P·V of tile j - 1
  /// runs (P of j - 1 held in registers), or P·V of tile j left running
  /// through the next tile's copies and QKᵀ issue. On an H200 the first was
  /// +2-4% at D = 64 and -8-12% at D = 128 (docs/BENCHMARKS.md).
  bool softmaxOverlapsPV() const { return pipelined() && paddedDim() <= 64; }
  int64_t warpgroups() const { return wgmma ? warps / 4 : 0; }
  /// wgmma with several warpgroups: each issues its QKᵀ only after the
  /// previous one has, through a named barrier, so the tensor cores finish
  /// one warpgroup's product before the next one's and its softmax overlaps
  /// the next one's product. H200: +5-9% at D = 128, +2-4% at D = 256 over
  /// no order; ordering P·V's issue too was worse (it delays the later
  /// warpgroups) (docs/BENCHMARKS.md).
  bool orderedQK() const { return warpgroups() > 1; }
  /// Whether Q's A fragments stay in registers for the whole K/V loop: they
  /// take 4 registers per 16 columns and m tile.
  bool queryInRegisters() const {
    return !wgmma && mTiles() * paddedDim() <= 128;
  }
};

struct OnlineSoftmaxFrags {
  SmallVector<Value> probs, max, sum, alpha;
};

struct FinalizeFrags {
  SmallVector<Value> output, lse;
};

class Fragments {
public:
  Fragments(OpBuilder &b, Location loc, const TileConfig &cfg)
      : b(b), loc(loc), cfg(cfg) {}

  /// Declares the dynamic shared memory array in the gpu.module.
  static void declareSharedMemory(OpBuilder &b, Location loc);
  /// Thread coordinates and lane offsets; call once at the kernel entry.
  void init();

  Value constI32(int64_t v);
  Value constIndex(int64_t v);
  Value constF32(float v);
  Value toIndex(Value i64);
  /// blockIdx.{x,y,z} as an index.
  Value blockIndex(int dim);
  /// (it + ahead) mod stages, as i32.
  Value stageOf(Value it, int64_t ahead);
  /// Byte offset of K (which = 0) or V (which = 1) tile in `stage`.
  Value kvStageOffset(size_t which, Value stage);

  /// The per-thread fragment of a splat constant tile.
  SmallVector<Value> splat(RankedTensorType type, float value);

  /// cp.async copy of rows [row, row + rows) of `ptr[batch, head]` into the
  /// shared tile at `smemOffset`; rows at or past `numRows` are zero-filled.
  void copyTileAsync(Value ptr, ArrayRef<Value> strides, Value numRows,
                     Value batch, Value head, Value row, int64_t rows,
                     Value smemOffset);
  /// A fragments of this warp's 16 query rows (ldmatrix from shared memory).
  SmallVector<Value> loadQueryFragments(Value smemOffset);

  /// Q Kᵀ, unscaled (onlineSoftmax applies the scale inside its FFMA); an
  /// empty `query` re-reads Q from shared memory block by block (always,
  /// with wgmma).
  SmallVector<Value> qk(ArrayRef<Value> query, Value keyOffset);
  SmallVector<Value> mask(ArrayRef<Value> scores, Value row, Value col,
                          Value numQueries, Value numKeys, MaskKind kind);
  /// `scale` (may be null: 1) multiplies the scores; it must be positive.
  OnlineSoftmaxFrags onlineSoftmax(ArrayRef<Value> scores, Value scale,
                                   ArrayRef<Value> max, ArrayRef<Value> sum);
  SmallVector<Value> pv(ArrayRef<Value> probs, Value valueOffset,
                        ArrayRef<Value> acc, ArrayRef<Value> alpha);
  /// acc · alpha, row by row (acc: the BM×D accumulator).
  SmallVector<Value> rescale(ArrayRef<Value> acc, ArrayRef<Value> alpha);

  // wgmma in steps, for the pipelined K/V loop (Wgmma.cpp): issue (and
  // commit as one group) without waiting; the results are valid only after a
  // wgmmaWait that covers their group.
  SmallVector<Value> wgmmaQKIssue(Value keyOffset);
  SmallVector<Value> wgmmaPVIssue(ArrayRef<Value> probs, Value valueOffset,
                                  ArrayRef<Value> acc);
  /// Waits until at most `pending` wgmma groups of this thread are running;
  /// returns `values` as they are after it.
  SmallVector<Value> wgmmaWait(ArrayRef<Value> values, int64_t pending = 0);
  FinalizeFrags finalize(ArrayRef<Value> acc, ArrayRef<Value> max,
                         ArrayRef<Value> sum);

  /// Stores this thread's output values (rows < numRows, columns < D).
  void storeOutput(ArrayRef<Value> out, Value ptr, ArrayRef<Value> strides,
                   Value numRows, Value batch, Value head, Value row,
                   Type elementType);
  /// Stores the row values (the LSE) from the first thread of each quad,
  /// unless `ptr` is null.
  void storeRows(ArrayRef<Value> rows, Value ptr, ArrayRef<Value> strides,
                 Value numRows, Value batch, Value head, Value row);

private:
  // Hopper (Wgmma.cpp).
  /// Shared-memory matrix descriptor (128-byte swizzle) of the tile at
  /// `byteOffset` (i32), with leading/stride byte offsets `lbo`, `sbo`.
  Value wgmmaDescriptor(Value byteOffset, int64_t lbo, int64_t sbo);
  /// `desc` advanced by `bytes` (a multiple of 16).
  Value advance(Value desc, int64_t bytes);
  /// One wgmma.mma_async m64nNk16 with f32 accumulation. A comes from the
  /// descriptor `aDesc` or, when `aRegs` is given, from 4 registers; an empty
  /// `acc` starts from zero.
  SmallVector<Value> wgmmaAsync(ArrayRef<Value> acc, ArrayRef<Value> aRegs,
                                Value aDesc, Value bDesc, int64_t n,
                                bool transposeB);
  /// Named-barrier ordering of the warpgroups' QKᵀ issue (orderedQK()).
  void waitForPreviousWarpgroup();
  void releaseNextWarpgroup();
  /// `instruction` (bar.sync or bar.arrive) on barrier `id`, in warpgroup
  /// `g` only.
  void warpgroupBarrier(int64_t g, StringRef instruction, int64_t id);
  /// Inline PTX `text` that the values (f32, i32 or 32-bit vectors) pass
  /// through: LLVM cannot move their definitions or uses across it.
  SmallVector<Value> asmThrough(StringRef text, ArrayRef<Value> values);
  /// Byte offset, in a tile of `rows` rows, of 16-byte chunk `chunk` of row
  /// `row` (i32 values) in the layout that cp.async writes.
  Value chunkOffset(Value row, Value chunk, int64_t rows);

  Value sharedPtr(Value byteOffset);
  Value globalPtr(Value base, Value elementOffset, int64_t elementBytes);
  /// One mma.sync m16n8k16 with f32 accumulation; returns the 4 results.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                         ArrayRef<Value> c);
  /// ldmatrix of `num` 8x8 b16 matrices; returns them as B operands.
  SmallVector<Value> ldmatrix(Value byteOffset, int num, bool transpose);
  /// Two f32 rounded to the element type, packed as one mma operand.
  Value pack(Value lo, Value hi);
  Value shuffleXor(Value v, int mask);
  /// rescale(), skipped when every alpha of the warp is 1.
  SmallVector<Value> rescaleIfMoved(ArrayRef<Value> acc,
                                    ArrayRef<Value> alpha);
  /// ex2.approx.ftz.f32: exp2 with -inf -> +0.
  Value exp2(Value x);
  Value maxNum(Value x, Value y);
  /// A call of the LLVM intrinsic `name`, typed like its first argument.
  Value intrinsic(StringRef name, ValueRange args);
  /// Offset, in elements, of row `row` of `ptr[batch, head]`.
  Value rowOffset(ArrayRef<Value> strides, Value batch, Value head, Value row);
  /// A fragment of m tile `mTile`, k block `kBlock` of Q (ldmatrix).
  SmallVector<Value> loadQueryBlock(Value smemOffset, int64_t mTile,
                                    int64_t kBlock);
  /// Row slot (2 per m tile: rows g and g + 8) of accumulator value `idx`
  /// of a fragment with `nBlocks` 8-column blocks per m tile.
  static int64_t rowSlot(size_t idx, int64_t nBlocks) {
    return int64_t(idx / (nBlocks * 4)) * 2 + int64_t(idx % 4) / 2;
  }
  /// Row of slot `slot` relative to the warp's first row (16·w·M + g).
  static int64_t rowOffsetOf(int64_t slot) {
    return 16 * (slot / 2) + 8 * (slot % 2);
  }
  /// Number of 8-column blocks per thread for a BM×cols accumulator tile.
  static int64_t colBlocks(int64_t cols) { return (cols + 15) / 16 * 2; }

  OpBuilder &b;
  Location loc;
  const TileConfig &cfg;
  Value tid, warp, lane, group, quad; // i32
  Value warpRow;                      // index: 16 * warp + group
  Value quadCol;                      // index: 2 * quad
  Value qLane, kLane, vLane;          // i32 ldmatrix byte offsets
  Value smem;                         // !llvm.ptr<3>
  Value smemAddress;                  // i32: smem in the shared window
  Value warpgroup;                    // i32: warp / 4 (wgmma)
};

} // namespace mlir::attn::nvidia

#endif // ATTN_CONVERSION_ATTNTONVVM_FRAGMENTS_H
