//===- MmaSync.cpp - products on mma.sync.m16n8k16 ------------------------===//
//
// Operands in padded shared memory are read with ldmatrix right before the
// mma that uses them (lane l gives the address of row l % 8 of matrix l / 8):
//  * K (QKᵀ's rhs, N×K rows): matrix m covers columns [8m, 8m + 8) of 8 keys;
//  * V (P·V's rhs, K×N) and Q (lhs): matrix m covers rows 8·(m % 2) and
//    columns 8·(m / 2), V transposed by ldmatrix.trans.
// QKᵀ runs k blocks outermost, as FlashAttention-2 does: each ldmatrix of K
// feeds the mma of every m tile, and Q, when not kept in registers, is read
// once per k block; the fragments of the next pair of k blocks are read
// before the products of this one.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// Per-lane ldmatrix byte offsets into a padded tile of `pitch` bytes a row.
struct LaneOffsets {
  Value plain;      // K: row l % 8, column block l / 8
  Value pairs;      // V and Q: row 8·((l / 8) % 2) + l % 8, block l / 16
  Value warpRows;   // Q: + this warp's first row

  LaneOffsets(OpBuilder &b, Location loc, int64_t pitch, int64_t warpRowCount) {
    auto c = [&](int64_t v) { return constI32(b, loc, v); };
    Value tid = threadId(b, loc);
    Value warp = arith::DivUIOp::create(b, loc, tid, c(32));
    Value lane = arith::RemUIOp::create(b, loc, tid, c(32));
    Value row8 = arith::RemUIOp::create(b, loc, lane, c(8));
    Value matrix = arith::DivUIOp::create(b, loc, lane, c(8));
    auto mul = [&](Value v, int64_t k) {
      return arith::MulIOp::create(b, loc, v, c(k)).getResult();
    };
    auto add = [&](Value x, Value y) {
      return arith::AddIOp::create(b, loc, x, y).getResult();
    };
    Value matrixOffset = mul(matrix, 16);
    plain = add(mul(row8, pitch), matrixOffset);
    Value rowInPair =
        add(mul(arith::RemUIOp::create(b, loc, matrix, c(2)), 8), row8);
    Value pairOffset = mul(arith::DivUIOp::create(b, loc, matrix, c(2)), 16);
    pairs = add(mul(rowInPair, pitch), pairOffset);
    warpRows = add(pairs, mul(warp, warpRowCount * pitch));
  }
};

/// The A fragment of m tile `mTile`, k block `kBlock` of a padded shared
/// tile (Q) at `base` (i32 offset).
SmallVector<Value> loadABlock(OpBuilder &b, Location loc,
                              const SharedBase &smem, const LaneOffsets &lanes,
                              Value base, int64_t pitch, int64_t mTile,
                              int64_t kBlock, Type element) {
  Value blockOffset = constI32(b, loc, mTile * 16 * pitch + kBlock * 32);
  Value off = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, base, lanes.warpRows), blockOffset);
  return ldmatrix(b, loc, smem, off, 4, /*transpose=*/false, element);
}

