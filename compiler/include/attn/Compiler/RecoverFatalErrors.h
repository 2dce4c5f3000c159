//===- RecoverFatalErrors.h - LLVM fatal errors as failures -----*- C++ -*-===//
//
// LLVM ends the process on a fatal error: report_fatal_error and
// reportFatalInternalError call the installed fatal error handler, then
// abort(); reportFatalUsageError calls it, then exit(1) (LLVM 22,
// lib/Support/ErrorHandling.cpp: neither goes through sys::Process::Exit).
// The compiler library runs inside an application, so it turns them into a
// failed compile instead: runRecoveringFatalErrors runs the compile in an
// llvm::CrashRecoveryContext whose fatal error handler records the reason and
// jumps back with CrashRecoveryContext::HandleExit, before LLVM's abort() or
// exit(1). What LLVM reaches through sys::Process::Exit (which calls
// HandleExit itself) and, best effort, a crash signal (SIGABRT of an
// assertion, SIGSEGV, ...) in the compiling thread come back the same way.
//
// Why process-wide state, and only around compiles:
//  * CrashRecoveryContext::RunSafely is a plain call, and GetCurrent() null,
//    unless CrashRecoveryContext::Enable() ran; Enable() installs
//    sigaction handlers for SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV and
//    SIGTRAP for the whole process (Disable() restores the previous ones).
//    The host application's own handlers must keep working, so crash
//    recovery is enabled only while at least one compile runs and disabled
//    after the last one. A crash in another thread meanwhile finds no
//    recovery context there: LLVM then disables recovery and re-raises the
//    signal to the application's handler.
//  * The fatal error handler is one per process too (install_fatal_error
//    _handler; a second ScopedFatalErrorHandler would replace the first and
//    its destructor remove both), so one handler is installed with the
//    first concurrent compile and removed with the last; it finds the
//    compile of its thread through a thread-local. A fatal error in a thread
//    that is not compiling is printed as LLVM prints it and ends the
//    process, as without the handler.
//
// After a recovered failure the work was abandoned midway (longjmp): what it
// had allocated is leaked and no destructor of its frames ran. Callers must
// not touch objects the work was using, and should report the failure as a
// compiler bug. Code inside the work must not hold a lock of its own across
// LLVM calls that can fail fatally, or run LLVM inside std::call_once: the
// lock or the once flag would never be released.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_RECOVERFATALERRORS_H
#define ATTN_COMPILER_RECOVERFATALERRORS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace attn::compiler {

/// Runs `work` on this thread. Returns true when it returned; false when an
/// LLVM fatal error (or a crash) ended it, with `error` saying which, e.g.
/// "LLVM fatal error: PTX version 8.0 does not support target 'sm_100a'...".
bool runRecoveringFatalErrors(llvm::function_ref<void()> work,
                              std::string &error);

} // namespace attn::compiler

#endif // ATTN_COMPILER_RECOVERFATALERRORS_H
