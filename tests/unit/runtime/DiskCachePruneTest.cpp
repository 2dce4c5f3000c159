//===- DiskCachePruneTest.cpp - The size limit, least recently used out ---===//

#include "Checksum.h"
#include "DiskCache.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

constexpr size_t kPayloadSize = 10000;

std::string keyOf(char name) {
  return std::string("attn-jit-kernel;prune-") + name;
}

/// Makes `path` look last used `secondsAgo` seconds ago.
void setLastUse(const std::string &path, int secondsAgo) {
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= secondsAgo;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

class DiskCachePruneTest : public ::testing::Test {
protected:
  /// A cache that holds two entries of kPayloadSize but not three.
  DiskCache open(uint64_t maxBytes = 0) {
    DiskCacheOptions options;
    options.maxBytes =
        maxBytes ? maxBytes
                 : 2 * encodeEntry(keyOf('a'), payload()).size() + 100;
    Expected<DiskCache> cache = DiskCache::open(dir.path(), options);
    EXPECT_TRUE(cache.ok()) << cache.status().message();
    return std::move(*cache);
  }
  static std::string payload() { return std::string(kPayloadSize, 'p'); }
  bool has(const DiskCache &cache, char name) {
    return cache.load(keyOf(name)).kind == DiskCache::LookupKind::Hit;
  }
  /// Whether the entry file of `name` exists (without touching it).
  bool exists(const DiskCache &cache, char name) {
    return ::access(cache.entryPath(keyOf(name)).c_str(), F_OK) == 0;
  }
  TempDir dir;
};

TEST_F(DiskCachePruneTest, LeastRecentlyUsedGoesFirstAndHitsCount) {
  DiskCache cache = open();
  ASSERT_TRUE(cache.store(keyOf('a'), payload()).ok());
  ASSERT_TRUE(cache.store(keyOf('b'), payload()).ok());
  setLastUse(cache.entryPath(keyOf('a')), 300);
  setLastUse(cache.entryPath(keyOf('b')), 200);
  // a is the older entry, but a hit makes it the most recently used.
  ASSERT_TRUE(has(cache, 'a'));
  ASSERT_TRUE(cache.store(keyOf('c'), payload()).ok());
  EXPECT_FALSE(exists(cache, 'b'));
  EXPECT_TRUE(exists(cache, 'a'));
  EXPECT_TRUE(exists(cache, 'c'));
  EXPECT_TRUE(has(cache, 'a'));
  EXPECT_TRUE(has(cache, 'c'));
}

TEST_F(DiskCachePruneTest, UnderTheLimitNothingIsRemoved) {
  DiskCache cache = open();
  ASSERT_TRUE(cache.store(keyOf('a'), payload()).ok());
  setLastUse(cache.entryPath(keyOf('a')), 10 * 365 * 24 * 3600);
  ASSERT_TRUE(cache.store(keyOf('b'), payload()).ok());
  EXPECT_TRUE(has(cache, 'a')); // however old: no expiry, only size
  EXPECT_TRUE(has(cache, 'b'));
}

TEST_F(DiskCachePruneTest, OnlyEntriesArePruned) {
  DiskCache cache = open(/*maxBytes=*/1);
  std::string hash = keyHashHex(keyOf('x'));
  // A writer's temporary file, a claim that is held and one that is not,
  // files the user keeps there, a file named almost like an entry, an
  // entry-named directory: all older and larger than the limit.
  std::vector<std::string> others = {hash + ".tmp.Ab12Cd",
                                     hash + ".lock",
                                     keyHashHex(keyOf('y')) + ".lock",
                                     "notes.txt",
                                     "llvmcache.timestamp",
                                     hash + ".kernel.bak",
                                     "0123456789ABCDEF.kernel",
                                     "0123456789abcde.kernel"};
  for (const std::string &name : others) {
    writeFile(dir.path() + "/" + name, std::string(kPayloadSize, 'o'));
    // Older than the entries; the temporary file younger than a dead
    // writer's (those are removed, see DeadWritersTemporaryFilesAreRemoved).
    setLastUse(dir.path() + "/" + name,
               name.find(".tmp.") != std::string::npos ? 60 : 1000);
  }
  std::string entryDir = dir.path() + "/" + keyHashHex(keyOf('z')) + ".kernel";
  ASSERT_EQ(::mkdir(entryDir.c_str(), 0700), 0);
  DiskCache::Build held =
      cache.beginBuild(keyOf('y'), std::chrono::milliseconds(0));
  ASSERT_TRUE(held.claimed());

  ASSERT_TRUE(cache.store(keyOf('a'), payload()).ok());
  setLastUse(cache.entryPath(keyOf('a')), 30);
  ASSERT_TRUE(cache.store(keyOf('b'), payload()).ok());
  EXPECT_FALSE(exists(cache, 'a'));
  // The entry just written stays, even over the limit.
  EXPECT_TRUE(has(cache, 'b'));
  for (const std::string &name : others)
    EXPECT_EQ(::access((dir.path() + "/" + name).c_str(), F_OK), 0) << name;
  EXPECT_EQ(::access(entryDir.c_str(), F_OK), 0);
  // The held claim still works: its owner commits and releases it.
  ASSERT_TRUE(held.commit(payload()).ok());
  EXPECT_TRUE(has(cache, 'y'));
}

TEST_F(DiskCachePruneTest, ZeroMeansNoLimit) {
  DiskCacheOptions options;
  options.maxBytes = 0;
  Expected<DiskCache> cache = DiskCache::open(dir.path(), options);
  ASSERT_TRUE(cache.ok());
  for (char name = 'a'; name <= 'h'; ++name)
    ASSERT_TRUE(cache->store(keyOf(name), payload()).ok());
  for (char name = 'a'; name <= 'h'; ++name)
    EXPECT_TRUE(has(*cache, name)) << name;
}

TEST_F(DiskCachePruneTest, HitMarksTheEntryUsedNow) {
  DiskCache cache = open();
  ASSERT_TRUE(cache.store(keyOf('a'), payload()).ok());
  std::string path = cache.entryPath(keyOf('a'));
  setLastUse(path, 3600);
  ASSERT_TRUE(has(cache, 'a'));
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_GT(info.st_mtime, ::time(nullptr) - 60);
}

} // namespace