/// One mma.sync m16n8k16 with f32 accumulation; returns the 4 results.
SmallVector<Value> mma(OpBuilder &b, Location loc, ArrayRef<Value> a,
                       ArrayRef<Value> bFrag, ArrayRef<Value> c,
                       Type element) {
  Type f32 = b.getF32Type();
  auto resType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  NVVM::MMATypes ty =
      element.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  Value d = NVVM::MmaOp::create(
      b, loc, resType, a, bFrag, c, {16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{ty, ty},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return out;
}

struct Mma : OpConversionPattern<MmaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MmaOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto acc = *DistributedTile::get(op.getAcc().getType());
    auto rhsType = cast<SmemType>(op.getRhs().getType());
    SharedGeometry rhs(rhsType);
    Type element = rhsType.getElementType();
    SharedBase smem = SharedBase::get(b, loc, op);
    int64_t mTiles = acc.mTiles(), nBlocks = acc.colBlocks();
    SmallVector<Value> out = llvm::to_vector(adaptor.getAcc());
    Value rhsBase = adaptor.getRhs().front();
    auto update = [&](size_t at, ArrayRef<Value> a, ArrayRef<Value> bFrag) {
      SmallVector<Value> d =
          mma(b, loc, a, bFrag, ArrayRef<Value>(out).slice(at, 4), element);
      std::copy(d.begin(), d.end(), out.begin() + at);
    };
    if (op.getTransposeRhs()) {
      // QKᵀ: lhs (M×K) from registers or padded shared memory, K (N×K).
      bool lhsInRegisters = !isa<SmemType>(op.getLhs().getType());
      ValueRange lhsRegs = adaptor.getLhs();
      int64_t kBlocks = (rhs.cols + 15) / 16;
      std::optional<SharedGeometry> lhsGeom;
      if (!lhsInRegisters)
        lhsGeom.emplace(cast<SmemType>(op.getLhs().getType()));
      LaneOffsets lanes(b, loc, rhs.pitch(),
                        lhsGeom ? 16 * mTiles : 0);
      std::optional<LaneOffsets> lhsLanes;
      if (lhsGeom)
        lhsLanes.emplace(b, loc, lhsGeom->pitch(), 16 * mTiles);
      Value base = arith::AddIOp::create(b, loc, rhsBase, lanes.plain);
      // Step s: k pair kk = 2 · (s / nRows), keys [8j, 8j + 8) with
      // j = s % nRows; Q's fragments of the pair are read at its first step.
      int64_t nRows = rhs.rows / 8, pairs = (kBlocks + 1) / 2;
      SmallVector<SmallVector<SmallVector<Value>>> a(
          pairs, SmallVector<SmallVector<Value>>(mTiles));
      SmallVector<SmallVector<Value>> kFrags(pairs * nRows);
      auto pairOf = [&](int64_t step) { return 2 * (step / nRows); };
      auto matrices = [&](int64_t kk) { return kk + 1 < kBlocks ? 4 : 2; };
      auto load = [&](int64_t step) {
        int64_t kk = pairOf(step), j = step % nRows;
        int num = matrices(kk);
        if (j == 0)
          for (int64_t i = 0; i < mTiles; ++i)
            for (int64_t h = 0; h < num / 2; ++h) {
              if (lhsInRegisters)
                llvm::append_range(
                    a[kk / 2][i], lhsRegs.slice((i * kBlocks + kk + h) * 4, 4));
              else
                llvm::append_range(
                    a[kk / 2][i],
                    loadABlock(b, loc, smem, *lhsLanes,
                               adaptor.getLhs().front(), lhsGeom->pitch(), i,
                               kk + h, element));
            }
        Value off = arith::AddIOp::create(
            b, loc, base, constI32(b, loc, j * 8 * rhs.pitch() + kk * 32));
        kFrags[step] =
            ldmatrix(b, loc, smem, off, num, /*transpose=*/false, element);
      };
      // Each accumulator still sums its k blocks in order.
      auto compute = [&](int64_t step) {
        int64_t kk = pairOf(step), j = step % nRows;
        for (int64_t i = 0; i < mTiles; ++i)
          for (int h = 0; h < matrices(kk) / 2; ++h)
            update((i * nBlocks + j) * 4,
                   ArrayRef<Value>(a[kk / 2][i]).slice(h * 4, 4),
                   ArrayRef<Value>(kFrags[step]).slice(h * 2, 2));
      };
      // With Q in shared memory, the next pair's fragments are read before
      // this pair's products (FlashAttention-2's double-buffered fragments).
      // With each read right before its use, ptxas issued the ldmatrix of Q
      // and K closer to their mma (short-scoreboard stalls) and kept the
      // loop's uniform values in vector registers: 0.91-0.95 of the
      // hand-written emitter at D = 128 on an H200 (docs/BENCHMARKS.md,
      // version 13 and the offline analysis above it). With Q in registers
      // (D = 64 with two m tiles, D = 96 with one) ptxas schedules the K
      // reads well itself, and one more pair live made its loop longer.
      int64_t steps = pairs * nRows;
      int64_t ahead = lhsInRegisters ? 0 : nRows;
      for (int64_t s = 0; s < std::min(ahead, steps); ++s)
        load(s);
      for (int64_t s = 0; s < steps; ++s) {
        if (ahead == 0)
          load(s);
        else if (s + ahead < steps)
          load(s + ahead);
        compute(s);
      }
    } else {
      // P·V: P (M×K) A fragments in registers (verified), V (K×N) read
      // transposed.
      ValueRange probs = adaptor.getLhs();
      int64_t kBlocks = rhs.rows / 16;
      LaneOffsets lanes(b, loc, rhs.pitch(), 0);
      Value base = arith::AddIOp::create(b, loc, rhsBase, lanes.pairs);
      for (int64_t kk = 0; kk < kBlocks; ++kk)
        for (int64_t n = 0; n < nBlocks; n += 2) {
          Value off = arith::AddIOp::create(
              b, loc, base,
              constI32(b, loc, kk * 16 * rhs.pitch() + n * 16));
          SmallVector<Value> vFrag =
              ldmatrix(b, loc, smem, off, 4, /*transpose=*/true, element);
          for (int64_t i = 0; i < mTiles; ++i) {
            SmallVector<Value> a =
                llvm::to_vector(probs.slice((i * kBlocks + kk) * 4, 4));
            for (int half = 0; half < 2; ++half)
              update((i * nBlocks + n + half) * 4, a,
                     ArrayRef<Value>(vFrag).slice(half * 2, 2));
          }
        }
    }
    rewriter.replaceOpWithMultiple(op, {out});
    return success();
  }
};

/// Q's A fragments, read once (q_in_registers).
struct LoadOperand : OpConversionPattern<LoadOperandOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LoadOperandOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto tile = *DistributedTile::get(op.getType());
    SharedGeometry geom(cast<SmemType>(op.getSource().getType()));
    SharedBase smem = SharedBase::get(b, loc, op);
    LaneOffsets lanes(b, loc, geom.pitch(), 16 * tile.mTiles());
    SmallVector<Value> regs;
    for (int64_t i = 0; i < tile.mTiles(); ++i)
      for (int64_t kk = 0; kk < tile.kBlocks(); ++kk)
        llvm::append_range(
            regs, loadABlock(b, loc, smem, lanes, adaptor.getSource().front(),
                             geom.pitch(), i, kk, tile.elementType()));
    rewriter.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateMmaSyncPatterns(TileTypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<Mma, LoadOperand>(converter, patterns.getContext());
}
