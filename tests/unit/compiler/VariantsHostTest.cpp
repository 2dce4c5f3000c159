//===- VariantsHostTest.cpp - Named variants on the CPU vs float64 --------===//
//
// Every named variant and some combinations, through the C API on the host
// device, against a float64 reference that applies each variant from the
// semantics of attn_jit.h -- independently of the compiler. Odd shapes
// (Nq != Nk, neither a multiple of a tile), grouped-query heads, outputs
// poisoned with NaN; small tiles make the window and causal tile
// classification (skipped and unmasked tiles) matter.
//
//===----------------------------------------------------------------------===//

#include "attn-jit/attn_jit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr int B = 2, H = 4, Hkv = 2, Nq = 77, Nk = 133, D = 32;
constexpr int64_t kLeft = 10, kRight = 5, kPrefix = 13;
constexpr float kSoftcap = 2.5f;

struct Inputs {
  std::vector<float> q, k, v, slopes, bias;
  std::vector<int32_t> qDoc, kvDoc;
  Inputs() : q(B * H * Nq * D), k(B * Hkv * Nk * D), v(B * Hkv * Nk * D),
             slopes(H), bias(Nq * Nk), qDoc(Nq), kvDoc(Nk) {
    std::mt19937 gen(7);
    std::normal_distribution<float> normal(0, 1);
    for (auto *t : {&q, &k, &v, &bias})
      for (float &x : *t)
        x = normal(gen);
    for (int h = 0; h < H; ++h)
      slopes[h] = static_cast<float>(std::pow(2.0, -8.0 * (h + 1) / H));
    // Documents of different lengths in Q and K (bottom-right alignment
    // aside, what matters is that the ids differ across tiles).
    for (int i = 0; i < Nq; ++i)
      qDoc[i] = i / 20;
    for (int j = 0; j < Nk; ++j)
      kvDoc[j] = j / 35;
  }
};

/// (mask, flags, block_m, block_n)
using Case = std::tuple<int, unsigned, int, int>;

class VariantsHostTest : public ::testing::TestWithParam<Case> {};

TEST_P(VariantsHostTest, MatchesFloat64Reference) {
  auto [mask, flags, blockM, blockN] = GetParam();
  static const Inputs in;
  std::vector<float> o(B * H * Nq * D, NAN), lse(B * H * Nq, NAN);
  attn_fwd_args a{};
  a.q = in.q.data();
  a.k = in.k.data();
  a.v = in.v.data();
  a.o = o.data();
  a.lse = lse.data();
  a.batch = B;
  a.heads = H;
  a.kv_heads = Hkv;
  a.seqlen_q = Nq;
  a.seqlen_k = Nk;
  a.head_dim = D;
  attn_set_bhnd_strides(&a);
  a.dtype = ATTN_DTYPE_F32;
  a.mask = static_cast<attn_mask>(mask);
  a.device = ATTN_DEVICE_HOST;
  a.block_m = blockM;
  a.block_n = blockN;
  attn_variant &v = a.variant;
  v.flags = flags;
  v.window_left = kLeft;
  // Causal windows are unbounded on the right (-1); plain ones are not.
  v.window_right = mask ? -1 : kRight;
  v.prefix_len = kPrefix;
  v.softcap = kSoftcap;
  v.alibi_slopes = in.slopes.data();
  v.q_doc_ids = in.qDoc.data();
  v.kv_doc_ids = in.kvDoc.data();
  v.bias = in.bias.data();
  v.bias_strides[0] = Nk;
  v.bias_strides[1] = 1;
  ASSERT_EQ(attn_forward(&a), ATTN_OK) << attn_last_error();

  const double scale = 1 / std::sqrt(double(D));
  const int64_t shift = mask == ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? Nk - Nq : 0;
  double outErr = 0, lseErr = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < Nq; ++i) {
        int kh = h / (H / Hkv);
        std::vector<double> s(Nk);
        double m = -INFINITY;
        for (int j = 0; j < Nk; ++j) {
          double x = 0;
          for (int d = 0; d < D; ++d)
            x += double(in.q[((b * H + h) * Nq + i) * D + d]) *
                 in.k[((b * Hkv + kh) * Nk + j) * D + d];
          x *= scale;
          if (flags & ATTN_VARIANT_ALIBI)
            x += in.slopes[h] * double(j - i);
          if (flags & ATTN_VARIANT_BIAS)
            x += in.bias[i * Nk + j];
          if (flags & ATTN_VARIANT_SOFTCAP)
            x = kSoftcap * std::tanh(x / kSoftcap);
          bool seen = true;
          if (mask != ATTN_MASK_NONE)
            seen = j <= i + shift ||
                   ((flags & ATTN_VARIANT_PREFIX_LM) && j < kPrefix);
          if (flags & ATTN_VARIANT_WINDOW) {
            int64_t d = j - (i + shift);
            seen = seen && d >= -kLeft && (mask || d <= kRight);
          }
          if (flags & ATTN_VARIANT_DOCUMENT)
            seen = seen && in.qDoc[i] == in.kvDoc[j];
          s[j] = seen ? x : -INFINITY;
          m = std::max(m, s[j]);
        }
        double l = 0;
        std::vector<double> acc(D, 0);
        if (m > -INFINITY)
          for (int j = 0; j < Nk; ++j) {
            double p = std::exp(s[j] - m);
            l += p;
            for (int d = 0; d < D; ++d)
              acc[d] += p * in.v[((b * Hkv + kh) * Nk + j) * D + d];
          }
        for (int d = 0; d < D; ++d) {
          double ref = l > 0 ? acc[d] / l : 0;
          double got = o[((b * H + h) * Nq + i) * D + d];
          double err = std::fabs(ref - got);
          outErr = std::isnan(err) ? INFINITY : std::max(outErr, err);
        }
        double lref = l > 0 ? m + std::log(l) : -INFINITY;
        double lgot = lse[(b * H + h) * Nq + i];
        double err = (std::isinf(lref) && lref == lgot)
                         ? 0
                         : std::fabs(lref - lgot);
        lseErr = std::isnan(err) ? INFINITY : std::max(lseErr, err);
      }
  // f32 inputs and arithmetic: a few ulps of the accumulated sums.
  EXPECT_LT(outErr, 2e-5);
  EXPECT_LT(lseErr, 2e-5);
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
      ATTN_VARIANT_WINDOW | ATTN_VARIANT_SOFTCAP,
      ATTN_VARIANT_DOCUMENT | ATTN_VARIANT_ALIBI | ATTN_VARIANT_BIAS |
          ATTN_VARIANT_SOFTCAP,
      ATTN_VARIANT_WINDOW | ATTN_VARIANT_PREFIX_LM | ATTN_VARIANT_DOCUMENT};
  for (int mask : {ATTN_MASK_NONE, ATTN_MASK_CAUSAL,
                   ATTN_MASK_CAUSAL_BOTTOM_RIGHT})
    for (unsigned flags : flagSets)
      for (auto [bm, bn] : {std::pair{0, 0}, std::pair{16, 16}}) {
        if ((flags & ATTN_VARIANT_PREFIX_LM) && mask == ATTN_MASK_NONE)
          continue;
        out.emplace_back(mask, flags, bm, bn);
      }
  return out;
}

