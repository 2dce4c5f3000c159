//===- runtime_gpu_test.cpp - libattn-jit on a real GPU -------------------===//
//
// Run by hand on the GPU machine (not part of the CPU unit suite):
//   runtime_gpu_test [--quick]
// Uses libattn-jit only through its C API, as a user program would, and the
// CUDA driver (dlopen'd here too) for memory. It checks results against the
// float64 reference of tests/common/Reference.h (grouped-query attention and
// negative scales included), then measures the first call
// with an empty disk cache, the first call with a warm disk cache (after
// attn_clear_memory_cache), the cost of a cached call, and 8 threads making
// first calls at once (compiles must happen once per key).
//
// Exit status: 0 all passed, 1 a check failed, 77 no driver or no GPU
// ("SKIP: <reason>").
//
//===----------------------------------------------------------------------===//

#include "attn-jit/attn_jit.h"

#include "Reference.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

//===----------------------------------------------------------------------===//
// The driver functions this test uses (looked up under the versioned names
// cuda.h maps them to, e.g. cuMemAlloc -> cuMemAlloc_v2).
//===----------------------------------------------------------------------===//

#define DRIVER_FUNCTIONS(X)                                                    \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemsetD8)

#define SYMBOL_TEXT(name) #name
#define SYMBOL(name) SYMBOL_TEXT(name)

struct Driver {
#define DECLARE(name) decltype(&::name) name = nullptr;
  DRIVER_FUNCTIONS(DECLARE)
#undef DECLARE
};
Driver cu;

int failures = 0;

void fail(const std::string &what) {
  std::printf("FAIL: %s\n", what.c_str());
  ++failures;
}

bool check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = "?";
  cu.cuGetErrorName(result, &name);
  fail(std::string(what) + ": " + name);
  return false;
}

[[noreturn]] void skip(const std::string &reason) {
  std::printf("SKIP: %s\n", reason.c_str());
  std::exit(77);
}

/// Loads the driver and makes device 0's primary context current (the one
/// libattn-jit will find current on this thread and use on others).
std::string initDriver() {
  const char *library = std::getenv("ATTN_JIT_LIBCUDA");
  if (!library || !*library)
    library = "libcuda.so.1";
  void *handle = dlopen(library, RTLD_NOW);
  if (!handle)
    skip(std::string("no CUDA driver: ") + dlerror());
#define RESOLVE(name)                                                          \
  cu.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, SYMBOL(name)));  \
  if (!cu.name)                                                                \
    skip(std::string("the CUDA driver lacks ") + SYMBOL(name));
  DRIVER_FUNCTIONS(RESOLVE)
#undef RESOLVE
  CUresult init = cu.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char *name = "?";
    cu.cuGetErrorName(init, &name);
    skip(std::string("cuInit failed: ") + name);
  }
  int count = 0;
  if (cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
    skip("no GPU");
  CUdevice device;
  CUcontext context;
  char name[256] = {};
  int major = 0, minor = 0;
  if (!check(cu.cuDeviceGet(&device, 0), "cuDeviceGet") ||
      !check(cu.cuDevicePrimaryCtxRetain(&context, device), "retain") ||
      !check(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    std::exit(1);
  cu.cuDeviceGetName(name, sizeof name, device);
  cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                          device);
  cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                          device);
  if (major < 8)
    skip("compute capability below 8.0");
  return std::string(name) + " (compute capability " + std::to_string(major) +
         "." + std::to_string(minor) + ")";
}

