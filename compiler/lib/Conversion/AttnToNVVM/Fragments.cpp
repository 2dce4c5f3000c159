//===- Fragments.cpp - per-thread tile fragments for mma.sync -------------===//

#include "Fragments.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvidia;

static constexpr const char *kSharedName = "attn_smem";
static constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void Fragments::declareSharedMemory(OpBuilder &b, Location loc) {
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
  LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                         LLVM::Linkage::External, kSharedName, Attribute(),
                         /*alignment=*/1024, /*addrSpace=*/3);
}

Value Fragments::constI32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value Fragments::constIndex(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value Fragments::constF32(float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}
Value Fragments::toIndex(Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

void Fragments::init() {
  Type i32 = b.getI32Type();
  tid = NVVM::ThreadIdXOp::create(b, loc, i32);
  auto div = [&](Value v, int64_t d) {
    return arith::DivUIOp::create(b, loc, v, constI32(d)).getResult();
  };
  auto rem = [&](Value v, int64_t d) {
    return arith::RemUIOp::create(b, loc, v, constI32(d)).getResult();
  };
  auto mul = [&](Value v, int64_t d) {
    return arith::MulIOp::create(b, loc, v, constI32(d)).getResult();
  };
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  warp = div(tid, 32);
  lane = rem(tid, 32);
  group = div(lane, 4);
  quad = rem(lane, 4);
  Value warpRow32 = add(mul(warp, 16 * cfg.mTiles()), group);
  warpRow = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), warpRow32);
  quadCol = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), mul(quad, 2));
  int64_t pitch = cfg.pitch();
  // ldmatrix: lane l gives the address of row l % 8 of matrix l / 8.
  Value row8 = rem(lane, 8), matrix = div(lane, 8);
  // K (plain): matrix m covers columns [8m, 8m + 8) of 8 keys.
  kLane = add(mul(row8, pitch), mul(matrix, 16));
  // V (transposed) and Q: matrix m covers rows 8·(m % 2) and columns 8·(m / 2).
  Value rowInPair = add(mul(rem(matrix, 2), 8), row8);
  vLane = add(mul(rowInPair, pitch), mul(div(matrix, 2), 16));
  qLane = add(vLane, mul(warp, 16 * cfg.mTiles() * pitch));
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  smem = LLVM::AddressOfOp::create(b, loc, ptrType, kSharedName);
  smemAddress = LLVM::PtrToIntOp::create(b, loc, i32, smem);
  if (cfg.wgmma) {
    warpgroup = div(warp, 4);
    // The swizzle pattern follows address bits, so the tiles need a
    // 1024-byte-aligned base, which dynamic shared memory does not promise.
    Value pad = arith::AndIOp::create(
        b, loc, arith::SubIOp::create(b, loc, constI32(0), smemAddress),
        constI32(1023));
    smem = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), smem,
                               ValueRange{pad});
    smemAddress = add(smemAddress, pad);
  }
}

Value Fragments::blockIndex(int dim) {
  Type i32 = b.getI32Type();
  Value v;
  if (dim == 0)
    v = NVVM::BlockIdXOp::create(b, loc, i32);
  else if (dim == 1)
    v = NVVM::BlockIdYOp::create(b, loc, i32);
  else
    v = NVVM::BlockIdZOp::create(b, loc, i32);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
}

Value Fragments::stageOf(Value it, int64_t ahead) {
  Value v = arith::AddIOp::create(b, loc, it, constIndex(ahead));
  v = arith::RemUIOp::create(b, loc, v, constIndex(cfg.stages));
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v);
}

Value Fragments::kvStageOffset(size_t which, Value stage) {
  int64_t base = cfg.queryBytes() + which * cfg.stages * cfg.kvTileBytes();
  Value off = arith::MulIOp::create(b, loc, stage, constI32(cfg.kvTileBytes()));
  return arith::AddIOp::create(b, loc, off, constI32(base));
}

