//===- EngineDiskTest.cpp - The engine with a disk cache ------------------===//

#include "DiskCache.h"
#include "Engine.h"
#include "FakeCompiler.h"
#include "FakeCudaDriver.h"
#include "KernelBlob.h"
#include "TestUtil.h"

#include "attn/Compiler/TilePolicy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

class EngineDiskTest : public ::testing::Test {
protected:
  void SetUp() override {
    resetFakeCompiler();
    resetFakeCuda();
    options.driver = makeFakeCudaDriver();
    options.disk.enabled = true;
    options.disk.directory = dir.path() + "/cache";
  }

  /// A fresh engine (a new process, as far as caching goes) runs one call.
  attn_stats runInFreshEngine(int64_t headDim = 64) {
    Engine engine(options);
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 32, 32,
                        headDim);
    Status status = engine.forward(&call.args);
    EXPECT_TRUE(status.ok()) << status.toString();
    return engine.stats();
  }

  /// The one entry file of the cache directory.
  std::string entryPath() {
    std::vector<std::string> entries;
    for (const std::string &name : listFiles(options.disk.directory))
      if (name.size() > 7 && name.substr(name.size() - 7) == ".kernel")
        entries.push_back(name);
    EXPECT_EQ(entries.size(), 1u);
    return options.disk.directory + "/" + (entries.empty() ? "" : entries[0]);
  }

  TempDir dir;
  EngineOptions options = oneKernelOptions();
};

TEST_F(EngineDiskTest, SecondProcessLoadsFromDisk) {
  attn_stats first = runInFreshEngine();
  EXPECT_EQ(first.compiles, 1u);
  EXPECT_EQ(first.disk_misses, 1u);
  EXPECT_EQ(first.disk_hits, 0u);
  std::string path = entryPath();
  EXPECT_NE(path.find(".kernel"), std::string::npos);

  attn_stats second = runInFreshEngine();
  EXPECT_EQ(second.compiles, 0u);
  EXPECT_EQ(second.disk_hits, 1u);
  EXPECT_EQ(second.disk_misses, 0u);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  // The PTX the driver got is the compiled one.
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  ASSERT_EQ(fakeCuda().loadedPtx.size(), 2u);
  EXPECT_EQ(fakeCuda().loadedPtx[0], fakeCuda().loadedPtx[1]);
}

TEST_F(EngineDiskTest, ClearMemoryCacheFallsBackToDisk) {
  Engine engine(options);
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 32, 32, 64);
  ASSERT_TRUE(engine.forward(&call.args).ok());
  engine.clearMemoryCache();
  ASSERT_TRUE(engine.forward(&call.args).ok());
  attn_stats stats = engine.stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.disk_hits, 1u);
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
}

TEST_F(EngineDiskTest, CorruptEntryIsRejectedLoggedAndRebuilt) {
  runInFreshEngine();
  std::string path = entryPath();
  std::string file = readFile(path);
  file[file.size() - 20] ^= 0x40;
  writeFile(path, file);

  options.log = LogLevel::Info;
  StderrCapture capture;
  attn_stats stats = runInFreshEngine();
  std::string log = capture.finish();
  EXPECT_EQ(stats.disk_rejected, 1u);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_NE(log.find("rejected (checksum mismatch"), std::string::npos) << log;
  EXPECT_NE(log.find("compiled attn-jit-kernel;"), std::string::npos) << log;

  // The rebuilt entry is good again.
  options.log = LogLevel::Off;
  attn_stats third = runInFreshEngine();
  EXPECT_EQ(third.disk_hits, 1u);
  EXPECT_EQ(third.compiles, 0u);
}

TEST_F(EngineDiskTest, TruncatedEntryIsRebuilt) {
  runInFreshEngine();
  std::string path = entryPath();
  ASSERT_EQ(::truncate(path.c_str(), 40), 0);
  attn_stats stats = runInFreshEngine();
  EXPECT_EQ(stats.disk_rejected, 1u);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(runInFreshEngine().disk_hits, 1u);
}

TEST_F(EngineDiskTest, ForeignEntryIsRebuilt) {
  // An entry built for head_dim 128, placed where head_dim 64's belongs.
  runInFreshEngine(128);
  std::string foreign = entryPath();
  Expected<DiskCache> cache = DiskCache::open(options.disk.directory);
  ASSERT_TRUE(cache.ok());
  CacheKey key;
  key.compilerVersion = kFakeVersion;
  key.config.headDim = 64;
  key.config.arch = "sm_90a";
  key.config.tma = attn::compiler::tmaByDefault(key.config.headDim);
  key.config = key.config.resolved(/*nvidia=*/true); // as the engine keys it
  ASSERT_EQ(::rename(foreign.c_str(), cache->entryPath(key.str()).c_str()), 0);
  attn_stats stats = runInFreshEngine(64);
  EXPECT_EQ(stats.disk_rejected, 1u);
  EXPECT_EQ(stats.compiles, 1u);
}

