//===- CacheKey.cpp - What identifies a compiled kernel -------------------===//

#include "CacheKey.h"
#include "Checksum.h"

#include <fmt/format.h>

namespace attn::rt {

// A new KernelConfig field changes the generated code, so it must also be
// part of str(): update str() and this size together.
static_assert(sizeof(compiler::KernelConfig) ==
                  sizeof(int64_t) * 5 + sizeof(compiler::DType) +
                      sizeof(compiler::MaskKind) + 2 * sizeof(std::string) +
                      sizeof(int64_t) /* positiveScale, padded */,
              "KernelConfig changed: add the new field to CacheKey::str()");

const char *toString(Target target) {
  return target == Target::Cuda ? "cuda" : "host";
}

std::string CacheKey::str() const {
  // The arch only matters for CUDA: the host kernel targets this machine and
  // is never stored on disk.
  std::string_view arch =
      target == Target::Cuda ? std::string_view(config.arch) : "host";
  return fmt::format("attn-jit-kernel;compiler={};target={};arch={};dtype={};"
                     "head_dim={};mask={};block_m={};block_n={};warps={};"
                     "stages={};tensor_core={};positive_scale={}",
                     compilerVersion, toString(target), arch,
                     compiler::toString(config.dtype), config.headDim,
                     compiler::toString(config.mask), config.blockM,
                     config.blockN, config.warps, config.stages,
                     config.tensorCore, config.positiveScale ? 1 : 0);
}

uint64_t CacheKey::hash() const { return fnv1a64(str()); }

std::string CacheKey::hexHash() const { return fmt::format("{:016x}", hash()); }

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
