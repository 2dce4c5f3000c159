//===- FuzzerDriver.cpp - attn-opt-fuzzer without libFuzzer ---------------===//
//
// The main of attn-opt-fuzzer when it is not linked with libFuzzer: runs the
// fuzz target once on each file named on the command line and on each file
// under each directory named there (a corpus), through LLVM's
// runFuzzerOnInputs. Arguments starting with '-' (libFuzzer's flags) are
// ignored, as libFuzzer's own main would take them.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/SmallVector.h"
#include "llvm/FuzzMutate/FuzzerCLI.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  std::vector<std::string> inputs;
  size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.starts_with("-") || !llvm::sys::fs::is_directory(arg)) {
      files += !arg.starts_with("-");
      inputs.push_back(arg.str());
      continue;
    }
    std::error_code ec;
    std::vector<std::string> corpus;
    for (llvm::sys::fs::recursive_directory_iterator it(arg, ec), end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        corpus.push_back(it->path());
    if (ec) {
      llvm::errs() << "attn-opt-fuzzer: cannot read " << arg << ": "
                   << ec.message() << "\n";
      return 1;
    }
    std::sort(corpus.begin(), corpus.end()); // the same order on every run
    inputs.insert(inputs.end(), corpus.begin(), corpus.end());
    files += corpus.size();
  }
  llvm::SmallVector<char *> args{argv[0]};
  for (std::string &input : inputs)
    args.push_back(input.data());
  args.push_back(nullptr);
  int rc = llvm::runFuzzerOnInputs(static_cast<int>(args.size()) - 1,
                                   args.data(), LLVMFuzzerTestOneInput,
                                   LLVMFuzzerInitialize);
  if (rc == 0)
    llvm::errs() << "attn-opt-fuzzer: ran " << files
                 << " inputs without a finding\n";
  return rc;
}
