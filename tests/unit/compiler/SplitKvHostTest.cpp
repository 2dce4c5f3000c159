//===- SplitKvHostTest.cpp - Split-KV decoding on the CPU vs float64 ------===//
//
// attn_forward and attn_forward_varlen through the C API on the host, with
// the split count forced (attn_set_num_splits: auto never splits on the
// host), against the float64 reference of tests/common/Reference.h --
// independently of the compiler. Decode shapes (Nq 1..4 over up to 4999
// keys), grouped-query heads (packed), no mask and the bottom-right
// diagonal (queries that see no key: O = 0, LSE = -inf), counts 1, 2, 7
// and more splits than K/V tiles (splits with empty ranges); the seed's
// worked example merged across two splits; a ragged varlen batch; a new
// count never recompiles.
//
//===----------------------------------------------------------------------===//

#include "attn-jit/Runtime.h"

#include "../../common/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using attn_ref::Mask;
using attn_ref::Shape;

/// Restores auto (the C API's engine is the process's) after each test.
class SplitKvHostTest : public ::testing::Test {
protected:
  void TearDown() override { EXPECT_EQ(attn_set_num_splits(0), ATTN_OK); }
};

struct Errors {
  double out = 0, lse = 0;
  int badEmptyRows = 0;
};

/// One (B, H, Nq, D) call with `splits` splits against float64.
Errors runDecode(const Shape &sh, Mask mask, int64_t splits,
                 int64_t blockN) {
  attn_ref::Rng rng(1000 + sh.seqlen_q * 7 + sh.seqlen_k);
  const int64_t B = sh.batch, H = sh.heads, Hkv = sh.kv_heads,
                Nq = sh.seqlen_q, Nk = sh.seqlen_k, D = sh.head_dim;
  std::vector<float> q(B * H * Nq * D), k(B * Hkv * Nk * D), v(k.size());
  attn_ref::fill_random(q.data(), q.size(), rng, attn_ref::Dist::Normal);
  attn_ref::fill_random(k.data(), k.size(), rng, attn_ref::Dist::Normal);
  attn_ref::fill_random(v.data(), v.size(), rng, attn_ref::Dist::Normal);
  std::vector<float> o(q.size()), lse(B * H * Nq);
  attn_ref::poison_nan(o.data(), o.size());
  attn_ref::poison_nan(lse.data(), lse.size());
  attn_fwd_args args = attn::makeForwardArgs(
      attn::Layout::BHND, q.data(), k.data(), v.data(), o.data(), lse.data(),
      B, H, Nq, Nk, D, ATTN_DTYPE_F32, ATTN_DEVICE_HOST, Hkv);
  args.mask = static_cast<attn_mask>(mask);
  args.block_n = blockN;
  EXPECT_EQ(attn_set_num_splits(splits), ATTN_OK);
  attn::Status status = attn::forward(args);
  EXPECT_TRUE(status.ok()) << status.toString();

  std::vector<double> ref(o.size()), refLse(lse.size());
  auto qs = attn_ref::bhnd_strides(H, Nq, D);
  auto kvs = attn_ref::bhnd_strides(Hkv, Nk, D);
  auto ls = attn_ref::bhn_strides(H, Nq);
  attn_ref::reference_forward(sh, q.data(), qs, k.data(), kvs, v.data(), kvs,
                              ref.data(), qs, refLse.data(), ls, mask, 0);
  Errors e;
  for (size_t i = 0; i < o.size(); ++i)
    e.out = std::max(e.out, std::isnan(o[i]) ? INFINITY
                                             : std::abs(o[i] - ref[i]));
  for (size_t i = 0; i < lse.size(); ++i) {
    if (std::isinf(refLse[i])) {
      e.badEmptyRows += !(std::isinf(lse[i]) && lse[i] < 0);
      continue;
    }
    e.lse = std::max(e.lse, std::isnan(lse[i]) ? INFINITY
                                               : std::abs(lse[i] - refLse[i]));
  }
  return e;
}

