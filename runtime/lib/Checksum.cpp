//===- Checksum.cpp - The hashes that name and check disk cache entries ---===//

#include "Checksum.h"

#include <fmt/format.h>
#include <llvm/Support/xxhash.h>

namespace attn::rt {

namespace {
llvm::ArrayRef<uint8_t> bytesOf(std::string_view data) {
  return llvm::ArrayRef(reinterpret_cast<const uint8_t *>(data.data()),
                        data.size());
}
} // namespace

uint64_t keyHash(std::string_view key) {
  return llvm::xxh3_64bits(bytesOf(key));
}

std::string keyHashHex(std::string_view key) {
  return fmt::format("{:016x}", keyHash(key));
}

Checksum128 entryChecksum(std::string_view data) {
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(bytesOf(data));
  return {hash.low64, hash.high64};
}

} // namespace attn::rt