TEST_F(EngineDiskTest, BadMetadataInAValidEntryIsRejected) {
  // Checksummed correctly, but describing an impossible launch.
  runInFreshEngine();
  std::string path = entryPath();
  CacheKey key;
  key.compilerVersion = kFakeVersion;
  key.config.headDim = 64;
  key.config.arch = "sm_90a";
  key.config.tma = attn::compiler::tmaByDefault(key.config.headDim);
  key.config = key.config.resolved(/*nvidia=*/true); // as the engine keys it
  compiler::PtxKernel kernel;
  kernel.ptx = "x";
  compiler::KernelLaunch launch;
  launch.name = "k";
  launch.threads = 0;
  launch.blockM = 64;
  kernel.kernels = {launch};
  writeFile(path, encodeEntry(key.str(), encodeKernelBlob(kernel)));
  attn_stats stats = runInFreshEngine();
  EXPECT_EQ(stats.disk_rejected, 1u);
  EXPECT_EQ(stats.compiles, 1u);
}

TEST_F(EngineDiskTest, NewCompilerVersionNeverLoadsOldKernels) {
  runInFreshEngine();
  // Rewrite the entry as if an older compiler had built it.
  std::string path = entryPath();
  std::string file = readFile(path);
  std::string payload, reason;
  CacheKey key;
  key.compilerVersion = kFakeVersion;
  key.config.headDim = 64;
  key.config.arch = "sm_90a";
  key.config.tma = attn::compiler::tmaByDefault(key.config.headDim);
  key.config = key.config.resolved(/*nvidia=*/true); // as the engine keys it
  ASSERT_EQ(decodeEntry(file, key.str(), payload, reason), EntryCheck::Valid)
      << reason;
  key.compilerVersion = "older-compiler";
  ASSERT_EQ(::unlink(path.c_str()), 0);
  Expected<DiskCache> cache = DiskCache::open(options.disk.directory);
  ASSERT_TRUE(cache->store(key.str(), payload).ok());
  attn_stats stats = runInFreshEngine();
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_EQ(stats.compiles, 1u);
}

TEST_F(EngineDiskTest, DisabledDiskCacheWritesNothing) {
  options.disk.enabled = false;
  options.disk.reason = "ATTN_JIT_DISK_CACHE=0";
  runInFreshEngine();
  attn_stats second = runInFreshEngine();
  EXPECT_EQ(second.compiles, 1u);
  EXPECT_EQ(second.disk_misses, 0u);
  EXPECT_EQ(::access(options.disk.directory.c_str(), F_OK), -1);
}

TEST_F(EngineDiskTest, DisabledFromTheEnvironment) {
  ScopedEnv off("ATTN_JIT_DISK_CACHE", "0");
  ScopedEnv where("ATTN_JIT_CACHE_DIR", options.disk.directory);
  EngineOptions fromEnv = EngineOptions::fromEnvironment();
  EXPECT_FALSE(fromEnv.disk.enabled);
  fromEnv.driver = options.driver;
  Engine engine(fromEnv);
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  ASSERT_TRUE(engine.forward(&call.args).ok());
  EXPECT_EQ(::access(options.disk.directory.c_str(), F_OK), -1);
}

TEST_F(EngineDiskTest, UnusableDirectoryStillCompiles) {
  writeFile(dir.path() + "/file", "in the way");
  options.disk.directory = dir.path() + "/file/cache";
  options.log = LogLevel::Info;
  StderrCapture capture;
  attn_stats stats = runInFreshEngine();
  std::string log = capture.finish();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_NE(log.find("disk cache disabled: cannot create"), std::string::npos)
      << log;
}

// A cache directory others may write is not used: the call still succeeds,
// from memory, and the log says why.
TEST_F(EngineDiskTest, DirectoryWritableByOthersFallsBackToMemory) {
  ASSERT_EQ(::mkdir(options.disk.directory.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(options.disk.directory.c_str(), 0777), 0);
  options.log = LogLevel::Info;
  Engine engine(options);
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 32, 32, 64);
  StderrCapture capture;
  Status first = engine.forward(&call.args);
  Status second = engine.forward(&call.args);
  std::string log = capture.finish();
  EXPECT_TRUE(first.ok()) << first.toString();
  EXPECT_TRUE(second.ok()) << second.toString();
  attn_stats stats = engine.stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.disk_misses + stats.disk_hits, 0u);
  EXPECT_TRUE(listFiles(options.disk.directory).empty());
  EXPECT_NE(log.find("disk cache disabled: " + options.disk.directory +
                     " is writable by its group and others (mode 777)"),
            std::string::npos)
      << log;
}