TEST_F(SplitKvHostTest, DecodeShapesMatchFloat64) {
  // 32-key tiles: 4999 keys are 157 tiles, 130 keys 5 (7 and 40 splits
  // leave some empty), one key one tile.
  for (int64_t nq : {1, 2, 3, 4})
    for (int64_t nk : {1, 130, 4999})
      for (Mask mask : {Mask::None, Mask::CausalBottomRight})
        for (int64_t splits : {1, 2, 7, 40}) {
          Shape sh{2, 8, nq, nk, 32, /*kv_heads=*/2};
          Errors e = runDecode(sh, mask, splits, /*blockN=*/32);
          std::string what = "Nq " + std::to_string(nq) + " Nk " +
                             std::to_string(nk) + " mask " +
                             std::to_string(int(mask)) + " splits " +
                             std::to_string(splits);
          EXPECT_LT(e.out, 2e-5) << what;
          EXPECT_LT(e.lse, 2e-5) << what;
          EXPECT_EQ(e.badEmptyRows, 0) << what;
        }
}

TEST_F(SplitKvHostTest, AnotherCountReusesTheKernel) {
  Shape sh{1, 4, 1, 300, 16, 4};
  runDecode(sh, Mask::None, 2, 32);
  attn_stats before{};
  ASSERT_EQ(attn_get_stats(&before), ATTN_OK);
  for (int64_t splits : {3, 7, 100}) {
    Errors e = runDecode(sh, Mask::None, splits, 32);
    EXPECT_LT(e.out, 2e-5) << splits;
  }
  attn_stats after{};
  ASSERT_EQ(attn_get_stats(&after), ATTN_OK);
  EXPECT_EQ(after.compiles, before.compiles);
}

TEST_F(SplitKvHostTest, WorkedExampleAcrossTwoSplits) {
  // shared/seed/BRIEF.md: scores [0, ln 2], values [10, 20]. With one key
  // per tile and two splits, each split's partial is its key's value with
  // LSE_s = its score; the merge gives LSE = ln(1 + 2) and O = (1 · 10 +
  // 2 · 20) / 3 = 50/3 (adding the partials would give 30).
  const float ln2 = std::log(2.0f);
  float q = 1, keys[2] = {0, ln2}, values[2] = {10, 20};
  float out = NAN, lse = NAN;
  attn_fwd_args args = attn::makeForwardArgs(
      attn::Layout::BHND, &q, keys, values, &out, &lse, 1, 1, 1, 2, 1,
      ATTN_DTYPE_F32, ATTN_DEVICE_HOST);
  args.scale = 1.0f;
  args.block_m = 1;
  args.block_n = 1;
  ASSERT_EQ(attn_set_num_splits(2), ATTN_OK);
  ASSERT_EQ(attn_forward(&args), ATTN_OK) << attn_last_error();
  EXPECT_NEAR(out, 50.0f / 3.0f, 1e-5f);
  EXPECT_NEAR(lse, std::log(3.0f), 1e-6f);
}

