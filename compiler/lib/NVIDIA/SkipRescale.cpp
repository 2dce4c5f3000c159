//===- SkipRescale.cpp - rescale the accumulator only when needed ---------===//

#include "attn/NVIDIA/Passes.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVSKIPRESCALE
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// A map computing acc[i, j] · f[i]: two inputs, an accumulator tile and a
/// row tile, and a body that is their product.
bool isRowScaling(MapOp map) {
  if (map.getInputs().size() != 2 || map.getRank() != 2)
    return false;
  auto acc = cast<RankedTensorType>(map.getInputs()[0].getType());
  auto rows = cast<RankedTensorType>(map.getInputs()[1].getType());
  if (acc.getRank() != 2 || rows.getRank() != 1)
    return false;
  Block &body = map.getBodyBlock();
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  return mul && map.getYielded() == mul.getResult() &&
         ((mul.getLhs() == map.getInputArg(0) &&
           mul.getRhs() == map.getInputArg(1)) ||
          (mul.getLhs() == map.getInputArg(1) &&
           mul.getRhs() == map.getInputArg(0)));
}

struct AttnNVSkipRescalePass
    : mlir::attn::nv::impl::AttnNVSkipRescaleBase<AttnNVSkipRescalePass> {
  void runOnOperation() override {
    SmallVector<MapOp> maps;
    getOperation()->walk([&](MmaOp mma) {
      ConfigAttr config = ConfigAttr::lookup(mma);
      auto map = mma.getAcc().getDefiningOp<MapOp>();
      if (config && config.getConditionalRescale() && map &&
          map->hasOneUse() && isRowScaling(map))
        maps.push_back(map);
    });
    for (MapOp map : maps) {
      OpBuilder b(map);
      Location loc = map.getLoc();
      Value acc = map.getInputs()[0], factors = map.getInputs()[1];
      auto rows = cast<RankedTensorType>(factors.getType());
      auto flags = RankedTensorType::get(rows.getShape(), b.getI1Type(),
                                         rows.getEncoding());
      // x · 1 = x exactly: skip the multiplies when no factor of the warp's
      // rows differs from 1.
      Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
      Value moved = MapOp::create(
          b, loc, flags, factors, ValueRange{},
          [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
            return arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNE,
                                         e[0], one)
                .getResult();
          });
      Value any = WarpAnyOp::create(b, loc, b.getI1Type(), moved);
      auto ifOp = scf::IfOp::create(b, loc, map.getType(), any,
                                    /*withElseRegion=*/true);
      map->replaceAllUsesWith(ifOp.getResults());
      map->moveBefore(ifOp.thenBlock(), ifOp.thenBlock()->end());
      OpBuilder tb = OpBuilder::atBlockEnd(ifOp.thenBlock());
      scf::YieldOp::create(tb, loc, map.getResult());
      OpBuilder eb = OpBuilder::atBlockEnd(ifOp.elseBlock());
      scf::YieldOp::create(eb, loc, acc);
    }
  }
};

} // namespace
