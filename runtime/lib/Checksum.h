//===- Checksum.h - The hashes that name and check disk cache entries -----===//
//
// Both are LLVM's XXH3: the 64-bit one names a key's entry file, the 128-bit
// one checks an entry's bytes. Neither is cryptographic, and need not be:
// the cache directory is refused unless only its owner can write it
// (DiskCache::open), and a checksum without a secret could not stop someone
// who can write it anyway. They protect against accidents (a torn or
// flipped disk block, a truncated copy), for which XXH3-128 misses one
// corruption in 2^128.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CHECKSUM_H
#define ATTN_RUNTIME_CHECKSUM_H

#include <cstdint>
#include <string>
#include <string_view>

namespace attn::rt {

/// XXH3-64 of a cache key's text.
uint64_t keyHash(std::string_view key);
/// keyHash as 16 lowercase hex digits: the stem of the key's entry file.
std::string keyHashHex(std::string_view key);

/// XXH3-128 of an entry's bytes.
struct Checksum128 {
  uint64_t low = 0, high = 0;
  bool operator==(const Checksum128 &other) const {
    return low == other.low && high == other.high;
  }
  bool operator!=(const Checksum128 &other) const { return !(*this == other); }
};
Checksum128 entryChecksum(std::string_view data);

} // namespace attn::rt

#endif // ATTN_RUNTIME_CHECKSUM_H
