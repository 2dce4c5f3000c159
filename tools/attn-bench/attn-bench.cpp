//===- attn-bench.cpp - attn-jit forward benchmark ------------------------===//
//
// For each configuration (head dim D, sequence length N, causal or not) in
// the FlashAttention convention (batch = tokens / N, heads = width / D):
//   * attn-jit: TFLOP/s (median of --reps timed calls after --warmup, CUDA
//     events around each call), first-call wall time, extra device memory,
//     relative error against float64;
//   * the unfused baseline: S = scale Q K^T (cuBLAS, f32), P = softmax(S)
//     (our kernel, bf16/f16), O = P V (cuBLAS) -- same measures.
// FLOPs are 4 B H N^2 D, halved when causal (the usual convention; the
// unfused baseline still computes the full S).
//
// What "extra memory" is: the drop in free device memory (cuMemGetInfo)
// across the method's first call for the configuration; inputs and outputs
// are allocated before. For attn-jit that is the loaded module and any
// workspace it keeps (allocations freed inside the call are not seen); for
// the unfused baseline it is S + P + what cuBLAS allocates on first use.
//
// Relative error: ||O - ref|| / ||ref|| over a sample -- query rows every
// N/--err-rows rows (the last row included) of two (batch, head) pairs, the
// first and the last -- against the float64 reference of
// tests/common/Reference.h computed on the host from the same inputs.
//
// Output: one JSON object per line per configuration on stdout (and in
// --json FILE), then a human-readable table. --first-call measures only the
// first attn_forward of the process for one configuration (see usage()).
//
//===----------------------------------------------------------------------===//

#include "ArgParse.h"
#include "CublasLoader.h"
#include "CudaDriver.h"
#include "Reference.h"
#include "attn-jit/attn_jit.h"
#ifdef ATTN_BENCH_HAVE_SOFTMAX_PTX
#include "UnfusedSoftmaxPtx.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace attn_tools;

