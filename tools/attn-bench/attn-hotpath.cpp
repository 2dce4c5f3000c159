//===- attn-hotpath.cpp - Host time of a cached attn_forward call ---------===//
//
// What a call costs the caller's thread once its kernel is loaded: the
// runtime's validation, cache lookup and parameter packing, plus the
// driver's launch. Measured per call (the mean of batches of kBatch calls,
// median and p90 over the batches; the device is synchronized between
// batches, untimed, so the launch queue never fills) for
//   * attn_forward (and attn_backward) on a small problem, of each library
//     given with --lib, in turn, round after round, in one process;
//   * the references, with the same driver: a bare cuLaunchKernel of an
//     empty kernel with the forward kernel's parameter list (KernelABI.h)
//     and grid -- the driver's own launch cost, what no runtime can go
//     below -- and the five cuPointerGetAttribute calls with which the
//     runtime checks that Q, K, V, O and the LSE are device memory.
//
// Only the public C API is used, through dlopen, so one binary times two
// builds of libattn-jit.so side by side (--lib OLD --lib NEW). The driver
// is the one the runtime loads (ATTN_JIT_LIBCUDA, default libcuda.so.1);
// with ATTN_JIT_LIBCUDA=libattn-fake-cuda.so (FakeLibcuda.cpp, a driver
// whose calls return at once) it runs without a GPU and times the
// runtime's own host work.
//
//===----------------------------------------------------------------------===//

#include "ArgParse.h"
#include "CudaDriver.h"
#include "attn-jit/attn_jit.h"
#include "attn/Compiler/KernelABI.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace attn_tools;

namespace {

/// Calls per timed batch; the device is synchronized between batches.
constexpr int kBatch = 32;
/// Untimed calls before timing, per library.
constexpr int kWarmupCalls = 2000;

struct Options {
  std::vector<std::string> libs;
  int64_t calls = 200000, rounds = 5;
  int64_t d = 64, n = 128, heads = 4;
  bool causal = false, backward = true;
  std::string json;
};

void usage() {
  std::puts(
      "usage: attn-hotpath [options]\n"
      "  --lib PATH        a libattn-jit.so to time (repeat to compare; "
      "default:\n"
      "                    libattn-jit.so, found beside the binary's ../lib)\n"
      "  --calls N         timed calls per library and function (200000)\n"
      "  --rounds R        the calls split into R rounds, libraries in "
      "turn (5)\n"
      "  --d 64 --n 128 --heads 4   the problem: bf16, batch 1, Nq = Nk = n\n"
      "  --causal          causal mask\n"
      "  --no-backward     skip attn_backward\n"
      "  --json FILE       also write one JSON object per line to FILE\n"
      "environment: ATTN_JIT_LIBCUDA names the driver (runtime and "
      "references);\n"
      "ATTN_JIT_DISK_CACHE defaults to 0 here (the first call compiles).");
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--lib") o.libs.push_back(flag_value(argc, argv, i));
    else if (a == "--calls") o.calls = parse_int(flag_value(argc, argv, i), "--calls");
    else if (a == "--rounds") o.rounds = parse_int(flag_value(argc, argv, i), "--rounds");
    else if (a == "--d") o.d = parse_int(flag_value(argc, argv, i), "--d");
    else if (a == "--n") o.n = parse_int(flag_value(argc, argv, i), "--n");
    else if (a == "--heads") o.heads = parse_int(flag_value(argc, argv, i), "--heads");
    else if (a == "--causal") o.causal = true;
    else if (a == "--no-backward") o.backward = false;
    else if (a == "--json") o.json = flag_value(argc, argv, i);
    else if (a == "-h" || a == "--help") { usage(); std::exit(0); }
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); usage(); std::exit(64); }
  }
  if (o.libs.empty()) o.libs.push_back("libattn-jit.so");
  if (o.rounds < 1 || o.calls < o.rounds * kBatch || o.d < 1 || o.n < 1 || o.heads < 1) {
    std::fprintf(stderr, "need --rounds >= 1, --calls >= rounds x %d, and "
                         "positive --d, --n, --heads\n", kBatch);
    std::exit(64);
  }
  return o;
}

void die(const std::string &message) {
  std::fprintf(stderr, "attn-hotpath: %s\n", message.c_str());
  std::exit(1);
}

/// The public API of one libattn-jit.so, through dlopen.
struct Library {
  std::string path;
  attn_status (*forward)(const attn_fwd_args *) = nullptr;
  attn_status (*backward)(const attn_bwd_args *) = nullptr;
  void (*setStrides)(attn_fwd_args *) = nullptr;
  void (*setBwdStrides)(attn_bwd_args *) = nullptr;
  const char *(*lastError)() = nullptr;
  attn_status (*getStats)(attn_stats *) = nullptr;