TEST_F(SplitKvHostTest, RaggedVarlenDecode) {
  // Sequences of 1..4 queries over 0..4999 keys (one with none: O = 0,
  // LSE = -inf), bottom-right diagonal, GQA; rows of no sequence stay NaN.
  const int H = 4, Hkv = 2, D = 32;
  std::vector<int32_t> lenQ = {1, 4, 2, 3, 1, 4}, lenK = {4999, 0, 37, 700,
                                                          1, 2048};
  std::vector<int32_t> cuQ = {0}, cuK = {0};
  for (size_t b = 0; b < lenQ.size(); ++b) {
    cuQ.push_back(cuQ.back() + lenQ[b]);
    cuK.push_back(cuK.back() + lenK[b]);
  }
  const int64_t totalQ = cuQ.back() + 2, totalK = cuK.back();
  attn_ref::Rng rng(77);
  std::vector<float> q(totalQ * H * D), k(totalK * Hkv * D), v(k.size());
  for (auto *t : {&q, &k, &v})
    attn_ref::fill_random(t->data(), t->size(), rng, attn_ref::Dist::Normal);
  for (int64_t splits : {1, 3, 7}) {
    std::vector<float> o(q.size()), lse(totalQ * H);
    attn_ref::poison_nan(o.data(), o.size());
    attn_ref::poison_nan(lse.data(), lse.size());
    attn_varlen_args a{};
    a.fwd.q = q.data();
    a.fwd.k = k.data();
    a.fwd.v = v.data();
    a.fwd.o = o.data();
    a.fwd.lse = lse.data();
    a.fwd.batch = static_cast<int64_t>(lenQ.size());
    a.fwd.heads = H;
    a.fwd.kv_heads = Hkv;
    a.fwd.seqlen_q = totalQ;
    a.fwd.seqlen_k = totalK;
    a.fwd.head_dim = D;
    a.fwd.dtype = ATTN_DTYPE_F32;
    a.fwd.device = ATTN_DEVICE_HOST;
    a.fwd.mask = ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    a.fwd.block_m = 16;
    a.fwd.block_n = 64;
    a.cu_seqlens_q = cuQ.data();
    a.cu_seqlens_k = cuK.data();
    a.max_seqlen_q = 4;
    a.max_seqlen_k = 4999;
    attn_set_varlen_strides(&a);
    ASSERT_EQ(attn_set_num_splits(splits), ATTN_OK);
    ASSERT_EQ(attn_forward_varlen(&a), ATTN_OK) << attn_last_error();
    double outErr = 0, lseErr = 0;
    for (size_t b = 0; b < lenQ.size(); ++b) {
      Shape sh{1, H, lenQ[b], lenK[b], D, Hkv};
      std::vector<double> ref(lenQ[b] * H * D), refLse(lenQ[b] * H);
      // Packed rows: (row, head, dim); the LSE is (H, total_q).
      attn_ref::Strides4 qs{{0, D, H * D, 1}}, kvs{{0, D, Hkv * D, 1}};
      attn_ref::reference_forward(
          sh, q.data() + cuQ[b] * H * D, qs, k.data() + cuK[b] * Hkv * D, kvs,
          v.data() + cuK[b] * Hkv * D, kvs, ref.data(), qs, refLse.data(),
          attn_ref::Strides3{{0, lenQ[b], 1}}, Mask::CausalBottomRight, 0);
      for (int i = 0; i < lenQ[b]; ++i)
        for (int h = 0; h < H; ++h) {
          for (int d = 0; d < D; ++d) {
            float got = o[((cuQ[b] + i) * H + h) * D + d];
            double r = ref[(i * H + h) * D + d];
            outErr = std::max(outErr, std::isnan(got) ? INFINITY
                                                      : std::abs(got - r));
          }
          float got = lse[h * totalQ + cuQ[b] + i];
          double r = refLse[h * lenQ[b] + i];
          if (std::isinf(r))
            EXPECT_TRUE(std::isinf(got) && got < 0)
                << "splits " << splits << " b " << b << ": " << got;
          else
            lseErr = std::max(lseErr, std::isnan(got) ? INFINITY
                                                      : std::abs(got - r));
        }
    }
    EXPECT_LT(outErr, 2e-5) << splits;
    EXPECT_LT(lseErr, 2e-5) << splits;
    for (int64_t row = cuQ.back(); row < totalQ; ++row)
      for (int h = 0; h < H; ++h) {
        EXPECT_TRUE(std::isnan(lse[h * totalQ + row])) << splits;
        for (int d = 0; d < D; ++d)
          EXPECT_TRUE(std::isnan(o[(row * H + h) * D + d])) << splits;
      }
  }
}

TEST_F(SplitKvHostTest, NegativeCountIsAnError) {
  EXPECT_EQ(attn_set_num_splits(-2), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("num_splits = -2"),
            std::string::npos)
      << attn_last_error();
}

} // namespace
