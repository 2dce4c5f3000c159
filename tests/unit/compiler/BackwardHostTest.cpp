//===- BackwardHostTest.cpp - dQ, dK, dV on the CPU vs float64 ------------===//
//
// The backward pass through the C API on the host device (the same tile
// program the NVIDIA mapping will lower), against analytic gradients in
// float64 computed here from the semantics of attn_jit.h: P = softmax(S'),
// S' = score(scale q.k) on the seen keys, dV = P^T dO, dS' = P (dP - rowsum
// (dO o O)), dS = dS' score'(.), dQ = scale dS K, dK = scale dS^T Q.
// Odd shapes (Nq != Nk, neither a multiple of a tile, rows that see no key),
// grouped-query heads, every mask, the named variants, a user's mods, f32
// and bf16; gradients poisoned with NaN before the call; determinism. Both
// forms: the deterministic one and dQ added with atomics
// (attn_set_deterministic(0)), whose threads add into the same rows.
//
//===----------------------------------------------------------------------===//

#include "attn-jit/attn_jit.h"

#include "../../common/Reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr int B = 2, H = 4, Hkv = 2, D = 24;
constexpr int64_t kLeft = 10, kRight = 5, kPrefix = 13;
constexpr float kSoftcap = 2.5f;

struct Problem {
  int nq, nk;
  std::vector<float> q, k, v, dO, slopes, bias;
  std::vector<int32_t> qDoc, kvDoc;
  Problem(int nq, int nk, unsigned seed)
      : nq(nq), nk(nk), q(B * H * nq * D), k(B * Hkv * nk * D),
        v(B * Hkv * nk * D), dO(B * H * nq * D), slopes(H), bias(nq * nk),
        qDoc(nq), kvDoc(nk) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal(0, 1);
    for (auto *t : {&q, &k, &v, &dO, &bias})
      for (float &x : *t)
        x = normal(gen);
    for (int h = 0; h < H; ++h)
      slopes[h] = static_cast<float>(std::pow(2.0, -8.0 * (h + 1) / H));
    for (int i = 0; i < nq; ++i)
      qDoc[i] = i / 20;
    for (int j = 0; j < nk; ++j)
      kvDoc[j] = j / 35;
  }
};

/// score(h, i, j, x) -> (S', dS'/dx), seen(h, i, j).
using Score = std::function<std::pair<double, double>(int, int, int, double)>;
using Seen = std::function<bool(int, int, int)>;

struct Grads {
  std::vector<double> dq, dk, dv;
};

/// Exact gradients in float64 (inputs as the kernel sees them: `round`
/// applied to Q, K, V, dO).
Grads reference(const Problem &p, const Score &score, const Seen &seen,
                const std::function<double(float)> &round) {
  const double scale = 1 / std::sqrt(double(D));
  const int nq = p.nq, nk = p.nk;
  Grads g{std::vector<double>(p.q.size()), std::vector<double>(p.k.size()),
          std::vector<double>(p.v.size())};
  auto at = [](int b, int h, int heads, int n, int i) {
    return ((size_t(b) * heads + h) * n + i) * D;
  };
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < nq; ++i) {
        int kh = h / (H / Hkv);
        const float *qi = &p.q[at(b, h, H, nq, i)];
        const float *gi = &p.dO[at(b, h, H, nq, i)];
        std::vector<double> s(nk), ds(nk), prob(nk);
        double m = -INFINITY;
        for (int j = 0; j < nk; ++j) {
          const float *kj = &p.k[at(b, kh, Hkv, nk, j)];
          double x = 0;
          for (int d = 0; d < D; ++d)
            x += round(qi[d]) * round(kj[d]);
          if (seen(h, i, j)) {
            auto [y, dy] = score(h, i, j, x * scale);
            s[j] = y;
            ds[j] = dy;
          } else {
            s[j] = -INFINITY;
          }
          m = std::max(m, s[j]);
        }
        if (m == -INFINITY)
          continue; // no key seen: zero gradients
        double l = 0;
        for (int j = 0; j < nk; ++j)
          l += prob[j] = std::exp(s[j] - m);
        std::vector<double> dp(nk);
        double delta = 0;
        for (int j = 0; j < nk; ++j) {
          prob[j] /= l;
          const float *vj = &p.v[at(b, kh, Hkv, nk, j)];
          for (int d = 0; d < D; ++d)
            dp[j] += round(gi[d]) * round(vj[d]);
          delta += prob[j] * dp[j];
        }
        for (int j = 0; j < nk; ++j) {
          if (prob[j] == 0)
            continue;
          double dsj = prob[j] * (dp[j] - delta) * ds[j] * scale;
          const float *kj = &p.k[at(b, kh, Hkv, nk, j)];
          for (int d = 0; d < D; ++d) {
            g.dq[at(b, h, H, nq, i) + d] += dsj * round(kj[d]);
            g.dk[at(b, kh, Hkv, nk, j) + d] += dsj * round(qi[d]);
            g.dv[at(b, kh, Hkv, nk, j) + d] += prob[j] * round(gi[d]);
          }
        }
      }
  return g;
}

