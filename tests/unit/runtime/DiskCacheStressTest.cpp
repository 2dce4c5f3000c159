//===- DiskCacheStressTest.cpp - Kills and corruption under load ----------===//
//
// Worker processes look keys up, build and store them in one cache directory
// the way Engine::buildPtx does, under a size limit that keeps pruning,
// while this process SIGKILLs random workers (restarting them) and damages
// random entries in place (flipped bits, torn blocks, truncation, trailing
// bytes, another key's entry moved over). Nobody may see a wrong payload,
// crash or hang, a store may never fail (pruning must not remove a
// writer's temporary file), and afterwards every key builds without
// waiting for a dead builder and the entries fit the limit.
//
// The disk cache holds only GPU kernels (host kernels are compiled per
// process), so the test drives DiskCache directly: no GPU, no compiler.
// ATTN_STRESS_SEED=<n> repeats a run's choices (not its timing).
//
//===----------------------------------------------------------------------===//

#include "DiskCache.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kWorkers = 6;
constexpr int kKeys = 32;
constexpr auto kRunTime = std::chrono::seconds(4);
/// Between two kills or corruptions.
constexpr int kMinGapMs = 2, kMaxGapMs = 16;
/// How long a builder waits for another (Engine: 2 minutes).
constexpr auto kBuildWait = std::chrono::seconds(2);
/// Longer than any one lookup-or-build may take: a hang.
constexpr auto kHangLimit = std::chrono::seconds(15);

enum ExitCode {
  kOk = 0,
  kOpenFailed = 10,
  kWrongPayload = 11,
  kStoreFailed = 12
};

/// Counters in memory shared by all processes.
struct Shared {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> hits{0}, builds{0}, rejected{0}, waits{0},
      waitTimeouts{0}, wrongPayloads{0}, storeFailures{0}, longestMs{0};
};

std::string keyOf(int k) {
  return fmt::format("attn-jit-kernel;stress;key={}", k);
}

/// The payload of key `k`: 8 to 56 KiB derived from `k`, so that any byte
/// of another key's or a damaged payload differs somewhere.
std::string payloadOf(int k) {
  std::string payload = keyOf(k) + ";";
  size_t size = 8192 + 4096 * static_cast<size_t>((k * 5) % 13);
  uint32_t state = 2166136261u ^ static_cast<uint32_t>(k);
  while (payload.size() < size) {
    state = state * 1664525u + 1013904223u;
    payload.push_back(static_cast<char>(state >> 24));
  }
  return payload;
}

uint64_t totalPayloadBytes() {
  uint64_t total = 0;
  for (int k = 0; k < kKeys; ++k)
    total += encodeEntry(keyOf(k), payloadOf(k)).size();
  return total;
}

/// Room for about half the keys: every few stores prune.
uint64_t sizeLimit() { return totalPayloadBytes() / 2; }

/// One lookup of key `k`, building it when it is missing or rejected, as
/// Engine::buildPtx does. Returns an ExitCode.
int lookUpOrBuild(const DiskCache &cache, int k, Shared &shared,
                  std::mt19937 &rng) {
  std::string key = keyOf(k);
  auto check = [&](const DiskCache::Lookup &lookup) {
    if (lookup.payload == payloadOf(k))
      return kOk;
    ++shared.wrongPayloads;
    return kWrongPayload;
  };
  DiskCache::Lookup lookup = cache.load(key);
  if (lookup.kind == DiskCache::LookupKind::Hit) {
    ++shared.hits;
    return check(lookup);
  }
  if (lookup.kind == DiskCache::LookupKind::Rejected)
    ++shared.rejected;
  DiskCache::Build build = cache.beginBuild(key, kBuildWait);
  if (build.waitedForOtherBuilder()) {
    ++shared.waits;
    shared.waitTimeouts += build.timedOut();
    lookup = cache.load(key);
    if (lookup.kind == DiskCache::LookupKind::Hit) {
      ++shared.hits;
      return check(lookup);
    }
  }
  // "Compiling".
  std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
  if (!build.commit(payloadOf(k)).ok()) {
    ++shared.storeFailures;
    return kStoreFailed;
  }
  ++shared.builds;
  return kOk;
}