namespace {

struct Options {
  std::vector<int64_t> dims{64, 128, 256};
  std::vector<int64_t> seqlens{512, 1024, 2048, 4096, 8192, 16384};
  std::vector<int> causal{0, 1};
  std::string dtype = "bf16";
  int64_t tokens = 16384, width = 2048;
  int reps = 30, warmup = 5;
  int64_t err_rows = 128;
  bool unfused = true, jit = true, lse = true, fresh_cache = false;
  bool first_call = false;
  std::string cache_dir, json_path;
  uint64_t seed = 0;
  bool seed_given = false;
  int64_t block_m = 0, block_n = 0; // tile-size overrides (0: defaults)
};

void usage() {
  std::puts(
      "usage: attn-bench [options]\n"
      "  --d 64,128,256          head dims\n"
      "  --n 512,1k,...,16k      sequence lengths (Nq = Nk)\n"
      "  --causal 0,1            0: no mask, 1: causal (top-left; N square)\n"
      "  --dtype bf16|f16\n"
      "  --tokens 16384 --width 2048   batch = tokens/N, heads = width/D\n"
      "  --reps 30 --warmup 5    timed calls (median) after warm-up calls\n"
      "  --err-rows 128          query rows per sampled head for the error\n"
      "  --no-unfused            skip the cuBLAS baseline\n"
      "  --block-m M --block-n N tile sizes of attn-jit (0: its defaults)\n"
      "  --no-jit                skip attn-jit (time the baseline only)\n"
      "  --no-lse                do not ask attn-jit for the LSE\n"
      "  --fresh-cache           use a new empty ATTN_JIT_CACHE_DIR (default\n"
      "                          when ATTN_JIT_CACHE_DIR is unset)\n"
      "  --json FILE             also write the JSON lines to FILE\n"
      "  --quick                 D 64,128; N 1k,4k; reps 10, warmup 3\n"
      "  --seed S                input seed (default: random, printed)\n"
      "  --first-call [--cache-dir DIR]  time only the first attn_forward of\n"
      "                          this process for the first --d/--n/--causal;\n"
      "                          DIR (default: a new empty one) becomes\n"
      "                          ATTN_JIT_CACHE_DIR. If the runtime exports\n"
      "                          attn_clear_memory_cache, a second call after\n"
      "                          clearing it is timed too (disk cache warm).");
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--d") o.dims = parse_int_list(flag_value(argc, argv, i), "--d");
    else if (a == "--n") o.seqlens = parse_int_list(flag_value(argc, argv, i), "--n");
    else if (a == "--causal") {
      std::string v = flag_value(argc, argv, i);
      o.causal.clear();
      if (v == "both") o.causal = {0, 1};
      else for (int64_t c : parse_int_list(v, "--causal")) o.causal.push_back(c ? 1 : 0);
    } else if (a == "--dtype") o.dtype = flag_value(argc, argv, i);
    else if (a == "--tokens") o.tokens = parse_int(flag_value(argc, argv, i), "--tokens");
    else if (a == "--width") o.width = parse_int(flag_value(argc, argv, i), "--width");
    else if (a == "--reps") o.reps = int(parse_int(flag_value(argc, argv, i), "--reps"));
    else if (a == "--warmup") o.warmup = int(parse_int(flag_value(argc, argv, i), "--warmup"));
    else if (a == "--err-rows") o.err_rows = parse_int(flag_value(argc, argv, i), "--err-rows");
    else if (a == "--no-unfused") o.unfused = false;
    else if (a == "--no-jit") o.jit = false;
    else if (a == "--no-lse") o.lse = false;
    else if (a == "--fresh-cache") o.fresh_cache = true;
    else if (a == "--json") o.json_path = flag_value(argc, argv, i);
    else if (a == "--quick") { o.dims = {64, 128}; o.seqlens = {1024, 4096}; o.reps = 10; o.warmup = 3; }
    else if (a == "--seed") { o.seed = uint64_t(parse_int(flag_value(argc, argv, i), "--seed")); o.seed_given = true; }
    else if (a == "--first-call") o.first_call = true;
    else if (a == "--cache-dir") o.cache_dir = flag_value(argc, argv, i);
    else if (a == "--block-m") o.block_m = parse_int(flag_value(argc, argv, i), "--block-m");
    else if (a == "--block-n") o.block_n = parse_int(flag_value(argc, argv, i), "--block-n");
    else if (a == "-h" || a == "--help") { usage(); std::exit(0); }
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); usage(); std::exit(64); }
  }
  if (o.dtype != "bf16" && o.dtype != "f16") { std::fprintf(stderr, "--dtype bf16|f16\n"); std::exit(64); }
  if (o.reps < 1 || o.warmup < 0) { std::fprintf(stderr, "--reps >= 1, --warmup >= 0\n"); std::exit(64); }
  return o;
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

size_t free_device_bytes() {
  size_t free_b = 0, total_b = 0;
  CU(DRV(cuMemGetInfo)(&free_b, &total_b));
  return free_b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string make_temp_dir(const char *tag) {
  const char *base = getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + tag + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) { std::perror("mkdtemp"); std::exit(2); }
  return buf.data();
}

// Snapshot of the runtime's counters; zeros if attn_get_stats fails.
attn_stats stats_now() {
  attn_stats s;
  std::memset(&s, 0, sizeof s);
  attn_get_stats(&s);
  return s;
}

std::string stats_delta_json(const attn_stats &a, const attn_stats &b) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"compiles\":%llu,\"memory_hits\":%llu,\"disk_hits\":%llu,"
                "\"disk_misses\":%llu,\"compile_ms\":%.3f}",
                (unsigned long long)(b.compiles - a.compiles),
                (unsigned long long)(b.memory_hits - a.memory_hits),
                (unsigned long long)(b.disk_hits - a.disk_hits),
                (unsigned long long)(b.disk_misses - a.disk_misses),
                b.compile_ms_total - a.compile_ms_total);
  return buf;
}

std::string json_escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') { out += '\\'; out += c; }
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out;
}