/// The largest |got - ref| relative to the largest |ref| of a gradient.
double relativeError(const std::vector<double> &ref,
                     const std::vector<double> &got) {
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < ref.size(); ++i) {
    double err = std::fabs(ref[i] - got[i]);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return worst / scale;
}

/// Inputs stored as `dtype` for the calls, and the rounding they get.
struct Stored {
  attn_dtype dtype;
  std::vector<uint16_t> half[4]; // q, k, v, dO as bf16
  static double roundOf(attn_dtype dtype, float x) {
    return dtype == ATTN_DTYPE_BF16
               ? attn_ref::bf16_to_float(attn_ref::float_to_bf16(x))
               : x;
  }
};

struct GradRun {
  std::vector<double> dq, dk, dv;
  std::vector<unsigned char> bits; // the raw gradients, for determinism
};

/// Forward (for O and the LSE) then backward through the C API.
GradRun runBackward(const Problem &p, attn_dtype dtype, attn_mask mask,
                int blockM, int blockN,
                const std::function<void(attn_fwd_args &)> &variant,
                attn_status *status = nullptr) {
  const int nq = p.nq, nk = p.nk;
  size_t elem = dtype == ATTN_DTYPE_F32 ? 4 : 2;
  auto store = [&](const std::vector<float> &x) {
    std::vector<unsigned char> out(x.size() * elem);
    for (size_t i = 0; i < x.size(); ++i) {
      if (elem == 4) {
        std::memcpy(&out[i * 4], &x[i], 4);
      } else {
        uint16_t h = attn_ref::float_to_bf16(x[i]);
        std::memcpy(&out[i * 2], &h, 2);
      }
    }
    return out;
  };
  auto load = [&](const std::vector<unsigned char> &x) {
    std::vector<double> out(x.size() / elem);
    for (size_t i = 0; i < out.size(); ++i) {
      if (elem == 4) {
        float f;
        std::memcpy(&f, &x[i * 4], 4);
        out[i] = f;
      } else {
        uint16_t h;
        std::memcpy(&h, &x[i * 2], 2);
        out[i] = attn_ref::bf16_to_float(h);
      }
    }
    return out;
  };
  auto q = store(p.q), k = store(p.k), v = store(p.v), dO = store(p.dO);
  std::vector<unsigned char> o(q.size()), dq(q.size(), 0xff),
      dk(k.size(), 0xff), dv(v.size(), 0xff); // NaN poison
  std::vector<float> lse(B * H * nq, NAN);
  attn_bwd_args a{};
  attn_fwd_args &f = a.fwd;
  f.q = q.data();
  f.k = k.data();
  f.v = v.data();
  f.o = o.data();
  f.lse = lse.data();
  f.batch = B;
  f.heads = H;
  f.kv_heads = Hkv;
  f.seqlen_q = nq;
  f.seqlen_k = nk;
  f.head_dim = D;
  attn_set_bhnd_strides(&f);
  f.dtype = dtype;
  f.mask = mask;
  f.device = ATTN_DEVICE_HOST;
  f.block_m = blockM;
  f.block_n = blockN;
  variant(f);
  EXPECT_EQ(attn_forward(&f), ATTN_OK) << attn_last_error();
  a.d_o = dO.data();
  a.dq = dq.data();
  a.dk = dk.data();
  a.dv = dv.data();
  attn_set_bwd_strides_like_fwd(&a);
  attn_status s = attn_backward(&a);
  if (status)
    *status = s;
  else
    EXPECT_EQ(s, ATTN_OK) << attn_last_error();
  GradRun run{load(dq), load(dk), load(dv), dq};
  run.bits.insert(run.bits.end(), dk.begin(), dk.end());
  run.bits.insert(run.bits.end(), dv.begin(), dv.end());
  return run;
}

