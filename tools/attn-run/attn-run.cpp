//===- attn-run.cpp - run one attention through the runtime and check it --===//
//
// The main job: builds (or loads from the cache) the kernel for a
// configuration, runs it on fresh random inputs through the runtime's C API,
// on the GPU when one is present and on the CPU (the host device) otherwise,
// and prints its error against a float64 reference. Exit status 0 only when
// every output element is finite and within the tolerance for the dtype.
//
//===----------------------------------------------------------------------===//

#include "attn-jit/attn_jit.h"

#include "ArgParse.h"
#include "CudaDriver.h"
#include "Reference.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace attn_ref;

namespace {

struct Options {
  std::string device = "auto", dtype = "bf16", mask = "none", layout = "bhnd";
  int64_t batch = 2, heads = 4, nq = 257, nk = 300, d = 64;
  int64_t kvHeads = 0; // K/V heads (GQA); 0: heads
  int64_t blockM = 0, blockN = 0;
  double scale = 0;
  double tol = 0; // 0: the dtype's tolerance
  uint64_t seed = 0;
  std::string dist = "normal";
};

/// Tolerances for ||O - ref|| / ||ref||: the output is rounded to the input
/// type (bf16: 8-bit mantissa, unit roundoff 2^-9 = 2e-3; f16: 2^-12 = 2.4e-4),
/// and so is P before the P·V product; f32 keeps f32 accumulation error only.
double outputTolerance(attn_dtype t) {
  switch (t) {
  case ATTN_DTYPE_BF16:
    return 1e-2;
  case ATTN_DTYPE_F16:
    return 2e-3;
  default:
    return 1e-5;
  }
}

/// LSE is computed in f32 from exact products of the inputs: f32 roundoff on
/// |LSE| plus the approximate exp2/log2 of the GPU (2^-22 relative).
double lseTolerance(double ref) { return 1e-3 + 3e-5 * std::fabs(ref); }

template <class T> struct Run {
  const Options &opt;
  attn_dtype dtype;
  Shape sh;
  Strides4 qs, ks, os;
  Strides3 ls;
  std::vector<T> q, k, v, o;
  std::vector<float> lse;

  Run(const Options &opt, attn_dtype dtype) : opt(opt), dtype(dtype) {
    int64_t kvHeads = opt.kvHeads ? opt.kvHeads : opt.heads;
    sh = {opt.batch, opt.heads, opt.nq, opt.nk, opt.d, kvHeads};
    bool bnhd = opt.layout == "bnhd";
    qs = bnhd ? bnhd_strides(opt.heads, opt.nq, opt.d)
              : bhnd_strides(opt.heads, opt.nq, opt.d);
    ks = bnhd ? bnhd_strides(kvHeads, opt.nk, opt.d)
              : bhnd_strides(kvHeads, opt.nk, opt.d);
    os = qs;
    ls = bhn_strides(opt.heads, opt.nq);
    size_t nQ = size_t(opt.batch * opt.heads * opt.nq * opt.d);
    size_t nK = size_t(opt.batch * kvHeads * opt.nk * opt.d);
    q.resize(nQ), o.resize(nQ), k.resize(nK), v.resize(nK);
    lse.resize(size_t(opt.batch * opt.heads * opt.nq));
    Rng rng(opt.seed);
    Dist dist = opt.dist == "large" ? Dist::LargeMagnitude : Dist::Normal;
    fill_random(q.data(), q.size(), rng, dist);
    fill_random(k.data(), k.size(), rng, dist);
    fill_random(v.data(), v.size(), rng, Dist::Normal);
    poison_nan(o.data(), o.size());
    poison_nan(lse.data(), lse.size());
  }

  attn_fwd_args args(const void *dq, const void *dk, const void *dv, void *dout,
                     float *dlse) const {
    attn_fwd_args a;
    std::memset(&a, 0, sizeof(a));
    a.q = dq, a.k = dk, a.v = dv, a.o = dout, a.lse = dlse;
    a.batch = opt.batch, a.heads = opt.heads, a.kv_heads = opt.kvHeads;
    a.seqlen_q = opt.nq;
    a.seqlen_k = opt.nk, a.head_dim = opt.d;
    std::memcpy(a.q_strides, qs.s, sizeof(qs.s));
    std::memcpy(a.k_strides, ks.s, sizeof(ks.s));
    std::memcpy(a.v_strides, ks.s, sizeof(ks.s));
    std::memcpy(a.o_strides, os.s, sizeof(os.s));
    std::memcpy(a.lse_strides, ls.s, sizeof(ls.s));
    a.dtype = dtype;
    a.mask = opt.mask == "causal"                ? ATTN_MASK_CAUSAL
             : opt.mask == "causal_bottom_right" ? ATTN_MASK_CAUSAL_BOTTOM_RIGHT
                                                 : ATTN_MASK_NONE;
    a.scale = float(opt.scale);
    a.block_m = opt.blockM;
    a.block_n = opt.blockN;
    return a;
  }

  /// Runs on the CUDA device; returns the status (NO_DRIVER / NO_DEVICE
  /// when there is no GPU to run on).
  attn_status runCuda(double &ms, std::string &why) {
    CUdevice dev;
    CUcontext ctx;
    if (!attn_tools::init_cuda(&dev, &ctx, &why))
      return ATTN_ERROR_NO_DEVICE;
    auto upload = [&](const void *src, size_t bytes) {
      attn_tools::DeviceBuffer buf(bytes);
      CU(DRV(cuMemcpyHtoD)(buf.ptr, src, bytes));
      return buf;
    };
    attn_tools::DeviceBuffer dq = upload(q.data(), q.size() * sizeof(T));
    attn_tools::DeviceBuffer dk = upload(k.data(), k.size() * sizeof(T));
    attn_tools::DeviceBuffer dv = upload(v.data(), v.size() * sizeof(T));
    attn_tools::DeviceBuffer dout = upload(o.data(), o.size() * sizeof(T));
    attn_tools::DeviceBuffer dlse = upload(lse.data(), lse.size() * sizeof(float));
    attn_fwd_args a = args(dq.get(), dk.get(), dv.get(), dout.get(),
                           static_cast<float *>(dlse.get()));
    a.device = ATTN_DEVICE_CUDA;
    auto start = std::chrono::steady_clock::now();
    attn_status st = attn_forward(&a);
    if (st == ATTN_OK)
      CU(DRV(cuCtxSynchronize)());
    ms = std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
             .count();
    if (st == ATTN_OK) {
      CU(DRV(cuMemcpyDtoH)(o.data(), dout.ptr, o.size() * sizeof(T)));
      CU(DRV(cuMemcpyDtoH)(lse.data(), dlse.ptr, lse.size() * sizeof(float)));
    }
    return st;
  }

  attn_status runHost(double &ms) {
    attn_fwd_args a = args(q.data(), k.data(), v.data(), o.data(), lse.data());
    a.device = ATTN_DEVICE_HOST;
    auto start = std::chrono::steady_clock::now();
    attn_status st = attn_forward(&a);
    ms = std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
             .count();
    return st;
  }

  /// Compares with the float64 reference; prints the result line.
  bool check(const char *device, double ms) {
    std::vector<double> ref(o.size()), refLse(lse.size());
    Mask m = opt.mask == "causal"                ? Mask::Causal
             : opt.mask == "causal_bottom_right" ? Mask::CausalBottomRight
                                                 : Mask::None;
    reference_forward(sh, q.data(), qs, k.data(), ks, v.data(), ks, ref.data(),
                      os, refLse.data(), ls, m, double(float(opt.scale)));
    ErrorStats eo = compare_bhnd(sh, o.data(), os, ref.data(), os);
    ErrorStats el = compare_lse(sh, lse.data(), ls, refLse.data(), ls);
    double tolO = opt.tol > 0 ? opt.tol : outputTolerance(dtype);
    bool lseOk = el.nonfinite == 0;
    for (size_t i = 0; i < lse.size() && lseOk; ++i)
      if (std::isfinite(refLse[i]))
        lseOk = std::fabs(lse[i] - refLse[i]) <= lseTolerance(refLse[i]);
    bool ok = eo.ok(tolO) && lseOk;
    std::printf("%s device=%s dtype=%s mask=%s layout=%s B=%lld H=%lld "
                "Hkv=%lld Nq=%lld Nk=%lld D=%lld scale=%g seed=%llu: "
                "rel_err(O)=%.3e (tol %.0e) max_abs_err(LSE)=%.3e "
                "nonfinite=%zu time=%.1f ms\n",
                ok ? "PASS" : "FAIL", device, opt.dtype.c_str(), opt.mask.c_str(),
                opt.layout.c_str(), (long long)opt.batch, (long long)opt.heads,
                (long long)sh.kv_heads, (long long)opt.nq, (long long)opt.nk,
                (long long)opt.d, opt.scale, (unsigned long long)opt.seed,
                eo.rel_l2, tolO, el.max_abs, eo.nonfinite + el.nonfinite, ms);
    return ok;
  }
};

template <class T> int runAll(const Options &opt, attn_dtype dtype) {
  Run<T> run(opt, dtype);
  double ms = 0;
  const char *device = "cuda";
  attn_status st = ATTN_ERROR_NO_DEVICE;
  if (opt.device != "host") {
    std::string why;
    st = run.runCuda(ms, why);
    if (st == ATTN_ERROR_NO_DEVICE && opt.device == "auto") {
      std::printf("no GPU (%s): skipping the GPU run, computing on the host "
                  "(CPU) instead\n", why.c_str());
    } else if (st == ATTN_ERROR_NO_DEVICE) {
      std::printf("FAIL: no GPU: %s\n", why.c_str());
      return 1;
    } else if (st != ATTN_OK) {
      std::printf("FAIL: attn_forward: %s: %s\n", attn_status_string(st),
                  attn_last_error());
      return 1;
    }
  }
  if (st != ATTN_OK) {
    device = "host";
    st = run.runHost(ms);
    if (st != ATTN_OK) {
      std::printf("FAIL: attn_forward: %s: %s\n", attn_status_string(st),
                  attn_last_error());
      return 1;
    }
  }
  return run.check(device, ms) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  opt.seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) % 1000000007ull;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto str = [&](std::string &dst) { dst = attn_tools::flag_value(argc, argv, i); };
    auto num = [&](int64_t &dst) {
      dst = attn_tools::parse_int(attn_tools::flag_value(argc, argv, i), f.c_str());
    };
    if (f == "--device") str(opt.device);
    else if (f == "--dtype") str(opt.dtype);
    else if (f == "--mask") str(opt.mask);
    else if (f == "--layout") str(opt.layout);
    else if (f == "--dist") str(opt.dist);
    else if (f == "--b") num(opt.batch);
    else if (f == "--h") num(opt.heads);
    else if (f == "--kv-heads") num(opt.kvHeads);
    else if (f == "--nq") num(opt.nq);
    else if (f == "--nk") num(opt.nk);
    else if (f == "--d") num(opt.d);
    else if (f == "--block-m") num(opt.blockM);
    else if (f == "--block-n") num(opt.blockN);
    else if (f == "--scale") opt.scale = std::atof(attn_tools::flag_value(argc, argv, i).c_str());
    else if (f == "--seed") { int64_t s = 0; num(s); opt.seed = uint64_t(s); }
    else if (f == "--tol") opt.tol = std::atof(attn_tools::flag_value(argc, argv, i).c_str());
    else {
      std::fprintf(stderr,
                   "usage: attn-run [--device auto|cuda|host] [--dtype bf16|f16|f32]\n"
                   "  [--mask none|causal|causal_bottom_right] [--layout bhnd|bnhd]\n"
                   "  [--b B] [--h H] [--kv-heads Hkv] [--nq Nq] [--nk Nk] [--d D]\n"
                   "  [--block-m M] [--block-n N] [--scale S] [--seed S]\n"
                   "  [--dist normal|large] [--tol T]\n"
                   "--kv-heads: K/V heads (grouped-query attention), dividing H; 0: H.\n"
                   "--scale: any finite value, negative too; 0: 1/sqrt(D).\n");
      return f == "--help" ? 0 : 2;
    }
  }
  if (opt.kvHeads < 0) { // other bad values are the runtime's to report
    std::fprintf(stderr, "attn-run: --kv-heads must not be negative\n");
    return 2;
  }
  if (opt.dtype == "bf16")
    return runAll<bf16>(opt, ATTN_DTYPE_BF16);
  if (opt.dtype == "f16")
    return runAll<f16>(opt, ATTN_DTYPE_F16);
  if (opt.dtype == "f32")
    return runAll<float>(opt, ATTN_DTYPE_F32);
  std::fprintf(stderr, "attn-run: unknown --dtype %s\n", opt.dtype.c_str());
  return 2;
}
