//===- Fp8HostTest.cpp - FP8 (e4m3) forward on the host vs float64 --------===//
//
// compileHost with DType::E4M3: Q, K, V quantised per tensor to e4m3 (the
// descale factor amax / 448), a bf16 O poisoned with NaN first, against a
// float64 reference of the dequantised inputs, with an odd key count (not a
// multiple of the tiles) and grouped-query heads, no mask and causal. The
// e4m3 codes come from E4M3.h, independent of the compiler.
//
// The bound: the kernel rounds P (scaled to [0, 2^8]) to e4m3 for P·V, a
// relative error of at most 2^-4 per probability, so O is off by at most
// 2^-4 · max|V| (plus bf16's 2^-9 relative); a second float64 reference
// that rounds P the same way must agree far closer (f32 arithmetic and
// bf16 output only), which checks that the rounding is the only loss.
//
//===----------------------------------------------------------------------===//

#include "E4M3.h"
#include "ReferenceRow.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/TilePolicy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace attn::compiler;

namespace {

constexpr int64_t kBatch = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 64;
constexpr int64_t kQueries = 77, kKeys = 301;
/// The factor of P before its rounding (attn.online_attention).
constexpr double kProbScale = 256.0;

using attn::test::decodeE4M3;
using attn::test::encodeE4M3;
using attn::test::Quantised;
using attn::test::quantise;

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

void setStrides(int64_t *s, int64_t heads, int64_t n) {
  s[0] = heads * n * kHeadDim, s[1] = n * kHeadDim, s[2] = kHeadDim, s[3] = 1;
}

/// The float64 output row of the dequantised inputs with P rounded as the
/// kernel rounds it: the online softmax over K/V tiles of `blockN` keys,
/// each tile's probabilities relative to the running max, scaled by
/// kProbScale and rounded to e4m3 for P·V; the row sum unrounded.
std::vector<double> roundedProbsRow(double scale, const float *q,
                                    const float *k, const float *v,
                                    int64_t seen, int64_t blockN) {
  std::vector<double> o(kHeadDim, 0.0);
  double m = -INFINITY, l = 0;
  for (int64_t start = 0; start < seen; start += blockN) {
    int64_t end = std::min(seen, start + blockN);
    std::vector<double> s;
    double tileMax = m;
    for (int64_t j = start; j < end; ++j) {
      double x = 0;
      for (int d = 0; d < kHeadDim; ++d)
        x += double(q[d]) * k[j * kHeadDim + d];
      s.push_back(x * scale);
      tileMax = std::max(tileMax, s.back());
    }
    double alpha = std::exp(m - tileMax);
    l *= alpha;
    for (double &x : o)
      x *= alpha;
    m = tileMax;
    for (int64_t j = start; j < end; ++j) {
      double p = std::exp(s[size_t(j - start)] - m);
      l += p;
      double rounded = decodeE4M3(encodeE4M3(p * kProbScale)) / kProbScale;
      for (int d = 0; d < kHeadDim; ++d)
        o[d] += rounded * v[j * kHeadDim + d];
    }
  }
  for (double &x : o)
    x /= l;
  return o;
}

class Fp8HostTest : public ::testing::TestWithParam<MaskKind> {};

TEST_P(Fp8HostTest, MatchesFloat64OfDequantisedInputs) {
  KernelConfig config;
  config.headDim = kHeadDim;
  config.dtype = DType::E4M3;
  config.mask = GetParam();
  std::string error;
  std::unique_ptr<HostKernel> kernel = compileHost(config, error);
  ASSERT_TRUE(kernel) << error;

  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  auto random = [&](int64_t heads, int64_t n, float sigma) {
    std::vector<float> x(size_t(kBatch * heads * n * kHeadDim));
    for (float &v : x)
      v = sigma * normal(gen);
    return x;
  };
  // Scores of a few units: peaked rows and flat ones.
  Quantised q = quantise(random(kHeads, kQueries, 1.5f));
  Quantised k = quantise(random(kKvHeads, kKeys, 1.5f));
  Quantised v = quantise(random(kKvHeads, kKeys, 3.0f));
  std::vector<uint16_t> o(size_t(kBatch * kHeads * kQueries * kHeadDim),
                          0x7fc0); // bf16 NaN
  std::vector<float> lse(size_t(kBatch * kHeads * kQueries),
                         std::numeric_limits<float>::quiet_NaN());

  HostArgs a;
  a.q = q.codes.data(), a.k = k.codes.data(), a.v = v.codes.data();
  a.o = o.data(), a.lse = lse.data();
  a.batch = kBatch, a.heads = kHeads, a.kvHeads = kKvHeads;
  a.numQueries = kQueries, a.numKeys = kKeys;
  setStrides(a.qStrides, kHeads, kQueries);
  setStrides(a.oStrides, kHeads, kQueries);
  setStrides(a.kStrides, kKvHeads, kKeys);
  setStrides(a.vStrides, kKvHeads, kKeys);
  a.lseStrides[0] = kHeads * kQueries, a.lseStrides[1] = kQueries;
  a.lseStrides[2] = 1;
  a.descale[0] = q.descale, a.descale[1] = k.descale, a.descale[2] = v.descale;
  kernel->run(a);

  double scale = 1.0 / std::sqrt(double(kHeadDim));
  int64_t blockN = config.resolved(/*nvidia=*/false).blockN;
  double maxV = 0;
  for (float x : v.values)
    maxV = std::max(maxV, double(std::fabs(x)));
  double maxError = 0, maxRoundedError = 0, sumSquares = 0, maxLseError = 0;
  int64_t count = 0;
  bool causal = GetParam() == MaskKind::Causal;
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < kQueries; ++i) {
        int64_t kvh = h / (kHeads / kKvHeads);
        const float *qRow =
            &q.values[size_t(((b * kHeads + h) * kQueries + i) * kHeadDim)];
        const float *kHead =
            &k.values[size_t((b * kKvHeads + kvh) * kKeys * kHeadDim)];
        const float *vHead =
            &v.values[size_t((b * kKvHeads + kvh) * kKeys * kHeadDim)];
        int64_t seen = causal ? std::min(i + 1, kKeys) : kKeys;
        attn::test::ReferenceRow ref = attn::test::referenceRow(
            kKeys, kHeadDim, scale, qRow,
            [&](int j) { return kHead + j * kHeadDim; },
            [&](int j) { return vHead + j * kHeadDim; },
            [&](int j) { return j < seen; }, [](int, double x) { return x; });
        std::vector<double> rounded =
            roundedProbsRow(scale, qRow, kHead, vHead, seen, blockN);
        size_t row = size_t((b * kHeads + h) * kQueries + i);
        for (int64_t d = 0; d < kHeadDim; ++d) {
          double got = bf16ToFloat(o[row * kHeadDim + d]);
          ASSERT_FALSE(std::isnan(got)) << "O unwritten at row " << row;
          double e = std::fabs(got - ref.o[d]);
          maxError = std::max(maxError, e);
          maxRoundedError =
              std::max(maxRoundedError, std::fabs(got - rounded[d]));
          sumSquares += e * e;
          ++count;
        }
        maxLseError = std::max(maxLseError, std::fabs(lse[row] - ref.lse));
      }
  double rms = std::sqrt(sumSquares / double(count));
  std::printf("e4m3 %s: max|V| %.3f, O error vs float64 max %.3g rms %.3g; "
              "vs P rounded as e4m3 max %.3g; LSE max %.3g\n",
              toString(GetParam()), maxV, maxError, rms, maxRoundedError,
              maxLseError);
  // P's rounding (2^-4 relative) bounds the error; bf16 adds 2^-9 of |O|.
  EXPECT_LE(maxError, (std::ldexp(1.0, -4) + std::ldexp(1.0, -9)) * maxV);
  // With P rounded alike: f32 sums and bf16 output only (2^-9 relative),
  // and a probability at a rounding tie may land on either side.
  EXPECT_LE(maxRoundedError, std::ldexp(1.0, -7) * maxV);
  // The LSE comes from the unrounded probabilities in f32.
  EXPECT_LE(maxLseError, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Masks, Fp8HostTest,
                         ::testing::Values(MaskKind::None, MaskKind::Causal));

/// What the FP8 kernels do not take is a clear error, before any IR.
TEST(Fp8ConfigTest, UnsupportedConfigurationsAreErrors) {
  KernelConfig config;
  config.dtype = DType::E4M3;
  config.backward = true;
  std::string error;
  EXPECT_FALSE(compileHost(config, error));
  EXPECT_NE(error.find("no backward pass"), std::string::npos) << error;
  config.backward = false;
  config.varlen = true;
  EXPECT_FALSE(compileHost(config, error));
  EXPECT_NE(error.find("plain forward"), std::string::npos) << error;
}

/// On NVIDIA: wgmma only, k32 steps over the head dim, K/V tiles of whole
/// 128-byte swizzle rows of Vᵀ read by TMA, one CTA an SM; 256 keys and a
/// producer warpgroup at D = 128, 128 keys without at D = 256.
TEST(Fp8ConfigTest, NvidiaMapping) {
  KernelConfig config;
  config.dtype = DType::E4M3;
  config.headDim = 128;
  config.arch = "sm_90a";
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
  EXPECT_EQ(plan.mapping, "wgmma");
  EXPECT_EQ(plan.blockN, 256);
  EXPECT_EQ(plan.stages, 2);
  EXPECT_EQ(plan.schedule, "plain");
  EXPECT_EQ(plan.minCtasPerSm, 1);
  EXPECT_TRUE(config.resolved(/*nvidia=*/true).tma);
  EXPECT_TRUE(config.resolved(/*nvidia=*/true).warpSpecialize);
  config.headDim = 256;
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
  EXPECT_EQ(plan.blockN, 128);
  EXPECT_FALSE(config.resolved(/*nvidia=*/true).warpSpecialize);
  config.headDim = 80;
  EXPECT_FALSE(planKernel(config, true, plan, error));
  EXPECT_NE(error.find("multiple of 32"), std::string::npos) << error;
  config.headDim = 128;
  config.blockN = 64;
  EXPECT_FALSE(planKernel(config, true, plan, error));
  EXPECT_NE(error.find("block-n a multiple of 128"), std::string::npos)
      << error;
  config.blockN = 0;
  config.arch = "sm_80";
  EXPECT_FALSE(planKernel(config, true, plan, error));
  EXPECT_NE(error.find("wgmma only"), std::string::npos) << error;
}

} // namespace