/// attn_set_deterministic(mode) for a scope; the default (1) after.
struct BackwardForm {
  explicit BackwardForm(int deterministic) {
    EXPECT_EQ(attn_set_deterministic(deterministic), ATTN_OK)
        << attn_last_error();
  }
  ~BackwardForm() { attn_set_deterministic(1); }
};

/// (mask, flags, block_m, block_n, nq, nk)
using Case = std::tuple<int, unsigned, int, int, int, int>;

class BackwardHostTest : public ::testing::TestWithParam<Case> {};

std::function<void(attn_fwd_args &)> namedVariant(const Problem &p,
                                                  unsigned flags, int mask) {
  return [&p, flags, mask](attn_fwd_args &f) {
    attn_variant &v = f.variant;
    v.flags = flags;
    v.window_left = kLeft;
    v.window_right = mask ? -1 : kRight;
    v.prefix_len = kPrefix;
    v.softcap = kSoftcap;
    v.alibi_slopes = p.slopes.data();
    v.q_doc_ids = p.qDoc.data();
    v.kv_doc_ids = p.kvDoc.data();
    v.bias = p.bias.data();
    v.bias_strides[0] = p.nk;
    v.bias_strides[1] = 1;
  };
}

Score namedScore(const Problem &p, unsigned flags) {
  return [&p, flags](int h, int i, int j, double x) {
    if (flags & ATTN_VARIANT_ALIBI)
      x += p.slopes[h] * double(j - i);
    if (flags & ATTN_VARIANT_BIAS)
      x += p.bias[size_t(i) * p.nk + j];
    double dx = 1;
    if (flags & ATTN_VARIANT_SOFTCAP) {
      double t = std::tanh(x / kSoftcap);
      x = kSoftcap * t;
      dx = 1 - t * t;
    }
    return std::pair{x, dx};
  };
}

Seen namedSeen(const Problem &p, unsigned flags, int mask) {
  const int64_t shift =
      mask == ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? p.nk - p.nq : 0;
  return [&p, flags, mask, shift](int, int i, int j) {
    bool seen = true;
    if (mask != ATTN_MASK_NONE)
      seen = j <= i + shift ||
             ((flags & ATTN_VARIANT_PREFIX_LM) && j < kPrefix);
    if (flags & ATTN_VARIANT_WINDOW) {
      int64_t d = j - (i + shift);
      seen = seen && d >= -kLeft && (mask || d <= kRight);
    }
    if (flags & ATTN_VARIANT_DOCUMENT)
      seen = seen && p.qDoc[i] == p.kvDoc[j];
    return seen;
  };
}

/// The case's f32 gradients in the given form against float64.
void expectFloat64Gradients(const Case &c, int deterministic) {
  auto [mask, flags, blockM, blockN, nq, nk] = c;
  BackwardForm form(deterministic);
  Problem p(nq, nk, 11);
  GradRun run = runBackward(p, ATTN_DTYPE_F32, static_cast<attn_mask>(mask),
                        blockM, blockN, namedVariant(p, flags, mask));
  Grads ref = reference(p, namedScore(p, flags), namedSeen(p, flags, mask),
                        [](float x) { return double(x); });
  // f32 inputs and arithmetic: a few ulps of the accumulated sums (P is
  // recomputed from the LSE, not stored).
  EXPECT_LT(relativeError(ref.dq, run.dq), 2e-5) << "dq";
  EXPECT_LT(relativeError(ref.dk, run.dk), 2e-5) << "dk";
  EXPECT_LT(relativeError(ref.dv, run.dv), 2e-5) << "dv";
}

TEST_P(BackwardHostTest, MatchesFloat64Gradients) {
  expectFloat64Gradients(GetParam(), 1);
}

