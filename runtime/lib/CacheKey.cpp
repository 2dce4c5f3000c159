//===- CacheKey.cpp - What identifies a compiled kernel -------------------===//

#include "CacheKey.h"
#include "Checksum.h"

#include <fmt/format.h>

namespace attn::rt {

const char *toString(Target target) {
  return target == Target::Cuda ? "cuda" : "host";
}

std::string CacheKey::str() const {
  // Every KernelConfig field changes the generated code, so every one is in
  // the key: binding them all makes a new field a compile error here until
  // the key names it too. pagedDecode is not: resolved() turns it into
  // explicit tiles and clears it.
  const auto &[headDim, dtype, mask, configArch, blockM, blockN, warps, stages,
               tensorCore, positiveScale, packGqa, variants, userMods, backward,
               varlen, pageSize, split, tma, deterministic, warpSpecialize,
               persistent, qStages, shortWorkTiles, pagedDecode, llvmOptLevel] =
      config;
  (void)pagedDecode;
  // The arch only matters for CUDA: the host kernel targets this machine and
  // is never stored on disk.
  std::string_view arch =
      target == Target::Cuda ? std::string_view(configArch) : "host";
  return fmt::format(
      "attn-jit-kernel;compiler={};target={};arch={};dtype={};"
      "head_dim={};mask={};block_m={};block_n={};warps={};"
      "stages={};tensor_core={};positive_scale={};pack_gqa={};"
      "variants={};backward={};varlen={};page_size={};"
      "split={};tma={};deterministic={};warp_specialize={};"
      "persistent={};q_stages={};short_work_tiles={};llvm_opt_level={};"
      "user_mods={}",
      compilerVersion, toString(target), arch, compiler::toString(dtype),
      headDim, compiler::toString(mask), blockM, blockN, warps, stages,
      tensorCore, positiveScale ? 1 : 0, packGqa ? 1 : 0,
      compiler::variantNames(variants), backward ? 1 : 0, varlen ? 1 : 0,
      pageSize, split ? 1 : 0, tma ? 1 : 0, deterministic ? 1 : 0,
      warpSpecialize ? 1 : 0, persistent ? 1 : 0, qStages,
      shortWorkTiles ? 1 : 0, llvmOptLevel, userMods);
}

uint64_t CacheKey::hash() const { return keyHash(str()); }

std::string CacheKey::hexHash() const { return keyHashHex(str()); }

std::string archForComputeCapability(int major, int minor) {
  if (major < 8)
    return "";
  // Arch-specific features (wgmma, tcgen05) need the "a" variants, which
  // exist for the data-center majors 9.x and 10.x and later.
  if (major >= 9)
    return fmt::format("sm_{}{}a", major, minor);
  return fmt::format("sm_{}{}", major, minor);
}

} // namespace attn::rt
