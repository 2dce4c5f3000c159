//===- ChecksumTest.cpp - The hashes that name and check entries ----------===//

#include "Checksum.h"
#include "CacheKey.h"
#include "DiskCache.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <llvm/Support/xxhash.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

constexpr std::string_view kKey = "attn-jit-kernel;checksum-test";

TEST(ChecksumTest, EntriesAreNamedByXxh3Of64BitsOfTheKey) {
  uint64_t expected = llvm::xxh3_64bits(llvm::StringRef(kKey));
  EXPECT_EQ(keyHash(kKey), expected);
  EXPECT_EQ(keyHashHex(kKey), fmt::format("{:016x}", expected));
  TempDir dir;
  Expected<DiskCache> cache = DiskCache::open(dir.path());
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  EXPECT_EQ(cache->entryPath(kKey),
            dir.path() + "/" + keyHashHex(kKey) + ".kernel");
  // The key's own hash is the same one (one definition).
  CacheKey key;
  key.compilerVersion = "v";
  key.config.headDim = 64;
  EXPECT_EQ(key.hash(), keyHash(key.str()));
  EXPECT_EQ(key.hexHash(), keyHashHex(key.str()));
}

TEST(ChecksumTest, EntriesEndWithXxh3Of128BitsOfTheRest) {
  std::string file = encodeEntry(kKey, "payload bytes");
  ASSERT_GT(file.size(), 16u);
  std::string_view body(file.data(), file.size() - 16);
  llvm::XXH128_hash_t expected = llvm::xxh3_128bits(llvm::ArrayRef(
      reinterpret_cast<const uint8_t *>(body.data()), body.size()));
  auto le64 = [&](size_t at) {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i)
      value |= uint64_t(static_cast<unsigned char>(file[at + i])) << (8 * i);
    return value;
  };
  EXPECT_EQ(le64(body.size()), expected.low64);
  EXPECT_EQ(le64(body.size() + 8), expected.high64);
  Checksum128 checksum = entryChecksum(body);
  EXPECT_EQ(checksum.low, expected.low64);
  EXPECT_EQ(checksum.high, expected.high64);
}

} // namespace