SmallVector<Value> Fragments::splat(RankedTensorType type, float value) {
  Value v = constF32(value);
  int64_t n = cfg.mTiles() *
              (type.getRank() == 1 ? 2 : colBlocks(type.getDimSize(1)) * 4);
  return SmallVector<Value>(n, v);
}

Value Fragments::sharedPtr(Value byteOffset) {
  return LLVM::GEPOp::create(b, loc, smem.getType(), b.getI8Type(), smem,
                             ValueRange{byteOffset});
}

Value Fragments::globalPtr(Value base, Value elementOffset,
                           int64_t elementBytes) {
  Value bytes = arith::MulIOp::create(b, loc, elementOffset,
                                      constIndex(elementBytes));
  bytes = arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes);
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{bytes});
}

Value Fragments::rowOffset(ArrayRef<Value> strides, Value batch, Value head,
                           Value row) {
  Value off = arith::MulIOp::create(b, loc, batch, strides[0]);
  off = arith::AddIOp::create(
      b, loc, off, arith::MulIOp::create(b, loc, head, strides[1]));
  return arith::AddIOp::create(
      b, loc, off, arith::MulIOp::create(b, loc, row, strides[2]));
}

void Fragments::copyTileAsync(Value ptr, ArrayRef<Value> strides,
                              Value numRows, Value batch, Value head,
                              Value row, int64_t rows, Value smemOffset) {
  int64_t chunksPerRow = cfg.paddedDim() / 8; // 16-byte chunks
  int64_t validChunks = cfg.headDim / 8;
  int64_t total = rows * chunksPerRow;
  int64_t threads = cfg.threads();
  Type i32 = b.getI32Type();
  // One 64-bit pointer to the tile's first row; each chunk adds a 32-bit
  // byte offset. LLVM hoists every chunk's loop-invariant address part out
  // of the K/V loop: 32-bit parts keep that from costing two registers each
  // (the runtime bounds row strides so that a tile spans < 2^31 bytes).
  Value tileBase = globalPtr(ptr, rowOffset(strides, batch, head, row), 2);
  Value rowStride = arith::IndexCastOp::create(b, loc, i32, strides[2]);
  Value rowsLeft = arith::IndexCastOp::create(
      b, loc, i32, arith::SubIOp::create(b, loc, numRows, row));
  for (int64_t first = 0; first < total; first += threads) {
    Value chunk = arith::AddIOp::create(b, loc, tid, constI32(first));
    auto body = [&]() {
      Value r = arith::DivUIOp::create(b, loc, chunk, constI32(chunksPerRow));
      Value c = arith::RemUIOp::create(b, loc, chunk, constI32(chunksPerRow));
      Value dst =
          arith::AddIOp::create(b, loc, smemOffset, chunkOffset(r, c, rows));
      Value inRows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           r, rowsLeft);
      Value inCols = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           c, constI32(validChunks));
      Value valid = arith::AndIOp::create(b, loc, inRows, inCols);
      Value bytes = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(
              b, loc, arith::MulIOp::create(b, loc, r, rowStride),
              constI32(2)),
          arith::MulIOp::create(b, loc, c, constI32(16)));
      Value chunkPtr = LLVM::GEPOp::create(b, loc, ptr.getType(),
                                           b.getI8Type(), tileBase,
                                           ValueRange{bytes});
      // Out-of-range chunks copy 0 bytes (zero fill) from a valid address.
      Value src = arith::SelectOp::create(b, loc, valid, chunkPtr, ptr);
      Value size = arith::SelectOp::create(b, loc, valid, constI32(16),
                                           constI32(0));
      NVVM::CpAsyncOp::create(b, loc, sharedPtr(dst), src, 16,
                              NVVM::LoadCacheModifierKind::CG, size);
    };
    if (first + threads <= total) {
      body();
      continue;
    }
    Value inTile = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         chunk, constI32(total));
    scf::IfOp::create(b, loc, inTile, [&](OpBuilder &nb, Location nl) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      body();
      scf::YieldOp::create(b, nl);
    });
  }
}

