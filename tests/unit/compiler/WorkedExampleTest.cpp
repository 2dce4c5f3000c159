//===- WorkedExampleTest.cpp - the seed's worked example, compiled --------===//
//
// shared/seed/BRIEF.md: one query, two keys with scores [0, ln 2] and scalar
// values [10, 20]. The softmax weights are [1/3, 2/3], the output 50/3. With
// one key per tile, the online-softmax merge of (m, l, u) must give 50/3; adding
// the two tiles' separately normalised outputs gives 30.
//
//===----------------------------------------------------------------------===//

#include "attn-jit/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

/// Attention with D = 1 (so a score is q·k) and scale 1, on the host,
/// f32, with the given tile sizes. Returns O and writes the LSE.
float attend(float q, const std::vector<float> &keys,
             const std::vector<float> &values, int64_t blockN, float &lse) {
  float out = std::nanf("");
  lse = std::nanf("");
  attn_fwd_args args = attn::makeForwardArgs(
      attn::Layout::BHND, &q, keys.data(), values.data(), &out, &lse,
      /*batch=*/1, /*heads=*/1, /*seqlenQ=*/1, int64_t(keys.size()),
      /*headDim=*/1, ATTN_DTYPE_F32, ATTN_DEVICE_HOST);
  args.scale = 1.0f;
  args.block_m = 1;
  args.block_n = blockN;
  attn::Status status = attn::forward(args);
  EXPECT_TRUE(status.ok()) << status.toString();
  return out;
}

TEST(WorkedExample, OneKeyPerTileGivesFiftyThirds) {
  const float ln2 = std::log(2.0f);
  float lse;
  // Two K/V tiles of one key: the kernel merges them with the running
  // (m, l, u): m = ln 2, l = 1.5, u = 25, O = 25 / 1.5.
  float out = attend(1.0f, {0.0f, ln2}, {10.0f, 20.0f}, /*blockN=*/1, lse);
  EXPECT_NEAR(out, 50.0f / 3.0f, 1e-5f);
  EXPECT_NEAR(lse, std::log(3.0f), 1e-6f);
  // One tile of both keys: the same mathematics, the same result.
  float whole = attend(1.0f, {0.0f, ln2}, {10.0f, 20.0f}, /*blockN=*/2, lse);
  EXPECT_NEAR(whole, 50.0f / 3.0f, 1e-5f);
}

TEST(WorkedExample, SummingSeparatelyNormalisedTilesGivesThirty) {
  const float ln2 = std::log(2.0f);
  // Each tile alone: softmax over one key is weight 1, so its output is its
  // value. Adding the tiles' outputs is the mistake the online softmax avoids.
  float lse1, lse2;
  float tile1 = attend(1.0f, {0.0f}, {10.0f}, 1, lse1);
  float tile2 = attend(1.0f, {ln2}, {20.0f}, 1, lse2);
  EXPECT_NEAR(tile1, 10.0f, 1e-6f);
  EXPECT_NEAR(tile2, 20.0f, 1e-6f);
  EXPECT_NEAR(tile1 + tile2, 30.0f, 1e-5f);
  EXPECT_GT(std::fabs(tile1 + tile2 - 50.0f / 3.0f), 13.0f);
  // Weighting them by their log-sum-exps instead (bringing both to one max)
  // is the merge of the seed and recovers 50/3.
  EXPECT_NEAR(lse1, 0.0f, 1e-6f);
  EXPECT_NEAR(lse2, ln2, 1e-6f);
  float w1 = std::exp(lse1), w2 = std::exp(lse2);
  EXPECT_NEAR((w1 * tile1 + w2 * tile2) / (w1 + w2), 50.0f / 3.0f, 1e-5f);
}

} // namespace