// JSON number, or null for NaN/inf (JSON has neither).
std::string num(double x, const char *fmt = "%.6g") {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// Results of one method on one configuration.
struct MethodResult {
  std::string status = "not run"; // "ok", or why not
  double median_ms = NAN, min_ms = NAN, max_ms = NAN, tflops = NAN;
  double rel_err = NAN, max_abs_err = NAN;
  size_t nonfinite = 0;          // NaN/inf elements in the whole output
  long long extra_bytes = -1;
  double first_call_ms = NAN;
  std::string stats_json = "null";

  std::string json() const {
    return "{\"status\":\"" + json_escape(status) + "\",\"median_ms\":" + num(median_ms) +
           ",\"min_ms\":" + num(min_ms) + ",\"max_ms\":" + num(max_ms) +
           ",\"tflops\":" + num(tflops) + ",\"rel_err\":" + num(rel_err) +
           ",\"max_abs_err\":" + num(max_abs_err) + ",\"nonfinite\":" + std::to_string(nonfinite) +
           ",\"extra_bytes\":" + (extra_bytes < 0 ? std::string("null") : std::to_string(extra_bytes)) +
           ",\"first_call_ms\":" + num(first_call_ms) + ",\"stats\":" + stats_json + "}";
  }
};

// Times `call` (which enqueues one run on `stream`, rotating inputs by the
// index it gets) with a pair of events per call, after warm-up calls.
template <class F>
void time_calls(CUstream stream, int warmup, int reps, F call, MethodResult &r) {
  for (int i = 0; i < warmup; ++i) call(i);
  std::vector<CUevent> ev(2 * size_t(reps));
  for (CUevent &e : ev) CU(DRV(cuEventCreate)(&e, CU_EVENT_DEFAULT));
  for (int i = 0; i < reps; ++i) {
    CU(DRV(cuEventRecord)(ev[2 * i], stream));
    call(warmup + i);
    CU(DRV(cuEventRecord)(ev[2 * i + 1], stream));
  }
  CU(DRV(cuEventSynchronize)(ev.back()));
  std::vector<double> ms(reps);
  for (int i = 0; i < reps; ++i) {
    float t = 0;
    CU(DRV(cuEventElapsedTime)(&t, ev[2 * i], ev[2 * i + 1]));
    ms[i] = t;
  }
  for (CUevent e : ev) DRV(cuEventDestroy)(e);
  r.median_ms = median(ms);
  r.min_ms = *std::min_element(ms.begin(), ms.end());
  r.max_ms = *std::max_element(ms.begin(), ms.end());
}

template <class T> constexpr uint16_t nan_bits();
template <> constexpr uint16_t nan_bits<attn_ref::bf16>() { return 0x7fc0; }
template <> constexpr uint16_t nan_bits<attn_ref::f16>() { return 0x7e00; }

// The float64 reference on the sampled heads and rows of one configuration.
struct ErrorSample {
  struct Head { int64_t b, h; std::vector<double> o; }; // o: (N, D) of that head
  std::vector<Head> heads;
  attn_ref::RowRange rows;
};

template <class T>
ErrorSample reference_sample(const std::vector<T> &q, const std::vector<T> &k,
                             const std::vector<T> &v, int64_t B, int64_t H,
                             int64_t N, int64_t D, bool causal, int64_t err_rows) {
  ErrorSample es;
  int64_t step = std::max<int64_t>(1, N / std::max<int64_t>(1, err_rows));
  es.rows = attn_ref::RowRange{(N - 1) % step, N, step};
  es.heads.push_back({0, 0, {}});
  if (B * H > 1) es.heads.push_back({B - 1, H - 1, {}});
  std::vector<std::thread> workers;
  for (auto &hd : es.heads) {
    hd.o.assign(size_t(N * D), 0.0);
    workers.emplace_back([&, p = &hd] {
      size_t off = size_t(((p->b * H) + p->h) * N * D);
      attn_ref::Shape sh{1, 1, N, N, D};
      attn_ref::Strides4 s = attn_ref::bhnd_strides(1, N, D);
      attn_ref::reference_forward(sh, q.data() + off, s, k.data() + off, s, v.data() + off, s,
                                  p->o.data(), s, nullptr, attn_ref::Strides3{{0, 0, 0}},
                                  causal ? attn_ref::Mask::Causal : attn_ref::Mask::None, 0.0,
                                  es.rows);
    });
  }
  for (auto &w : workers) w.join();
  return es;
}

// Downloads `o` (B, H, N, D contiguous), counts non-finite elements over all
// of it and measures the error over the sample.
template <class T>
void measure_error(CUdeviceptr o, size_t elems, const ErrorSample &es, int64_t H,
                   int64_t N, int64_t D, MethodResult &r) {
  std::vector<T> host(elems);
  CU(DRV(cuMemcpyDtoH)(host.data(), o, elems * sizeof(T)));
  r.nonfinite = 0;
  for (const T &x : host) r.nonfinite += !std::isfinite(attn_ref::to_double(x));
  double num2 = 0, den2 = 0, maxabs = 0;
  for (const auto &hd : es.heads) {
    size_t off = size_t(((hd.b * H) + hd.h) * N * D);
    for (int64_t i = es.rows.begin; i < N; i += es.rows.step)
      for (int64_t d = 0; d < D; ++d) {
        double x = attn_ref::to_double(host[off + size_t(i * D + d)]);
        double ref = hd.o[size_t(i * D + d)];
        double diff = std::fabs(x - ref);
        num2 += diff * diff;
        den2 += ref * ref;
        maxabs = std::max(maxabs, diff);
      }
  }
  r.rel_err = den2 > 0 ? std::sqrt(num2 / den2) : NAN;
  if (r.nonfinite) r.rel_err = NAN; // NaN never passes for a number either
  r.max_abs_err = maxabs;
}

// The unfused baseline's pieces: cuBLAS handle and the softmax kernel.
struct Unfused {
  bool ok = false;
  std::string why;
  Cublas blas;
  CUmodule mod = nullptr;
  CUfunction softmax = nullptr;

  void init(CUstream stream, bool want_f16) {
#ifndef ATTN_BENCH_HAVE_SOFTMAX_PTX
    (void)stream; (void)want_f16;
    why = "built without nvcc: no softmax kernel";
    return;
#else
    if (!blas.load()) { why = blas.error; return; }
    if (blas.set_stream(blas.handle, stream) != 0) { why = "cublasSetStream failed"; return; }
    CU(DRV(cuModuleLoadData)(&mod, kUnfusedSoftmaxPtx));
    CU(DRV(cuModuleGetFunction)(&softmax, mod, want_f16 ? "row_softmax_f16" : "row_softmax_bf16"));
    ok = true;
#endif
  }

  // O = softmax(scale Q K^T + mask) V for contiguous (B, H, N, D) tensors.
  void run(CUstream stream, int dt, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v,
           CUdeviceptr o, CUdeviceptr S, CUdeviceptr P, int64_t BH, int64_t N,
           int64_t D, bool causal) {
    const float scale = float(1.0 / std::sqrt(double(D))), one = 1.f, zero = 0.f;
    // Column-major view: S^T (N_k x N_q) = K (as D x N_k, transposed) * Q^T.
    int st = blas.gemm(blas.handle, kCublasOpT, kCublasOpN, int(N), int(N), int(D), &scale,
                       (void *)k, dt, int(D), N * D, (void *)q, dt, int(D), N * D, &zero,
                       (void *)S, kCudaR32F, int(N), N * N, int(BH), kCublasCompute32F,
                       kCublasGemmDefault);
    if (st != 0) { std::fprintf(stderr, "cublasGemmStridedBatchedEx (S) failed: %d\n", st); std::exit(2); }
    long long nq = N, nk = N, diag = 0;
    int mask = causal ? 1 : 0;
    void *params[] = {&S, &P, &nq, &nk, &mask, &diag};
    CU(DRV(cuLaunchKernel)(softmax, unsigned(BH * N), 1, 1, 256, 1, 1, 0, stream, params, nullptr));
    // O^T (D x N_q) = V^T (D x N_k) * P^T (N_k x N_q).
    st = blas.gemm(blas.handle, kCublasOpN, kCublasOpN, int(D), int(N), int(N), &one,
                   (void *)v, dt, int(D), N * D, (void *)P, dt, int(N), N * N, &zero,
                   (void *)o, dt, int(D), N * D, int(BH), kCublasCompute32F, kCublasGemmDefault);
    if (st != 0) { std::fprintf(stderr, "cublasGemmStridedBatchedEx (O) failed: %d\n", st); std::exit(2); }
  }
};

std::string fmt_bytes(long long b) {
  if (b < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / (1 << 20));
  return buf;
}

struct Row {
  int64_t d, n;
  int causal;
  MethodResult jit, unf;
};

void print_table(const std::vector<Row> &rows) {
  std::printf("\n%5s %6s %6s | %9s %8s %9s %11s %10s | %9s %8s %9s %11s\n", "D", "N", "causal",
              "jit ms", "TFLOP/s", "rel.err", "1st call ms", "extra", "unf ms", "TFLOP/s",
              "rel.err", "extra");
  for (const Row &r : rows)
    std::printf("%5lld %6lld %6s | %9.3f %8.1f %9.2e %11.1f %10s | %9.3f %8.1f %9.2e %11s\n",
                (long long)r.d, (long long)r.n, r.causal ? "yes" : "no", r.jit.median_ms,
                r.jit.tflops, r.jit.rel_err, r.jit.first_call_ms, fmt_bytes(r.jit.extra_bytes).c_str(),
                r.unf.median_ms, r.unf.tflops, r.unf.rel_err, fmt_bytes(r.unf.extra_bytes).c_str());
  for (const Row &r : rows) {
    if (r.jit.status != "ok")
      std::printf("attn-jit D=%lld N=%lld causal=%d: %s\n", (long long)r.d, (long long)r.n, r.causal, r.jit.status.c_str());
    if (r.unf.status != "ok")
      std::printf("unfused  D=%lld N=%lld causal=%d: %s\n", (long long)r.d, (long long)r.n, r.causal, r.unf.status.c_str());
  }
}

attn_fwd_args make_args(const Options &o, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v,
                        CUdeviceptr out, CUdeviceptr lse, int64_t B, int64_t H, int64_t N,
                        int64_t D, bool causal, CUstream stream) {
  attn_fwd_args a;
  std::memset(&a, 0, sizeof a);
  a.q = (const void *)q; a.k = (const void *)k; a.v = (const void *)v;
  a.o = (void *)out;
  a.lse = o.lse ? (float *)lse : nullptr;
  a.batch = B; a.heads = H; a.kv_heads = H;
  a.seqlen_q = N; a.seqlen_k = N; a.head_dim = D;
  const int64_t s4[4] = {H * N * D, N * D, D, 1};
  for (int i = 0; i < 4; ++i) a.q_strides[i] = a.k_strides[i] = a.v_strides[i] = a.o_strides[i] = s4[i];
  a.lse_strides[0] = H * N; a.lse_strides[1] = N; a.lse_strides[2] = 1;
  a.dtype = o.dtype == "f16" ? ATTN_DTYPE_F16 : ATTN_DTYPE_BF16;
  a.mask = causal ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE;
  a.scale = 0.f;
  a.block_m = o.block_m;
  a.block_n = o.block_n;
  a.device = ATTN_DEVICE_CUDA;
  a.stream = (void *)stream;
  return a;
}

template <class T>
void fill_host(std::vector<T> &v, uint64_t seed) {
  attn_ref::Rng rng(seed);
  attn_ref::fill_random(v.data(), v.size(), rng, attn_ref::Dist::Normal);
}

// --first-call: one configuration, the first attn_forward of this process.
template <class T> int first_call_mode(const Options &o, CUstream stream) {
  const int64_t D = o.dims.at(0), N = o.seqlens.at(0);
  const bool causal = o.causal.at(0) != 0;
  const int64_t B = std::max<int64_t>(1, o.tokens / N), H = std::max<int64_t>(1, o.width / D);
  const size_t elems = size_t(B * H * N * D);
  std::vector<T> host(elems);
  fill_host(host, o.seed);
  DeviceBuffer q(elems * sizeof(T)), k(elems * sizeof(T)), v(elems * sizeof(T)),
      out(elems * sizeof(T)), lse(size_t(B * H * N) * 4);
  for (DeviceBuffer *b : {&q, &k, &v}) CU(DRV(cuMemcpyHtoD)(b->ptr, host.data(), b->bytes));
  attn_fwd_args a = make_args(o, q.ptr, k.ptr, v.ptr, out.ptr, lse.ptr, B, H, N, D, causal, stream);
  CU(DRV(cuCtxSynchronize)());

  // Files already in the cache directory: 0 means a cold start.
  long long cache_files = 0;
  {
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(getenv("ATTN_JIT_CACHE_DIR"), ec), end;
         !ec && it != end; it.increment(ec))
      cache_files += it->is_regular_file(ec);
  }
  attn_stats s0 = stats_now();
  double t0 = now_ms();
  attn_status st = attn_forward(&a);
  if (st == ATTN_OK) CU(DRV(cuStreamSynchronize)(stream));
  double t1 = now_ms();
  attn_stats s1 = stats_now();
  std::string status = st == ATTN_OK ? "ok" : std::string(attn_status_string(st)) + ": " + attn_last_error();

  // A second call after emptying the in-memory cache loads from disk.
  std::string after_clear = "null", after_clear_stats = "null";
  using ClearFn = void (*)(void);
  auto clear = reinterpret_cast<ClearFn>(dlsym(RTLD_DEFAULT, "attn_clear_memory_cache"));
  if (clear && st == ATTN_OK) {
    // A tiered first call's default kernel reaches the disk cache in the
    // background: wait for it, so that the call below reads it.
    attn_wait_for_compiles();
    clear();
    attn_stats s2 = stats_now();
    double t2 = now_ms();
    attn_status st2 = attn_forward(&a);
    if (st2 == ATTN_OK) CU(DRV(cuStreamSynchronize)(stream));
    double t3 = now_ms();
    after_clear = st2 == ATTN_OK ? num(t3 - t2, "%.3f") : "null";
    after_clear_stats = stats_delta_json(s2, stats_now());
  }
  std::string line =
      "{\"mode\":\"first_call\",\"dtype\":\"" + o.dtype + "\",\"d\":" + std::to_string(D) +
      ",\"n\":" + std::to_string(N) + ",\"causal\":" + (causal ? "true" : "false") +
      ",\"batch\":" + std::to_string(B) + ",\"heads\":" + std::to_string(H) +
      ",\"cache_dir\":\"" + json_escape(getenv("ATTN_JIT_CACHE_DIR")) + "\",\"cache_given\":" +
      (o.cache_dir.empty() ? "false" : "true") + ",\"cache_files_before\":" + std::to_string(cache_files) +
      ",\"status\":\"" + json_escape(status) +
      "\",\"first_call_ms\":" + num(t1 - t0, "%.3f") + ",\"stats\":" + stats_delta_json(s0, s1) +
      ",\"after_memory_clear_ms\":" + after_clear + ",\"after_memory_clear_stats\":" +
      after_clear_stats + "}";
  std::printf("%s\n", line.c_str());
  if (!o.json_path.empty()) {
    FILE *f = std::fopen(o.json_path.c_str(), "a");
    if (f) { std::fprintf(f, "%s\n", line.c_str()); std::fclose(f); }
  }
  return st == ATTN_OK ? 0 : 1;
}