[[noreturn]] void runWorker(const std::string &directory, Shared &shared,
                            unsigned seed) {
  DiskCacheOptions options;
  options.maxBytes = sizeLimit();
  Expected<DiskCache> cache = DiskCache::open(directory, options);
  if (!cache)
    ::_exit(kOpenFailed);
  std::mt19937 rng(seed);
  while (!shared.stop.load()) {
    Clock::time_point start = Clock::now();
    int code =
        lookUpOrBuild(*cache, static_cast<int>(rng() % kKeys), shared, rng);
    if (code != kOk)
      ::_exit(code);
    uint64_t ms = static_cast<uint64_t>(
        std::chrono::duration_cast<milliseconds>(Clock::now() - start).count());
    uint64_t longest = shared.longestMs.load();
    while (ms > longest && !shared.longestMs.compare_exchange_weak(longest, ms))
      ;
  }
  ::_exit(kOk);
}

/// Damage done to entries, by kind.
enum Damage { kFlip, kTornBlock, kTruncate, kAppend, kForeign, kDamageKinds };
constexpr std::array<const char *, kDamageKinds> kDamageNames = {
    "bit flip", "zeroed 4 KiB block", "truncation", "trailing bytes",
    "another key's entry"};

/// Damages the entry of key `k` in place, if there is one; returns whether
/// it did.
bool damage(const DiskCache &cache, int k, Damage kind, std::mt19937 &rng) {
  std::string path = cache.entryPath(keyOf(k));
  if (kind == kForeign) {
    std::string other = cache.entryPath(keyOf((k + 1) % kKeys));
    return ::rename(other.c_str(), path.c_str()) == 0;
  }
  int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat info;
  bool done = false;
  if (::fstat(fd, &info) == 0 && info.st_size > 0) {
    off_t size = info.st_size;
    off_t at = static_cast<off_t>(rng() % static_cast<uint64_t>(size));
    switch (kind) {
    case kFlip: {
      unsigned char byte;
      if (::pread(fd, &byte, 1, at) == 1) {
        byte ^= static_cast<unsigned char>(1u << (rng() % 8));
        done = ::pwrite(fd, &byte, 1, at) == 1;
      }
      break;
    }
    case kTornBlock: {
      std::string zeros(4096, '\0');
      at &= ~off_t(4095);
      done = ::pwrite(fd, zeros.data(), zeros.size(), at) > 0;
      break;
    }
    case kTruncate:
      done = ::ftruncate(fd, at) == 0;
      break;
    case kAppend:
      done = ::pwrite(fd, "junk", 4, size) == 4;
      break;
    default:
      break;
    }
  }
  ::close(fd);
  return done;
}

/// "exit 0", "exit 11", "signal 9".
std::string describe(int status) {
  if (WIFEXITED(status))
    return fmt::format("exit {}", WEXITSTATUS(status));
  return fmt::format("signal {}", WTERMSIG(status));
}

