//===- attn-compile-time.cpp - The runtime's compile, stage by stage ------===//
//
// Compiles a fixed set of configurations with compiler::compilePtx, as the
// runtime does on a first call, --reps times each in this process (the first
// compile of a process pays LLVM's one-time set-up: reported apart), prints
// the median of each stage and, with --ptx-dir, writes each configuration's
// PTX as <name>.ptx, so that two builds' PTX can be compared file by file.
//
//   attn-compile-time [--reps N] [--ptx-dir DIR] [--only NAME,...] [--list]
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/TilePolicy.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

using attn::compiler::DType;
using attn::compiler::KernelConfig;
using attn::compiler::MaskKind;
namespace abi = attn::abi;

namespace {

struct Named {
  std::string name;
  KernelConfig config;
};

/// The forward's defaults (sm_90a, bf16, D = 128) and the variants of a
/// first call that the issues measure, plus the other mappings.
std::vector<Named> configurations() {
  std::vector<Named> out;
  auto add = [&](std::string name, auto edit) {
    KernelConfig c;
    c.arch = "sm_90a";
    edit(c);
    out.push_back({std::move(name), c.resolved(/*nvidia=*/true)});
  };
  for (int64_t d : {64, 128, 256})
    for (MaskKind m : {MaskKind::Causal, MaskKind::None})
      add(fmt::format("d{}-{}", d, attn::compiler::toString(m)),
          [&](KernelConfig &c) {
            c.headDim = d;
            c.mask = m;
          });
  // D = 128, causal, and one change.
  auto addCausal = [&](std::string name, auto edit) {
    add("d128-causal-" + name, [&](KernelConfig &c) {
      c.mask = MaskKind::Causal;
      edit(c);
    });
  };
  addCausal("f16", [](KernelConfig &c) { c.dtype = DType::F16; });
  addCausal("alibi", [](KernelConfig &c) { c.variants = abi::kAlibi; });
  addCausal("softcap", [](KernelConfig &c) { c.variants = abi::kSoftcap; });
  addCausal("window", [](KernelConfig &c) { c.variants = abi::kWindow; });
  addCausal("tma", [](KernelConfig &c) { c.tma = true; });
  addCausal("bwd", [](KernelConfig &c) { c.backward = true; });
  addCausal("sm80", [](KernelConfig &c) { c.arch = "sm_80"; });
  // The quick kernels of tiered first calls (quickKernelConfig), of the
  // D = 128 causal configurations above.
  for (size_t i = 0, n = out.size(); i < n; ++i) {
    attn::compiler::KernelConfig quick;
    if (out[i].name.rfind("d128-causal", 0) == 0 &&
        attn::compiler::quickKernelConfig(out[i].config, quick))
      out.push_back({out[i].name + "-quick", quick});
  }
  return out;
}

/// This thread's CPU time in milliseconds: on a shared machine, steadier
/// than wall time.
double threadCpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int reps = 5;
  std::string ptxDir, only;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--reps")
      reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--ptx-dir")
      ptxDir = value();
    else if (a == "--only")
      only = "," + value() + ",";
    else if (a == "--list")
      list = true;
    else {
      std::fprintf(stderr,
                   "usage: attn-compile-time [--reps N] [--ptx-dir DIR] "
                   "[--only NAME,...] [--list]\n");
      return 2;
    }
  }
  std::vector<Named> configs = configurations();
  auto selected = [&](const Named &n) {
    return only.empty() || only.find("," + n.name + ",") != std::string::npos;
  };
  if (list) {
    for (const Named &n : configs)
      fmt::print("{}: {}\n", n.name, n.config.pipelineOptions(true));
    return 0;
  }
  // The process's first compile sets LLVM and MLIR up (targets, dialect
  // registrations): a first call pays it once per process. Of the first
  // configuration selected, so that a tiered first call's (a -quick one)
  // can be measured.
  auto first = std::find_if(configs.begin(), configs.end(), selected);
  if (first == configs.end()) {
    std::fprintf(stderr, "--only selects no configuration (see --list)\n");
    return 2;
  }
  {
    attn::compiler::PtxKernel kernel;
    std::string error;
    auto start = std::chrono::steady_clock::now();
    if (!attn::compiler::compilePtx(first->config, kernel, error)) {
      std::fprintf(stderr, "%s: %s\n", first->name.c_str(), error.c_str());
      return 1;
    }
    fmt::print("first compile of the process ({}): {:.1f} ms (IR {:.1f}, "
               "passes {:.1f}, codegen {:.1f})\n",
               first->name,
               std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count(),
               kernel.times.buildIR, kernel.times.passes, kernel.times.codegen);
  }
  fmt::print("{:<22} {:>9} {:>9} {:>7} {:>8} {:>8} {:>9}  (medians of {}, "
             "ms; stages wall)\n",
             "config", "CPU", "wall", "IR", "passes", "codegen", "PTX lines",
             reps);
  int failed = 0;
  for (const Named &n : configs) {
    if (!selected(n))
      continue;
    std::vector<double> cpu, total, ir, passes, codegen;
    attn::compiler::PtxKernel kernel;
    for (int r = 0; r < reps; ++r) {
      std::string error;
      double cpuStart = threadCpuMs();
      auto start = std::chrono::steady_clock::now();
      if (!attn::compiler::compilePtx(n.config, kernel, error)) {
        std::fprintf(stderr, "%s: %s\n", n.name.c_str(), error.c_str());
        ++failed;
        break;
      }
      cpu.push_back(threadCpuMs() - cpuStart);
      total.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      ir.push_back(kernel.times.buildIR);
      passes.push_back(kernel.times.passes);
      codegen.push_back(kernel.times.codegen);
    }
    if (total.empty())
      continue;
    fmt::print("{:<22} {:>9.1f} {:>9.1f} {:>7.1f} {:>8.1f} {:>8.1f} {:>9}\n",
               n.name, median(cpu), median(total), median(ir), median(passes), median(codegen),
               std::count(kernel.ptx.begin(), kernel.ptx.end(), '\n'));
    if (!ptxDir.empty()) {
      std::ofstream(ptxDir + "/" + n.name + ".ptx") << kernel.ptx;
    }
  }
  return failed ? 1 : 0;
}
