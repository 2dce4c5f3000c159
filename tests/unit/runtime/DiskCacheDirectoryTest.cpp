//===- DiskCacheDirectoryTest.cpp - Whose cache directory is usable -------===//
//
// An entry is code that runs on the GPU: a directory that another user owns
// or that others may write is refused. CI runs as root, which may write
// anything: the mode checks hold for root too, and the owner check uses
// chown where it can (root) and an injected owner otherwise.
//
//===----------------------------------------------------------------------===//

#include "DiskCache.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

mode_t modeOf(const std::string &path) {
  struct stat info;
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

/// Sets the umask for a scope.
class ScopedUmask {
public:
  explicit ScopedUmask(mode_t mask) : saved_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(saved_); }

private:
  mode_t saved_;
};

TEST(DiskCacheDirectoryTest, CreatedDirectoriesAreOwnerOnly) {
  ScopedUmask noMask(0); // the mode comes from the code, not the umask
  TempDir dir;
  Expected<DiskCache> cache = DiskCache::open(dir.path() + "/a/attn-jit");
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  EXPECT_EQ(modeOf(dir.path() + "/a"), 0700u);
  EXPECT_EQ(modeOf(dir.path() + "/a/attn-jit"), 0700u);
}

TEST(DiskCacheDirectoryTest, WritableByOthersIsRefused) {
  TempDir dir;
  struct Case {
    mode_t mode;
    const char *who;
  };
  for (Case c : {Case{0777, "its group and others"}, Case{0770, "its group"},
                 Case{0703, "others"}, Case{01777, "its group and others"}}) {
    ASSERT_EQ(::chmod(dir.path().c_str(), c.mode), 0);
    Expected<DiskCache> cache = DiskCache::open(dir.path());
    ASSERT_FALSE(cache.ok()) << std::oct << c.mode;
    EXPECT_NE(cache.status().message().find(std::string("writable by ") +
                                            c.who + " (mode"),
              std::string::npos)
        << cache.status().message();
  }
  // Readable by others is fine: nobody else can change an entry.
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  EXPECT_TRUE(DiskCache::open(dir.path()).ok());
}

TEST(DiskCacheDirectoryTest, ExistingDirectoryIsNotRelaxedOrFixed) {
  // A refused directory is left as it is: it is the user's to fix.
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  EXPECT_FALSE(DiskCache::open(dir.path() + "/").ok());
  EXPECT_EQ(modeOf(dir.path()), 0777u);
}

TEST(DiskCacheDirectoryTest, AnotherUsersDirectoryIsRefused) {
  TempDir dir;
  DiskCacheOptions options;
  options.owner = ::geteuid() + 1;
  Expected<DiskCache> cache = DiskCache::open(dir.path(), options);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find(
                "belongs to uid " + std::to_string(::geteuid()) +
                ", not to this user (uid " + std::to_string(::geteuid() + 1)),
            std::string::npos)
      << cache.status().message();
}

TEST(DiskCacheDirectoryTest, ChownedToAnotherUserIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "only root can give a directory away (see "
                    "AnotherUsersDirectoryIsRefused)";
  TempDir dir;
  std::string cacheDir = dir.path() + "/cache";
  ASSERT_EQ(::mkdir(cacheDir.c_str(), 0700), 0);
  ASSERT_EQ(::chown(cacheDir.c_str(), 65534, 65534), 0);
  Expected<DiskCache> cache = DiskCache::open(cacheDir);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("belongs to uid 65534"),
            std::string::npos)
      << cache.status().message();
}

TEST(DiskCacheDirectoryTest, SymlinkIsJudgedByItsTarget) {
  TempDir dir;
  std::string target = dir.path() + "/shared";
  std::string link = dir.path() + "/cache";
  ASSERT_EQ(::mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(DiskCache::open(link).ok());
  ASSERT_EQ(::chmod(target.c_str(), 0777), 0);
  EXPECT_FALSE(DiskCache::open(link).ok());
}

} // namespace
