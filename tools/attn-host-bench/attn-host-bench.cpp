//===- attn-host-bench.cpp - times the host (CPU) path --------------------===//
//
// The speed of attn_forward / attn_backward on ATTN_DEVICE_HOST: the first
// call (which compiles the kernel) and then --repeat cached calls, reported
// as best and median wall time and GFLOP/s, with FLOPs = 4·B·H·Nq·Nk·D for
// the forward (halved for a causal mask), 2.5× that for the backward (the
// forward's two products plus dV, dP, dQ and dK: five). The thread count is
// the runtime's (ATTN_JIT_NUM_THREADS). Numerics are attn-run's and the
// tests' job: this tool only times.
//
//===----------------------------------------------------------------------===//

#include "attn-jit/attn_jit.h"

#include "ArgParse.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int64_t batch = 1, heads = 4, kvHeads = 0, nq = 2048, nk = 2048, d = 128;
  int64_t repeat = 5;
  bool causal = false, backward = false;
};

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

int usage(const char *why) {
  if (why)
    std::fprintf(stderr, "attn-host-bench: %s\n", why);
  std::fprintf(stderr,
               "usage: attn-host-bench [--b B] [--h H] [--kv-heads Hkv] "
               "[--nq Nq] [--nk Nk] [--d D]\n"
               "  [--causal] [--backward] [--repeat R]\n"
               "f32 inputs in (B, H, N, D) layout; ATTN_JIT_NUM_THREADS sets "
               "the threads.\n");
  return why ? 2 : 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto num = [&](int64_t &dst) {
      dst = attn_tools::parse_int(attn_tools::flag_value(argc, argv, i),
                                  f.c_str());
    };
    if (f == "--b") num(o.batch);
    else if (f == "--h") num(o.heads);
    else if (f == "--kv-heads") num(o.kvHeads);
    else if (f == "--nq") num(o.nq);
    else if (f == "--nk") num(o.nk);
    else if (f == "--d") num(o.d);
    else if (f == "--repeat") num(o.repeat);
    else if (f == "--causal") o.causal = true;
    else if (f == "--backward") o.backward = true;
    else if (f == "--help") return usage(nullptr);
    else return usage(("unknown flag " + f).c_str());
  }
  int64_t kvHeads = o.kvHeads ? o.kvHeads : o.heads;
  // Bounds before allocating (the runtime checks the rest).
  const int64_t kMax = int64_t(1) << 20;
  for (int64_t v : {o.batch, o.heads, kvHeads, o.nq, o.nk, o.d})
    if (v <= 0 || v > kMax)
      return usage("sizes must be in [1, 2^20]");
  if (o.repeat <= 0 || o.repeat > 1000)
    return usage("--repeat must be in [1, 1000]");
  size_t nQ = size_t(o.batch * o.heads * o.nq * o.d);
  size_t nK = size_t(o.batch * kvHeads * o.nk * o.d);
  if (nQ > (size_t(1) << 31) || nK > (size_t(1) << 31))
    return usage("tensors over 2^31 elements");

  std::mt19937 rng(42);
  std::normal_distribution<float> normal;
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float &x : v)
      x = normal(rng);
    return v;
  };
  std::vector<float> q = random(nQ), k = random(nK), v = random(nK),
                     out(nQ), lse(size_t(o.batch * o.heads * o.nq)),
                     dO = random(nQ), dq(nQ), dk(nK), dv(nK);

  attn_fwd_args a;
  std::memset(&a, 0, sizeof(a));
  a.q = q.data(), a.k = k.data(), a.v = v.data(), a.o = out.data();
  a.lse = lse.data();
  a.batch = o.batch, a.heads = o.heads, a.kv_heads = kvHeads;
  a.seqlen_q = o.nq, a.seqlen_k = o.nk, a.head_dim = o.d;
  attn_set_bhnd_strides(&a);
  a.dtype = ATTN_DTYPE_F32;
  a.mask = o.causal ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE;
  a.device = ATTN_DEVICE_HOST;

  attn_bwd_args g;
  std::memset(&g, 0, sizeof(g));
  if (o.backward) {
    // The forward's O and LSE first: the backward reads them.
    if (attn_forward(&a) != ATTN_OK) {
      std::fprintf(stderr, "attn_forward: %s\n", attn_last_error());
      return 1;
    }
    g.fwd = a;
    g.d_o = dO.data(), g.dq = dq.data(), g.dk = dk.data(), g.dv = dv.data();
    attn_set_bwd_strides_like_fwd(&g);
  }
  auto call = [&] {
    attn_status s = o.backward ? attn_backward(&g) : attn_forward(&a);
    if (s != ATTN_OK) {
      std::fprintf(stderr, "%s: %s\n",
                   o.backward ? "attn_backward" : "attn_forward",
                   attn_last_error());
      std::exit(1);
    }
  };

  auto start = std::chrono::steady_clock::now();
  call();
  double firstMs = msSince(start);
  attn_stats stats;
  attn_get_stats(&stats);
  std::vector<double> ms;
  std::clock_t cpuStart = std::clock();
  for (int64_t r = 0; r < o.repeat; ++r) {
    start = std::chrono::steady_clock::now();
    call();
    ms.push_back(msSince(start));
  }
  // CPU time of all threads per call: on a busy machine, wall time says
  // little, and FLOPs per CPU-second say what one core does.
  double cpuMs = 1e3 * double(std::clock() - cpuStart) / CLOCKS_PER_SEC /
                 double(o.repeat);
  std::sort(ms.begin(), ms.end());
  double flops = 4.0 * double(o.batch) * double(o.heads) * double(o.nq) *
                 double(o.nk) * double(o.d) * (o.causal ? 0.5 : 1.0) *
                 (o.backward ? 2.5 : 1.0);
  double best = ms.front(), median = ms[ms.size() / 2];
  std::printf("%s B=%lld H=%lld Hkv=%lld Nq=%lld Nk=%lld D=%lld f32%s: "
              "first call %.1f ms (compile %.1f ms); %lld calls: best %.1f ms "
              "(%.2f GFLOP/s), median %.1f ms (%.2f GFLOP/s); CPU time %.1f ms a "
              "call (%.2f GFLOP per CPU-second)\n",
              o.backward ? "backward" : "forward", (long long)o.batch,
              (long long)o.heads, (long long)kvHeads, (long long)o.nq,
              (long long)o.nk, (long long)o.d, o.causal ? " causal" : "",
              firstMs, stats.compile_ms_total, (long long)o.repeat, best,
              flops / best / 1e6, median, flops / median / 1e6, cpuMs,
              flops / cpuMs / 1e6);
  return 0;
}