std::string name(const ::testing::TestParamInfo<Case> &info) {
  auto [mask, flags, bm, bn] = info.param;
  return "mask" + std::to_string(mask) + "_flags" + std::to_string(flags) +
         "_tiles" + std::to_string(bm) + "x" + std::to_string(bn);
}

INSTANTIATE_TEST_SUITE_P(Variants, VariantsHostTest,
                         ::testing::ValuesIn(cases()), name);

TEST(VariantsHostTest, InvalidVariantsAreErrors) {
  float x[4] = {};
  attn_fwd_args a{};
  a.q = a.k = a.v = x;
  a.o = x;
  a.batch = a.heads = a.seqlen_q = a.seqlen_k = 1;
  a.head_dim = 4;
  attn_set_bhnd_strides(&a);
  a.dtype = ATTN_DTYPE_F32;
  a.device = ATTN_DEVICE_HOST;
  auto status = [&](auto change) {
    attn_fwd_args c = a;
    change(c);
    return attn_forward(&c);
  };
  EXPECT_EQ(status([](attn_fwd_args &c) { c.variant.flags = 1u << 20; }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_fwd_args &c) {
              c.variant.flags = ATTN_VARIANT_PREFIX_LM;
            }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("causal"), std::string::npos);
  EXPECT_EQ(status([](attn_fwd_args &c) {
              c.variant.flags = ATTN_VARIANT_SOFTCAP;
              c.variant.softcap = 0;
            }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_fwd_args &c) {
              c.variant.flags = ATTN_VARIANT_SOFTCAP;
              c.variant.softcap = INFINITY;
            }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_fwd_args &c) {
              c.variant.flags = ATTN_VARIANT_ALIBI;
            }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("alibi_slopes"),
            std::string::npos);
  EXPECT_EQ(status([](attn_fwd_args &c) {
              c.variant.flags = ATTN_VARIANT_BIAS;
              c.variant.bias = c.o == nullptr ? nullptr
                                              : static_cast<float *>(c.o);
              c.variant.bias_strides[0] = -1;
            }),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status([](attn_fwd_args &c) {
              c.variant.flags = ATTN_VARIANT_DOCUMENT;
            }),
            ATTN_ERROR_INVALID_ARGUMENT);
}

} // namespace