TEST_F(EngineDiskTest, SizeLimitKeepsTheMostRecentEntry) {
  options.disk.maxBytes = 1; // less than any entry
  runInFreshEngine(64);
  runInFreshEngine(128);
  entryPath(); // expects exactly one entry
  attn_stats again = runInFreshEngine(128);
  EXPECT_EQ(again.disk_hits, 1u);
  EXPECT_EQ(again.compiles, 0u);
}

TEST_F(EngineDiskTest, SizeLimitFromTheEnvironment) {
  ScopedEnv where("ATTN_JIT_CACHE_DIR", options.disk.directory);
  {
    ScopedEnv limit("ATTN_JIT_CACHE_MAX_MB", "3");
    EXPECT_EQ(EngineOptions::fromEnvironment().disk.maxBytes, 3u << 20);
  }
  ScopedEnv limit("ATTN_JIT_CACHE_MAX_MB", "3 GB");
  EngineOptions fromEnv = EngineOptions::fromEnvironment();
  EXPECT_EQ(fromEnv.disk.maxBytes, kDefaultCacheMaxMB << 20);
  fromEnv.driver = options.driver;
  fromEnv.log = LogLevel::Info;
  Engine engine(fromEnv);
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  StderrCapture capture;
  ASSERT_TRUE(engine.forward(&call.args).ok());
  std::string log = capture.finish();
  EXPECT_NE(log.find("ATTN_JIT_CACHE_MAX_MB=3 GB is not a number of MiB"),
            std::string::npos)
      << log;
}

