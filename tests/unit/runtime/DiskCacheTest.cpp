//===- DiskCacheTest.cpp - Entry format, validation and settings ----------===//

#include "ByteIO.h"
#include "DiskCache.h"
#include "KernelBlob.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <unistd.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

constexpr const char *kKey = "attn-jit-kernel;test-key-a";
constexpr const char *kOtherKey = "attn-jit-kernel;test-key-b";

DiskCache openCache(const TempDir &dir) {
  Expected<DiskCache> cache = DiskCache::open(dir.path());
  EXPECT_TRUE(cache.ok()) << cache.status().message();
  return std::move(*cache);
}

std::string payloadOf(size_t size) {
  std::string payload(size, '\0');
  for (size_t i = 0; i < size; ++i)
    payload[i] = static_cast<char>(i * 131 + 7);
  return payload;
}

TEST(DiskCacheTest, RoundTrip) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  EXPECT_EQ(cache.load(kKey).kind, DiskCache::LookupKind::Miss);
  std::string payload = payloadOf(100000);
  ASSERT_TRUE(cache.store(kKey, payload).ok());
  DiskCache::Lookup lookup = cache.load(kKey);
  ASSERT_EQ(lookup.kind, DiskCache::LookupKind::Hit) << lookup.reason;
  EXPECT_EQ(lookup.payload, payload);
  // One entry, named by the hash of the key; no temporary file left.
  std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(dir.path() + "/" + files[0], cache.entryPath(kKey));
  EXPECT_EQ(files[0].size(), 16u + std::string(".kernel").size());
}

// A FIFO at an entry's path (or at its lock's) must not hang the call: it
// is rejected as not a regular file, and the build goes on unclaimed.
TEST(DiskCacheTest, FifoAtTheEntryPathIsRejectedWithoutBlocking) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  std::string path = cache.entryPath(kKey);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  DiskCache::Lookup lookup = cache.load(kKey);
  EXPECT_EQ(lookup.kind, DiskCache::LookupKind::Rejected);
  EXPECT_NE(lookup.reason.find("regular file"), std::string::npos) << lookup.reason;
  std::string lock = path.substr(0, path.size() - std::string(".kernel").size()) + ".lock";
  ASSERT_EQ(::mkfifo(lock.c_str(), 0600), 0);
  DiskCache::Build build = cache.beginBuild(kKey, std::chrono::milliseconds(50));
  EXPECT_FALSE(build.waitedForOtherBuilder());
  build.abandon();
}

// A file-size limit (ulimit -f) below the entry's size: the store fails
// with a reason instead of SIGXFSZ ending the process, and leaves no
// temporary file. In a child process, whose limit it lowers.
TEST(DiskCacheTest, FileSizeLimitIsAFailedStoreNotASignal) {
  TempDir dir;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DiskCache cache = openCache(dir);
    struct rlimit limit = {4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      ::_exit(3);
    Status stored = cache.store(kKey, payloadOf(100000));
    bool reason = stored.message().find("file-size limit") != std::string::npos;
    ::_exit(!stored.ok() && reason ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (const std::string &file : dir.files())
    EXPECT_EQ(file.find(".tmp"), std::string::npos) << file;
}

TEST(DiskCacheTest, OverwriteReplacesTheEntry) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_TRUE(cache.store(kKey, "first").ok());
  ASSERT_TRUE(cache.store(kKey, "second").ok());
  EXPECT_EQ(cache.load(kKey).payload, "second");
  EXPECT_EQ(dir.files().size(), 1u);
}

TEST(DiskCacheTest, EmptyPayload) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_TRUE(cache.store(kKey, "").ok());
  DiskCache::Lookup lookup = cache.load(kKey);
  EXPECT_EQ(lookup.kind, DiskCache::LookupKind::Hit);
  EXPECT_EQ(lookup.payload, "");
}

