//===- CallKey.h - What a call asks for, as a fixed-size key --------------===//
//
// The fields of a call that decide its kernel, before the compiler's
// automatic choices: its CacheKey (CacheKey.h) is resolved from this and the
// engine's fixed settings (arch of the context's device, tensor-core
// mapping, compiler version), so the two cannot disagree. A CallKey is
// built and hashed per call without allocating or formatting text: it keys
// the per-thread memo of loaded kernels (HotCache.h); the CacheKey and its
// text are formed only when that misses.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CALLKEY_H
#define ATTN_RUNTIME_CALLKEY_H

#include "CacheKey.h"
#include "attn-jit/attn_jit.h"

#include <cstdint>

namespace attn::rt {

struct CallKey {
  Target target = Target::Cuda;
  /// The CUDA context (cuCtxGetId; modules belong to one); 0 on the host.
  uint64_t context = 0;
  compiler::DType dtype = compiler::DType::BF16;
  compiler::MaskKind mask = compiler::MaskKind::None;
  int64_t headDim = 0;
  /// As the call gives them: 0 is the default, which resolution fills in.
  int64_t blockM = 0, blockN = 0;
  /// See KernelConfig::positiveScale.
  bool positiveScale = true;
  unsigned variants = 0;
  /// The engine's record of the call's user mods (one per text, kept for
  /// the engine's life, so its address names the text); null: none.
  const void *userMods = nullptr;
  bool backward = false;
  /// A packed variable-length batch (attn_forward_varlen).
  bool varlen = false;
  /// The page size of a paged K/V cache (attn_forward_paged); 0: none.
  int64_t pageSize = 0;
  /// K/V read by TMA (KernelConfig::tma): asked for, and this call's K and
  /// V are layouts a tensor map describes (TensorMap.h).
  bool tma = false;
  /// The backward's form (KernelConfig::deterministic); true for the
  /// forward.
  bool deterministic = true;
  /// With tma: a producer warpgroup issues the copies (an engine option,
  /// KernelConfig::warpSpecialize).
  bool warpSpecialize = false;
  /// With warpSpecialize: persistent CTAs over the grid's work tiles (an
  /// engine option, KernelConfig::persistent; the resolved config decides).
  bool persistent = false;
  /// A paged call that decodes (TilePolicy's pagedDecodes): its tiles, when
  /// the call leaves them open, are pagedDecodeTiles.
  bool pagedDecode = false;
  /// With persistent: Q's buffers (KernelConfig::qStages; 0: the tile
  /// policy's choice).
  int64_t qStages = 0;
  /// With persistent: the work tiles are short (KernelConfig::
  /// shortWorkTiles, LengthTiles' choice).
  bool shortWorkTiles = false;
  /// Of every field above; set by make().
  uint64_t hash = 0;

  /// The key of a validated call.
  static CallKey make(Target target, uint64_t context,
                      const attn_fwd_args &args, const void *userMods,
                      bool backward, bool varlen = false, int64_t pageSize = 0,
                      bool tma = false, bool deterministic = true,
                      bool warpSpecialize = false, bool pagedDecode = false,
                      bool persistent = false, int64_t qStages = 0,
                      bool shortWorkTiles = false);

  bool operator==(const CallKey &other) const;
  bool operator!=(const CallKey &other) const { return !(*this == other); }
};

} // namespace attn::rt

#endif // ATTN_RUNTIME_CALLKEY_H
