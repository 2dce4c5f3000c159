//===- Checksum.h - FNV-1a 64-bit hash ------------------------------------===//
//
// Used for cache file names (hash of the key) and for the checksum that
// detects corrupt disk cache entries. Not a cryptographic hash: entries are
// protected against accidents, not against someone who can write the cache.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CHECKSUM_H
#define ATTN_RUNTIME_CHECKSUM_H

#include <cstdint>
#include <string_view>

namespace attn::rt {

inline constexpr uint64_t kFnv64Offset = 0xcbf29ce484222325ull;

/// FNV-1a 64 of `data`, continuing from `state` (so that a checksum can be
/// computed over several pieces).
inline uint64_t fnv1a64(std::string_view data, uint64_t state = kFnv64Offset) {
  for (unsigned char byte : data) {
    state ^= byte;
    state *= 0x100000001b3ull;
  }
  return state;
}

} // namespace attn::rt

#endif // ATTN_RUNTIME_CHECKSUM_H