TEST_P(BackwardHostTest, AtomicDqMatchesFloat64Gradients) {
  expectFloat64Gradients(GetParam(), 0);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const unsigned flagSets[] = {
      0,
      ATTN_VARIANT_WINDOW,
      ATTN_VARIANT_PREFIX_LM,
      ATTN_VARIANT_DOCUMENT,
      ATTN_VARIANT_ALIBI,
      ATTN_VARIANT_BIAS,
      ATTN_VARIANT_SOFTCAP,
      ATTN_VARIANT_DOCUMENT | ATTN_VARIANT_ALIBI | ATTN_VARIANT_BIAS |
          ATTN_VARIANT_SOFTCAP};
  for (int mask : {ATTN_MASK_NONE, ATTN_MASK_CAUSAL,
                   ATTN_MASK_CAUSAL_BOTTOM_RIGHT})
    for (unsigned flags : flagSets) {
      if ((flags & ATTN_VARIANT_PREFIX_LM) && mask == ATTN_MASK_NONE)
        continue;
      out.emplace_back(mask, flags, 16, 32, 77, 133);
      if (flags == 0) {
        // Default tiles; more queries than keys (bottom-right: rows that see
        // no key).
        out.emplace_back(mask, flags, 0, 0, 77, 133);
        out.emplace_back(mask, flags, 32, 16, 133, 77);
      }
    }
  return out;
}

std::string name(const ::testing::TestParamInfo<Case> &info) {
  auto [mask, flags, bm, bn, nq, nk] = info.param;
  return "mask" + std::to_string(mask) + "_flags" + std::to_string(flags) +
         "_tiles" + std::to_string(bm) + "x" + std::to_string(bn) + "_n" +
         std::to_string(nq) + "x" + std::to_string(nk);
}

INSTANTIATE_TEST_SUITE_P(Backward, BackwardHostTest,
                         ::testing::ValuesIn(cases()), name);

/// bf16 gradients in the given form against float64.
void expectBf16Gradients(int deterministic) {
  BackwardForm form(deterministic);
  Problem p(77, 133, 5);
  GradRun run = runBackward(p, ATTN_DTYPE_BF16, ATTN_MASK_CAUSAL, 16, 32,
                        [](attn_fwd_args &) {});
  Grads ref = reference(
      p, [](int, int, int, double x) { return std::pair{x, 1.0}; },
      [](int, int i, int j) { return j <= i; },
      [](float x) { return Stored::roundOf(ATTN_DTYPE_BF16, x); });
  // bf16 outputs (8 bits of mantissa) and bf16-rounded P and dS in the
  // products, as FlashAttention rounds them.
  EXPECT_LT(relativeError(ref.dq, run.dq), 3e-2) << "dq";
  EXPECT_LT(relativeError(ref.dk, run.dk), 3e-2) << "dk";
  EXPECT_LT(relativeError(ref.dv, run.dv), 3e-2) << "dv";
}

TEST(BackwardHostTest, Bf16WithinRoundingOfFloat64) { expectBf16Gradients(1); }

TEST(BackwardHostTest, AtomicDqBf16WithinRoundingOfFloat64) {
  expectBf16Gradients(0);
}

// The atomic form changes how dQ is summed only: dK and dV are the
// deterministic form's, bit for bit, and dQ agrees to f32 rounding.
TEST(BackwardHostTest, AtomicDqLeavesKeyGradientsBitwise) {
  Problem p(77, 133, 3);
  auto variant = namedVariant(p, ATTN_VARIANT_ALIBI, ATTN_MASK_CAUSAL);
  GradRun fixed = runBackward(p, ATTN_DTYPE_F32, ATTN_MASK_CAUSAL, 16, 32,
                              variant);
  BackwardForm form(0);
  GradRun atomic = runBackward(p, ATTN_DTYPE_F32, ATTN_MASK_CAUSAL, 16, 32,
                               variant);
  EXPECT_EQ(atomic.dk, fixed.dk);
  EXPECT_EQ(atomic.dv, fixed.dv);
  EXPECT_LT(relativeError(fixed.dq, atomic.dq), 1e-5);
}

TEST(BackwardHostTest, DeterministicModeIsZeroOrOne) {
  for (int bad : {-1, 2}) {
    EXPECT_EQ(attn_set_deterministic(bad), ATTN_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(attn_last_error()).find("expected 0"),
              std::string::npos)
        << attn_last_error();
  }
}

TEST(BackwardHostTest, BitwiseDeterministic) {
  Problem p(77, 133, 9);
  auto variant = namedVariant(p, ATTN_VARIANT_SOFTCAP, ATTN_MASK_CAUSAL);
  GradRun first = runBackward(p, ATTN_DTYPE_BF16, ATTN_MASK_CAUSAL, 16, 32,
                          variant);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(runBackward(p, ATTN_DTYPE_BF16, ATTN_MASK_CAUSAL, 16, 32,
                          variant)
                  .bits,
              first.bits);
}