TEST(DiskCacheTest, EveryFlippedByteIsRejected) {
  std::string file = encodeEntry(kKey, payloadOf(300));
  std::string payload, reason;
  ASSERT_EQ(decodeEntry(file, kKey, payload, reason), EntryCheck::Valid)
      << reason;
  for (size_t i = 0; i < file.size(); ++i) {
    std::string corrupt = file;
    corrupt[i] ^= 0x10;
    EXPECT_NE(decodeEntry(corrupt, kKey, payload, reason), EntryCheck::Valid)
        << "flipped byte " << i;
  }
}

TEST(DiskCacheTest, CorruptFileIsRejectedWithAReason) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_TRUE(cache.store(kKey, payloadOf(5000)).ok());
  std::string path = cache.entryPath(kKey);
  std::string file = readFile(path);
  file[file.size() / 2] ^= 0x01; // inside the payload
  writeFile(path, file);
  DiskCache::Lookup lookup = cache.load(kKey);
  EXPECT_EQ(lookup.kind, DiskCache::LookupKind::Rejected);
  EXPECT_NE(lookup.reason.find("checksum mismatch"), std::string::npos)
      << lookup.reason;
}

TEST(DiskCacheTest, TruncatedFileIsRejected) {
  std::string file = encodeEntry(kKey, payloadOf(1000));
  for (size_t size : {size_t(0), size_t(5), size_t(27), size_t(40),
                      file.size() / 2, file.size() - 8, file.size() - 1}) {
    std::string payload, reason;
    EXPECT_EQ(decodeEntry(file.substr(0, size), kKey, payload, reason),
              EntryCheck::Invalid)
        << size;
    EXPECT_NE(reason.find("truncated"), std::string::npos)
        << size << ": " << reason;
  }
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_TRUE(cache.store(kKey, payloadOf(1000)).ok());
  std::string path = cache.entryPath(kKey);
  ASSERT_EQ(::truncate(path.c_str(), 500), 0);
  EXPECT_EQ(cache.load(kKey).kind, DiskCache::LookupKind::Rejected);
}

TEST(DiskCacheTest, TrailingBytesAreRejected) {
  std::string file = encodeEntry(kKey, "payload") + "x";
  std::string payload, reason;
  EXPECT_EQ(decodeEntry(file, kKey, payload, reason), EntryCheck::Invalid);
  EXPECT_NE(reason.find("longer"), std::string::npos) << reason;
}

TEST(DiskCacheTest, ForeignEntryIsRejected) {
  // An intact entry of another key found under this key's name (a hash
  // collision, or a file copied by hand).
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_TRUE(cache.store(kOtherKey, "other payload").ok());
  ASSERT_EQ(::rename(cache.entryPath(kOtherKey).c_str(),
                     cache.entryPath(kKey).c_str()),
            0);
  DiskCache::Lookup lookup = cache.load(kKey);
  EXPECT_EQ(lookup.kind, DiskCache::LookupKind::Rejected);
  EXPECT_NE(lookup.reason.find("built for another key"), std::string::npos)
      << lookup.reason;
  EXPECT_NE(lookup.reason.find(kOtherKey), std::string::npos) << lookup.reason;
}

TEST(DiskCacheTest, OtherFormatsAreNotUsed) {
  std::string payload, reason;
  std::string file = encodeEntry(kKey, "p");
  std::string badMagic = file;
  badMagic[0] = 'X';
  EXPECT_EQ(decodeEntry(badMagic, kKey, payload, reason), EntryCheck::Invalid);
  EXPECT_NE(reason.find("magic"), std::string::npos) << reason;
  std::string newer = file;
  newer[8] = static_cast<char>(kEntryFormatVersion + 1);
  EXPECT_EQ(decodeEntry(newer, kKey, payload, reason),
            EntryCheck::OtherFormat);
  EXPECT_NE(reason.find("format version"), std::string::npos) << reason;
  // A huge length in the header must not be trusted.
  std::string huge = file;
  for (int i = 12; i < 20; ++i)
    huge[i] = '\xff';
  EXPECT_EQ(decodeEntry(huge, kKey, payload, reason), EntryCheck::Invalid);
}

