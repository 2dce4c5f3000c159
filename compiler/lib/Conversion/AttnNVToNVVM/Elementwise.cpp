//===- Elementwise.cpp - maps, splat constants, layout conversion ---------===//
//
// A map runs its body once per value the thread holds (Layouts.h): its
// coordinates are the thread's base plus the value's constant offset plus
// the map's offsets; row-tile inputs give the value of the element's row,
// 1xC inputs (#attn_nv.cols) that of its column, shuffled from the lane
// that holds it. Integers derived from the coordinates convert to float
// once per thread (AffineCoords.h).
//
//===----------------------------------------------------------------------===//

#include "AffineCoords.h"
#include "Patterns.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// The column `holder` names (DistributedTile::colHolder) from the
/// #attn_nv.cols values `cols`: shfl.sync.idx from lane 4·quad + lane % 4,
/// whose segment mask keeps the lane's low two bits, so every operand is an
/// immediate. Done at the map that uses them, a tile's columns take registers
/// only there: loaded and shuffled at once, the backward's delta took 16
/// registers a thread across its K/V loop's dPᵀ product, its peak (the spills
/// of issue 12 on mma.sync).
Value broadcastColumn(OpBuilder &b, Location loc, ValueRange cols,
                      DistributedTile::ColHolder holder) {
  // shfl c operand: segment mask 0b00011 (bits 12:8), clamp 31 (bits 4:0).
  constexpr int32_t kKeepQuadLane = (0x3 << 8) | 0x1f;
  Value v = cols[holder.slot];
  Type element = v.getType(), i32 = b.getI32Type();
  unsigned bits = element.getIntOrFloatBitWidth();
  Type bitsType = b.getIntegerType(bits);
  // shfl moves 32 bits: narrower values travel zero-extended.
  if (bits != 32)
    v = arith::ExtUIOp::create(b, loc, i32,
                               arith::BitcastOp::create(b, loc, bitsType, v));
  Value moved = NVVM::ShflOp::create(b, loc, v.getType(), constI32(b, loc, -1),
                                     v, constI32(b, loc, 4 * holder.quad),
                                     constI32(b, loc, kKeepQuadLane),
                                     NVVM::ShflKind::idx, UnitAttr());
  if (bits != 32)
    moved = arith::BitcastOp::create(
        b, loc, element, arith::TruncIOp::create(b, loc, bitsType, moved));
  return moved;
}

struct Map : OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MapOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<DistributedTile> out = DistributedTile::get(op.getType());
    if (!out || out->kind() == DistributedTile::Kind::OperandA)
      return op.emitOpError("needs a result with an #attn_nv.acc, "
                            "#attn_nv.rows or #attn_nv.cols layout, got ")
             << op.getType();
    Location loc = op.getLoc();
    Block &body = op.getBodyBlock();
    int64_t rank = op.getRank();
    // Coordinates only where the body reads them.
    bool usesCoords = llvm::any_of(
        body.getArguments().take_front(rank),
        [](BlockArgument arg) { return !arg.use_empty(); });
    Value baseRow, baseCol;
    if (usesCoords) {
      std::tie(baseRow, baseCol) = out->threadBase(rewriter, loc);
      ValueRange offsets = op.getOffsets();
      if (!offsets.empty()) {
        baseRow = arith::AddIOp::create(rewriter, loc, baseRow, offsets[0]);
        if (rank == 2)
          baseCol = arith::AddIOp::create(rewriter, loc, baseCol, offsets[1]);
      }
    }
    // How each input holds the result's values: the same layout, the rows
    // or the columns of the result's accumulator layout.
    enum class Broadcast { None, Rows, Cols };
    SmallVector<Broadcast> broadcast;
    for (Value input : op.getInputs()) {
      auto inType = cast<RankedTensorType>(input.getType());
      Broadcast how = Broadcast::None;
      if (rank == 2 && inType.getRank() == 1)
        how = Broadcast::Rows;
      else if (rank == 2 && inType.getDimSize(0) == 1 &&
               op.getType().getDimSize(0) != 1)
        how = Broadcast::Cols;
      std::optional<DistributedTile> in = DistributedTile::get(inType);
      auto expected = how == Broadcast::Rows   ? DistributedTile::Kind::Rows
                      : how == Broadcast::Cols ? DistributedTile::Kind::Cols
                                               : out->kind();
      if (!in || in->kind() != expected || in->warps() != out->warps() ||
          (in->partial() && !out->partial() && out->kind() == expected) ||
          (how == Broadcast::Cols && out->colGroups() != 1))
        return op.emitOpError("input ")
               << input.getType() << " is not distributed like the result "
               << op.getType();
      broadcast.push_back(how);
    }
    SmallVector<Value> results;
    ConfigAttr config = configOf(op);
    AffineCoords affine(rewriter, loc, body,
                        config && config.getNarrowCompares());
    // Each column (input, offset from the thread's base) a cols input
    // gives, shuffled once, where first used.
    DenseMap<std::pair<size_t, int64_t>, Value> columns;
    for (int64_t i = 0, n = out->valuesPerThread(); i < n; ++i) {
      IRMapping mapping;
      affine.startValue();
      if (usesCoords) {
        ElementOffset off = out->offset(i);
        mapping.map(body.getArgument(0),
                    arith::AddIOp::create(rewriter, loc, baseRow,
                                          constIndex(rewriter, loc, off.row)));
        affine.setCoordinate(body.getArgument(0), baseRow, off.row);
        if (rank == 2) {
          mapping.map(
              body.getArgument(1),
              arith::AddIOp::create(rewriter, loc, baseCol,
                                    constIndex(rewriter, loc, off.col)));
          affine.setCoordinate(body.getArgument(1), baseCol, off.col);
        }
      }
      for (auto [j, values] : llvm::enumerate(adaptor.getInputs())) {
        Value v;
        if (broadcast[j] == Broadcast::Cols) {
          Value &column = columns[{j, out->offset(i).col}];
          if (!column)
            column = broadcastColumn(rewriter, loc, values, out->colHolder(i));
          v = column;
        } else {
          v = values[broadcast[j] == Broadcast::Rows ? out->rowSlot(i) : i];
        }
        mapping.map(op.getInputArg(j), v);
      }
      for (Operation &inner : body.without_terminator())
        affine.clone(inner, mapping);
      results.push_back(mapping.lookup(op.getYielded()));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A splat tile constant: the scalar, once per value.
struct SplatConstant : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<DistributedTile> tile = DistributedTile::get(op.getType());
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!tile)
      return failure();
    if (tile->kind() == DistributedTile::Kind::OperandA)
      return op.emitOpError("an #attn_nv.operand_a tile cannot be a "
                            "constant: convert an #attn_nv.acc tile");
    if (!splat)
      return op.emitOpError("a tile constant must be a splat on NVIDIA");
    Value v = arith::ConstantOp::create(
        rewriter, op.getLoc(), cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(tile->valuesPerThread(), v)});
    return success();
  }
};

