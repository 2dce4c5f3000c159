//===- attn-opt-fuzzer.cpp - parse, verify and every pipeline of attn-opt -===//
//
// A fuzz target over what attn-opt does with a text: parse it (split at
// `// -----` like --split-input-file, so that the tests' negative cases are
// seeds too), verify it, and run each of attn's pipelines and passes on a
// copy of it. Diagnostics are the expected outcome of most inputs; a finding
// is a crash, a sanitizer report, a timeout, or an LLVM fatal error.
//
// Built with libFuzzer (ATTN_LIBFUZZER=ON, clang; tools/ci_sanitizers.sh) it
// fuzzes; otherwise FuzzerDriver.cpp gives it a main that runs each file (or
// each file of a directory) named on the command line once, which is how the
// normal build tests it (tests/tools/attn-opt-fuzzer) and how a finding is
// replayed.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/RecoverFatalErrors.h"
#include "attn/InitAll.h"
#include "attn/Target/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

/// Each runs alone on a fresh copy of every input that parses and verifies:
/// the two pipelines attn-opt registers (for both tensor-core generations),
/// then each of their passes, so that IR of any stage (the tests' inputs)
/// reaches the pass that takes it.
constexpr const char *kPipelines[] = {
    "attn-to-host",
    "attn-to-ptx",
    "attn-to-ptx{arch=sm_80}",
    "attn-create-kernel",
    "attn-configure",
    "attn-configure{chip=sm_80}",
    "attn-configure{target=host}",
    "attn-tile",
    "attn-decompose",
    "attn-nv-split-kernels",
    "attn-nv-assign-layouts",
    "attn-nv-defer-row-sums",
    "attn-nv-pipeline-copies",
    "attn-nv-pipeline-wgmma",
    "attn-nv-order-warpgroups",
    "attn-nv-skip-rescale",
    "attn-nv-allocate-shared",
    "convert-attn-nv-to-nvvm",
    "convert-attn-to-linalg",
    "attn-emit-ptx{chip=sm_90a}",
    "attn-emit-ptx{chip=sm_80}",
};

/// The separator of mlir-opt's --split-input-file.
constexpr llvm::StringLiteral kSplitMarker = "// -----";

DialectRegistry &registry() {
  static DialectRegistry *instance = [] {
    auto *r = new DialectRegistry();
    mlir::attn::registerAllDialects(*r);
    return r;
  }();
  return *instance;
}

/// Runs `pipeline` on a copy of `module` as the library runs a compile:
/// inside runRecoveringFatalErrors. The library reports a recovered fatal
/// error as a bug in attn-jit, so here it ends the run as a finding.
void runPipeline(ModuleOp module, const char *pipeline) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  std::string parseErrors;
  llvm::raw_string_ostream errors(parseErrors);
  if (failed(parsePassPipeline(pipeline, pm, errors))) {
    llvm::errs() << "attn-opt-fuzzer: bad pipeline '" << pipeline
                 << "': " << parseErrors << "\n";
    std::abort();
  }
  std::string fatal;
  if (!::attn::compiler::runRecoveringFatalErrors(
          [&] { (void)pm.run(*copy); }, fatal)) {
    llvm::errs() << "attn-opt-fuzzer: --" << pipeline << ": " << fatal
                 << "\n";
    std::abort();
  }
}

void runOnSplit(llvm::StringRef text, MLIRContext &context) {
  // A null-terminated copy, as attn-opt reads a file: MLIR's lexer expects
  // the terminator that MemoryBuffer guarantees.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz-input"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return;
  for (const char *pipeline : kPipelines)
    runPipeline(*module, pipeline);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  mlir::attn::registerAllPasses();
  // Outside any recovered run (RecoverFatalErrors.h: no std::call_once
  // inside one), as the library's compilePtx does.
  mlir::attn::initializePTXTarget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: nothing carries over from one input to the
  // next, so each finding replays alone.
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler ignoreDiagnostics(
      &context, [](Diagnostic &) { return success(); });
  llvm::StringRef rest(reinterpret_cast<const char *>(data), size);
  while (!rest.empty()) {
    auto [split, after] = rest.split(kSplitMarker);
    runOnSplit(split, context);
    rest = after;
  }
  return 0;
}