TEST_F(EngineDiskTest, LogsOneLinePerEvent) {
  options.log = LogLevel::Info;
  std::string log;
  {
    StderrCapture capture;
    runInFreshEngine(); // miss + compile
    runInFreshEngine(); // disk hit
    log = capture.finish();
  }
  EXPECT_NE(log.find("attn-jit: disk miss attn-jit-kernel;"), std::string::npos)
      << log;
  EXPECT_NE(log.find("attn-jit: compiled attn-jit-kernel;"), std::string::npos)
      << log;
  // The compile line carries the stage times and the driver load.
  EXPECT_NE(log.find("IR 1.0 ms, passes 2.0 ms, PTX codegen 3.0 ms, driver "
                     "load"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("attn-jit: disk hit attn-jit-kernel;"), std::string::npos)
      << log;
  size_t lines = std::count(log.begin(), log.end(), '\n');
  EXPECT_EQ(lines, 3u) << log;
  // Memory hits are logged at level 2 only.
  options.log = LogLevel::Verbose;
  Engine engine(options);
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  StderrCapture capture;
  ASSERT_TRUE(engine.forward(&call.args).ok());
  ASSERT_TRUE(engine.forward(&call.args).ok());
  log = capture.finish();
  EXPECT_NE(log.find("attn-jit: memory hit"), std::string::npos) << log;
}

TEST_F(EngineDiskTest, FailuresAreLogged) {
  options.log = LogLevel::Info;
  Engine engine(options);
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  call.args.head_dim = 12;
  StderrCapture capture;
  EXPECT_FALSE(engine.forward(&call.args).ok());
  std::string log = capture.finish();
  EXPECT_NE(log.find("attn_forward failed: ATTN_ERROR_UNSUPPORTED: head_dim = 12"),
            std::string::npos)
      << log;
}

// With the driver's linker, the JIT's cubin is kept beside the PTX: a second
// process neither compiles nor JIT-compiles.
class EngineCubinTest : public EngineDiskTest {
protected:
  void SetUp() override {
    EngineDiskTest::SetUp();
    fakeCuda().hasLinker = true;
    options.driver = makeFakeCudaDriver();
    options.cubinCache = true;
  }
  static bool isCubin(const std::string &image) {
    return image.rfind(kFakeCubinPrefix, 0) == 0;
  }
};

TEST_F(EngineCubinTest, SecondProcessLoadsTheCubin) {
  options.log = LogLevel::Info;
  StderrCapture capture;
  attn_stats first = runInFreshEngine();
  EXPECT_EQ(first.compiles, 1u);
  EXPECT_EQ(fakeCuda().links, 1);
  EXPECT_EQ(fakeCuda().liveLinks, 0);
  // Two entries: the PTX and its cubin.
  EXPECT_EQ(listFiles(options.disk.directory).size(), 2u);
  attn_stats second = runInFreshEngine();
  std::string log = capture.finish();
  EXPECT_EQ(second.compiles, 0u);
  EXPECT_EQ(second.disk_hits, 1u);
  EXPECT_EQ(fakeCuda().links, 1); // no second JIT
  {
    std::lock_guard<std::mutex> lock(fakeCuda().mutex);
    ASSERT_EQ(fakeCuda().loadedPtx.size(), 2u);
    EXPECT_TRUE(isCubin(fakeCuda().loadedPtx[0]));
    EXPECT_EQ(fakeCuda().loadedPtx[0], fakeCuda().loadedPtx[1]);
  }
  // The first load reports the JIT's own time, the second no JIT.
  EXPECT_NE(log.find("(JIT 12.5 ms)"), std::string::npos) << log;
  EXPECT_NE(log.find("(cached cubin, no JIT)"), std::string::npos) << log;
}

// Off unless ATTN_JIT_CUBIN_CACHE=1 (the linker's kernels were slower on
// the H200): unset and "0" keep only the PTX.
TEST_F(EngineCubinTest, OffByDefaultAndOnOnlyWithOne) {
  {
    ScopedEnv on("ATTN_JIT_CUBIN_CACHE", "1");
    EXPECT_TRUE(EngineOptions::fromEnvironment().cubinCache);
  }
  EXPECT_FALSE(EngineOptions().cubinCache);
}

TEST_F(EngineCubinTest, OffKeepsOnlyThePtx) {
  ScopedEnv off("ATTN_JIT_CUBIN_CACHE", "0");
  options.cubinCache = EngineOptions::fromEnvironment().cubinCache;
  EXPECT_FALSE(options.cubinCache);
  runInFreshEngine();
  runInFreshEngine();
  EXPECT_EQ(fakeCuda().links, 0);
  entryPath(); // expects exactly one entry
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  ASSERT_EQ(fakeCuda().loadedPtx.size(), 2u);
  EXPECT_FALSE(isCubin(fakeCuda().loadedPtx[1]));
}

TEST_F(EngineCubinTest, ACubinTheDriverRefusesCostsAJit) {
  runInFreshEngine();
  fakeCuda().cubinLoadsToRefuse = 1;
  options.log = LogLevel::Info;
  StderrCapture capture;
  attn_stats second = runInFreshEngine();
  std::string log = capture.finish();
  EXPECT_EQ(second.compiles, 0u);
  EXPECT_EQ(fakeCuda().links, 2);
  EXPECT_NE(log.find("not loaded (cuModuleLoadDataEx (a cached cubin) failed"),
            std::string::npos)
      << log;
  // The JIT's new cubin replaced it: the next process loads it.
  attn_stats third = runInFreshEngine();
  EXPECT_EQ(third.compiles, 0u);
  EXPECT_EQ(fakeCuda().links, 2);
}

TEST_F(EngineCubinTest, EachJitLevelHasItsCubin) {
  options.jitOptLevel = 1;
  runInFreshEngine();
  EXPECT_EQ(fakeCuda().lastJitOptLevel, 1);
  options.jitOptLevel = JitSettings::kDriverDefault;
  runInFreshEngine();
  EXPECT_EQ(fakeCuda().lastJitOptLevel, -1);
  EXPECT_EQ(fakeCuda().links, 2);
  EXPECT_EQ(listFiles(options.disk.directory).size(), 3u);
}

TEST_F(EngineDiskTest, JitLevelFromTheEnvironment) {
  {
    ScopedEnv level("ATTN_JIT_PTX_OPT_LEVEL", "2");
    options.jitOptLevel = EngineOptions::fromEnvironment().jitOptLevel;
  }
  EXPECT_EQ(options.jitOptLevel, 2);
  runInFreshEngine();
  EXPECT_EQ(fakeCuda().lastJitOptLevel, 2);
  for (const char *bad : {"5", "-1", "O3"}) {
    ScopedEnv level("ATTN_JIT_PTX_OPT_LEVEL", bad);
    EngineOptions fromEnv = EngineOptions::fromEnvironment();
    EXPECT_EQ(fromEnv.jitOptLevel, EngineOptions::kBadJitOptLevel) << bad;
    fromEnv.driver = options.driver;
    Engine engine(fromEnv);
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
    Status status = engine.forward(&call.args);
    EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(status.message().find("ATTN_JIT_PTX_OPT_LEVEL"),
              std::string::npos)
        << status.toString();
  }
}

} // namespace