Value Fragments::chunkOffset(Value row, Value chunk, int64_t rows) {
  if (!cfg.wgmma)
    return arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, constI32(cfg.pitch())),
        arith::MulIOp::create(b, loc, chunk, constI32(16)));
  // Block chunk / 8 of 64 columns; in it, row r at 128·r, chunk c at
  // 16·(c ^ (r % 8)).
  Value block = arith::DivUIOp::create(b, loc, chunk, constI32(8));
  Value inBlock = arith::RemUIOp::create(b, loc, chunk, constI32(8));
  Value swizzled = arith::XOrIOp::create(
      b, loc, inBlock, arith::AndIOp::create(b, loc, row, constI32(7)));
  Value off = arith::MulIOp::create(b, loc, block, constI32(rows * 128));
  off = arith::AddIOp::create(
      b, loc, off, arith::MulIOp::create(b, loc, row, constI32(128)));
  return arith::AddIOp::create(
      b, loc, off, arith::MulIOp::create(b, loc, swizzled, constI32(16)));
}

SmallVector<Value> Fragments::ldmatrix(Value byteOffset, int num,
                                       bool transpose) {
  Type i32 = b.getI32Type();
  SmallVector<Type> fields(num, i32);
  Type resType = num == 1 ? i32
                          : LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                              fields);
  Value res = NVVM::LdMatrixOp::create(
      b, loc, resType, sharedPtr(byteOffset), num,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> regs;
  for (int i = 0; i < num; ++i) {
    Value r = num == 1 ? res : LLVM::ExtractValueOp::create(b, loc, res, i);
    if (cfg.elementType.isF16())
      r = LLVM::BitcastOp::create(
          b, loc, VectorType::get({2}, b.getF16Type()), r);
    regs.push_back(r);
  }
  return regs;
}

SmallVector<Value> Fragments::mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                                  ArrayRef<Value> c) {
  Type f32 = b.getF32Type();
  auto resType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                  {f32, f32, f32, f32});
  NVVM::MMATypes ty = cfg.elementType.isF16() ? NVVM::MMATypes::f16
                                              : NVVM::MMATypes::bf16;
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

Value Fragments::pack(Value lo, Value hi) {
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  Value v = LLVM::PoisonOp::create(b, loc, f32x2);
  v = LLVM::InsertElementOp::create(b, loc, v, lo, constI32(0));
  v = LLVM::InsertElementOp::create(b, loc, v, hi, constI32(1));
  auto halfx2 = VectorType::get({2}, cfg.elementType);
  v = LLVM::FPTruncOp::create(b, loc, halfx2, v);
  if (cfg.elementType.isF16())
    return v; // mma takes f16 operands as vector<2xf16>
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
}

// The NVVM intrinsics directly: convert-gpu-to-nvvm would send llvm.exp2 and
// llvm.log2 to libdevice calls.
Value Fragments::intrinsic(StringRef name, ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, loc, args.front().getType(),
                                       b.getStringAttr(name), args)
      .getResult(0);
}

Value Fragments::maxNum(Value x, Value y) {
  return intrinsic("llvm.maxnum.f32", {x, y});
}

Value Fragments::exp2(Value x) {
  // Flush-to-zero: results below 2^-126 do not matter next to the row's
  // largest term (1), and MUFU.EX2 is then one instruction.
  return intrinsic("llvm.nvvm.ex2.approx.ftz.f32", x);
}

Value Fragments::shuffleXor(Value v, int mask) {
  return NVVM::ShflOp::create(b, loc, v.getType(), constI32(-1), v,
                              constI32(mask), constI32(0x1f),
                              NVVM::ShflKind::bfly, UnitAttr());
}

