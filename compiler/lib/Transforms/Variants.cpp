//===- Variants.cpp - The named attention variants as mods ----------------===//
//
// Each variant is a few scalar ops in the score_mod or the mask_mod; the
// window and the prefix compare positions linearly, so the mask's structure
// (Mask.h) narrows the K/V loop and skips the per-element mask on tiles
// wholly inside them.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Variants.h"

#include "attn/Compiler/KernelABI.h"
#include "attn/Transforms/Mask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::attn;
namespace abi = ::attn::abi;

std::optional<unsigned> mlir::attn::parseVariants(StringRef names) {
  unsigned bits = 0;
  SmallVector<StringRef> parts;
  names.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    auto it = llvm::find(abi::kVariantNames, part.trim());
    if (it == std::end(abi::kVariantNames))
      return std::nullopt;
    bits |= 1u << (it - std::begin(abi::kVariantNames));
  }
  return bits;
}

namespace {

/// A mod's block: leading arguments, then one per capture.
Block &modBlock(OpBuilder &b, Location loc, Region &region, unsigned leading,
                Type leadingFirst, TypeRange captures) {
  Block *block = b.createBlock(&region);
  Type index = b.getIndexType();
  for (unsigned i = 0; i < leading; ++i)
    block->addArgument(i == 0 && leadingFirst ? leadingFirst : index, loc);
  for (Type t : captures)
    block->addArgument(t, loc);
  return *block;
}

} // namespace

template <typename OpTy>
void mlir::attn::buildVariantMods(OpBuilder &b, Location loc, OpTy sdpa,
                                  unsigned variants, ValueRange args) {
  if (!variants)
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(sdpa);
  // Captures: the kernel's capture arguments, then the diagonal's shift.
  std::map<std::string, unsigned> slot;
  unsigned next = 0;
  for (const abi::CaptureArg &arg : abi::kCaptureArgs)
    if (variants & arg.variant)
      slot[arg.name] = next++;
  MaskKind kind = sdpa.getMask();
  Value numQueries = memref::DimOp::create(b, loc, sdpa.getQuery(), 2);
  Value numKeys = memref::DimOp::create(b, loc, sdpa.getKey(), 2);
  Value shift = buildDiagonalShift(b, loc, kind, numQueries, numKeys);
  if (!shift)
    shift = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> captures(args.begin(), args.end());
  unsigned shiftSlot = captures.size();
  captures.push_back(shift);
  sdpa.getCapturesMutable().assign(captures);
  TypeRange captureTypes = sdpa.getCaptures().getTypes();
  Type index = b.getIndexType(), f32 = b.getF32Type();
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, index, v).getResult();
  };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y).getResult();
  };

  unsigned maskVariants = abi::kWindow | abi::kPrefixLm | abi::kDocument;
  if (variants & maskVariants) {
    Block &block = modBlock(b, loc, sdpa.getMaskMod(), kMaskModArgs, Type(),
                            captureTypes);
    b.setInsertionPointToStart(&block);
    auto cap = [&](StringRef name) {
      return block.getArgument(kMaskModArgs + slot.at(name.str()));
    };
    Value q = block.getArgument(2), k = block.getArgument(3);
    Value diag = arith::AddIOp::create(
        b, loc, q, block.getArgument(kMaskModArgs + shiftSlot));
    Value seen = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    auto both = [&](Value c) {
      seen = arith::AndIOp::create(b, loc, seen, c);
    };
    if (variants & abi::kWindow) {
      // diag - left <= k <= diag + right
      Value lo = arith::SubIOp::create(b, loc, diag,
                                       toIndex(cap("window_left")));
      Value hi = arith::AddIOp::create(b, loc, diag,
                                       toIndex(cap("window_right")));
      both(cmp(arith::CmpIPredicate::sge, k, lo));
      both(cmp(arith::CmpIPredicate::sle, k, hi));
    }
    if (variants & abi::kPrefixLm) {
      // The causal mask or the prefix: the or is why the causal mask lives
      // here and not on the sdpa.
      Value causal = buildCausalSeen(
          b, loc, q, k, block.getArgument(kMaskModArgs + shiftSlot));
      Value prefix =
          cmp(arith::CmpIPredicate::slt, k, toIndex(cap("prefix_len")));
      both(arith::OrIOp::create(b, loc, causal, prefix));
      sdpa.setMask(MaskKind::None);
    }
    if (variants & abi::kDocument) {
      // Packed sequences: the ids never decrease (attn_jit.h), so each
      // query tile visits only the keys of its documents.
      auto qDoc = memref::LoadOp::create(b, loc, cap("q_doc_ids"), q);
      auto kvDoc = memref::LoadOp::create(b, loc, cap("kv_doc_ids"), k);
      for (Operation *load : {qDoc.getOperation(), kvDoc.getOperation()})
        load->setAttr(kNonDecreasingAttr, b.getUnitAttr());
      both(cmp(arith::CmpIPredicate::eq, qDoc, kvDoc));
    }
    YieldOp::create(b, loc, seen);
  }

  unsigned scoreVariants = abi::kAlibi | abi::kBias | abi::kSoftcap;
  if (variants & scoreVariants) {
    b.setInsertionPoint(sdpa);
    Block &block = modBlock(b, loc, sdpa.getScoreMod(), kScoreModArgs, f32,
                            captureTypes);
    b.setInsertionPointToStart(&block);
    auto cap = [&](StringRef name) {
      return block.getArgument(kScoreModArgs + slot.at(name.str()));
    };
    Value s = block.getArgument(0), h = block.getArgument(2),
          q = block.getArgument(3), k = block.getArgument(4);
    if (variants & abi::kAlibi) {
      // slope[h] · (j - i)
      Value slope = memref::LoadOp::create(b, loc, cap("alibi_slopes"), h);
      Value distance = arith::SIToFPOp::create(
          b, loc, f32,
          arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                     arith::SubIOp::create(b, loc, k, q)));
      s = arith::AddFOp::create(
          b, loc, s, arith::MulFOp::create(b, loc, slope, distance));
    }
    if (variants & abi::kBias) {
      Value bias = memref::LoadOp::create(b, loc, cap("bias"), ValueRange{q, k});
      s = arith::AddFOp::create(b, loc, s, bias);
    }
    if (variants & abi::kSoftcap) {
      // cap · tanh(s / cap); 1 / cap is invariant (hoisted out of the map).
      // Reassociable products: 1 / cap folds into the scale, cap into
      // log2(e) (attn.map's canonicalization).
      Value c = cap("softcap");
      Value inverse = arith::DivFOp::create(
          b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f)),
          c);
      auto reassoc = arith::FastMathFlags::reassoc;
      Value t = math::TanhOp::create(
          b, loc, arith::MulFOp::create(b, loc, s, inverse, reassoc));
      s = arith::MulFOp::create(b, loc, t, c, reassoc);
    }
    YieldOp::create(b, loc, s);
  }
}

template void mlir::attn::buildVariantMods(OpBuilder &, Location, SdpaOp,
                                           unsigned, ValueRange);
template void mlir::attn::buildVariantMods(OpBuilder &, Location,
                                           SdpaBackwardOp, unsigned,
                                           ValueRange);