// A user's score_mod the compiler differentiates (exp and a captured gain)
// and one it cannot (math.sin), through the C API.
constexpr const char *kSmoothMods = R"mlir(
func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
                     %gain: f32) -> f32 {
  %t = arith.mulf %s, %gain : f32
  %e = math.exp %t : f32
  %y = arith.subf %s, %e : f32
  return %y : f32
}
)mlir";
constexpr const char *kSinMods = R"mlir(
func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index)
    -> f32 {
  %y = math.sin %s : f32
  return %y : f32
}
)mlir";

TEST(BackwardHostTest, UserScoreModDerivative) {
  Problem p(45, 70, 13);
  constexpr float Gain = 0.3f;
  attn_capture gain{};
  gain.f32 = Gain;
  GradRun run = runBackward(p, ATTN_DTYPE_F32, ATTN_MASK_NONE, 16, 16,
                        [&](attn_fwd_args &f) {
                          f.variant.mods = kSmoothMods;
                          f.variant.captures = &gain;
                          f.variant.num_captures = 1;
                        });
  Grads ref = reference(
      p,
      [](int, int, int, double x) {
        double e = std::exp(double(Gain) * x);
        return std::pair{x - e, 1 - double(Gain) * e};
      },
      [](int, int, int) { return true; }, [](float x) { return double(x); });
  EXPECT_LT(relativeError(ref.dq, run.dq), 2e-5) << "dq";
  EXPECT_LT(relativeError(ref.dk, run.dk), 2e-5) << "dk";
  EXPECT_LT(relativeError(ref.dv, run.dv), 2e-5) << "dv";
}

TEST(BackwardHostTest, NotDifferentiableScoreModIsAnArgumentError) {
  Problem p(8, 8, 1);
  attn_status status = ATTN_OK;
  runBackward(p, ATTN_DTYPE_F32, ATTN_MASK_NONE, 0, 0,
              [](attn_fwd_args &f) { f.variant.mods = kSinMods; }, &status);
  EXPECT_EQ(status, ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("cannot be differentiated"),
            std::string::npos)
      << attn_last_error();
}

TEST(BackwardHostTest, InvalidCallsAreErrors) {
  alignas(16) float x[64] = {}, o[4] = {};
  alignas(16) float lse[4] = {};
  attn_bwd_args a{};
  attn_fwd_args &f = a.fwd;
  f.q = f.k = f.v = x;
  f.o = o;
  f.lse = lse;
  f.batch = f.heads = f.seqlen_q = f.seqlen_k = 1;
  f.head_dim = 4;
  attn_set_bhnd_strides(&f);
  f.dtype = ATTN_DTYPE_F32;
  f.device = ATTN_DEVICE_HOST;
  alignas(16) float g[4][4];
  a.d_o = g[0];
  a.dq = g[1];
  a.dk = g[2];
  a.dv = g[3];
  attn_set_bwd_strides_like_fwd(&a);
  ASSERT_EQ(attn_backward(&a), ATTN_OK) << attn_last_error();
  auto status = [&](auto change) {
    attn_bwd_args c = a;
    change(c);
    return attn_backward(&c);
  };
  EXPECT_EQ(attn_backward(nullptr), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_bwd_args &c) { c.fwd.lse = nullptr; }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("log-sum-exp"),
            std::string::npos);
  EXPECT_EQ(status([](attn_bwd_args &c) { c.dk = nullptr; }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_bwd_args &c) { c.d_o = nullptr; }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_bwd_args &c) { c.dq_strides[3] = 2; }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_bwd_args &c) { c.dv_strides[0] = -1; }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_bwd_args &c) { c.fwd.head_dim = 0; }),
            ATTN_ERROR_INVALID_ARGUMENT);
}

TEST(BackwardHostTest, NoQueriesGiveZeroKeyGradients) {
  Problem p(0, 40, 2);
  GradRun run = runBackward(p, ATTN_DTYPE_F32, ATTN_MASK_NONE, 16, 16,
                        [](attn_fwd_args &) {});
  for (double x : run.dk)
    ASSERT_EQ(x, 0);
  for (double x : run.dv)
    ASSERT_EQ(x, 0);
}

} // namespace
