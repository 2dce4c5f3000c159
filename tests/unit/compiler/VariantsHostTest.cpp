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
#include <utility>
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

/// Largest |O - ref| and |LSE - ref| over every row, the float64 reference
/// built from `score(h, i, j, scaled q.k)` and `seen(h, i, j)`.
template <typename Score, typename Seen>
std::pair<double, double> largestErrors(const Inputs &in,
                                        const std::vector<float> &o,
                                        const std::vector<float> &lse,
                                        Score score, Seen seen) {
  const double scale = 1 / std::sqrt(double(D));
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
          // Hidden keys' scores are never computed (a user's bias table
          // may have no entry for them).
          s[j] = seen(h, i, j) ? score(h, i, j, x * scale) : -INFINITY;
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
          double err = std::fabs(ref - o[((b * H + h) * Nq + i) * D + d]);
          outErr = std::isnan(err) ? INFINITY : std::max(outErr, err);
        }
        double lref = l > 0 ? m + std::log(l) : -INFINITY;
        double lgot = lse[(b * H + h) * Nq + i];
        double err = (std::isinf(lref) && lref == lgot)
                         ? 0
                         : std::fabs(lref - lgot);
        lseErr = std::isnan(err) ? INFINITY : std::max(lseErr, err);
      }
  return {outErr, lseErr};
}

/// A host call on f32 (B, H, N, D) tensors with `mask` and tiles.
attn_fwd_args hostCall(const float *q, const float *k, const float *v,
                       float *o, float *lse, attn_mask mask, int blockM,
                       int blockN) {
  attn_fwd_args a{};
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  a.lse = lse;
  a.batch = B;
  a.heads = H;
  a.kv_heads = Hkv;
  a.seqlen_q = Nq;
  a.seqlen_k = Nk;
  a.head_dim = D;
  attn_set_bhnd_strides(&a);
  a.dtype = ATTN_DTYPE_F32;
  a.mask = mask;
  a.device = ATTN_DEVICE_HOST;
  a.block_m = blockM;
  a.block_n = blockN;
  return a;
}

/// (mask, flags, block_m, block_n)
using Case = std::tuple<int, unsigned, int, int>;

class VariantsHostTest : public ::testing::TestWithParam<Case> {};