// An entry an older attn-jit wrote (format 1: FNV-1a 64 checksum) is a miss,
// not a rejected (damaged) entry, and the next store replaces it.
TEST(DiskCacheTest, OlderFormatVersionIsAMissAndIsReplaced) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  ByteWriter old;
  old.bytes(std::string_view(kEntryMagic, sizeof kEntryMagic));
  old.u32(1);
  old.u64(std::string_view(kKey).size());
  old.u64(7);
  old.bytes(kKey);
  old.bytes("payload");
  old.u64(0x0123456789abcdefull);
  writeFile(cache.entryPath(kKey), old.take());
  DiskCache::Lookup lookup = cache.load(kKey);
  EXPECT_EQ(lookup.kind, DiskCache::LookupKind::Miss);
  EXPECT_NE(lookup.reason.find("format version 1 (this build reads 2)"),
            std::string::npos)
      << lookup.reason;
  ASSERT_TRUE(cache.store(kKey, "new payload").ok());
  lookup = cache.load(kKey);
  ASSERT_EQ(lookup.kind, DiskCache::LookupKind::Hit) << lookup.reason;
  EXPECT_EQ(lookup.payload, "new payload");
}

TEST(DiskCacheTest, OpenCreatesMissingDirectories) {
  TempDir dir;
  std::string nested = dir.path() + "/a/b/attn-jit/";
  Expected<DiskCache> cache = DiskCache::open(nested);
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  EXPECT_EQ(cache->directory(), dir.path() + "/a/b/attn-jit");
  EXPECT_TRUE(cache->store(kKey, "p").ok());
}

TEST(DiskCacheTest, UncreatableDirectoryFailsToOpen) {
  TempDir dir;
  writeFile(dir.path() + "/file", "not a directory");
  Expected<DiskCache> cache = DiskCache::open(dir.path() + "/file/cache");
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("cannot create"), std::string::npos)
      << cache.status().message();
  Expected<DiskCache> file = DiskCache::open(dir.path() + "/file");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("not a directory"), std::string::npos);
}

TEST(DiskCacheTest, VanishedDirectoryIsAMissAndAFailedStore) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_EQ(::rmdir(dir.path().c_str()), 0);
  EXPECT_EQ(cache.load(kKey).kind, DiskCache::LookupKind::Miss);
  Status stored = cache.store(kKey, "p");
  EXPECT_FALSE(stored.ok());
  EXPECT_NE(stored.message().find("cannot create a temporary file"),
            std::string::npos)
      << stored.message();
  ASSERT_EQ(::mkdir(dir.path().c_str(), 0700), 0);
}

TEST(DiskCacheTest, UnreadableEntryIsAMissWithAReason) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root reads files whatever their mode";
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_TRUE(cache.store(kKey, "p").ok());
  ASSERT_EQ(::chmod(cache.entryPath(kKey).c_str(), 0), 0);
  DiskCache::Lookup lookup = cache.load(kKey);
  EXPECT_EQ(lookup.kind, DiskCache::LookupKind::Miss);
  EXPECT_NE(lookup.reason.find("cannot open"), std::string::npos);
}

TEST(DiskCacheTest, DirectoryInPlaceOfAnEntryIsRejected) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  ASSERT_EQ(::mkdir(cache.entryPath(kKey).c_str(), 0700), 0);
  EXPECT_EQ(cache.load(kKey).kind, DiskCache::LookupKind::Rejected);
  // A writer cannot replace it either, and says so.
  EXPECT_FALSE(cache.store(kKey, "p").ok());
}

TEST(DiskCacheTest, AbandonedBuildLeavesNothing) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  {
    DiskCache::Build build =
        cache.beginBuild(kKey, std::chrono::milliseconds(0));
    EXPECT_FALSE(build.waitedForOtherBuilder());
    EXPECT_TRUE(build.claimed());
    EXPECT_EQ(dir.files().size(), 1u); // the claim file
  }
  EXPECT_TRUE(dir.files().empty());
}