TEST(DiskCacheStressTest, KillsAndCorruptionNeverGiveAWrongPayload) {
  unsigned seed = 14;
  if (const char *text = std::getenv("ATTN_STRESS_SEED"))
    seed = static_cast<unsigned>(std::strtoul(text, nullptr, 10));
  std::mt19937 rng(seed);
  TempDir dir;
  DiskCacheOptions options;
  options.maxBytes = sizeLimit();
  Expected<DiskCache> cache = DiskCache::open(dir.path(), options);
  ASSERT_TRUE(cache.ok()) << cache.status().message();

  void *memory = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  Shared &shared = *new (memory) Shared();

  std::vector<std::string> failures; // workers that ended on their own
  auto spawn = [&]() -> pid_t {
    unsigned workerSeed = static_cast<unsigned>(rng());
    pid_t pid = ::fork();
    if (pid == 0)
      runWorker(dir.path(), shared, workerSeed);
    return pid;
  };
  std::array<pid_t, kWorkers> workers;
  for (pid_t &pid : workers) {
    pid = spawn();
    ASSERT_GT(pid, 0);
  }

  int kills = 0;
  std::array<int, kDamageKinds> damaged{};
  Clock::time_point start = Clock::now();
  while (Clock::now() - start < kRunTime) {
    std::this_thread::sleep_for(
        milliseconds(kMinGapMs + rng() % (kMaxGapMs - kMinGapMs + 1)));
    // A worker that stopped by itself failed: say how, and replace it.
    for (pid_t &pid : workers) {
      int status;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        failures.push_back(describe(status));
        pid = spawn();
      }
    }
    if (rng() % 2 == 0) {
      pid_t &victim = workers[rng() % kWorkers];
      ::kill(victim, SIGKILL);
      int status;
      ::waitpid(victim, &status, 0);
      if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        failures.push_back(describe(status)); // ended before the kill
      ++kills;
      victim = spawn();
    } else {
      auto kind = static_cast<Damage>(rng() % kDamageKinds);
      damaged[kind] +=
          damage(*cache, static_cast<int>(rng() % kKeys), kind, rng);
    }
  }

  // Stop; whoever does not finish its lookup in time hangs.
  shared.stop = true;
  Clock::time_point stopAt = Clock::now();
  int hung = 0;
  for (pid_t pid : workers) {
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() - stopAt > kHangLimit) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        ++hung;
        break;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (WIFSIGNALED(status) || WEXITSTATUS(status) != kOk)
      failures.push_back(describe(status));
  }
  double runSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();

  // What writers killed mid-write left: temporary files.
  int temporaries = 0;
  for (const std::string &name : dir.files())
    temporaries += name.find(".tmp.") != std::string::npos;

  // At rest: no entry gives a wrong payload (first look at all, since
  // building one prunes others); each key then builds without waiting (dead
  // builders hold no claim) and hits.
  int restingHits = 0, restingRejected = 0;
  std::vector<int> missing;
  for (int k = 0; k < kKeys; ++k) {
    DiskCache::Lookup lookup = cache->load(keyOf(k));
    if (lookup.kind == DiskCache::LookupKind::Hit) {
      ++restingHits;
      EXPECT_EQ(lookup.payload, payloadOf(k)) << "key " << k;
    } else {
      restingRejected += lookup.kind == DiskCache::LookupKind::Rejected;
      missing.push_back(k);
    }
  }
  for (int k : missing) {
    DiskCache::Build build = cache->beginBuild(keyOf(k), milliseconds(0));
    EXPECT_FALSE(build.waitedForOtherBuilder()) << "key " << k;
    ASSERT_TRUE(build.commit(payloadOf(k)).ok()) << "key " << k;
    DiskCache::Lookup lookup = cache->load(keyOf(k));
    ASSERT_EQ(lookup.kind, DiskCache::LookupKind::Hit) << lookup.reason;
    EXPECT_EQ(lookup.payload, payloadOf(k)) << "key " << k;
  }
  uint64_t entryBytes = 0;
  for (const std::string &name : dir.files()) {
    struct stat info;
    if (name.size() > 7 && name.substr(name.size() - 7) == ".kernel" &&
        ::stat((dir.path() + "/" + name).c_str(), &info) == 0)
      entryBytes += static_cast<uint64_t>(info.st_size);
  }

  std::string damages;
  for (int kind = 0; kind < kDamageKinds; ++kind)
    damages += fmt::format("{}{} {}", kind ? ", " : "", damaged[kind],
                           kDamageNames[kind]);
  std::string summary = fmt::format(
      "seed {}: {} processes x {} keys for {:.1f} s; {} SIGKILLs ({} left a "
      "temporary file), damage: {}; workers: {} hits, {} builds, {} rejected "
      "entries rebuilt, {} waits for a builder ({} timed out), longest "
      "lookup-or-build {} ms; at rest {} hits, {} rejected; entries {} of {} "
      "bytes allowed",
      seed, kWorkers, kKeys, runSeconds, kills, temporaries, damages,
      shared.hits.load(), shared.builds.load(), shared.rejected.load(),
      shared.waits.load(), shared.waitTimeouts.load(), shared.longestMs.load(),
      restingHits, restingRejected, entryBytes, options.maxBytes);
  std::cout << summary << "\n";
  RecordProperty("summary", summary);

  EXPECT_EQ(shared.wrongPayloads.load(), 0u) << summary;
  EXPECT_EQ(shared.storeFailures.load(), 0u) << summary;
  EXPECT_EQ(hung, 0) << summary;
  EXPECT_TRUE(failures.empty())
      << "workers that failed (" << kWrongPayload << ": wrong payload, "
      << kStoreFailed << ": failed store, " << kOpenFailed
      << ": open failed): " << fmt::format("{}", fmt::join(failures, ", "))
      << "; " << summary;
  EXPECT_LE(entryBytes, options.maxBytes) << summary;
  // The run did what it claims: kills, damage seen and rebuilt, pruning.
  EXPECT_GT(kills, 0);
  EXPECT_GT(shared.rejected.load() + restingRejected, 0u) << summary;
  EXPECT_GT(shared.hits.load(), 0u) << summary;
  EXPECT_GT(shared.builds.load(), static_cast<uint64_t>(kKeys)) << summary;

  shared.~Shared();
  ::munmap(memory, sizeof(Shared));
}

} // namespace
