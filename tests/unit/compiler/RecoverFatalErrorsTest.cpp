//===- RecoverFatalErrorsTest.cpp - LLVM fatal errors as failures ---------===//
//
// Each way LLVM ends the process (report_fatal_error: handler then abort();
// reportFatalUsageError: handler then exit(1); sys::Process::Exit; a crash
// signal) inside runRecoveringFatalErrors comes back as a failure with its
// reason, from many threads at once, and the process-wide state (signal
// handlers, fatal error handler) is back as it was afterwards.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/RecoverFatalErrors.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Process.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <vector>

using attn::compiler::runRecoveringFatalErrors;

namespace {

TEST(RecoverFatalErrorsTest, WorkThatReturnsSucceeds) {
  int runs = 0;
  std::string error = "untouched";
  EXPECT_TRUE(runRecoveringFatalErrors([&] { ++runs; }, error));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(error, "untouched");
}

TEST(RecoverFatalErrorsTest, ReportFatalErrorIsAFailure) {
  // Without recovery: handler, then abort().
  bool after = false;
  std::string error;
  EXPECT_FALSE(runRecoveringFatalErrors(
      [&] {
        llvm::report_fatal_error("PTX version 8.0 does not support target "
                                 "'sm_100a'");
        after = true;
      },
      error));
  EXPECT_FALSE(after);
  EXPECT_EQ(error, "LLVM fatal error: PTX version 8.0 does not support "
                   "target 'sm_100a'");
}

TEST(RecoverFatalErrorsTest, FatalUsageErrorIsAFailure) {
  // Without recovery: handler, then exit(1), which no signal catches.
  std::string error;
  EXPECT_FALSE(runRecoveringFatalErrors(
      [] { llvm::reportFatalUsageError("bad option"); }, error));
  EXPECT_EQ(error, "LLVM fatal error: bad option");
}

TEST(RecoverFatalErrorsTest, ProcessExitIsAFailure) {
  std::string error;
  EXPECT_FALSE(runRecoveringFatalErrors(
      [] { llvm::sys::Process::Exit(3); }, error));
  EXPECT_EQ(error, "LLVM exited with status 3");
}

TEST(RecoverFatalErrorsTest, AbortIsAFailure) {
  // As an assertion or llvm_unreachable of a checked LLVM build does.
  std::string error;
  EXPECT_FALSE(runRecoveringFatalErrors([] { std::abort(); }, error));
  EXPECT_EQ(error.rfind("LLVM crashed with signal 6", 0), 0u) << error;
}

TEST(RecoverFatalErrorsTest, ManyThreadsRecoverTheirOwnErrors) {
  constexpr int kThreads = 8, kRounds = 50;
  std::atomic<int> failures{0}, successes{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        std::string error;
        std::string reason =
            "thread " + std::to_string(t) + " round " + std::to_string(round);
        bool fatal = (t + round) % 2 == 0;
        bool ok = runRecoveringFatalErrors(
            [&] {
              std::this_thread::yield();
              if (fatal)
                llvm::report_fatal_error(llvm::StringRef(reason));
            },
            error);
        if (ok == fatal || (fatal && error != "LLVM fatal error: " + reason))
          ++wrong;
        ++(ok ? successes : failures);
      }
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(failures, kThreads * kRounds / 2);
  EXPECT_EQ(successes, kThreads * kRounds / 2);
}

void applicationHandler(int) {}

TEST(RecoverFatalErrorsTest, ProcessStateIsRestoredAfterwards) {
  // The application's signal handlers are back once no compile runs.
  struct sigaction mine = {}, old = {}, now = {};
  mine.sa_handler = applicationHandler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGSEGV, &mine, &old), 0);
  std::string error;
  EXPECT_FALSE(runRecoveringFatalErrors(
      [] { llvm::report_fatal_error("boom"); }, error));
  bool during = false;
  EXPECT_TRUE(runRecoveringFatalErrors(
      [&] {
        struct sigaction inside = {};
        sigaction(SIGSEGV, nullptr, &inside);
        during = inside.sa_handler != applicationHandler;
      },
      error));
  EXPECT_TRUE(during) << "crash recovery was not enabled during the work";
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, applicationHandler);
  sigaction(SIGSEGV, &old, nullptr);
  // And so is crash recovery's off state (RunSafely is a plain call).
  EXPECT_EQ(llvm::CrashRecoveryContext::GetCurrent(), nullptr);
}

/// While another thread compiles (the handler is installed), a fatal error
/// elsewhere is printed as LLVM prints it and ends the process.
void fatalErrorWhileAnotherThreadCompiles() {
  std::atomic<bool> inside{false}, done{false};
  std::thread compiler([&] {
    std::string error;
    runRecoveringFatalErrors(
        [&] {
          inside = true;
          while (!done)
            std::this_thread::yield();
        },
        error);
  });
  while (!inside)
    std::this_thread::yield();
  llvm::report_fatal_error("not in a compile");
}

TEST(RecoverFatalErrorsDeathTest, FatalErrorOutsideACompileStillEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(fatalErrorWhileAnotherThreadCompiles(),
               "LLVM ERROR: not in a compile");
}

} // namespace
