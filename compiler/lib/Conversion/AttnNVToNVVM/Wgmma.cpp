//===- Wgmma.cpp - products on wgmma.mma_async (sm_90a) -------------------===//
//
// One warpgroup (4 warps, 128 threads) per 64 rows issues m64nNk16
// instructions (m64nNk32 for e4m3): lhs from a K-major swizzled tile
// through a matrix descriptor (or an MN-major one, K×M: the backward's dSᵀ
// read as dS), or from A-fragment registers (wgmma "RS"); rhs from a
// swizzled tile, K-major (N×K: QKᵀ's K, FP8 P·V's Vᵀ) or MN-major (K×N:
// P·V's V). Every k step reads 32 bytes of K. The accumulator of
// m64nNk16 gives each warp the mma.sync C fragment layout, so results are
// #attn_nv.acc tiles like mma.sync's.
//
// wgmma is inline PTX: NVVM 22's nvvm.wgmma.mma_async takes A from shared
// memory only. The fence before a product with register operands and the
// waits are inline PTX with those registers passed through (tied): as
// operand-less intrinsics LLVM could move an accumulator read or write
// across them, which wgmma leaves undefined.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "attn/Dialect/AttnNV/IR/Barriers.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"


using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// Matrix-descriptor field: layout type 1 in bits 62-63 is the 128-byte
/// swizzle.
constexpr uint64_t kSwizzle128B = uint64_t(1) << 62;

/// Shared-memory matrix descriptor (128-byte swizzle) of the tile at
/// `byteOffset` (i32), with leading/stride byte offsets `lbo`, `sbo`.
Value descriptor(OpBuilder &b, Location loc, const SharedBase &smem,
                 Value byteOffset, int64_t lbo, int64_t sbo) {
  Type i64 = b.getI64Type();
  // Bits 0-13: address >> 4; 16-29: leading byte offset >> 4; 32-45: stride
  // byte offset >> 4. Shared addresses are below 2^18, so the address field
  // never carries into the others.
  uint64_t fields = (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) |
                    kSwizzle128B;
  Value addr = arith::AddIOp::create(b, loc, smem.address, byteOffset);
  addr = arith::ShRUIOp::create(b, loc, addr, constI32(b, loc, 4));
  addr = arith::ExtUIOp::create(b, loc, i64, addr);
  Value hi = arith::ConstantIntOp::create(b, loc, i64, int64_t(fields));
  return arith::OrIOp::create(b, loc, addr, hi);
}

/// A descriptor and the bytes (a multiple of 16) its k step lies past it,
/// added by LLVM arithmetic or inside the instruction's inline PTX.
struct DescriptorStep {
  Value desc;
  int64_t bytes = 0;
};

/// `desc` advanced by `bytes` (a multiple of 16): in the PTX (`inPtx`) or
/// now.
DescriptorStep advance(OpBuilder &b, Location loc, Value desc, int64_t bytes,
                       bool inPtx) {
  if (inPtx || bytes == 0)
    return {desc, bytes};
  Value add =
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes >> 4);
  return {arith::AddIOp::create(b, loc, desc, add), 0};
}