SmallVector<Value> Fragments::loadQueryFragments(Value smemOffset) {
  int64_t kBlocks = cfg.paddedDim() / 16;
  SmallVector<Value> regs;
  for (int64_t i = 0; i < cfg.mTiles(); ++i)
    for (int64_t kk = 0; kk < kBlocks; ++kk)
      llvm::append_range(regs, loadQueryBlock(smemOffset, i, kk));
  return regs;
}

SmallVector<Value> Fragments::loadQueryBlock(Value smemOffset, int64_t mTile,
                                             int64_t kBlock) {
  Value off = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, smemOffset, qLane),
      constI32(mTile * 16 * cfg.pitch() + kBlock * 32));
  return ldmatrix(off, 4, /*transpose=*/false);
}

SmallVector<Value> Fragments::qk(ArrayRef<Value> query, Value keyOffset) {
  if (cfg.wgmma)
    return wgmmaWait(wgmmaQKIssue(keyOffset));
  int64_t kBlocks = cfg.paddedDim() / 16;
  int64_t nBlocks = cfg.blockN / 8;
  int64_t mTiles = cfg.mTiles();
  Value base = arith::AddIOp::create(b, loc, keyOffset, kLane);
  SmallVector<Value> s(mTiles * nBlocks * 4, constF32(0.0f));
  // k blocks outermost, as FlashAttention-2 does: each ldmatrix of K feeds
  // the mma of every m tile, and Q, when not kept in registers, is read once
  // per k block.
  for (int64_t kk = 0; kk < kBlocks; kk += 2) {
    int num = kk + 1 < kBlocks ? 4 : 2;
    SmallVector<SmallVector<Value>> a(mTiles);
    for (int64_t i = 0; i < mTiles; ++i)
      for (int64_t h = 0; h < num / 2; ++h) {
        if (query.empty())
          llvm::append_range(
              a[i], loadQueryBlock(constI32(cfg.queryOffset()), i, kk + h));
        else
          llvm::append_range(a[i],
                             query.slice((i * kBlocks + kk + h) * 4, 4));
      }
    for (int64_t j = 0; j < nBlocks; ++j) {
      Value off = arith::AddIOp::create(
          b, loc, base, constI32(j * 8 * cfg.pitch() + kk * 32));
      SmallVector<Value> kFrag = ldmatrix(off, num, /*transpose=*/false);
      for (int64_t i = 0; i < mTiles; ++i)
        for (int h = 0; h < num / 2; ++h) {
          size_t at = (i * nBlocks + j) * 4;
          SmallVector<Value> d =
              mma(ArrayRef<Value>(a[i]).slice(h * 4, 4),
                  ArrayRef<Value>(kFrag).slice(h * 2, 2),
                  ArrayRef<Value>(s).slice(at, 4));
          std::copy(d.begin(), d.end(), s.begin() + at);
        }
    }
  }
  return s;
}

