//===- FakeCompiler.cpp - A test double for attn::compiler ----------------===//

#include "FakeCompiler.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

namespace attn::testing {

FakeCompilerState &fakeCompiler() {
  static FakeCompilerState state;
  return state;
}

void resetFakeCompiler() {
  FakeCompilerState &state = fakeCompiler();
  state.ptxCompiles = 0;
  state.hostCompiles = 0;
  state.delayMs = 0;
  state.fail = false;
  state.wgmmaDelayMs = 0;
  state.failWgmma = false;
  state.throwInCompile = false;
  state.throwInRun = false;
  state.rendezvous = 0;
  state.running = 0;
  state.maxRunning = 0;
  state.ptxPadding = 0;
  std::lock_guard<std::mutex> lock(state.mutex);
  state.lastConfig = compiler::KernelConfig();
}

int fakeBlockM(const compiler::KernelConfig &config) {
  return config.blockM ? static_cast<int>(config.blockM) : 64;
}

int fakeSharedBytes(const compiler::KernelConfig &config) {
  // Q tile plus double-buffered K and V tiles of 2-byte elements.
  return static_cast<int>(fakeBlockM(config) * config.headDim * 2 * 3);
}

namespace {

/// Tracks concurrency and applies the delay and the rendezvous.
class CompileScope {
public:
  explicit CompileScope(const compiler::KernelConfig &config) {
    FakeCompilerState &state = fakeCompiler();
    {
      std::lock_guard<std::mutex> lock(state.mutex);
      state.lastConfig = config;
    }
    int now = ++state.running;
    int seen = state.maxRunning.load();
    while (now > seen && !state.maxRunning.compare_exchange_weak(seen, now)) {
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (state.maxRunning.load() < state.rendezvous.load() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(
        state.delayMs.load() +
        (config.tensorCore == "wgmma" ? state.wgmmaDelayMs.load() : 0)));
  }
  ~CompileScope() { --fakeCompiler().running; }
};

compiler::CompileTimes fakeTimes() { return {1.0, 2.0, 3.0}; }

/// softmax(scale Q K^T + mask) V in double precision, f32 storage.
class NaiveHostKernel : public compiler::HostKernel {
public:
  explicit NaiveHostKernel(const compiler::KernelConfig &config)
      : config_(config) {
    times_ = fakeTimes();
  }

  void run(const compiler::HostArgs &a) override {
    if (fakeCompiler().throwInRun)
      throw std::runtime_error("fake kernel threw");
    if (config_.dtype != compiler::DType::F32)
      return; // the fake computes f32 only
    int64_t D = config_.headDim, Nq = a.numQueries, Nk = a.numKeys;
    // Query head h reads K/V head h / group (grouped-query attention).
    int64_t group = a.heads / (a.kvHeads ? a.kvHeads : a.heads);
    auto at = [](void *base, const int64_t *s, int64_t b, int64_t h,
                 int64_t n, int64_t d) -> float & {
      return static_cast<float *>(base)[b * s[0] + h * s[1] + n * s[2] + d * s[3]];
    };
    double scale = a.scale ? a.scale : 1.0 / std::sqrt(double(D));
    std::vector<double> p(static_cast<size_t>(Nk));
    for (int64_t b = 0; b < a.batch; ++b)
      for (int64_t h = 0; h < a.heads; ++h)
        for (int64_t i = 0; i < Nq; ++i) {
          double max = -std::numeric_limits<double>::infinity();
          for (int64_t j = 0; j < Nk; ++j) {
            bool visible = config_.mask == compiler::MaskKind::None ||
                           (config_.mask == compiler::MaskKind::Causal
                                ? j <= i
                                : j <= i + Nk - Nq);
            double s = -std::numeric_limits<double>::infinity();
            if (visible) {
              s = 0;
              for (int64_t d = 0; d < D; ++d)
                s += double(at(a.q, a.qStrides, b, h, i, d)) *
                     at(a.k, a.kStrides, b, h / group, j, d);
              s *= scale;
            }
            p[j] = s;
            max = std::max(max, s);
          }
          double sum = 0;
          for (int64_t j = 0; j < Nk; ++j) {
            p[j] = std::isinf(max) ? 0 : std::exp(p[j] - max);
            sum += p[j];
          }
          for (int64_t d = 0; d < D; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < Nk; ++j)
              acc += p[j] * at(a.v, a.vStrides, b, h / group, j, d);
            at(a.o, a.oStrides, b, h, i, d) = sum > 0 ? float(acc / sum) : 0.f;
          }
          if (a.lse)
            a.lse[b * a.lseStrides[0] + h * a.lseStrides[1] +
                  i * a.lseStrides[2]] =
                sum > 0 ? float(max + std::log(sum))
                        : -std::numeric_limits<float>::infinity();
        }
  }

private:
  compiler::KernelConfig config_;
};

} // namespace

} // namespace attn::testing