/// One wgmma.mma_async m64nNk16 (k32 for e4m3) with f32 accumulation. A
/// comes from the descriptor `aDesc` (MN-major when `transposeA`) or, when
/// `aRegs` is given, from 4 registers; an empty `acc` starts from zero.
SmallVector<Value> wgmmaAsync(OpBuilder &b, Location loc, Type element,
                              ArrayRef<Value> acc, ArrayRef<Value> aRegs,
                              DescriptorStep aDesc, DescriptorStep bDesc,
                              int64_t n, bool transposeB,
                              bool transposeA = false) {
  int64_t regs = n / 2;
  bool e4m3 = isa<Float8E4M3FNType>(element);
  StringRef ty = e4m3 ? "e4m3" : element.isF16() ? "f16" : "bf16";
  int64_t k = e4m3 ? 32 : 16;
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
  // A descriptor operand, advanced in the PTX into register `name`.
  std::string advances;
  auto descriptorOperand = [&](DescriptorStep step, StringRef name) {
    addConstraint("l");
    operands.push_back(step.desc);
    std::string reg = llvm::formatv("${0}", next++).str();
    if (step.bytes == 0)
      return reg;
    advances += llvm::formatv(".reg .b64 {0};\nadd.s64 {0}, {1}, {2};\n",
                              name, reg, step.bytes >> 4)
                    .str();
    return name.str();
  };
  std::string a;
  if (aRegs.empty()) {
    a = descriptorOperand(aDesc, "da");
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
  std::string bOperand = descriptorOperand(bDesc, "db");
  addConstraint("r");
  operands.push_back(constI32(b, loc, acc.empty() ? 0 : 1));
  int64_t scaleIdx = next++;
  // scale-d is a predicate: D = A·B + (scale-d ? D : 0). The immediates are
  // imm-scale-a, imm-scale-b (1: no negation), then for 16-bit types
  // [imm-trans-a,] imm-trans-b (8-bit ones are K-major only).
  std::string trans = aRegs.empty()
                          ? llvm::formatv(", {0}, {1}", transposeA ? 1 : 0,
                                          transposeB ? 1 : 0)
                                .str()
                          : std::string(transposeB ? ", 1" : ", 0");
  if (e4m3)
    trans.clear();
  std::string text = llvm::formatv(
      "{{\n.reg .pred p;\n{7}setp.ne.b32 p, ${0}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n{1}k{8}.f32.{2}.{2} {3}, {4}, {5}, "
      "p, 1, 1{6};\n}",
      scaleIdx, n, ty, d, a, bOperand, trans, advances, k);
  Type f32 = b.getF32Type();
  auto resType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(regs, f32));
  auto asmOp = Ptx::emit(b, loc, resType, operands, text, constraints);
  SmallVector<Value> out;
  for (int64_t i = 0; i < regs; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getRes(), i));
  return out;
}

/// The fence before a product that reads registers: those written by
/// ordinary instructions (the accumulator `out`, A's `lhs`) pass through
/// it, so none is computed after it. Updates `out`; returns A's registers.
SmallVector<Value> fenceRegisters(OpBuilder &b, Location loc,
                                  SmallVector<Value> &out, ValueRange lhs) {
  SmallVector<Value> regs(out);
  llvm::append_range(regs, lhs);
  regs = Ptx::through(b, loc, "wgmma.fence.sync.aligned;", regs);
  out.assign(regs.begin(), regs.begin() + out.size());
  return SmallVector<Value>(regs.begin() + out.size(), regs.end());
}

