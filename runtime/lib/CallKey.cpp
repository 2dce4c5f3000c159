//===- CallKey.cpp - What a call asks for, as a fixed-size key ------------===//

#include "CallKey.h"
#include "Validate.h"

#include "llvm/ADT/Hashing.h"

namespace attn::rt {

namespace {

/// Every field, in one place: the hash and the comparison both use it, so a
/// field added to the struct and left out here is a compile error below.
auto fieldsOf(const CallKey &key) {
  const auto &[target, context, dtype, mask, headDim, blockM, blockN,
               positiveScale, variants, userMods, backward, varlen, pageSize,
               tma, deterministic, warpSpecialize, persistent, pagedDecode,
               qStages, shortWorkTiles, hash] = key;
  (void)hash;
  return std::make_tuple(target, context, dtype, mask, headDim, blockM, blockN,
                         positiveScale, variants, userMods, backward, varlen,
                         pageSize, tma, deterministic, warpSpecialize,
                         persistent, pagedDecode, qStages, shortWorkTiles);
}

} // namespace

CallKey CallKey::make(Target target, uint64_t context,
                      const attn_fwd_args &args, const void *userMods,
                      bool backward, bool varlen, int64_t pageSize, bool tma,
                      bool deterministic, bool warpSpecialize, bool pagedDecode,
                      bool persistent, int64_t qStages, bool shortWorkTiles) {
  CallKey key;
  key.target = target;
  key.context = context;
  key.dtype = toCompilerDType(args.dtype);
  key.mask = toCompilerMask(args.mask);
  key.headDim = args.head_dim;
  key.blockM = args.block_m;
  key.blockN = args.block_n;
  // A positive scale lets the kernel take the row max before scaling; any
  // other finite scale (negative) needs the general kernel.
  key.positiveScale = effectiveScale(args) > 0;
  key.variants = args.variant.flags;
  key.userMods = userMods;
  key.backward = backward;
  key.varlen = varlen;
  key.pageSize = pageSize;
  key.tma = tma;
  key.deterministic = !backward || deterministic;
  key.warpSpecialize = warpSpecialize;
  key.persistent = persistent;
  key.pagedDecode = pagedDecode;
  key.qStages = qStages;
  key.shortWorkTiles = shortWorkTiles;
  key.hash = std::apply(
      [](const auto &...field) {
        return static_cast<uint64_t>(llvm::hash_combine(field...));
      },
      fieldsOf(key));
  return key;
}

bool CallKey::operator==(const CallKey &other) const {
  return hash == other.hash && fieldsOf(*this) == fieldsOf(other);
}

} // namespace attn::rt