/// Device memory, freed at scope exit.
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t size) : bytes(std::max<size_t>(size, 16)) {
    check(cu.cuMemAlloc(&ptr, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() {
    if (ptr)
      cu.cuMemFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *get() const { return reinterpret_cast<void *>(ptr); }
};

attn_stats stats() {
  attn_stats s{};
  attn_get_stats(&s);
  return s;
}

const char *dtypeName(attn_dtype dtype) {
  return dtype == ATTN_DTYPE_BF16 ? "bf16" : "f16";
}
const char *maskName(attn_mask mask) {
  return mask == ATTN_MASK_NONE     ? "none"
         : mask == ATTN_MASK_CAUSAL ? "causal"
                                    : "bottom_right";
}

//===----------------------------------------------------------------------===//
// One forward problem: host inputs, device buffers, a run, a check.
//===----------------------------------------------------------------------===//

struct Problem {
  attn_dtype dtype = ATTN_DTYPE_BF16;
  attn_mask mask = ATTN_MASK_NONE;
  int64_t batch = 1, heads = 1, seqlenQ = 64, seqlenK = 64, headDim = 64;
  int64_t kvHeads = 0; // K/V heads (grouped-query attention); 0: heads
  float scale = 0;     // 0: 1/sqrt(D)
  bool bnhd = false;   // layout
  bool withLse = true;
  uint64_t seed = 1;

  int64_t kvHeadCount() const { return kvHeads ? kvHeads : heads; }

  std::string name() const {
    char text[200], extra[64] = "";
    if (kvHeads)
      std::snprintf(extra, sizeof extra, " Hkv=%lld", (long long)kvHeads);
    if (scale != 0)
      std::snprintf(extra + std::strlen(extra),
                    sizeof extra - std::strlen(extra), " scale=%g",
                    double(scale));
    std::snprintf(text, sizeof text, "%s d=%-3lld %-12s B=%lld H=%lld "
                  "Nq=%lld Nk=%lld %s%s%s",
                  dtypeName(dtype), (long long)headDim, maskName(mask),
                  (long long)batch, (long long)heads, (long long)seqlenQ,
                  (long long)seqlenK, bnhd ? "BNHD" : "BHND",
                  withLse ? "" : " no-lse", extra);
    return text;
  }
};

/// Inputs on host and device, outputs on device.
struct Instance {
  Problem p;
  attn_fwd_args args{};
  std::vector<uint16_t> q, k, v; // bf16 or f16 bits
  DeviceBuffer dq, dk, dv, dout, dlse;

  explicit Instance(const Problem &problem)
      : p(problem), q(elements(p.heads, p.seqlenQ)),
        k(elements(p.kvHeadCount(), p.seqlenK)),
        v(elements(p.kvHeadCount(), p.seqlenK)), dq(q.size() * 2),
        dk(k.size() * 2),
        dv(v.size() * 2), dout(q.size() * 2),
        dlse(size_t(p.batch * p.heads * p.seqlenQ) * 4) {
    attn_ref::Rng rng(p.seed);
    for (auto *tensor : {&q, &k, &v})
      for (uint16_t &x : *tensor) {
        float value = float(rng.normal());
        x = p.dtype == ATTN_DTYPE_BF16 ? attn_ref::float_to_bf16(value)
                                       : attn_ref::float_to_f16(value);
      }
    check(cu.cuMemcpyHtoD(dq.ptr, q.data(), q.size() * 2), "copy q");
    check(cu.cuMemcpyHtoD(dk.ptr, k.data(), k.size() * 2), "copy k");
    check(cu.cuMemcpyHtoD(dv.ptr, v.data(), v.size() * 2), "copy v");
    // NaN-ish garbage, so that unwritten outputs show.
    check(cu.cuMemsetD8(dout.ptr, 0xff, dout.bytes), "memset o");
    check(cu.cuMemsetD8(dlse.ptr, 0xff, dlse.bytes), "memset lse");
    args.q = dq.get();
    args.k = dk.get();
    args.v = dv.get();
    args.o = dout.get();
    args.lse = p.withLse ? static_cast<float *>(dlse.get()) : nullptr;
    args.batch = p.batch;
    args.heads = p.heads;
    args.kv_heads = p.kvHeads;
    args.seqlen_q = p.seqlenQ;
    args.seqlen_k = p.seqlenK;
    args.head_dim = p.headDim;
    args.dtype = p.dtype;
    args.mask = p.mask;
    args.scale = p.scale;
    args.device = ATTN_DEVICE_CUDA;
    if (p.bnhd)
      attn_set_bnhd_strides(&args);
    else
      attn_set_bhnd_strides(&args);
  }

  size_t elements(int64_t heads, int64_t seqlen) const {
    return size_t(p.batch * heads * seqlen * p.headDim);
  }

  attn_status run() { return attn_forward(&args); }

  /// Compares O (and LSE) with the float64 reference; returns the errors.
  bool verify(double &oError, double &lseError) {
    oError = lseError = 0;
    if (!check(cu.cuCtxSynchronize(), "synchronize after forward"))
      return false;
    std::vector<uint16_t> out(q.size());
    std::vector<float> lse(size_t(p.batch * p.heads * p.seqlenQ));
    check(cu.cuMemcpyDtoH(out.data(), dout.ptr, out.size() * 2), "copy o");
    check(cu.cuMemcpyDtoH(lse.data(), dlse.ptr, lse.size() * 4), "copy lse");
    attn_ref::Shape shape{p.batch,   p.heads,   p.seqlenQ,
                          p.seqlenK, p.headDim, p.kvHeadCount()};
    auto strides4 = [](const int64_t *s) {
      return attn_ref::Strides4{{s[0], s[1], s[2], s[3]}};
    };
    auto qs = strides4(args.q_strides), ks = strides4(args.k_strides),
         vs = strides4(args.v_strides), os = strides4(args.o_strides);
    attn_ref::Strides3 ls{{args.lse_strides[0], args.lse_strides[1],
                           args.lse_strides[2]}};
    std::vector<double> refO(out.size()), refLse(lse.size());
    attn_ref::Mask mask = static_cast<attn_ref::Mask>(p.mask);
    attn_ref::ErrorStats errors;
    if (p.dtype == ATTN_DTYPE_BF16) {
      auto *qq = reinterpret_cast<const attn_ref::bf16 *>(q.data());
      auto *kk = reinterpret_cast<const attn_ref::bf16 *>(k.data());
      auto *vv = reinterpret_cast<const attn_ref::bf16 *>(v.data());
      attn_ref::reference_forward(shape, qq, qs, kk, ks, vv, vs, refO.data(),
                                  os, refLse.data(), ls, mask, double(p.scale));
      errors = attn_ref::compare_bhnd(
          shape, reinterpret_cast<const attn_ref::bf16 *>(out.data()), os,
          refO.data(), os);
    } else {
      auto *qq = reinterpret_cast<const attn_ref::f16 *>(q.data());
      auto *kk = reinterpret_cast<const attn_ref::f16 *>(k.data());
      auto *vv = reinterpret_cast<const attn_ref::f16 *>(v.data());
      attn_ref::reference_forward(shape, qq, qs, kk, ks, vv, vs, refO.data(),
                                  os, refLse.data(), ls, mask, double(p.scale));
      errors = attn_ref::compare_bhnd(
          shape, reinterpret_cast<const attn_ref::f16 *>(out.data()), os,
          refO.data(), os);
    }
    // With Nk = 0 the reference is all zeros: the error is then absolute.
    oError = errors.nonfinite ? 1e30 : errors.rel_l2;
    double tolerance = p.dtype == ATTN_DTYPE_BF16 ? 2e-2 : 5e-3;
    bool ok = errors.ok(tolerance);
    if (p.withLse) {
      attn_ref::ErrorStats lseErrors =
          attn_ref::compare_lse(shape, lse.data(), ls, refLse.data(), ls);
      lseError = lseErrors.nonfinite ? 1e30 : lseErrors.max_abs;
      ok = ok && lseErrors.nonfinite == 0 && lseErrors.max_abs <= 1e-2;
    }
    return ok;
  }
};

//===----------------------------------------------------------------------===//
// The checks
//===----------------------------------------------------------------------===//

std::vector<Problem> correctnessProblems(bool quick) {
  std::vector<Problem> problems;
  auto add = [&](attn_dtype dtype, int64_t d, attn_mask mask, int64_t b,
                 int64_t h, int64_t nq, int64_t nk, bool bnhd = false,
                 bool lse = true) -> Problem & {
    Problem p;
    p.dtype = dtype;
    p.headDim = d;
    p.mask = mask;
    p.batch = b;
    p.heads = h;
    p.seqlenQ = nq;
    p.seqlenK = nk;
    p.bnhd = bnhd;
    p.withLse = lse;
    p.seed = problems.size() + 1;
    problems.push_back(p);
    return problems.back();
  };
  add(ATTN_DTYPE_BF16, 64, ATTN_MASK_NONE, 2, 3, 128, 128);
  add(ATTN_DTYPE_BF16, 128, ATTN_MASK_CAUSAL, 1, 2, 200, 200, true);
  add(ATTN_DTYPE_F16, 128, ATTN_MASK_CAUSAL_BOTTOM_RIGHT, 2, 2, 97, 250);
  add(ATTN_DTYPE_F16, 64, ATTN_MASK_NONE, 1, 4, 1, 333, false, false);
  add(ATTN_DTYPE_BF16, 64, ATTN_MASK_NONE, 1, 2, 70, 0); // O = 0, LSE = -inf
  // Grouped-query attention: query head h reads K/V head h / (H / Hkv).
  add(ATTN_DTYPE_BF16, 128, ATTN_MASK_CAUSAL, 2, 8, 150, 150).kvHeads = 2;
  add(ATTN_DTYPE_F16, 64, ATTN_MASK_NONE, 1, 4, 77, 200, true).kvHeads = 1;
  // A negative scale: the kernel without the positive-scale shortcut.
  add(ATTN_DTYPE_BF16, 64, ATTN_MASK_CAUSAL_BOTTOM_RIGHT, 1, 2, 90, 130)
      .scale = -0.09f;
  if (!quick) {
    add(ATTN_DTYPE_BF16, 256, ATTN_MASK_NONE, 1, 2, 64, 512);
    add(ATTN_DTYPE_BF16, 32, ATTN_MASK_CAUSAL, 3, 1, 129, 129, true);
    add(ATTN_DTYPE_F16, 96, ATTN_MASK_NONE, 1, 1, 1000, 17);
    add(ATTN_DTYPE_BF16, 256, ATTN_MASK_CAUSAL, 1, 16, 64, 300, true)
        .kvHeads = 4;
    Problem &mqa = add(ATTN_DTYPE_F16, 128, ATTN_MASK_NONE, 2, 6, 33, 257);
    mqa.kvHeads = 1;
    mqa.scale = -1.0f;
  }
  return problems;
}

void runCorrectness(bool quick) {
  std::printf("\n%-58s %-8s %10s %10s\n", "correctness", "status", "O rel_l2",
              "LSE err");
  for (const Problem &problem : correctnessProblems(quick)) {
    Instance instance(problem);
    attn_status status = instance.run();
    double oError = 0, lseError = 0;
    bool ok = status == ATTN_OK && instance.verify(oError, lseError);
    std::printf("%-58s %-8s %10.2e %10.2e\n", problem.name().c_str(),
                status != ATTN_OK ? "ERROR" : ok ? "ok" : "WRONG", oError,
                lseError);
    if (status != ATTN_OK)
      fail(problem.name() + ": " + attn_status_string(status) + ": " +
           attn_last_error());
    else if (!ok)
      fail(problem.name() + ": results differ from the reference");
  }
}

void runErrorChecks() {
  Problem problem;
  Instance instance(problem);
  check(cu.cuCtxSynchronize(), "synchronize");
  std::vector<uint8_t> before(instance.dout.bytes), after(before.size());
  cu.cuMemcpyDtoH(before.data(), instance.dout.ptr, before.size());

  attn_fwd_args bad = instance.args;
  bad.head_dim = 12;
  if (attn_forward(&bad) != ATTN_ERROR_UNSUPPORTED)
    fail("head_dim 12 is not UNSUPPORTED");
  std::vector<uint16_t> hostMemory(instance.q.size());
  bad = instance.args;
  bad.q = hostMemory.data();
  attn_status status = attn_forward(&bad);
  if (status != ATTN_ERROR_INVALID_ARGUMENT)
    fail(std::string("a host pointer gave ") + attn_status_string(status));
  else
    std::printf("\nhost pointer rejected: %s\n", attn_last_error());
  cu.cuMemcpyDtoH(after.data(), instance.dout.ptr, after.size());
  if (before != after)
    fail("a failed call wrote the output");
}

void removeFiles(const std::string &directory) {
  if (DIR *dir = opendir(directory.c_str())) {
    while (struct dirent *entry = readdir(dir))
      if (entry->d_name[0] != '.')
        unlink((directory + "/" + entry->d_name).c_str());
    closedir(dir);
  }
}

void runTiming() {
  std::printf("\n%-58s %12s\n", "timing", "");
  // A configuration the correctness checks did not compile.
  Problem problem;
  problem.dtype = ATTN_DTYPE_F16;
  problem.headDim = 128;
  problem.mask = ATTN_MASK_CAUSAL;
  problem.heads = 8;
  problem.seqlenQ = problem.seqlenK = 1024;
  Instance instance(problem);

  attn_stats before = stats();
  auto start = Clock::now();
  attn_status status = instance.run();
  double coldMs = msSince(start);
  check(cu.cuCtxSynchronize(), "synchronize");
  attn_stats cold = stats();
  if (status != ATTN_OK || cold.compiles != before.compiles + 1)
    fail(std::string("cold first call: ") + attn_status_string(status) +
         ", compiles " + std::to_string(cold.compiles - before.compiles));
  std::printf("%-58s %9.1f ms  (compiler %.1f ms)\n",
              "first call, empty disk cache (compile + load + launch)", coldMs,
              cold.compile_ms_total - before.compile_ms_total);

  attn_clear_memory_cache();
  start = Clock::now();
  status = instance.run();
  double warmMs = msSince(start);
  check(cu.cuCtxSynchronize(), "synchronize");
  attn_stats warm = stats();
  if (status != ATTN_OK || warm.compiles != cold.compiles ||
      warm.disk_hits != cold.disk_hits + 1)
    fail("warm-disk first call did not load from disk");
  std::printf("%-58s %9.1f ms\n",
              "first call, warm disk cache (read + driver load + launch)",
              warmMs);

  // Another sequence length: launch argument only.
  Problem longer = problem;
  longer.seqlenQ = longer.seqlenK = 3000;
  Instance other(longer);
  start = Clock::now();
  status = other.run();
  double otherMs = msSince(start);
  double oError, lseError;
  if (status != ATTN_OK || !other.verify(oError, lseError) ||
      stats().compiles != warm.compiles || stats().disk_hits != warm.disk_hits)
    fail("a new sequence length recompiled or failed");
  std::printf("%-58s %9.3f ms\n", "first call with a new sequence length",
              otherMs);

  // Cached calls: what a launch costs on the host.
  Problem tiny;
  tiny.seqlenQ = tiny.seqlenK = 64;
  Instance small(tiny);
  small.run();
  check(cu.cuCtxSynchronize(), "synchronize");
  std::vector<double> us;
  for (int i = 0; i < 1000; ++i) {
    start = Clock::now();
    small.run();
    us.push_back(msSince(start) * 1000);
    if (i % 100 == 99)
      cu.cuCtxSynchronize();
  }
  std::sort(us.begin(), us.end());
  std::printf("%-58s %9.2f us  (p90 %.2f us)\n",
              "cached call, median host time of attn_forward", us[us.size() / 2],
              us[us.size() * 9 / 10]);
}

void runThreads(const std::string &cacheDir) {
  // Empty both caches so that every key compiles again.
  attn_clear_memory_cache();
  removeFiles(cacheDir);
  std::vector<Problem> keys(4);
  keys[0].dtype = ATTN_DTYPE_BF16, keys[0].headDim = 64;
  keys[1].dtype = ATTN_DTYPE_BF16, keys[1].headDim = 128,
  keys[1].mask = ATTN_MASK_CAUSAL;
  keys[2].dtype = ATTN_DTYPE_F16, keys[2].headDim = 64;
  keys[3].dtype = ATTN_DTYPE_F16, keys[3].headDim = 128,
  keys[3].mask = ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  // Eight threads, two per key, with different sizes.
  std::vector<std::unique_ptr<Instance>> instances;
  for (int i = 0; i < 8; ++i) {
    Problem p = keys[i % 4];
    p.heads = 1 + i;
    p.seqlenQ = 100 + 10 * i;
    p.seqlenK = 300 - 10 * i;
    p.seed = 100 + i;
    instances.push_back(std::make_unique<Instance>(p));
  }
  check(cu.cuCtxSynchronize(), "synchronize");
  attn_stats before = stats();
  std::vector<attn_status> statuses(8);
  std::vector<std::thread> threads;
  auto start = Clock::now();
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] { statuses[i] = instances[i]->run(); });
  for (auto &thread : threads)
    thread.join();
  double wallMs = msSince(start);
  attn_stats after = stats();
  for (int i = 0; i < 8; ++i) {
    double oError, lseError;
    if (statuses[i] != ATTN_OK)
      fail("thread " + std::to_string(i) + ": " +
           attn_status_string(statuses[i]));
    else if (!instances[i]->verify(oError, lseError))
      fail("thread " + std::to_string(i) + ": wrong results");
  }
  uint64_t compiles = after.compiles - before.compiles;
  if (compiles != 4)
    fail("8 threads over 4 keys compiled " + std::to_string(compiles) +
         " times (expected 4)");
  std::printf("%-58s %9.1f ms  (%llu compiles, %.1f ms of compiler time)\n",
              "8 threads, 4 keys, first calls at once", wallMs,
              (unsigned long long)compiles,
              after.compile_ms_total - before.compile_ms_total);
}

} // namespace

int main(int argc, char **argv) {
  bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  // A fresh disk cache, set before the library's first call reads it.
  char cacheDir[] = "/tmp/attn-jit-gpu-test-XXXXXX";
  if (!mkdtemp(cacheDir)) {
    std::perror("mkdtemp");
    return 1;
  }
  setenv("ATTN_JIT_CACHE_DIR", cacheDir, 1);
  unsetenv("ATTN_JIT_DISK_CACHE");

  std::string device = initDriver();
  std::printf("attn-jit runtime GPU test on %s, compiler %s\n", device.c_str(),
              attn_version());
  runCorrectness(quick);
  runErrorChecks();
  runTiming();
  runThreads(cacheDir);

  attn_stats s = stats();
  std::printf("\nstats: compiles %llu, memory hits %llu, disk hits %llu, "
              "disk misses %llu, rejected %llu, launches %llu, compile %.1f ms\n",
              (unsigned long long)s.compiles,
              (unsigned long long)s.memory_hits,
              (unsigned long long)s.disk_hits,
              (unsigned long long)s.disk_misses,
              (unsigned long long)s.disk_rejected,
              (unsigned long long)s.launches, s.compile_ms_total);
  removeFiles(cacheDir);
  rmdir(cacheDir);
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
