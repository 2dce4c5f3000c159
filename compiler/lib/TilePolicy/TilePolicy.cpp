//===- TilePolicy.cpp - Default tiles and mapping choice, MLIR-free -------===//

#include "attn/Compiler/TilePolicy.h"
#include "attn/Compiler/Compiler.h"

namespace attn::compiler {

bool isTensorCoreName(std::string_view name) {
  return name == "auto" || name == "mma.sync" || name == "wgmma";
}

bool tilesForWgmma(std::string_view tensorCore, std::string_view chip) {
  return tensorCore == "wgmma" || (tensorCore == "auto" && chip == "sm_90a");
}

int64_t defaultWarps(bool wgmma, int64_t blockM) {
  return wgmma ? blockM / 16 : 4;
}

std::pair<int64_t, int64_t> defaultTileSizes(int64_t headDim, bool wgmma) {
  // wgmma (sm_90a): two warpgroups of 64 rows, one CTA per SM. S takes
  // block-n / 2 registers a thread and O head-dim / 2: 128 keys fit at
  // D = 128, 64 at D = 256. At D = 64, 64 keys measured best on an H200
  // (docs/BENCHMARKS.md). Head dims that are not a multiple of 64 stay on
  // mma.sync.
  if (wgmma && headDim % 64 == 0)
    return {128, headDim == 128 ? 128 : 64};
  // On the NVIDIA mapping (4 warps) block-m = 128 gives each warp two 16-row
  // m tiles, so every K/V fragment read from shared memory feeds two mma:
  // with one m tile per warp, shared-memory bandwidth limits the tensor
  // cores. Where that does not fit in 255 registers without spilling
  // (ptxas -v, with and without a mask), fewer rows or keys.
  // Measured on an H200: docs/BENCHMARKS.md.
  if (headDim <= 64)
    return {128, 64};
  if (headDim <= 96)
    return {64, 64};
  if (headDim <= 128)
    return {128, 32};
  return {64, 32};
}

std::string wgmmaUnsupportedReason(std::string_view chip, int64_t headDim,
                                   int64_t blockM, int64_t blockN,
                                   int64_t warps) {
  // One warpgroup per 64 rows, each warp one 16-row slice; tiles in
  // 64-column swizzle blocks; at most 256 columns per instruction.
  if (chip != "sm_90a")
    return "needs sm_90a, got " + std::string(chip);
  if (headDim % 64 != 0)
    return "needs a head dim that is a multiple of 64";
  if (blockM % 64 != 0 || blockM > 256)
    return "needs block-m a multiple of 64 up to 256";
  if (blockN > 256)
    return "needs block-n up to 256";
  if (warps != 0 && warps != blockM / 16)
    return "needs warps = block-m / 16";
  return "";
}

KernelConfig KernelConfig::resolved(bool nvidia) const {
  KernelConfig r = *this;
  // attn-to-ptx: default tiles for the mapping auto would pick; then the
  // mapping the conversion picks for those tiles (buildAttnToNVVMPipeline,
  // convert-attn-to-nvvm).
  auto [defM, defN] =
      defaultTileSizes(headDim, nvidia && tilesForWgmma(tensorCore, arch));
  if (r.blockM == 0)
    r.blockM = defM;
  if (r.blockN == 0)
    r.blockN = defN;
  if (!nvidia) {
    r.warps = 0;
    r.tensorCore = "auto";
    return r;
  }
  // Any other name (mma.sync, wgmma, or one the compiler rejects) is kept.
  if (tensorCore == "auto") {
    bool fits =
        wgmmaUnsupportedReason(arch, headDim, r.blockM, r.blockN, warps)
            .empty();
    r.tensorCore = fits ? "wgmma" : "mma.sync";
  }
  if (r.warps == 0 && (r.tensorCore == "wgmma" || r.tensorCore == "mma.sync"))
    r.warps = defaultWarps(r.tensorCore == "wgmma", r.blockM);
  return r;
}

} // namespace attn::compiler