/// Accumulator fragments -> 8-bit A fragments (e4m3, wgmma k32). A thread
/// t of a quad holds, per row and 8-column block, columns {2t, 2t + 1}; A
/// wants columns {4t, ..., 4t + 3} of each 16 in a register, which two
/// other threads of the quad hold: 2 (t mod 2) and 2 (t mod 2) + 1, in
/// block t / 2. Each thread packs its rounded values of a row's 32 columns
/// as lo (blocks 0, 1) and hi (blocks 2, 3), then offers, in one shuffle,
/// the block (t mod 2) of both words and, in a second, block 1 - (t mod 2):
/// every thread then pulls from each of its two sources exactly what it
/// needs, and a byte permute puts the halves in column order
/// (FlashAttention-3 permutes P for FP8 this way).
class Fp8OperandA {
public:
  Fp8OperandA(OpBuilder &b, Location loc) : b(b), loc(loc) {
    auto c = [&](int64_t v) { return constI32(b, loc, v); };
    Value lane = NVVM::LaneIdOp::create(b, loc, b.getI32Type());
    Value t = arith::AndIOp::create(b, loc, lane, c(3));
    Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                      arith::AndIOp::create(b, loc, t, c(1)),
                                      c(0));
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, t,
                                       c(2));
    auto pick = [&](Value cond, int64_t yes, int64_t no) {
      return arith::SelectOp::create(b, loc, cond, c(yes), c(no)).getResult();
    };
    // Bytes 0-1 of lo (hi) hold block 0 (2), bytes 2-3 block 1 (3).
    offerMine = pick(odd, 0x7632, 0x5410);
    offerOther = pick(odd, 0x5410, 0x7632);
    // From the source of shuffle 1 (x) and of shuffle 2 (y): threads 0, 1
    // pull x from source 2 (t mod 2), threads 2, 3 from 2 (t mod 2) + 1.
    firstHalf = pick(high, 0x1054, 0x5410);
    secondHalf = pick(high, 0x3276, 0x7632);
    Value quad = arith::AndIOp::create(b, loc, lane, c(~3));
    Value base = arith::AddIOp::create(
        b, loc, quad, arith::SelectOp::create(b, loc, odd, c(2), c(0)));
    Value h = arith::SelectOp::create(b, loc, high, c(1), c(0));
    fromMine = arith::AddIOp::create(b, loc, base, h);
    fromOther = arith::AddIOp::create(
        b, loc, base, arith::SubIOp::create(b, loc, c(1), h));
  }

  /// The two registers (columns 0-15, 16-31 of the k block) of one row
  /// from its 8 values: 4 blocks x 2 columns, block-major.
  std::pair<Value, Value> row(ArrayRef<Value> v) {
    Value lo = pack(v[0], v[1], v[2], v[3]);
    Value hi = pack(v[4], v[5], v[6], v[7]);
    Value x = shuffle(prmt(lo, hi, offerMine), fromMine);
    Value y = shuffle(prmt(lo, hi, offerOther), fromOther);
    return {prmt(x, y, firstHalf), prmt(x, y, secondHalf)};
  }

