//===- FakeCompiler.h - A test double for attn::compiler ------------------===//
//
// Implements Compiler.h without MLIR: compilePtx returns fake PTX and launch
// metadata, compileHost a naive (f32 only) attention kernel. Tests steer it
// (delays, failures, a rendezvous to prove builds overlap) and read counters.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TESTS_FAKECOMPILER_H
#define ATTN_TESTS_FAKECOMPILER_H

#include "attn/Compiler/Compiler.h"

#include <atomic>
#include <mutex>
#include <string>

namespace attn::testing {

/// The one user-mods text the fake compiler accepts (inspectUserMods).
inline constexpr const char *kFakeUserMods = "fake mods";
/// Another: an f32 scalar, then an f32 table of rank 2.
inline constexpr const char *kFakeUserModsWithTable = "fake mods with a table";

struct FakeCompilerState {
  std::atomic<int> ptxCompiles{0}, hostCompiles{0};
  /// Milliseconds each compile sleeps.
  std::atomic<int> delayMs{0};
  /// When set, compiles fail with this message.
  std::atomic<bool> fail{false};
  /// Milliseconds each compile of a wgmma config sleeps on top of delayMs,
  /// and whether those fail: the default kernel of a tiered first call,
  /// whose quick kernel is mma.sync.
  std::atomic<int> wgmmaDelayMs{0};
  std::atomic<bool> failWgmma{false};
  /// When set, compiles throw std::runtime_error("fake compiler threw").
  std::atomic<bool> throwInCompile{false};
  /// When set, host kernels throw std::runtime_error("fake kernel threw").
  std::atomic<bool> throwInRun{false};
  /// Each compile waits (up to 5 s) until this many compiles run at once.
  std::atomic<int> rendezvous{0};
  std::atomic<int> running{0}, maxRunning{0};
  /// Bytes of padding in the fake PTX (to make disk entries large).
  std::atomic<int> ptxPadding{0};

  std::mutex mutex;
  compiler::KernelConfig lastConfig; // guarded by mutex
};

FakeCompilerState &fakeCompiler();
/// Zeroes the counters and options.
void resetFakeCompiler();

/// The fake's metadata for a config (what compilePtx returns).
int fakeSharedBytes(const compiler::KernelConfig &config);
int fakeBlockM(const compiler::KernelConfig &config);
inline constexpr int kFakeThreads = 128;
/// What the fake's kernels add with KernelConfig::warpSpecialize (as the
/// real ones add a producer warpgroup): the launch must take the kernel's
/// block size, whatever it is.
inline constexpr int kFakeProducerThreads = 128;
/// The K/V tile of the fake backward's second kernel (its grid's rows).
inline constexpr int kFakeBackwardKeyTile = 32;
inline constexpr const char *kFakeVersion = "fake-compiler-1";

} // namespace attn::testing

#endif // ATTN_TESTS_FAKECOMPILER_H