namespace attn::compiler {

using attn::testing::fakeCompiler;

std::string KernelConfig::pipelineOptions(bool nvidia) const {
  return fmt::format("head-dim={} dtype={} mask={}{}", headDim,
                     toString(dtype), toString(mask),
                     nvidia ? " chip=" + arch : std::string());
}

HostKernel::~HostKernel() = default;

bool compilePtx(const KernelConfig &config, PtxKernel &out,
                std::string &error) {
  attn::testing::CompileScope scope(config);
  if (fakeCompiler().throwInCompile)
    throw std::runtime_error("fake compiler threw");
  if (fakeCompiler().fail ||
      (fakeCompiler().failWgmma && config.tensorCore == "wgmma")) {
    error = "fake compiler failure";
    return false;
  }
  KernelLaunch launch;
  launch.name = fmt::format("attn_fwd_{}_d{}", toString(config.dtype),
                            config.headDim);
  launch.threads = attn::testing::kFakeThreads +
                   (config.warpSpecialize ? attn::testing::kFakeProducerThreads
                                          : 0);
  launch.blockM = attn::testing::fakeBlockM(config);
  launch.sharedBytes = attn::testing::fakeSharedBytes(config);
  launch.packGqa = config.packGqa; // as the real kernel's grid
  out.kernels = {launch};
  if (config.backward) {
    // As the real backward (KernelABI.h): the query tiles' kernel, then the
    // K/V tiles' one, with the same arguments.
    out.kernels.assign(abi::kMinBackwardKernels, launch);
    for (int i = 0; i < abi::kMinBackwardKernels; ++i) {
      out.kernels[i].name = abi::kernelName(abi::kBackwardKernel, i);
      out.kernels[i].packGqa = false;
    }
    out.kernels[1].overKeys = true;
    out.kernels[1].blockM = attn::testing::kFakeBackwardKeyTile;
    // The atomic form: a last kernel over query tiles stores dQ.
    if (!config.deterministic) {
      out.kernels.push_back(launch);
      out.kernels.back().name =
          abi::kernelName(abi::kBackwardKernel, abi::kMinBackwardKernels);
      out.kernels.back().packGqa = false;
    }
  }
  if (config.split) {
    // As the real split-KV forward (KernelABI.h): the splits (z = B ·
    // num_splits, packed as the call), then their merge (never packed).
    out.kernels.assign(abi::kSplitKernelCount, launch);
    for (int i = 0; i < abi::kSplitKernelCount; ++i)
      out.kernels[i].name = abi::kernelName(abi::kForwardKernel, i);
    out.kernels[0].overSplits = true;
    out.kernels[1].packGqa = false;
  }
  out.ptx = fmt::format("// fake PTX for {} {}\n", config.arch,
                        config.pipelineOptions(true));
  for (const KernelLaunch &k : out.kernels)
    out.ptx += fmt::format(".entry {}()\n{{\n}}\n", k.name);
  out.ptx.append(static_cast<size_t>(fakeCompiler().ptxPadding.load()), '#');
  out.times = attn::testing::fakeTimes();
  ++fakeCompiler().ptxCompiles;
  return true;
}

std::unique_ptr<HostKernel> compileHost(const KernelConfig &config,
                                        std::string &error) {
  attn::testing::CompileScope scope(config);
  if (fakeCompiler().throwInCompile)
    throw std::runtime_error("fake compiler threw");
  if (fakeCompiler().fail) {
    error = "fake compiler failure";
    return nullptr;
  }
  ++fakeCompiler().hostCompiles;
  return std::make_unique<attn::testing::NaiveHostKernel>(config);
}

// The fake understands two user mod texts, kFakeUserMods (one f32
// capture) and kFakeUserModsWithTable; any other text fails to "parse".
bool inspectUserMods(const std::string &text, UserModsInfo &info,
                     std::string &error) {
  bool table = text == attn::testing::kFakeUserModsWithTable;
  if (text != attn::testing::kFakeUserMods && !table) {
    error = "user-mods:1:1: error: fake parse failure";
    return false;
  }
  info.canonical = "canonical(" + text + ")";
  info.captures = {{abi::CaptureArg::F32, 0}};
  if (table)
    info.captures.push_back({abi::CaptureArg::F32, 2});
  return true;
}

const char *compilerVersion() { return attn::testing::kFakeVersion; }

} // namespace attn::compiler