SmallVector<Value> Fragments::mask(ArrayRef<Value> scores, Value row,
                                   Value col, Value numQueries, Value numKeys,
                                   MaskKind kind) {
  Type f32 = b.getF32Type();
  bool causal = kind != MaskKind::None;
  int64_t nBlocks = scores.size() / (4 * cfg.mTiles());
  Value shift = constIndex(0);
  if (kind == MaskKind::CausalBottomRight)
    shift = arith::SubIOp::create(b, loc, numKeys, numQueries);
  // Uniform test: does this K/V tile cross the key bound or the diagonal?
  Value tileEnd = arith::AddIOp::create(b, loc, col, constIndex(cfg.blockN));
  Value needed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                       tileEnd, numKeys);
  if (causal) {
    Value lastKey = arith::SubIOp::create(b, loc, tileEnd, constIndex(1));
    Value firstLimit = arith::AddIOp::create(b, loc, row, shift);
    Value crosses = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          lastKey, firstLimit);
    needed = arith::OrIOp::create(b, loc, needed, crosses);
  }
  SmallVector<Type> types(scores.size(), f32);
  auto ifOp = scf::IfOp::create(b, loc, types, needed, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value negInf = constF32(kNegInf);
    // Compare each element's constant column offset c = 8j + e % 2 against
    // per-thread limits, relative to this thread's first key k0 = col + 2t:
    // key k0 + c is hidden when c >= Nk - k0, or (causal) when
    // c > query + shift - k0.
    Value kBase = arith::AddIOp::create(b, loc, col, quadCol);
    Value keyLimit = arith::SubIOp::create(b, loc, numKeys, kBase);
    SmallVector<Value> rowLimit;
    if (causal) {
      Value qBase = arith::AddIOp::create(b, loc, row, warpRow);
      Value rel = arith::SubIOp::create(
          b, loc, arith::AddIOp::create(b, loc, qBase, shift), kBase);
      for (int64_t slot = 0; slot < 2 * cfg.mTiles(); ++slot)
        rowLimit.push_back(arith::AddIOp::create(
            b, loc, rel, constIndex(rowOffsetOf(slot))));
    }
    SmallVector<Value> out;
    for (size_t idx = 0; idx < scores.size(); ++idx) {
      int64_t j = (idx / 4) % nBlocks, e = idx % 4;
      Value c = constIndex(j * 8 + e % 2);
      Value hidden = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                           c, keyLimit);
      if (causal) {
        Value above = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sgt, c,
            rowLimit[rowSlot(idx, nBlocks)]);
        hidden = arith::OrIOp::create(b, loc, hidden, above);
      }
      out.push_back(
          arith::SelectOp::create(b, loc, hidden, negInf, scores[idx]));
    }
    scf::YieldOp::create(b, loc, out);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, SmallVector<Value>(scores));
  }
  return llvm::to_vector_of<Value>(ifOp.getResults());
}

OnlineSoftmaxFrags Fragments::onlineSoftmax(ArrayRef<Value> scores,
                                            Value scale, ArrayRef<Value> max,
                                            ArrayRef<Value> sum) {
  OnlineSoftmaxFrags r;
  int64_t rows = 2 * cfg.mTiles();
  int64_t nBlocks = scores.size() / (4 * cfg.mTiles());
  Value negInf = constF32(kNegInf), zero = constF32(0.0f);
  // Row maxima of the raw scores; with a positive scale, scaling commutes
  // with the max, and exp2(s · scale - base) is one FFMA and one MUFU.
  SmallVector<Value> rowMax(rows);
  for (size_t idx = 0; idx < scores.size(); ++idx) {
    Value &m = rowMax[rowSlot(idx, nBlocks)];
    m = m ? maxNum(m, scores[idx]) : scores[idx];
  }
  SmallVector<Value> base(rows);
  for (int64_t row = 0; row < rows; ++row) {
    Value m = rowMax[row];
    for (int mask : {1, 2})
      m = maxNum(m, shuffleXor(m, mask));
    if (scale)
      m = arith::MulFOp::create(b, loc, m, scale);
    Value newMax = maxNum(max[row], m);
    // While no key has been seen the max is -inf: exponentiate against 0.
    Value unseen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         newMax, negInf);
    base[row] = arith::SelectOp::create(b, loc, unseen, zero, newMax);
    Value diff = arith::SubFOp::create(b, loc, max[row], base[row]);
    r.alpha.push_back(exp2(diff));
    r.max.push_back(newMax);
  }
  SmallVector<Value> p;
  SmallVector<Value> rowSum(rows, zero);
  auto contract = arith::FastMathFlagsAttr::get(b.getContext(),
                                                arith::FastMathFlags::contract);
  for (size_t idx = 0; idx < scores.size(); ++idx) {
    int64_t row = rowSlot(idx, nBlocks);
    Value x = scores[idx];
    if (scale)
      x = arith::MulFOp::create(b, loc, x, scale, contract);
    Value e = exp2(arith::SubFOp::create(b, loc, x, base[row], contract));
    p.push_back(e);
    rowSum[row] = arith::AddFOp::create(b, loc, rowSum[row], e);
  }
  for (int64_t row = 0; row < rows; ++row)
    r.sum.push_back(arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, r.alpha[row], sum[row]),
        rowSum[row]));
  // Accumulator layout -> A operand: blocks 2k and 2k+1 form k block k.
  for (int64_t i = 0; i < cfg.mTiles(); ++i)
    for (int64_t j = 0; j + 1 < nBlocks; j += 2) {
      ArrayRef<Value> lo = ArrayRef<Value>(p).slice((i * nBlocks + j) * 4, 4);
      ArrayRef<Value> hi =
          ArrayRef<Value>(p).slice((i * nBlocks + j + 1) * 4, 4);
      r.probs.push_back(pack(lo[0], lo[1]));
      r.probs.push_back(pack(lo[2], lo[3]));
      r.probs.push_back(pack(hi[0], hi[1]));
      r.probs.push_back(pack(hi[2], hi[3]));
    }
  return r;
}