  explicit Library(const std::string &p) : path(p) {
    void *h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) die("dlopen " + p + ": " + dlerror());
    auto need = [&](const char *name) {
      void *f = dlsym(h, name);
      if (!f) die(p + " lacks " + name);
      return f;
    };
    forward = reinterpret_cast<decltype(forward)>(need("attn_forward"));
    setStrides = reinterpret_cast<decltype(setStrides)>(need("attn_set_bhnd_strides"));
    lastError = reinterpret_cast<decltype(lastError)>(need("attn_last_error"));
    getStats = reinterpret_cast<decltype(getStats)>(need("attn_get_stats"));
    // Older builds have no backward.
    backward = reinterpret_cast<decltype(backward)>(dlsym(h, "attn_backward"));
    setBwdStrides = reinterpret_cast<decltype(setBwdStrides)>(
        dlsym(h, "attn_set_bwd_strides_like_fwd"));
  }

  attn_stats stats() const {
    attn_stats s{};
    if (getStats(&s) != ATTN_OK) die(path + ": attn_get_stats failed");
    return s;
  }
};

/// Nanoseconds per call of `call`, one sample per batch of kBatch calls.
template <typename Call> void timeBatches(int64_t batches, std::vector<double> &out, Call &&call) {
  using Clock = std::chrono::steady_clock;
  for (int64_t b = 0; b < batches; ++b) {
    auto start = Clock::now();
    for (int i = 0; i < kBatch; ++i) call();
    auto end = Clock::now();
    out.push_back(std::chrono::duration<double, std::nano>(end - start).count() / kBatch);
    CU(DRV(cuCtxSynchronize)());
  }
}

struct Summary {
  double median = 0, p10 = 0, p90 = 0;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size())))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

/// An empty kernel taking the forward kernel's parameters: its tensors'
/// pointers, sizes and strides (all 64-bit), then the f32 scale.
std::string emptyKernelPtx(int i64Params) {
  std::string ptx = ".version 7.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry attn_hotpath_empty(";
  for (int i = 0; i < i64Params; ++i) ptx += ".param .u64 p" + std::to_string(i) + ", ";
  ptx += ".param .f32 scale)\n{\n  ret;\n}\n";
  return ptx;
}