private:
  OpBuilder &b;
  Location loc;
  Value offerMine, offerOther, firstHalf, secondHalf, fromMine, fromOther;

  Value prmt(Value lo, Value hi, Value selector) {
    return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                   NVVM::PermuteMode::DEFAULT);
  }
  Value shuffle(Value v, Value lane) {
    return NVVM::ShflOp::create(b, loc, v.getType(), constI32(b, loc, -1), v,
                                lane, constI32(b, loc, 0x1f),
                                NVVM::ShflKind::idx, UnitAttr());
  }
  /// cvt.rn.satfinite.e4m3x2 of (a, b) -> bytes {a, b}; two pairs -> one
  /// register {a0, b0, a1, b1}.
  Value pack(Value a0, Value b0, Value a1, Value b1) {
    Type e4m3 = Float8E4M3FNType::get(b.getContext());
    auto pair = [&](Value lo, Value hi) {
      Value v = NVVM::ConvertF32x2ToF8x2Op::create(
          b, loc, b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false, e4m3);
      return arith::ExtUIOp::create(b, loc, b.getI32Type(), v).getResult();
    };
    Value first = pair(a0, b0);
    Value second = arith::ShLIOp::create(b, loc, pair(a1, b1),
                                         constI32(b, loc, 16));
    return arith::OrIOp::create(b, loc, first, second);
  }
};

/// Accumulator fragments -> A fragments: blocks 2k and 2k + 1 of an m tile
/// form k block k; pairs are packed (and rounded) into one register; 8-bit
/// A fragments through Fp8OperandA.
/// Partial row sums -> rows: each quad adds its four values.
struct ConvertLayout : OpConversionPattern<ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto from = *DistributedTile::get(op.getSource().getType());
    auto to = *DistributedTile::get(op.getType());
    ValueRange v = adaptor.getSource();
    Location loc = op.getLoc();
    if (from.kind() == DistributedTile::Kind::Rows) {
      SmallVector<Value> sums;
      for (Value p : v) {
        for (int mask : {1, 2})
          p = arith::AddFOp::create(rewriter, loc, p,
                                    shuffleXor(rewriter, loc, p, mask));
        sums.push_back(p);
      }
      rewriter.replaceOpWithMultiple(op, {sums});
      return success();
    }
    int64_t blocks = from.colBlocks();
    SmallVector<Value> regs;
    if (to.kBlockCols() == 32) {
      Fp8OperandA fp8(rewriter, loc);
      for (int64_t i = 0; i < from.mTiles(); ++i)
        for (int64_t k = 0; k < to.kBlocks(); ++k) {
          // Values e, e + 1 of blocks 4k .. 4k + 3: row g (e = 0), g + 8.
          std::pair<Value, Value> rows[2];
          for (int64_t h = 0; h < 2; ++h) {
            SmallVector<Value> row;
            for (int64_t j = 4 * k; j < 4 * k + 4; ++j)
              for (int64_t e = 0; e < 2; ++e)
                row.push_back(v[(i * blocks + j) * 4 + 2 * h + e]);
            rows[h] = fp8.row(row);
          }
          regs.append({rows[0].first, rows[1].first, rows[0].second,
                       rows[1].second});
        }
      rewriter.replaceOpWithMultiple(op, {regs});
      return success();
    }
    for (int64_t i = 0; i < from.mTiles(); ++i)
      for (int64_t j = 0; j < 2 * to.kBlocks(); j += 2) {
        ValueRange lo = v.slice((i * blocks + j) * 4, 4);
        ValueRange hi = v.slice((i * blocks + j + 1) * 4, 4);
        Type e = to.elementType();
        regs.push_back(packPair(rewriter, loc, lo[0], lo[1], e));
        regs.push_back(packPair(rewriter, loc, lo[2], lo[3], e));
        regs.push_back(packPair(rewriter, loc, hi[0], hi[1], e));
        regs.push_back(packPair(rewriter, loc, hi[2], hi[3], e));
      }
    rewriter.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateElementwisePatterns(TileTypeConverter &converter,
                                                 RewritePatternSet &patterns) {
  patterns.add<Map, SplatConstant, ConvertLayout>(converter,
                                                  patterns.getContext());
}