SmallVector<Value> Fragments::pv(ArrayRef<Value> probs, Value valueOffset,
                                 ArrayRef<Value> acc, ArrayRef<Value> alpha) {
  int64_t kBlocks = cfg.blockN / 16;
  int64_t nBlocks = cfg.paddedDim() / 8;
  SmallVector<Value> out = cfg.conditionalRescale
                               ? rescaleIfMoved(acc, alpha)
                               : rescale(acc, alpha);
  if (cfg.wgmma)
    return wgmmaWait(wgmmaPVIssue(probs, valueOffset, out));
  Value base = arith::AddIOp::create(b, loc, valueOffset, vLane);
  for (int64_t kk = 0; kk < kBlocks; ++kk) {
    for (int64_t n = 0; n < nBlocks; n += 2) {
      Value off = arith::AddIOp::create(
          b, loc, base, constI32(kk * 16 * cfg.pitch() + n * 16));
      SmallVector<Value> vFrag = ldmatrix(off, 4, /*transpose=*/true);
      for (int64_t i = 0; i < cfg.mTiles(); ++i) {
        ArrayRef<Value> a = probs.slice((i * kBlocks + kk) * 4, 4);
        for (int half = 0; half < 2; ++half) {
          size_t at = (i * nBlocks + n + half) * 4;
          SmallVector<Value> d =
              mma(a, ArrayRef<Value>(vFrag).slice(half * 2, 2),
                  ArrayRef<Value>(out).slice(at, 4));
          std::copy(d.begin(), d.end(), out.begin() + at);
        }
      }
    }
  }
  return out;
}

SmallVector<Value> Fragments::rescale(ArrayRef<Value> acc,
                                      ArrayRef<Value> alpha) {
  int64_t nBlocks = cfg.paddedDim() / 8;
  SmallVector<Value> out;
  for (size_t idx = 0; idx < acc.size(); ++idx)
    out.push_back(arith::MulFOp::create(b, loc, acc[idx],
                                        alpha[rowSlot(idx, nBlocks)]));
  return out;
}