TEST(DiskCacheTest, DeadWritersTemporaryFilesAreRemoved) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  std::string hash = cache.entryPath(kKey).substr(dir.path().size() + 1, 16);
  std::string stale = dir.path() + "/" + hash + ".tmp.dead01";
  std::string fresh = dir.path() + "/" + hash + ".tmp.fresh1";
  writeFile(stale, "half an entry");
  writeFile(fresh, "half an entry");
  struct timeval old[2] = {{::time(nullptr) - 3600, 0},
                           {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimes(stale.c_str(), old), 0);
  // Writes take milliseconds: the old file's writer died, the young one's
  // may still be writing. Neither makes a builder wait.
  auto start = std::chrono::steady_clock::now();
  DiskCache::Build build = cache.beginBuild(kKey, std::chrono::seconds(10));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_FALSE(build.waitedForOtherBuilder());
  EXPECT_NE(::access(stale.c_str(), F_OK), 0);
  EXPECT_EQ(::access(fresh.c_str(), F_OK), 0);
  ASSERT_TRUE(build.commit("p").ok());
  EXPECT_EQ(cache.load(kKey).payload, "p");
}

TEST(DiskCacheTest, WaitForALiveWriterIsBounded) {
  TempDir dir;
  DiskCache cache = openCache(dir);
  std::string hash = cache.entryPath(kKey).substr(dir.path().size() + 1, 16);
  // A builder that never finishes: the claim file under an exclusive lock
  // (held by this process through another open file description).
  std::string claim = dir.path() + "/" + hash + ".lock";
  int fd = ::open(claim.c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto start = std::chrono::steady_clock::now();
  DiskCache::Build build = cache.beginBuild(kKey, std::chrono::milliseconds(200));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(build.waitedForOtherBuilder());
  EXPECT_TRUE(build.timedOut());
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::seconds(3));
  // The live builder's claim is left alone; our own build still works.
  EXPECT_FALSE(build.claimed());
  EXPECT_EQ(::access(claim.c_str(), F_OK), 0);
  ASSERT_TRUE(build.commit("p").ok());
  EXPECT_EQ(cache.load(kKey).payload, "p");
  ::close(fd);
}

TEST(DiskCacheSettingsTest, DefaultsToXdgCacheHome) {
  ScopedEnv off("ATTN_JIT_DISK_CACHE", std::nullopt);
  ScopedEnv dir("ATTN_JIT_CACHE_DIR", std::nullopt);
  ScopedEnv xdg("XDG_CACHE_HOME", "/somewhere/cache");
  DiskCacheSettings settings = diskCacheSettingsFromEnvironment();
  EXPECT_TRUE(settings.enabled);
  EXPECT_EQ(settings.directory, "/somewhere/cache/attn-jit");
}

TEST(DiskCacheSettingsTest, FallsBackToHomeCache) {
  ScopedEnv off("ATTN_JIT_DISK_CACHE", std::nullopt);
  ScopedEnv dir("ATTN_JIT_CACHE_DIR", std::nullopt);
  ScopedEnv xdg("XDG_CACHE_HOME", "relative/is/ignored");
  ScopedEnv home("HOME", "/home/someone");
  DiskCacheSettings settings = diskCacheSettingsFromEnvironment();
  EXPECT_TRUE(settings.enabled);
  EXPECT_EQ(settings.directory, "/home/someone/.cache/attn-jit");
}

TEST(DiskCacheSettingsTest, CacheDirOverrides) {
  ScopedEnv off("ATTN_JIT_DISK_CACHE", "1");
  ScopedEnv dir("ATTN_JIT_CACHE_DIR", "/shared/kernels");
  ScopedEnv xdg("XDG_CACHE_HOME", "/somewhere/cache");
  DiskCacheSettings settings = diskCacheSettingsFromEnvironment();
  EXPECT_TRUE(settings.enabled);
  EXPECT_EQ(settings.directory, "/shared/kernels");
}

TEST(DiskCacheSettingsTest, DiskCacheZeroDisables) {
  for (const char *value : {"0", "false", "OFF", "no"}) {
    ScopedEnv off("ATTN_JIT_DISK_CACHE", value);
    ScopedEnv dir("ATTN_JIT_CACHE_DIR", "/shared/kernels");
    DiskCacheSettings settings = diskCacheSettingsFromEnvironment();
    EXPECT_FALSE(settings.enabled) << value;
    EXPECT_NE(settings.reason.find("ATTN_JIT_DISK_CACHE"), std::string::npos);
  }
}

