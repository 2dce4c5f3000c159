//===- RecoverFatalErrors.cpp - LLVM fatal errors as failures -------------===//

#include "attn/Compiler/RecoverFatalErrors.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"

#include <cstring>
#include <mutex>
#include <optional>
#include <unistd.h>

namespace attn::compiler {

namespace {

/// The recovered work running on this thread.
struct Recovery {
  llvm::CrashRecoveryContext *context;
  std::string *reason;
  /// RunSafely set its jump buffer (recovery was enabled when it started).
  bool armed = false;
};

thread_local Recovery *current = nullptr;

void writeStderr(const char *text) {
  size_t size = std::strlen(text);
  while (size > 0) {
    ssize_t written = ::write(STDERR_FILENO, text, size);
    if (written <= 0)
      return;
    text += written;
    size -= static_cast<size_t>(written);
  }
}

void onFatalError(void *, const char *reason, bool) {
  Recovery *recovery = current;
  if (!recovery || !recovery->armed) {
    // Not a recovered compile: behave as LLVM does without a handler (it
    // aborts or exits once this returns).
    writeStderr("LLVM ERROR: ");
    writeStderr(reason);
    writeStderr("\n");
    return;
  }
  *recovery->reason = reason;
  // Jumps back to RunSafely, before LLVM's abort() or exit(1).
  recovery->context->HandleExit(1);
}

/// Crash recovery and the fatal error handler, held while any compile runs
/// (see the header for why they are process-wide and why only then).
class ProcessState {
public:
  void acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (users_++ == 0) {
      llvm::CrashRecoveryContext::Enable();
      handler_.emplace(onFatalError, nullptr);
    }
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--users_ == 0) {
      handler_.reset();
      llvm::CrashRecoveryContext::Disable();
    }
  }

private:
  std::mutex mutex_;
  int users_ = 0;
  std::optional<llvm::ScopedFatalErrorHandler> handler_;
};

ProcessState &processState() {
  static ProcessState *state = new ProcessState(); // never destroyed
  return *state;
}

} // namespace

bool runRecoveringFatalErrors(llvm::function_ref<void()> work,
                              std::string &error) {
  processState().acquire();
  std::string reason;
  bool ok;
  {
    llvm::CrashRecoveryContext context;
    Recovery recovery{&context, &reason};
    Recovery *outer = current;
    current = &recovery;
    ok = context.RunSafely([&] {
      recovery.armed = llvm::CrashRecoveryContext::GetCurrent() == &context;
      work();
    });
    current = outer;
    if (!ok) {
      int code = context.RetCode;
      if (!reason.empty())
        error = "LLVM fatal error: " + reason;
      else if (code > 128)
        error = "LLVM crashed with signal " + std::to_string(code - 128) +
                " (" + ::strsignal(code - 128) + ")";
      else
        error = "LLVM exited with status " + std::to_string(code);
    }
  }
  processState().release();
  return ok;
}

} // namespace attn::compiler