/// One timed function of one library.
struct Measured {
  std::string what, lib, label; // lib: the library's path, or "driver"
  std::vector<double> ns;
};

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  // The first call compiles; the disk cache only adds files to clean up.
  setenv("ATTN_JIT_DISK_CACHE", "0", /*overwrite=*/0);
  // The cached call's path, not the miss path of a tiered first call's
  // quick kernel while the default one builds.
  setenv("ATTN_JIT_TIERED", "0", /*overwrite=*/0);
  const char *driverEnv = std::getenv("ATTN_JIT_LIBCUDA");
  std::string driverLib = driverEnv && *driverEnv ? driverEnv : "libcuda.so.1";
  CUdevice device;
  CUcontext context;
  std::string why;
  if (!init_cuda(&device, &context, &why, driverLib)) {
    std::fprintf(stderr, "attn-hotpath: no CUDA device: %s\n", why.c_str());
    return 77;
  }

  std::vector<Library> libs;
  for (const std::string &path : o.libs) libs.emplace_back(path);

  // The problem: bf16, batch 1, (1, H, n, d), LSE kept (the backward needs it).
  const int64_t B = 1, H = o.heads, N = o.n, D = o.d;
  const size_t tensorBytes = size_t(B * H * N * D) * 2, lseBytes = size_t(B * H * N) * 4;
  DeviceBuffer q(tensorBytes), k(tensorBytes), v(tensorBytes), out(tensorBytes),
      lse(lseBytes), dO(tensorBytes), dq(tensorBytes), dk(tensorBytes), dv(tensorBytes);
  CU(DRV(cuMemsetD16)(q.ptr, 0x3c00, tensorBytes / 2));
  CU(DRV(cuMemsetD16)(k.ptr, 0x3c00, tensorBytes / 2));
  CU(DRV(cuMemsetD16)(v.ptr, 0x3c00, tensorBytes / 2));
  CU(DRV(cuMemsetD16)(dO.ptr, 0x3c00, tensorBytes / 2));
  attn_fwd_args fwd{};
  fwd.q = q.get(), fwd.k = k.get(), fwd.v = v.get(), fwd.o = out.get();
  fwd.lse = static_cast<float *>(lse.get());
  fwd.batch = B, fwd.heads = H, fwd.seqlen_q = fwd.seqlen_k = N, fwd.head_dim = D;
  fwd.dtype = ATTN_DTYPE_BF16;
  fwd.mask = o.causal ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE;
  fwd.device = ATTN_DEVICE_CUDA;
  libs.front().setStrides(&fwd);
  attn_bwd_args bwd{};
  bwd.fwd = fwd;
  bwd.d_o = dO.get(), bwd.dq = dq.get(), bwd.dk = dk.get(), bwd.dv = dv.get();

  // The functions timed: each library's forward (and backward), then the
  // references.
  std::vector<Measured> results;
  std::vector<std::pair<size_t, std::function<void()>>> timed;
  for (Library &lib : libs) {
    std::string label = "lib " + std::to_string(&lib - libs.data() + 1);
    auto add = [&](const char *what, std::function<attn_status()> call) {
      attn_status s = call(); // compiles and loads
      if (s != ATTN_OK) die(lib.path + ": " + what + " failed: " + lib.lastError());
      CU(DRV(cuCtxSynchronize)());
      results.push_back({what, lib.path, label, {}});
      timed.push_back({results.size() - 1, [call, &lib, what] {
                         if (call() != ATTN_OK)
                           die(lib.path + ": a cached " + what + " failed: " + lib.lastError());
                       }});
    };
    add("attn_forward", [&lib, &fwd] { return lib.forward(&fwd); });
    if (o.backward && lib.backward && lib.setBwdStrides) {
      lib.setBwdStrides(&bwd);
      add("attn_backward", [&lib, &bwd] { return lib.backward(&bwd); });
    }
  }

  // References, with the driver alone.
  constexpr int kParams = attn::abi::forwardTensorParams();
  std::string ptx = emptyKernelPtx(kParams);
  CUmodule module;
  CUfunction empty;
  CU(DRV(cuModuleLoadData)(&module, ptx.c_str()));
  CU(DRV(cuModuleGetFunction)(&empty, module, "attn_hotpath_empty"));
  int64_t values[kParams] = {};
  float scale = 1;
  void *params[kParams + 1];
  for (int i = 0; i < kParams; ++i) params[i] = &values[i];
  params[kParams] = &scale;
  constexpr unsigned kRows = 64, kThreads = 128; // a 64-row tile, 4 warps
  unsigned gridX = unsigned((N + kRows - 1) / kRows);
  results.push_back({"bare cuLaunchKernel (empty kernel, the forward's parameters)", "driver", "driver", {}});
  timed.push_back({results.size() - 1, [&] {
                     CU(DRV(cuLaunchKernel)(empty, gridX, unsigned(H), unsigned(B), kThreads, 1, 1, 0,
                                            nullptr, params, nullptr));
                   }});
  const void *checked[] = {fwd.q, fwd.k, fwd.v, fwd.o, fwd.lse};
  results.push_back({"5 x cuPointerGetAttribute (the runtime's pointer check)", "driver", "driver", {}});
  timed.push_back({results.size() - 1, [&] {
                     for (const void *p : checked) {
                       unsigned type = 0;
                       CU(DRV(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                     CUdeviceptr(p)));
                     }
                   }});

  std::vector<attn_stats> before;
  for (Library &lib : libs) before.push_back(lib.stats());
  for (auto &[index, call] : timed)
    for (int i = 0; i < kWarmupCalls; ++i) call();
  CU(DRV(cuCtxSynchronize)());
  int64_t batchesPerRound = o.calls / o.rounds / kBatch;
  for (int64_t r = 0; r < o.rounds; ++r)
    for (auto &[index, call] : timed) timeBatches(batchesPerRound, results[index].ns, call);

  // A cached call compiles and loads nothing: check it, or the numbers lie.
  for (size_t i = 0; i < libs.size(); ++i) {
    attn_stats after = libs[i].stats();
    if (after.compiles != before[i].compiles || after.disk_hits != before[i].disk_hits)
      die(libs[i].path + ": a timed call compiled or read the disk cache");
  }

  double bare = summarize(results[results.size() - 2].ns).median;
  std::printf("attn-hotpath: bf16 B=%lld H=%lld N=%lld D=%lld%s; driver %s; %lld calls "
              "per line in batches of %d\n",
              (long long)B, (long long)H, (long long)N, (long long)D, o.causal ? " causal" : "",
              driverLib.c_str(), (long long)(batchesPerRound * o.rounds * kBatch), kBatch);
  for (size_t i = 0; i < libs.size(); ++i)
    std::printf("lib %zu = %s\n", i + 1, libs[i].path.c_str());
  std::printf("%-8s %-58s %9s %9s %9s %12s\n", "", "host time per call (ns)", "median",
              "p10", "p90", "minus bare");
  FILE *json = o.json.empty() ? nullptr : std::fopen(o.json.c_str(), "w");
  if (!o.json.empty() && !json) die("cannot write " + o.json);
  for (const Measured &m : results) {
    Summary s = summarize(m.ns);
    std::printf("%-8s %-58s %9.0f %9.0f %9.0f %12.0f\n", m.label.c_str(), m.what.c_str(), s.median,
                s.p10, s.p90, s.median - bare);
    char line[1024];
    std::snprintf(line, sizeof line,
                  "{\"tool\":\"attn-hotpath\",\"lib\":\"%s\",\"what\":\"%s\",\"driver\":\"%s\","
                  "\"d\":%lld,\"n\":%lld,\"heads\":%lld,\"causal\":%d,\"median_ns\":%.1f,"
                  "\"p10_ns\":%.1f,\"p90_ns\":%.1f,\"bare_launch_ns\":%.1f}\n",
                  m.lib.c_str(), m.what.c_str(), driverLib.c_str(), (long long)D, (long long)N,
                  (long long)H, o.causal ? 1 : 0, s.median, s.p10, s.p90, bare);
    if (json) std::fputs(line, json);
  }
  if (json) std::fclose(json);
  return 0;
}