TEST_P(VariantsHostTest, MatchesFloat64Reference) {
  auto [mask, flags, blockM, blockN] = GetParam();
  static const Inputs in;
  std::vector<float> o(B * H * Nq * D, NAN), lse(B * H * Nq, NAN);
  attn_fwd_args a = hostCall(in.q.data(), in.k.data(), in.v.data(), o.data(),
                             lse.data(), static_cast<attn_mask>(mask), blockM,
                             blockN);
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

  const int64_t shift = mask == ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? Nk - Nq : 0;
  auto [outErr, lseErr] = largestErrors(
      in, o, lse,
      [&, flags = flags](int h, int i, int j, double x) {
        if (flags & ATTN_VARIANT_ALIBI)
          x += in.slopes[h] * double(j - i);
        if (flags & ATTN_VARIANT_BIAS)
          x += in.bias[i * Nk + j];
        if (flags & ATTN_VARIANT_SOFTCAP)
          x = kSoftcap * std::tanh(x / kSoftcap);
        return x;
      },
      [&, mask = mask, flags = flags](int, int i, int j) {
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
        return seen;
      });
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
      // Two terms added to the score (Decompose's addedTerms).
      ATTN_VARIANT_ALIBI | ATTN_VARIANT_BIAS,
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

TEST(VariantsHostTest, DocumentBoundsAtEveryEdgeOfTheSearch) {
  // The K/V loop's bounds come from a search of the key ids that narrows
  // its range 16 ways a step (Mask.cpp): a run of ids longer than a part,
  // a document of one key, query ids absent from the keys (rows that see
  // nothing), below and above every key id.
  Inputs in;
  auto fill = [](std::vector<int32_t> &ids,
                 std::initializer_list<std::pair<int, int32_t>> runs) {
    size_t at = 0;
    for (auto [length, id] : runs)
      for (int n = 0; n < length; ++n)
        ids.at(at++) = id;
    ASSERT_EQ(at, ids.size());
  };
  fill(in.kvDoc, {{1, 0}, {2, 2}, {97, 4}, {1, 5}, {32, 7}});
  fill(in.qDoc, {{3, -1}, {7, 0}, {10, 1}, {30, 4}, {10, 5}, {10, 6}, {7, 9}});
  for (int mask : {ATTN_MASK_NONE, ATTN_MASK_CAUSAL,
                   ATTN_MASK_CAUSAL_BOTTOM_RIGHT})
    for (int tile : {0, 16}) {
      std::vector<float> o(B * H * Nq * D, NAN), lse(B * H * Nq, NAN);
      attn_fwd_args a = hostCall(in.q.data(), in.k.data(), in.v.data(),
                                 o.data(), lse.data(),
                                 static_cast<attn_mask>(mask), tile, tile);
      a.variant.flags = ATTN_VARIANT_DOCUMENT;
      a.variant.q_doc_ids = in.qDoc.data();
      a.variant.kv_doc_ids = in.kvDoc.data();
      ASSERT_EQ(attn_forward(&a), ATTN_OK) << attn_last_error();
      const int64_t shift =
          mask == ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? Nk - Nq : 0;
      auto [outErr, lseErr] = largestErrors(
          in, o, lse, [](int, int, int, double x) { return x; },
          [&](int, int i, int j) {
            return (mask == ATTN_MASK_NONE || j <= i + shift) &&
                   in.qDoc[i] == in.kvDoc[j];
          });
      EXPECT_LT(outErr, 2e-5) << "mask " << mask << ", tiles " << tile;
      EXPECT_LT(lseErr, 2e-5) << "mask " << mask << ", tiles " << tile;
    }
}

TEST(VariantsHostTest, InvalidVariantsAreErrors) {
  // O apart from the inputs: an output over an input is an error of its own.
  float x[4] = {}, o[4] = {};
  attn_fwd_args a{};
  a.q = a.k = a.v = x;
  a.o = o;
  a.batch = a.heads = a.seqlen_q = a.seqlen_k = 1;
  a.head_dim = 4;
  attn_set_bhnd_strides(&a);
  a.dtype = ATTN_DTYPE_F32;
  a.device = ATTN_DEVICE_HOST;
  // Valid as it is: each error below is due to its one change.
  ASSERT_EQ(attn_forward(&a), ATTN_OK) << attn_last_error();
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

namespace {

// A user's own mods through the C API: a T5-style bias table read by
// relative position (memref capture) scaled by an f32 capture, and a mask
// keeping keys within an i64 distance -- and-ed with the named causal mask
// -- against float64.
constexpr const char *kUserMods = R"mlir(
func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index,
                     %table: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                     %gain: f32, %reach: i64) -> f32 {
  %c1 = arith.constant 1 : index
  %n = memref.dim %table, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %last = arith.subi %n, %c1 : index
  %d = arith.subi %q, %kv : index
  %bucket = arith.minsi %d, %last : index
  %t = memref.load %table[%h, %bucket] : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %g = arith.mulf %t, %gain : f32
  %y = arith.addf %s, %g : f32
  return %y : f32
}
func.func @mask_mod(%b: index, %h: index, %q: index, %kv: index,
                    %table: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                    %gain: f32, %reach: i64) -> i1 {
  %r = arith.index_cast %reach : i64 to index
  %lo = arith.subi %q, %r : index
  %in = arith.cmpi sge, %kv, %lo : index
  return %in : i1
}
)mlir";

TEST(UserModsHostTest, MatchesFloat64Reference) {
  static const Inputs in;
  constexpr int Buckets = 40, Reach = 23;
  constexpr float Gain = 0.5f;
  std::vector<float> table(H * Buckets);
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0, 1);
  for (float &x : table)
    x = normal(gen);
  std::vector<float> o(B * H * Nq * D, NAN), lse(B * H * Nq, NAN);
  attn_fwd_args a = hostCall(in.q.data(), in.k.data(), in.v.data(), o.data(),
                             lse.data(), ATTN_MASK_CAUSAL, 16, 16);
  a.variant.mods = kUserMods;
  attn_capture captures[3] = {};
  captures[0].data = table.data();
  captures[0].sizes[0] = H;
  captures[0].sizes[1] = Buckets;
  captures[0].strides[0] = Buckets;
  captures[0].strides[1] = 1;
  captures[1].f32 = Gain;
  captures[2].i64 = Reach;
  a.variant.captures = captures;
  a.variant.num_captures = 3;
  ASSERT_EQ(attn_forward(&a), ATTN_OK) << attn_last_error();
  auto [outErr, lseErr] = largestErrors(
      in, o, lse,
      [&](int h, int i, int j, double x) {
        int bucket = std::min(i - j, Buckets - 1);
        return x + double(table[h * Buckets + bucket]) * Gain;
      },
      [&](int, int i, int j) { return j <= i && j >= i - Reach; });
  EXPECT_LT(outErr, 2e-5);
  EXPECT_LT(lseErr, 2e-5);

  // A new gain and reach run the same kernel: values are arguments.
  attn_stats before{}, after{};
  attn_get_stats(&before);
  captures[1].f32 = 2.0f;
  captures[2].i64 = 5;
  ASSERT_EQ(attn_forward(&a), ATTN_OK) << attn_last_error();
  attn_get_stats(&after);
  EXPECT_EQ(after.compiles, before.compiles);
}