struct Wgmma : OpConversionPattern<WgmmaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WgmmaOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto acc = *DistributedTile::get(op.getAcc().getType());
    auto rhsType = cast<SmemType>(op.getRhs().getType());
    Type element = rhsType.getElementType();
    SharedBase smem = SharedBase::get(b, loc, op);
    Value rhsOffset = adaptor.getRhs().front();
    SmallVector<Value> out;
    if (!isZeroTile(op.getAcc()))
      out = llvm::to_vector(adaptor.getAcc());
    int64_t n = acc.cols();
    bool inPtx = op.getAdvanceInPtx();
    auto lhsType = dyn_cast<SmemType>(op.getLhs().getType());
    if (lhsType && op.getTransposeLhs()) {
      // Both MN-major (the backward's (dSᵀ)ᵀ K): A is K×M, B K×N, each
      // read as P·V's V is (leading byte offset between 64-column blocks,
      // stride byte offset between 8-row groups, a k step 16 rows). This
      // warpgroup's 64 rows of M are the lhs's 64-column block g; with
      // column groups every warpgroup takes all 64 rows of M and group g's
      // columns of B, whole 64-column blocks of it.
      int64_t rowsA = lhsType.getRows(), rowsB = rhsType.getRows();
      Value warpgroupThreads = constI32(b, loc, 128);
      Value thread = threadId(b, loc);
      Value warpgroup =
          arith::DivUIOp::create(b, loc, thread, warpgroupThreads);
      Value lhsOffset = adaptor.getLhs().front();
      if (acc.colGroups() > 1)
        rhsOffset = arith::AddIOp::create(
            b, loc, rhsOffset,
            arith::MulIOp::create(
                b, loc, warpgroup,
                constI32(b, loc, (acc.cols() / 64) * rowsB * 128)));
      else
        lhsOffset = arith::AddIOp::create(
            b, loc, lhsOffset,
            arith::MulIOp::create(b, loc, warpgroup,
                                  constI32(b, loc, rowsA * 128)));
      Value aDesc = descriptor(b, loc, smem, lhsOffset, rowsA * 128, 1024);
      Value bDesc = descriptor(b, loc, smem, rhsOffset, rowsB * 128, 1024);
      if (out.empty())
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
      else
        out = Ptx::through(b, loc, "wgmma.fence.sync.aligned;", out);
      for (int64_t kk = 0; kk < rowsA / 16; ++kk) {
        DescriptorStep aStep = advance(b, loc, aDesc, kk * 16 * 128, inPtx);
        DescriptorStep bStep = advance(b, loc, bDesc, kk * 16 * 128, inPtx);
        out = wgmmaAsync(b, loc, element, out, {}, aStep, bStep, n,
                         /*transposeB=*/true, /*transposeA=*/true);
      }
    } else if (lhsType) {
      if (!op.getTransposeRhs())
        return op.emitOpError("with lhs in shared memory takes a K-major "
                              "(transposed) rhs");
      // K-major, swizzled: 8-row groups 1024 bytes apart (stride byte
      // offset); the leading byte offset is unused but must be set (16).
      // This warpgroup's 64 rows of the lhs: 64 rows x 128 bytes in.
      Value threads = constI32(b, loc, 128);
      Value warpgroup =
          arith::DivUIOp::create(b, loc, threadId(b, loc), threads);
      Value lhsOffset = arith::AddIOp::create(
          b, loc, adaptor.getLhs().front(),
          arith::MulIOp::create(b, loc, warpgroup, constI32(b, loc, 64 * 128)));
      Value aDesc = descriptor(b, loc, smem, lhsOffset, 16, 1024);
      Value bDesc = descriptor(b, loc, smem, rhsOffset, 16, 1024);
      if (out.empty())
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
      else
        out = Ptx::through(b, loc, "wgmma.fence.sync.aligned;", out);
      int64_t rowsA = lhsType.getRows(), rowsB = rhsType.getRows();
      // K (the head dim) need not fill its last 128-byte block: the k
      // steps stop at K, and nothing reads the block's rest.
      for (int64_t kk = 0; kk < lhsType.getCols() / op.getKStep(); ++kk) {
        // k step kk: column block kk / 4, 32 bytes per k step in it.
        int64_t block = kk / 4, inBlock = (kk % 4) * 32;
        DescriptorStep bStep =
            advance(b, loc, bDesc, block * rowsB * 128 + inBlock, inPtx);
        DescriptorStep aStep =
            advance(b, loc, aDesc, block * rowsA * 128 + inBlock, inPtx);
        out = wgmmaAsync(b, loc, element, out, {}, aStep, bStep, n,
                         /*transposeB=*/false);
      }
    } else if (op.getTransposeRhs()) {
      // 8-bit (e4m3) P·V: A (P) from registers, B K-major (Vᵀ, N×K: the
      // head dim's rows, keys contiguous), read as QKᵀ's K is.
      if (!isa<Float8E4M3FNType>(element))
        return op.emitOpError("with lhs in registers takes an MN-major "
                              "(K×N) rhs, or a K-major one of 8-bit tiles");
      int64_t rowsB = rhsType.getRows();
      Value bDesc = descriptor(b, loc, smem, rhsOffset, 16, 1024);
      SmallVector<Value> a = fenceRegisters(b, loc, out, adaptor.getLhs());
      for (int64_t kk = 0; kk < rhsType.getCols() / op.getKStep(); ++kk) {
        int64_t block = kk / 4, inBlock = (kk % 4) * 32;
        DescriptorStep bStep =
            advance(b, loc, bDesc, block * rowsB * 128 + inBlock, inPtx);
        out = wgmmaAsync(b, loc, element, out, ArrayRef(a).slice(kk * 4, 4), {}, bStep,
                         n, /*transposeB=*/false);
      }
    } else {
      // MN-major: the leading byte offset steps between 64-column blocks of
      // the rhs, the stride byte offset between 8-row groups; a k step is
      // 16 rows. N (the head dim) may end inside a block (N = 96: all of
      // block 0, half of block 1): the instruction reads N columns only.
      int64_t rowsB = rhsType.getRows();
      Value bDesc = descriptor(b, loc, smem, rhsOffset, rowsB * 128, 1024);
      SmallVector<Value> a = fenceRegisters(b, loc, out, adaptor.getLhs());
      for (int64_t kk = 0; kk < rowsB / 16; ++kk) {
        DescriptorStep bStep = advance(b, loc, bDesc, kk * 16 * 128, inPtx);
        out = wgmmaAsync(b, loc, element, out, ArrayRef(a).slice(kk * 4, 4), {}, bStep,
                         n, /*transposeB=*/true);
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    rewriter.replaceOpWithMultiple(op, {out});
    return success();
  }
};