TEST(DiskCacheSettingsTest, MaxMBSetsTheSizeLimit) {
  ScopedEnv dir("ATTN_JIT_CACHE_DIR", "/shared/kernels");
  {
    ScopedEnv limit("ATTN_JIT_CACHE_MAX_MB", std::nullopt);
    DiskCacheSettings settings = diskCacheSettingsFromEnvironment();
    EXPECT_EQ(settings.maxBytes, kDefaultCacheMaxMB << 20);
    EXPECT_EQ(settings.ignored, "");
  }
  using Case = std::pair<const char *, uint64_t>;
  for (auto [text, bytes] :
       {Case{"64", 64ull << 20}, Case{"0", 0}, Case{"1", 1ull << 20}}) {
    ScopedEnv limit("ATTN_JIT_CACHE_MAX_MB", text);
    DiskCacheSettings settings = diskCacheSettingsFromEnvironment();
    EXPECT_EQ(settings.maxBytes, bytes) << text;
    EXPECT_EQ(settings.ignored, "") << text;
  }
}

TEST(DiskCacheSettingsTest, BadMaxMBIsIgnoredWithAReason) {
  ScopedEnv dir("ATTN_JIT_CACHE_DIR", "/shared/kernels");
  for (const char *text :
       {"lots", "-1", "12MB", " 5", "1e3", "99999999999999999999",
        "18446744073709551615"}) {
    ScopedEnv limit("ATTN_JIT_CACHE_MAX_MB", text);
    DiskCacheSettings settings = diskCacheSettingsFromEnvironment();
    EXPECT_TRUE(settings.enabled) << text;
    EXPECT_EQ(settings.maxBytes, kDefaultCacheMaxMB << 20) << text;
    EXPECT_NE(settings.ignored.find("ATTN_JIT_CACHE_MAX_MB"), std::string::npos)
        << text << ": " << settings.ignored;
  }
}

TEST(KernelBlobTest, RoundTripAndChecks) {
  compiler::PtxKernel kernel;
  kernel.ptx = ".version 8.0\n.target sm_90a\n";
  compiler::KernelLaunch first, second;
  first.name = "attn_bwd_0";
  first.threads = 128;
  first.blockM = 64;
  first.sharedBytes = 65536;
  second = first;
  second.name = "attn_bwd_1";
  second.overKeys = true;
  first.overSplits = true; // not a real pair: each flag survives
  kernel.kernels = {first, second};
  std::string blob = encodeKernelBlob(kernel);
  compiler::PtxKernel decoded;
  std::string reason;
  ASSERT_TRUE(decodeKernelBlob(blob, decoded, reason)) << reason;
  EXPECT_EQ(decoded.ptx, kernel.ptx);
  ASSERT_EQ(decoded.kernels.size(), 2u);
  EXPECT_EQ(decoded.kernels[0].name, "attn_bwd_0");
  EXPECT_EQ(decoded.kernels[0].threads, 128);
  EXPECT_EQ(decoded.kernels[0].blockM, 64);
  EXPECT_EQ(decoded.kernels[0].sharedBytes, 65536);
  EXPECT_FALSE(decoded.kernels[0].overKeys);
  EXPECT_TRUE(decoded.kernels[0].overSplits);
  EXPECT_EQ(decoded.kernels[1].name, "attn_bwd_1");
  EXPECT_TRUE(decoded.kernels[1].overKeys);
  EXPECT_FALSE(decoded.kernels[1].overSplits);

  EXPECT_FALSE(decodeKernelBlob(blob.substr(0, blob.size() - 1), decoded,
                                reason));
  EXPECT_NE(reason.find("truncated"), std::string::npos);
  kernel.kernels[1].threads = 0;
  EXPECT_FALSE(decodeKernelBlob(encodeKernelBlob(kernel), decoded, reason));
  EXPECT_NE(reason.find("threads"), std::string::npos) << reason;
  kernel.kernels.clear();
  EXPECT_FALSE(decodeKernelBlob(encodeKernelBlob(kernel), decoded, reason));
  EXPECT_NE(reason.find("kernels"), std::string::npos) << reason;
}

} // namespace
