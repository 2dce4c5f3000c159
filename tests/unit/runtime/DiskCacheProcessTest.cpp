//===- DiskCacheProcessTest.cpp - Processes sharing one cache directory ---===//
//
// Forked processes hammer one directory: readers must only ever see nothing
// or a complete, valid entry; nobody may deadlock; processes that start the
// same build at once compile it once.
//
//===----------------------------------------------------------------------===//

#include "DiskCache.h"
#include "Engine.h"
#include "FakeCompiler.h"
#include "FakeCudaDriver.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fmt/format.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

constexpr const char *kKey = "attn-jit-kernel;shared-by-processes";

/// A payload that proves its own integrity: a header naming its writer and
/// a body derived from the header.
std::string makePayload(int writer, int iteration) {
  std::string header = fmt::format("writer={} iteration={};", writer, iteration);
  std::string payload = header;
  size_t size = 64 * 1024 + 4096 * ((writer * 7 + iteration) % 16);
  uint32_t state = static_cast<uint32_t>(writer * 1000003 + iteration);
  while (payload.size() < size) {
    state = state * 1664525u + 1013904223u;
    payload.push_back(static_cast<char>(state >> 24));
  }
  return payload;
}

bool isConsistentPayload(const std::string &payload) {
  int writer, iteration;
  if (std::sscanf(payload.c_str(), "writer=%d iteration=%d;", &writer,
                  &iteration) != 2)
    return false;
  return payload == makePayload(writer, iteration);
}

/// Waits for all `children`; kills them and fails after `limit` (a
/// deadlock). Returns their exit codes.
std::vector<int> waitForChildren(const std::vector<pid_t> &children,
                                 std::chrono::seconds limit) {
  std::vector<int> codes(children.size(), -1);
  auto deadline = std::chrono::steady_clock::now() + limit;
  size_t left = children.size();
  while (left > 0) {
    for (size_t i = 0; i < children.size(); ++i) {
      if (codes[i] != -1)
        continue;
      int status;
      if (::waitpid(children[i], &status, WNOHANG) == children[i]) {
        codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        --left;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << left << " processes still running after "
                    << limit.count() << " s: deadlock?";
      for (size_t i = 0; i < children.size(); ++i)
        if (codes[i] == -1) {
          ::kill(children[i], SIGKILL);
          ::waitpid(children[i], nullptr, 0);
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return codes;
}

TEST(DiskCacheProcessTest, ReadersSeeNothingOrACompleteEntry) {
  TempDir dir;
  constexpr int kProcesses = 8, kIterations = 150;
  std::vector<pid_t> children;
  for (int writer = 0; writer < kProcesses; ++writer) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Expected<DiskCache> cache = DiskCache::open(dir.path());
      if (!cache)
        ::_exit(2);
      int hits = 0;
      for (int i = 0; i < kIterations; ++i) {
        if ((i + writer) % 3 == 0) {
          // Writers race to replace the entry.
          if (!cache->store(kKey, makePayload(writer, i)).ok())
            ::_exit(3);
          continue;
        }
        DiskCache::Lookup lookup = cache->load(kKey);
        if (lookup.kind == DiskCache::LookupKind::Rejected)
          ::_exit(4); // a partial or corrupt entry was visible
        if (lookup.kind == DiskCache::LookupKind::Hit) {
          if (!isConsistentPayload(lookup.payload))
            ::_exit(5);
          ++hits;
        }
      }
      ::_exit(hits > 0 ? 0 : 6);
    }
    children.push_back(pid);
  }
  std::vector<int> codes = waitForChildren(children, std::chrono::seconds(90));
  for (size_t i = 0; i < codes.size(); ++i)
    EXPECT_EQ(codes[i], 0) << "process " << i
                           << " (3: store failed, 4: saw a rejected entry, "
                              "5: saw a mixed payload, 6: never saw one)";
  // Only the entry is left: every temporary and claim file is gone.
  std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  Expected<DiskCache> cache = DiskCache::open(dir.path());
  ASSERT_TRUE(cache.ok());
  DiskCache::Lookup lookup = cache->load(kKey);
  ASSERT_EQ(lookup.kind, DiskCache::LookupKind::Hit) << lookup.reason;
  EXPECT_TRUE(isConsistentPayload(lookup.payload));
}

TEST(DiskCacheProcessTest, BuilderWaitsForAnotherProcess) {
  TempDir dir;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(ready[0]);
    Expected<DiskCache> cache = DiskCache::open(dir.path());
    DiskCache::Build build =
        cache->beginBuild(kKey, std::chrono::milliseconds(0));
    char byte = 1;
    if (::write(ready[1], &byte, 1) != 1)
      ::_exit(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(400)); // "compiling"
    ::_exit(build.commit("built by the child").ok() ? 0 : 3);
  }
  ::close(ready[1]);
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  Expected<DiskCache> cache = DiskCache::open(dir.path());
  auto start = std::chrono::steady_clock::now();
  DiskCache::Build build = cache->beginBuild(kKey, std::chrono::seconds(30));
  EXPECT_TRUE(build.waitedForOtherBuilder());
  EXPECT_FALSE(build.timedOut());
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(200));
  DiskCache::Lookup lookup = cache->load(kKey);
  ASSERT_EQ(lookup.kind, DiskCache::LookupKind::Hit) << lookup.reason;
  EXPECT_EQ(lookup.payload, "built by the child");
  build.abandon();
  EXPECT_EQ(waitForChildren({pid}, std::chrono::seconds(30))[0], 0);
}

TEST(DiskCacheProcessTest, KilledBuilderDoesNotBlockOthers) {
  TempDir dir;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(ready[0]);
    Expected<DiskCache> cache = DiskCache::open(dir.path());
    DiskCache::Build build =
        cache->beginBuild(kKey, std::chrono::milliseconds(0));
    char byte = 1;
    if (::write(ready[1], &byte, 1) != 1)
      ::_exit(2);
    ::pause(); // killed mid-build
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  // Its claim file remains, but the lock died with it: nobody waits.
  EXPECT_EQ(dir.files().size(), 1u);
  Expected<DiskCache> cache = DiskCache::open(dir.path());
  auto start = std::chrono::steady_clock::now();
  DiskCache::Build build = cache->beginBuild(kKey, std::chrono::seconds(30));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_FALSE(build.waitedForOtherBuilder());
  EXPECT_TRUE(build.claimed());
  ASSERT_TRUE(build.commit("p").ok());
  EXPECT_EQ(dir.files().size(), 1u); // the entry only
}

TEST(DiskCacheProcessTest, ProcessesStartingTogetherCompileOnce) {
  TempDir dir;
  constexpr int kProcesses = 6;
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start[1]);
      char byte;
      (void)::read(start[0], &byte, 1); // returns 0 once the parent closes
      resetFakeCompiler();
      resetFakeCuda();
      fakeCompiler().delayMs = 300;
      EngineOptions options;
      options.disk.enabled = true;
      options.disk.directory = dir.path();
      options.driver = makeFakeCudaDriver();
      Engine engine(options);
      ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
      if (!engine.forward(&call.args).ok())
        ::_exit(99);
      attn_stats stats = engine.stats();
      if (stats.compiles + stats.disk_hits != 1)
        ::_exit(98);
      ::_exit(static_cast<int>(stats.compiles));
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]); // go
  std::vector<int> codes = waitForChildren(children, std::chrono::seconds(60));
  int compiles = 0;
  for (int code : codes) {
    EXPECT_TRUE(code == 0 || code == 1) << "exit code " << code;
    compiles += code;
  }
  EXPECT_EQ(compiles, 1);
}

} // namespace