TEST(UserModsHostTest, BadModsAreErrorsWithDiagnostics) {
  float x[4] = {}, o[4] = {};
  attn_fwd_args a = hostCall(x, x, x, o, nullptr, ATTN_MASK_CAUSAL, 0, 0);
  a.batch = a.heads = a.seqlen_q = a.seqlen_k = 1;
  a.kv_heads = 0;
  a.head_dim = 4;
  attn_set_bhnd_strides(&a);
  auto fails = [&](const char *mods, const char *message) {
    a.variant.mods = mods;
    EXPECT_EQ(attn_forward(&a), ATTN_ERROR_INVALID_ARGUMENT) << mods;
    EXPECT_NE(std::string(attn_last_error()).find(message), std::string::npos)
        << attn_last_error();
  };
  fails("", "user-mods:1:1: error: user mods define neither");
  fails("func.func @score_mod(", "user-mods:1:");
  fails("func.func @other() { return }", "@score_mod and @mask_mod only");
  fails("func.func @score_mod(%s: f32) -> f32 { return %s : f32 }",
        "@score_mod must be (f32, index, index, index, index, captures...) "
        "-> f32");
  fails("func.func @mask_mod(%b: index, %h: index, %q: index, %kv: index, "
        "%m: memref<4xf32>) -> i1 {\n"
        "  %t = arith.constant true\n  return %t : i1\n}",
        "capture #0 has type 'memref<4xf32>'");
  fails("func.func @score_mod(%s: f32, %b: index, %h: index, %q: index, "
        "%kv: index, %m: memref<?xf32, strided<[?], offset: ?>>) -> f32 {\n"
        "  memref.store %s, %m[%q] : memref<?xf32, strided<[?], offset: ?>>\n"
        "  return %s : f32\n}",
        "user-mods:2:3: error: 'memref.store' op is not allowed in "
        "'score_mod'");
  // The right text with the wrong number of captures.
  a.variant.mods = kUserMods;
  a.variant.num_captures = 1;
  attn_capture one{};
  a.variant.captures = &one;
  EXPECT_EQ(attn_forward(&a), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("the mods take 3 captures"),
            std::string::npos)
      << attn_last_error();
}

} // namespace