/// wgmma.wait_group with the waited values passed through.
struct WgmmaWait : OpConversionPattern<WgmmaWaitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WgmmaWaitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> all = flatten(adaptor.getValues());
    all = Ptx::through(
        rewriter, op.getLoc(),
        llvm::formatv("wgmma.wait_group.sync.aligned {0};",
                      op.getPendingAttr().getInt())
            .str(),
        all);
    SmallVector<SmallVector<Value>> results;
    size_t at = 0;
    for (ValueRange r : adaptor.getValues()) {
      results.emplace_back(all.begin() + at, all.begin() + at + r.size());
      at += r.size();
    }
    rewriter.replaceOpWithMultiple(op, results);
    return success();
  }
};

/// `body(b, s)` for the set s that `set` (k mod sets; null: one set) holds:
/// an if/else chain whose last set is the final else. Separate ifs would
/// leave LLVM a switch whose default (set >= sets) is unreachable, lowered
/// to `exit` inside the loop: a divergent path that makes ptxas serialise
/// every wgmma (C7518).
static void bySet(OpBuilder &b, Location loc, Value set, int64_t s,
                  int64_t sets, function_ref<void(OpBuilder &, int64_t)> body) {
  if (!set || s + 1 == sets)
    return body(b, s);
  Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, set,
                                     constI32(b, loc, s));
  scf::IfOp::create(
      b, loc, mine,
      [&](OpBuilder &tb, Location tl) {
        body(tb, s);
        scf::YieldOp::create(tb, tl);
      },
      [&](OpBuilder &eb, Location el) {
        bySet(eb, el, set, s + 1, sets, body);
        scf::YieldOp::create(eb, el);
      });
}

/// Warpgroup g waits on named barrier 1 + g - 1, where warpgroup g - 1
/// arrives after its turn; two warpgroups (256 threads) meet at each. A
/// numbered turn k takes the set of barriers k mod rotation, offset by
/// (k mod rotation) · (warpgroups - 1), chosen by branches so that every id
/// stays a constant: ptxas reserves all 16 barriers of a CTA for a bar.sync
/// with an id in a register.
struct WarpgroupTurn : OpConversionPattern<WarpgroupTurnOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WarpgroupTurnOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    int64_t groups = op.getWarpgroupsAttr().getInt();
    Value threads = constI32(b, loc, 128);
    Value warpgroup = arith::DivUIOp::create(b, loc, threadId(b, loc), threads);
    int64_t sets = op.getRotation() ? int64_t(*op.getRotation()) : 1;
    Value set; // k mod rotation
    if (op.getRotation()) {
      ValueRange turn = adaptor.getTurn();
      Value k = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                             turn.front());
      set = arith::RemUIOp::create(b, loc, k, constI32(b, loc, sets));
    }
    auto inWarpgroup = [&](int64_t g, bool arrive, int64_t index) {
      Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         warpgroup, constI32(b, loc, g));
      scf::IfOp::create(b, loc, mine, [&](OpBuilder &nb, Location nl) {
        bySet(nb, nl, set, 0, sets, [&](OpBuilder &sb, int64_t s) {
          int64_t id = kFirstOrderBarrier + s * (groups - 1) + index;
          if (set) {
            // The id in the text: NVVM's barrier ops take it as an operand,
            // which LLVM merges across the set branches into one barrier
            // with the id in a register.
            Ptx::emit(sb, nl, Type(), {},
                      llvm::formatv("bar.{0} {1}, 256;",
                                    arrive ? "arrive" : "sync", id)
                          .str(),
                      "");
            return;
          }
          Value barrier = constI32(sb, nl, id);
          Value count = constI32(sb, nl, 256);
          if (arrive)
            NVVM::BarrierArriveOp::create(sb, nl, barrier, count);
          else
            NVVM::BarrierOp::create(sb, nl, Type(), barrier, count,
                                    NVVM::BarrierReductionAttr(), Value());
        });
        scf::YieldOp::create(nb, nl);
      });
    };
    for (int64_t g = 1; g < groups; ++g)
      inWarpgroup(g, /*arrive=*/false, g - 1);
    Block &body = op.getBody().front();
    auto yield = cast<nv::YieldOp>(body.getTerminator());
    SmallVector<Value> yielded = yield.getValues();
    rewriter.inlineBlockBefore(&body, op);
    for (int64_t g = 0; g + 1 < groups; ++g)
      inWarpgroup(g, /*arrive=*/true, g);
    rewriter.replaceOp(op, yielded);
    rewriter.eraseOp(yield);
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateWgmmaPatterns(TileTypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<Wgmma, WgmmaWait, WarpgroupTurn>(converter,
                                               patterns.getContext());
}
