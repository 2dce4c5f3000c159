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

#include "CudaDriver.h"
#include "Reference.h"
#include "attn/Dialect/Attn/IR/Limits.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <unistd.h>
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

namespace cl = llvm::cl;

/// cl's parser of named values, whose error for an unknown value lists the
/// values allowed (cl's own says only that it found none).
template <typename E> class NamedValueParser : public cl::parser<E> {
public:
  using cl::parser<E>::parser;
  bool parse(cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             E &value) {
    std::string allowed;
    for (unsigned i = 0, n = this->getNumOptions(); i < n; ++i) {
      if (this->getOption(i) == arg) {
        value = nameValue(i);
        return false;
      }
      allowed += (i ? ", " : "") + this->getOption(i).str();
    }
    return option.error("'" + arg + "' is not one of: " + allowed);
  }
  /// The name of `value`, as the command line spells it.
  llvm::StringRef nameOf(E value) const {
    for (unsigned i = 0, n = this->getNumOptions(); i < n; ++i)
      if (nameValue(i) == value)
        return this->getOption(i);
    return "";
  }

private:
  E nameValue(unsigned i) const {
    return static_cast<const cl::OptionValue<E> &>(this->getOptionValue(i))
        .getValue();
  }
};

template <typename E> using NamedOpt = cl::opt<E, false, NamedValueParser<E>>;

template <typename E> std::string nameOf(NamedOpt<E> &option) {
  return option.getParser().nameOf(option.getValue()).str();
}

enum class DeviceName { Auto, Cuda, Host };
enum class MaskName { None, Causal, CausalBottomRight };
enum class LayoutName { Bhnd, Bnhd };
enum class DistName { Normal, Large };

/// Sizes as attn-run takes them: checked before anything is allocated.
/// Returns the error, or "" when the call fits.
std::string checkSizes(const Options &opt, size_t elementBytes) {
  const std::pair<const char *, int64_t> counts[] = {
      {"--b", opt.batch},     {"--h", opt.heads},    {"--kv-heads", opt.kvHeads},
      {"--nq", opt.nq},       {"--nk", opt.nk},      {"--block-m", opt.blockM},
      {"--block-n", opt.blockN}};
  for (auto [flag, value] : counts)
    if (value < 0)
      return std::string(flag) + " = " + std::to_string(value) +
             ": must not be negative";
  // The runtime's bound (CUDA takes at most 256): checked here so that a
  // head dim no device takes is not allocated for first.
  if (opt.d < 1 || opt.d > mlir::attn::kMaxHostHeadDim)
    return "--d = " + std::to_string(opt.d) + ": must be in [1, " +
           std::to_string(mlir::attn::kMaxHostHeadDim) + "]";
  int64_t kvHeads = opt.kvHeads ? opt.kvHeads : opt.heads;
  // Host memory: Q, O, K, V and the LSE, then the float64 reference of O
  // and the LSE.
  auto product = [](std::initializer_list<int64_t> factors, int64_t &out) {
    out = 1;
    for (int64_t f : factors)
      if (__builtin_mul_overflow(out, f, &out))
        return false;
    return true;
  };
  int64_t nQ, nK, rows, bytes = 0;
  bool fits = product({opt.batch, opt.heads, opt.nq, opt.d}, nQ) &&
              product({opt.batch, kvHeads, opt.nk, opt.d}, nK) &&
              product({opt.batch, opt.heads, opt.nq}, rows);
  for (auto [count, size] :
       {std::pair{nQ, int64_t(2 * elementBytes + sizeof(double))},
        std::pair{nK, int64_t(2 * elementBytes)},
        std::pair{rows, int64_t(sizeof(float) + sizeof(double))}}) {
    int64_t term;
    fits = fits && !__builtin_mul_overflow(count, size, &term) &&
           !__builtin_add_overflow(bytes, term, &bytes);
  }
  if (!fits)
    return "the sizes overflow 64-bit byte counts";
  int64_t memory = int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (memory > 0 && bytes > memory)
    return "the tensors and the float64 reference need " +
           std::to_string(bytes >> 20) + " MiB of host memory; this machine "
           "has " + std::to_string(memory >> 20) + " MiB";
  return "";
}