template <class T> int bench_mode(const Options &o, CUdevice dev, CUstream stream) {
  int l2 = 0, sms = 0;
  CU(DRV(cuDeviceGetAttribute)(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev));
  CU(DRV(cuDeviceGetAttribute)(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));

  // Every configuration has tokens * width elements per tensor, so one set
  // of buffers serves them all. When a set fits comfortably in L2, rotate
  // among several so timed calls read from device memory.
  const size_t elems = size_t(o.tokens * o.width);
  const size_t in_bytes = 3 * elems * sizeof(T);
  const int nsets = in_bytes >= size_t(2) * size_t(l2)
                        ? 1
                        : int(std::min<size_t>(16, 2 * size_t(l2) / in_bytes + 1));
  std::vector<T> hq(elems), hk(elems), hv(elems);
  {
    std::thread t1([&] { fill_host(hq, o.seed * 3 + 0); });
    std::thread t2([&] { fill_host(hk, o.seed * 3 + 1); });
    fill_host(hv, o.seed * 3 + 2);
    t1.join(); t2.join();
  }
  std::vector<DeviceBuffer> dq, dk, dv;
  for (int s = 0; s < nsets; ++s) {
    dq.emplace_back(elems * sizeof(T)); dk.emplace_back(elems * sizeof(T)); dv.emplace_back(elems * sizeof(T));
    CU(DRV(cuMemcpyHtoD)(dq.back().ptr, hq.data(), elems * sizeof(T)));
    CU(DRV(cuMemcpyHtoD)(dk.back().ptr, hk.data(), elems * sizeof(T)));
    CU(DRV(cuMemcpyHtoD)(dv.back().ptr, hv.data(), elems * sizeof(T)));
  }
  int64_t min_d = *std::min_element(o.dims.begin(), o.dims.end());
  DeviceBuffer dout(elems * sizeof(T)), dout_unf(elems * sizeof(T));
  DeviceBuffer dlse(size_t(o.tokens * std::max<int64_t>(1, o.width / min_d)) * sizeof(float));

  Unfused unf;
  if (o.unfused) unf.init(stream, o.dtype == "f16");
  else unf.why = "disabled (--no-unfused)";
  const int blas_dt = o.dtype == "f16" ? kCudaR16F : kCudaR16BF;
  std::printf("# inputs: %zu elements per tensor, %d rotating set(s) (L2 %d MiB, %d SMs); "
              "unfused baseline: %s\n",
              elems, nsets, l2 >> 20, sms, unf.ok ? "yes" : unf.why.c_str());
  std::fflush(stdout);

  FILE *json = o.json_path.empty() ? nullptr : std::fopen(o.json_path.c_str(), "a");
  std::vector<Row> table;
  for (int64_t D : o.dims)
    for (int64_t N : o.seqlens)
      for (int causal : o.causal) {
        Row row{D, N, causal, {}, {}};
        if (o.tokens % N || o.width % D) {
          row.jit.status = row.unf.status = "tokens/N or width/D not integral";
          table.push_back(row);
          continue;
        }
        const int64_t B = o.tokens / N, H = o.width / D;
        const double flops = 4.0 * double(B * H) * double(N) * double(N) * double(D) * (causal ? 0.5 : 1.0);
        ErrorSample es = reference_sample(hq, hk, hv, B, H, N, D, causal != 0, o.err_rows);

        // attn-jit: poison, first call (timed on the wall clock, memory
        // measured across it), check the output, then the timed calls.
        MethodResult &jr = row.jit;
        if (!o.jit) {
          jr.status = "skipped: --no-jit";
        } else {
          CU(DRV(cuMemsetD16)(dout.ptr, nan_bits<T>(), elems));
          CU(DRV(cuMemsetD32)(dlse.ptr, 0x7fc00000u, dlse.bytes / 4));
          CU(DRV(cuCtxSynchronize)());
          attn_fwd_args a = make_args(o, dq[0].ptr, dk[0].ptr, dv[0].ptr, dout.ptr, dlse.ptr, B, H, N, D, causal != 0, stream);
          size_t free0 = free_device_bytes();
          attn_stats s0 = stats_now();
          double t0 = now_ms();
          attn_status st = attn_forward(&a);
          if (st == ATTN_OK) CU(DRV(cuStreamSynchronize)(stream));
          jr.first_call_ms = now_ms() - t0;
          jr.stats_json = stats_delta_json(s0, stats_now());
          jr.extra_bytes = (long long)free0 - (long long)free_device_bytes();
          if (jr.extra_bytes < 0) jr.extra_bytes = 0;
          if (st != ATTN_OK) {
            jr.status = std::string(attn_status_string(st)) + ": " + attn_last_error();
          } else {
            // A tiered first call ran the quick kernel: check and time the
            // default one.
            attn_wait_for_compiles();
            if (attn_forward(&a) == ATTN_OK)
              CU(DRV(cuStreamSynchronize)(stream));
            measure_error<T>(dout.ptr, size_t(B * H * N * D), es, H, N, D, jr);
            bool failed = false;
            time_calls(stream, o.warmup, o.reps, [&](int i) {
              attn_fwd_args ai = make_args(o, dq[i % nsets].ptr, dk[i % nsets].ptr, dv[i % nsets].ptr,
                                           dout.ptr, dlse.ptr, B, H, N, D, causal != 0, stream);
              if (attn_forward(&ai) != ATTN_OK) failed = true;
            }, jr);
            jr.tflops = flops / (jr.median_ms * 1e-3) / 1e12;
            jr.status = failed ? std::string("a timed call failed: ") + attn_last_error()
                      : jr.nonfinite ? "output has " + std::to_string(jr.nonfinite) + " non-finite elements"
                      : "ok";
          }
        }

        // Unfused baseline.
        MethodResult &ur = row.unf;
        if (!unf.ok) {
          ur.status = "skipped: " + unf.why;
        } else {
          const size_t s_bytes = size_t(B * H) * size_t(N * N) * 4, p_bytes = s_bytes / 2;
          const size_t headroom = size_t(1) << 30;
          size_t free_u = free_device_bytes();
          if (s_bytes + p_bytes + headroom > free_u) {
            ur.status = "skipped: S and P need " + fmt_bytes((long long)(s_bytes + p_bytes)) +
                        ", free " + fmt_bytes((long long)free_u);
          } else {
            DeviceBuffer S(s_bytes), P(p_bytes);
            CU(DRV(cuMemsetD16)(dout_unf.ptr, nan_bits<T>(), elems));
            CU(DRV(cuCtxSynchronize)());
            double t1 = now_ms();
            unf.run(stream, blas_dt, dq[0].ptr, dk[0].ptr, dv[0].ptr, dout_unf.ptr, S.ptr, P.ptr,
                    B * H, N, D, causal != 0);
            CU(DRV(cuStreamSynchronize)(stream));
            ur.first_call_ms = now_ms() - t1;
            ur.extra_bytes = (long long)free_u - (long long)free_device_bytes();
            measure_error<T>(dout_unf.ptr, size_t(B * H * N * D), es, H, N, D, ur);
            time_calls(stream, o.warmup, o.reps, [&](int i) {
              unf.run(stream, blas_dt, dq[i % nsets].ptr, dk[i % nsets].ptr, dv[i % nsets].ptr,
                      dout_unf.ptr, S.ptr, P.ptr, B * H, N, D, causal != 0);
            }, ur);
            ur.tflops = flops / (ur.median_ms * 1e-3) / 1e12;
            ur.status = ur.nonfinite ? "output has " + std::to_string(ur.nonfinite) + " non-finite elements" : "ok";
          }
        }

        std::string line =
            "{\"tool\":\"attn-bench\",\"dtype\":\"" + o.dtype + "\",\"d\":" + std::to_string(D) +
            ",\"n\":" + std::to_string(N) + ",\"causal\":" + (causal ? "true" : "false") +
            ",\"batch\":" + std::to_string(B) + ",\"heads\":" + std::to_string(H) +
            ",\"flops\":" + num(flops, "%.6e") + ",\"lse\":" + (o.lse ? "true" : "false") +
            ",\"reps\":" + std::to_string(o.reps) + ",\"warmup\":" + std::to_string(o.warmup) +
            ",\"input_sets\":" + std::to_string(nsets) +
            ",\"err_sample\":{\"heads\":" + std::to_string(es.heads.size()) +
            ",\"row_step\":" + std::to_string(es.rows.step) + "},\"seed\":" + std::to_string(o.seed) +
            ",\"attn_jit\":" + row.jit.json() + ",\"unfused\":" + row.unf.json() + "}";
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
        if (json) { std::fprintf(json, "%s\n", line.c_str()); std::fflush(json); }
        table.push_back(row);
      }
  if (json) std::fclose(json);
  print_table(table);
  bool all_ok = true;
  for (const Row &r : table) all_ok &= r.jit.status == "ok" || !o.jit;
  return all_ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  if (!o.seed_given) o.seed = std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32);
  o.seed &= 0x7fffffffffffffffull; // printable as a JSON integer
  CUdevice dev;
  CUcontext ctx;
  std::string why;
  if (!init_cuda(&dev, &ctx, &why)) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  // The cache directory must be set before the runtime's first call. A
  // directory made here is removed at exit; a given one is kept.
  std::string own_cache;
  if (!o.cache_dir.empty()) setenv("ATTN_JIT_CACHE_DIR", o.cache_dir.c_str(), 1);
  else if (o.first_call || o.fresh_cache || !getenv("ATTN_JIT_CACHE_DIR")) {
    own_cache = make_temp_dir("attn-bench-cache");
    setenv("ATTN_JIT_CACHE_DIR", own_cache.c_str(), 1);
  }
  char name[256] = {0};
  DRV(cuDeviceGetName)(name, sizeof name, dev);
  std::printf("# attn-bench: device %s, attn-jit %s, dtype %s, seed %llu, ATTN_JIT_CACHE_DIR=%s\n",
              name, attn_version(), o.dtype.c_str(), (unsigned long long)o.seed,
              getenv("ATTN_JIT_CACHE_DIR"));
  std::fflush(stdout);
  CUstream stream;
  CU(DRV(cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING));
  int rc;
  if (o.dtype == "f16")
    rc = o.first_call ? first_call_mode<attn_ref::f16>(o, stream) : bench_mode<attn_ref::f16>(o, dev, stream);
  else
    rc = o.first_call ? first_call_mode<attn_ref::bf16>(o, stream) : bench_mode<attn_ref::bf16>(o, dev, stream);
  DRV(cuStreamDestroy)(stream);
  if (!own_cache.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(own_cache, ec);
  }
  return rc;
}
