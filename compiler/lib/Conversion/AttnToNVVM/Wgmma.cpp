//===- Wgmma.cpp - Hopper warpgroup MMA for the NVIDIA mapping ------------===//
//
// sm_90a only. QKᵀ and P·V as wgmma.mma_async m64nNk16 (f32 accumulation),
// one warpgroup (4 warps, 128 threads) per 64 query rows:
//  * QKᵀ: A = Q and B = K, both K-major in shared memory;
//  * P·V: A = P from registers (the QKᵀ accumulators repacked, as for
//    mma.sync), B = V read "transposed" (MN-major: V's rows are the k
//    dimension, its head-dim columns contiguous).
// Tiles are 64-column blocks of 128-byte rows with the 128-byte swizzle (see
// Fragments.h), described to wgmma by 64-bit matrix descriptors. The
// accumulator of m64nNk16 gives warp w % 4 of a warpgroup rows 16·(w % 4) +
// {g, g + 8} and N / 8 column blocks laid out as mma.sync's C fragment, so
// the mask, the softmax and the stores are the mma.sync code unchanged.
//
// wgmma is emitted as inline PTX: MLIR 22's nvvm.wgmma.mma_async takes A
// from shared memory only. The fence before P·V and the waits are inline PTX
// too, with the registers they guard passed through them: as operand-less
// intrinsics they would let LLVM move accumulator reads or writes across
// them, which wgmma leaves undefined.
//
//===----------------------------------------------------------------------===//

#include "Fragments.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvidia;

/// Volatile inline PTX `text` returning `res` (null: nothing).
static LLVM::InlineAsmOp inlinePtx(OpBuilder &b, Location loc, Type res,
                                   ValueRange operands, StringRef text,
                                   StringRef constraints) {
  return LLVM::InlineAsmOp::create(
      b, loc, res, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
}

/// Matrix-descriptor field: layout type 1 in bits 62-63 is the 128-byte
/// swizzle.
static constexpr uint64_t kSwizzle128B = uint64_t(1) << 62;

Value Fragments::wgmmaDescriptor(Value byteOffset, int64_t lbo, int64_t sbo) {
  Type i64 = b.getI64Type();
  // Bits 0-13: address >> 4; 16-29: leading byte offset >> 4; 32-45: stride
  // byte offset >> 4. Shared addresses are below 2^18, so the address field
  // never carries into the others.
  uint64_t fields = (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) |
                    kSwizzle128B;
  Value addr = arith::AddIOp::create(b, loc, smemAddress, byteOffset);
  addr = arith::ShRUIOp::create(b, loc, addr, constI32(4));
  addr = arith::ExtUIOp::create(b, loc, i64, addr);
  Value hi = arith::ConstantIntOp::create(b, loc, i64, int64_t(fields));
  return arith::OrIOp::create(b, loc, addr, hi);
}

Value Fragments::advance(Value desc, int64_t bytes) {
  if (bytes == 0)
    return desc;
  Value add = arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes >> 4);
  return arith::AddIOp::create(b, loc, desc, add);
}

SmallVector<Value> Fragments::wgmmaAsync(ArrayRef<Value> acc,
                                         ArrayRef<Value> aRegs, Value aDesc,
                                         Value bDesc, int64_t n,
                                         bool transposeB) {
  int64_t regs = n / 2;
  StringRef ty = cfg.elementType.isF16() ? "f16" : "bf16";
  std::string constraints;
  SmallVector<Value> operands;
  auto addConstraint = [&](StringRef c) {
    if (!constraints.empty())
      constraints += ",";
    constraints += c.str();
  };
  for (int64_t i = 0; i < regs; ++i)
    addConstraint("=f");
  int64_t next = regs;
  if (!acc.empty()) {
    for (int64_t i = 0; i < regs; ++i)
      addConstraint(std::to_string(i)); // tied to output i
    llvm::append_range(operands, acc);
    next += regs;
  }
  std::string d = "{";
  for (int64_t i = 0; i < regs; ++i)
    d += llvm::formatv("{0}${1}", i ? ", " : "", i).str();
  d += "}";
  std::string a;
  if (aRegs.empty()) {
    addConstraint("l");
    operands.push_back(aDesc);
    a = llvm::formatv("${0}", next++).str();
  } else {
    a = "{";
    for (auto [i, r] : llvm::enumerate(aRegs)) {
      addConstraint("r");
      Value v = r;
      if (v.getType() != b.getI32Type())
        v = LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
      operands.push_back(v);
      a += llvm::formatv("{0}${1}", i ? ", " : "", next++).str();
    }
    a += "}";
  }
  addConstraint("l");
  operands.push_back(bDesc);
  int64_t bIdx = next++;
  addConstraint("r");
  operands.push_back(constI32(acc.empty() ? 0 : 1));
  int64_t scaleIdx = next++;
  // scale-d is a predicate: D = A·B + (scale-d ? D : 0). The immediates are
  // imm-scale-a, imm-scale-b (1: no negation), [imm-trans-a,] imm-trans-b.
  std::string trans = aRegs.empty()
                          ? llvm::formatv("0, {0}", transposeB ? 1 : 0).str()
                          : std::string(transposeB ? "1" : "0");
  std::string text = llvm::formatv(
      "{{\n.reg .pred p;\nsetp.ne.b32 p, ${0}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n{1}k16.f32.{2}.{2} {3}, {4}, ${5}, "
      "p, 1, 1, {6};\n}",
      scaleIdx, n, ty, d, a, bIdx, trans);
  Type f32 = b.getF32Type();
  auto resType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(regs, f32));
  auto asmOp = inlinePtx(b, loc, resType, operands, text, constraints);
  SmallVector<Value> out;
  for (int64_t i = 0; i < regs; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getRes(), i));
  return out;
}

