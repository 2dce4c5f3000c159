//===- CacheKey.h - What identifies a compiled kernel ---------------------===//

#ifndef ATTN_RUNTIME_CACHEKEY_H
#define ATTN_RUNTIME_CACHEKEY_H

#include "attn/Compiler/Compiler.h"

#include <cstdint>
#include <string>

namespace attn::rt {

enum class Target { Cuda, Host };

/// Everything that changes the generated code: the target and its arch, the
/// kernel configuration (dtype, head dim, mask, tiles, stages, whether the
/// scale is positive) and the compiler's own version. Batch, heads and sequence lengths are launch arguments and are
/// deliberately absent, so that no sequence length ever causes a recompile.
struct CacheKey {
  Target target = Target::Cuda;
  compiler::KernelConfig config; // config.arch is the GPU arch (CUDA only)
  std::string compilerVersion;

  /// The canonical text of the key, e.g.
  /// "attn-jit-kernel;compiler=<v>;target=cuda;arch=sm_90a;dtype=bf16;
  ///  head_dim=128;mask=causal;block_m=128;block_n=128;warps=8;stages=0;
  ///  tensor_core=wgmma;positive_scale=1". The engine keys on
  /// KernelConfig::resolved(), so explicit defaults and automatic choices
  /// meet in one key.
  /// Two keys are equal exactly when their texts are.
  std::string str() const;
  /// XXH3-64 of str() (Checksum.h).
  uint64_t hash() const;
  /// 16 lowercase hex digits of hash(): the disk cache file name stem.
  std::string hexHash() const;

  bool operator==(const CacheKey &other) const { return str() == other.str(); }
  bool operator!=(const CacheKey &other) const { return !(*this == other); }
};

const char *toString(Target target);

/// The architecture name the compiler expects for a compute capability:
/// 9.0 -> "sm_90a", 8.6 -> "sm_86", 10.0 -> "sm_100a", 12.0 -> "sm_120a".
/// Returns "" below 8.0 (mma.sync on bf16 needs sm_80).
std::string archForComputeCapability(int major, int minor);

} // namespace attn::rt

#endif // ATTN_RUNTIME_CACHEKEY_H