int run(int argc, char **argv) {
  cl::OptionCategory category("attn-run options");
  NamedOpt<DeviceName> device(
      "device", cl::desc("Where to run (auto: the GPU if there is one)"),
      cl::values(clEnumValN(DeviceName::Auto, "auto", ""),
                 clEnumValN(DeviceName::Cuda, "cuda", ""),
                 clEnumValN(DeviceName::Host, "host", "")),
      cl::init(DeviceName::Auto), cl::cat(category));
  NamedOpt<attn_dtype> dtype(
      "dtype", cl::desc("Element type"),
      cl::values(clEnumValN(ATTN_DTYPE_BF16, "bf16", ""),
                 clEnumValN(ATTN_DTYPE_F16, "f16", ""),
                 clEnumValN(ATTN_DTYPE_F32, "f32", "host only")),
      cl::init(ATTN_DTYPE_BF16), cl::cat(category));
  NamedOpt<MaskName> mask(
      "mask", cl::desc("Mask"),
      cl::values(clEnumValN(MaskName::None, "none", ""),
                 clEnumValN(MaskName::Causal, "causal", "j <= i"),
                 clEnumValN(MaskName::CausalBottomRight, "causal_bottom_right",
                            "j <= i + Nk - Nq")),
      cl::init(MaskName::None), cl::cat(category));
  NamedOpt<LayoutName> layout(
      "layout", cl::desc("Memory layout of Q, K, V and O"),
      cl::values(clEnumValN(LayoutName::Bhnd, "bhnd", ""),
                 clEnumValN(LayoutName::Bnhd, "bnhd", "")),
      cl::init(LayoutName::Bhnd), cl::cat(category));
  NamedOpt<DistName> dist(
      "dist", cl::desc("Distribution of Q and K"),
      cl::values(clEnumValN(DistName::Normal, "normal", "N(0, 1)"),
                 clEnumValN(DistName::Large, "large", "2 + 4 N(0, 1)")),
      cl::init(DistName::Normal), cl::cat(category));
  Options defaults;
  auto count = [&](llvm::StringRef name, const char *desc, int64_t init) {
    return std::make_unique<cl::opt<int64_t>>(name, cl::desc(desc),
                                              cl::init(init), cl::cat(category));
  };
  auto batch = count("b", "Batch", defaults.batch);
  auto heads = count("h", "Query heads", defaults.heads);
  auto kvHeads = count("kv-heads",
                       "K/V heads (grouped-query attention), dividing H; 0: H",
                       defaults.kvHeads);
  auto nq = count("nq", "Queries", defaults.nq);
  auto nk = count("nk", "Keys", defaults.nk);
  auto d = count("d", "Head dim", defaults.d);
  auto blockM = count("block-m", "Query rows per tile (0: default)", 0);
  auto blockN = count("block-n", "Keys per tile (0: default)", 0);
  cl::opt<double> scale(
      "scale", cl::desc("Any finite value, negative too; 0: 1/sqrt(D)"),
      cl::init(0), cl::cat(category));
  cl::opt<double> tol("tol",
                      cl::desc("Tolerance on ||O - ref|| / ||ref|| (0: the "
                               "dtype's)"),
                      cl::init(0), cl::cat(category));
  cl::opt<uint64_t> seed(
      "seed", cl::desc("Seed of the random inputs (default: from the clock)"),
      cl::init(uint64_t(
          std::chrono::steady_clock::now().time_since_epoch().count()) %
               1000000007ull),
      cl::cat(category));
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "attn-run: one attention through the runtime, checked against a "
          "float64 reference\n",
          &llvm::errs()))
    return 2;

  Options opt;
  opt.device = nameOf(device);
  opt.dtype = nameOf(dtype);
  opt.mask = nameOf(mask);
  opt.layout = nameOf(layout);
  opt.dist = nameOf(dist);
  opt.batch = *batch, opt.heads = *heads, opt.kvHeads = *kvHeads;
  opt.nq = *nq, opt.nk = *nk, opt.d = *d;
  opt.blockM = *blockM, opt.blockN = *blockN;
  opt.scale = scale, opt.tol = tol, opt.seed = seed;
  size_t elementBytes = dtype == ATTN_DTYPE_F32 ? 4 : 2;
  if (std::string error = checkSizes(opt, elementBytes); !error.empty()) {
    std::fprintf(stderr, "attn-run: %s\n", error.c_str());
    return 2;
  }
  switch (dtype) {
  case ATTN_DTYPE_BF16:
    return runAll<bf16>(opt, ATTN_DTYPE_BF16);
  case ATTN_DTYPE_F16:
    return runAll<f16>(opt, ATTN_DTYPE_F16);
  case ATTN_DTYPE_F32:
    break;
  case ATTN_DTYPE_E4M3: // not among --dtype's values
    std::fprintf(stderr, "attn-run: FP8 is not run here\n");
    return 2;
  }
  return runAll<float>(opt, ATTN_DTYPE_F32);
}

} // namespace

int main(int argc, char **argv) {
  // Whatever fails (an allocation the size checks let through), the run
  // ends with a message and a status, never an uncaught exception.
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "attn-run: %s\n", e.what());
    return 1;
  }
}