SmallVector<Value> Fragments::asmThrough(StringRef text,
                                         ArrayRef<Value> values) {
  std::string constraints;
  SmallVector<Type> types;
  SmallVector<Value> operands;
  for (Value v : values) {
    if (!v.getType().isF32() && v.getType() != b.getI32Type())
      v = LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
    operands.push_back(v);
    types.push_back(v.getType());
    constraints += v.getType().isF32() ? "=f," : "=r,";
  }
  for (size_t i = 0; i < values.size(); ++i)
    constraints += std::to_string(i) + (i + 1 < values.size() ? "," : "");
  auto resType = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto asmOp = inlinePtx(b, loc, resType, operands, text, constraints);
  SmallVector<Value> out;
  for (auto [i, v] : llvm::enumerate(values)) {
    Value r = LLVM::ExtractValueOp::create(b, loc, asmOp.getRes(), i);
    if (r.getType() != v.getType())
      r = LLVM::BitcastOp::create(b, loc, v.getType(), r);
    out.push_back(r);
  }
  return out;
}

SmallVector<Value> Fragments::wgmmaWait(ArrayRef<Value> values,
                                        int64_t pending) {
  return asmThrough(
      llvm::formatv("wgmma.wait_group.sync.aligned {0};", pending).str(),
      values);
}

/// Named barrier ids: 0 is the CTA barrier; ordering uses one per pair of
/// consecutive warpgroups (at most 4 warpgroups: ids 1-3).
static constexpr int64_t kFirstOrderBarrier = 1;

void Fragments::warpgroupBarrier(int64_t g, StringRef instruction,
                                 int64_t id) {
  // 256 threads: the two warpgroups that meet there.
  Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     warpgroup, constI32(g));
  scf::IfOp::create(b, loc, mine, [&](OpBuilder &nb, Location nl) {
    inlinePtx(nb, nl, Type(), ValueRange{},
              llvm::formatv("{0} {1}, 256;", instruction, id).str(), "");
    scf::YieldOp::create(nb, nl);
  });
}

void Fragments::waitForPreviousWarpgroup() {
  // Warpgroup g > 0 waits on barrier kFirstOrderBarrier + g - 1, where
  // warpgroup g - 1 arrives.
  for (int64_t g = 1; g < cfg.warpgroups(); ++g)
    warpgroupBarrier(g, "bar.sync", kFirstOrderBarrier + g - 1);
}

void Fragments::releaseNextWarpgroup() {
  for (int64_t g = 0; g + 1 < cfg.warpgroups(); ++g)
    warpgroupBarrier(g, "bar.arrive", kFirstOrderBarrier + g);
}

SmallVector<Value> Fragments::wgmmaQKIssue(Value keyOffset) {
  // This warpgroup's 64 rows of Q: 64 rows x 128 bytes into each block.
  Value queryOffset = arith::AddIOp::create(
      b, loc, constI32(cfg.queryOffset()),
      arith::MulIOp::create(b, loc, warpgroup, constI32(64 * 128)));
  // K-major, swizzled: 8-row groups 1024 bytes apart (stride byte offset);
  // the leading byte offset is unused but must be set (16 bytes).
  Value qDesc = wgmmaDescriptor(queryOffset, 16, 1024);
  Value kDesc = wgmmaDescriptor(keyOffset, 16, 1024);
  if (cfg.orderedQK())
    waitForPreviousWarpgroup();
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  SmallVector<Value> s;
  for (int64_t kk = 0; kk < cfg.paddedDim() / 16; ++kk) {
    // k step kk: column block kk / 4, 32 bytes per 16 columns inside it.
    int64_t block = kk / 4, inBlock = (kk % 4) * 32;
    s = wgmmaAsync(s, {}, advance(qDesc, block * cfg.blockM * 128 + inBlock),
                   advance(kDesc, block * cfg.blockN * 128 + inBlock),
                   cfg.blockN, /*transposeB=*/false);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  if (cfg.orderedQK())
    releaseNextWarpgroup();
  return s;
}

SmallVector<Value> Fragments::wgmmaPVIssue(ArrayRef<Value> probs,
                                           Value valueOffset,
                                           ArrayRef<Value> acc) {
  // MN-major: the leading byte offset steps between 64-column blocks of V,
  // the stride byte offset between 8-row groups; a k step is 16 rows.
  Value vDesc = wgmmaDescriptor(valueOffset, cfg.blockN * 128, 1024);
  // The rescaled accumulators and P are written by ordinary instructions:
  // they pass through the fence so that none is computed after it.
  SmallVector<Value> regs(acc);
  llvm::append_range(regs, probs);
  regs = asmThrough("wgmma.fence.sync.aligned;", regs);
  SmallVector<Value> out(ArrayRef<Value>(regs).take_front(acc.size()));
  ArrayRef<Value> p = ArrayRef<Value>(regs).drop_front(acc.size());
  for (int64_t kk = 0; kk < cfg.blockN / 16; ++kk)
    out = wgmmaAsync(out, p.slice(kk * 4, 4), Value(),
                     advance(vDesc, kk * 16 * 128), cfg.paddedDim(),
                     /*transposeB=*/true);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return out;
}