SmallVector<Value> Fragments::rescaleIfMoved(ArrayRef<Value> acc,
                                             ArrayRef<Value> alpha) {
  // alpha == 1 for every row of the warp leaves acc unchanged (exactly), so
  // the FMULs are skipped on a warp-uniform branch.
  Value one = constF32(1.0f);
  Value moved = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (Value a : alpha)
    moved = arith::OrIOp::create(
        b, loc, moved,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, a, one));
  Value anyMoved = NVVM::VoteSyncOp::create(
      b, loc, b.getI1Type(), constI32(-1), moved,
      NVVM::VoteSyncKindAttr::get(b.getContext(), NVVM::VoteSyncKind::any));
  SmallVector<Type> types(acc.size(), b.getF32Type());
  auto ifOp = scf::IfOp::create(b, loc, types, anyMoved, /*withElse=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, rescale(acc, alpha));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, SmallVector<Value>(acc));
  return llvm::to_vector_of<Value>(ifOp.getResults());
}

FinalizeFrags Fragments::finalize(ArrayRef<Value> acc, ArrayRef<Value> max,
                                  ArrayRef<Value> sum) {
  FinalizeFrags r;
  Value zero = constF32(0.0f), one = constF32(1.0f);
  SmallVector<Value> inv;
  for (size_t row = 0; row < sum.size(); ++row) {
    // Each thread summed its own columns: reduce over the quad.
    Value l = sum[row];
    for (int mask : {1, 2})
      l = arith::AddFOp::create(b, loc, l, shuffleXor(l, mask));
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value recip = arith::DivFOp::create(b, loc, one, l);
    inv.push_back(arith::SelectOp::create(b, loc, empty, zero, recip));
    Value log2l = intrinsic("llvm.nvvm.lg2.approx.f", l);
    Value lse = arith::MulFOp::create(
        b, loc, arith::AddFOp::create(b, loc, max[row], log2l),
        constF32(static_cast<float>(M_LN2)));
    r.lse.push_back(
        arith::SelectOp::create(b, loc, empty, constF32(kNegInf), lse));
  }
  int64_t nBlocks = acc.size() / (4 * cfg.mTiles());
  for (size_t idx = 0; idx < acc.size(); ++idx)
    r.output.push_back(
        arith::MulFOp::create(b, loc, acc[idx], inv[rowSlot(idx, nBlocks)]));
  return r;
}

void Fragments::storeOutput(ArrayRef<Value> out, Value ptr,
                            ArrayRef<Value> strides, Value numRows,
                            Value batch, Value head, Value row,
                            Type elementType) {
  int64_t nBlocks = out.size() / (4 * cfg.mTiles());
  Value first = arith::AddIOp::create(b, loc, row, warpRow);
  for (int64_t slot = 0; slot < 2 * cfg.mTiles(); ++slot) {
    int64_t i = slot / 2, half = slot % 2;
    Value query =
        arith::AddIOp::create(b, loc, first, constIndex(rowOffsetOf(slot)));
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         query, numRows);
    scf::IfOp::create(b, loc, inside, [&](OpBuilder &nb, Location nl) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      Value rowOff = arith::AddIOp::create(
          b, loc, rowOffset(strides, batch, head, query), quadCol);
      for (int64_t n = 0; 8 * n < cfg.headDim; ++n) {
        Value off = arith::AddIOp::create(b, loc, rowOff, constIndex(8 * n));
        size_t at = (i * nBlocks + n) * 4 + 2 * half;
        Value v = pack(out[at], out[at + 1]);
        if (cfg.elementType.isF16())
          v = LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
        LLVM::StoreOp::create(b, loc, v, globalPtr(ptr, off, 2),
                              /*alignment=*/4);
      }
      scf::YieldOp::create(b, nl);
    });
  }
}

void Fragments::storeRows(ArrayRef<Value> rows, Value ptr,
                          ArrayRef<Value> strides, Value numRows, Value batch,
                          Value head, Value row) {
  Value first = arith::AddIOp::create(b, loc, row, warpRow);
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, quad,
                                       constI32(0));
  // The LSE output is optional: a null pointer skips the store.
  Value null = LLVM::ZeroOp::create(b, loc, ptr.getType());
  Value given = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, ptr, null);
  leader = arith::AndIOp::create(b, loc, leader, given);
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    Value query =
        arith::AddIOp::create(b, loc, first, constIndex(rowOffsetOf(slot)));
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         query, numRows);
    Value store = arith::AndIOp::create(b, loc, inside, leader);
    scf::IfOp::create(b, loc, store, [&](OpBuilder &nb, Location nl) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      Value off = rowOffset(strides, batch, head, query);
      LLVM::StoreOp::create(b, loc, rows[slot], globalPtr(ptr, off, 4),
                            /*alignment=*/4);
      scf::YieldOp::create(b, nl);
    });
  }
}
