//===- SplitKvTest.cpp - The split count and the split partials' values ---===//
//
// chooseNumSplits against values worked out by hand from its makespan rule
// (SplitKv.h), the clamps of a forced count, and the workspace layout
// the kernel receives (KernelABI.h's kSplitArgs).
//
//===----------------------------------------------------------------------===//

#include "SplitKv.h"

#include <gtest/gtest.h>

using namespace attn::rt;

namespace {

TEST(SplitKvTest, AGridThatFillsTheGpuNeverSplits) {
  // 106 CTAs >= 0.8 · 132.
  EXPECT_EQ(chooseNumSplits(106, 1000, 132), 1);
  EXPECT_GT(chooseNumSplits(105, 1000, 132), 1);
  // Nothing to divide: one K/V tile.
  EXPECT_EQ(chooseNumSplits(1, 1, 132), 1);
  EXPECT_EQ(chooseNumSplits(0, 100, 132), 1);
}

TEST(SplitKvTest, DecodeCounts) {
  // B = 1, 8 K/V heads (packed GQA: 8 CTAs), 1k keys in 128-key tiles: 8
  // splits of one tile each in one wave.
  EXPECT_EQ(chooseNumSplits(8, 8, 132), 8);
  // B = 1 at 128k keys: 16 splits, 128 CTAs in one wave of 64 tiles each
  // (+ kSplitOverheadTiles: 66); 15 fill 120 slots with 69 tiles each (71),
  // 49 three waves of 21 (69).
  EXPECT_EQ(chooseNumSplits(8, 1024, 132), 16);
  // One CTA over 1000 tiles: no split takes fewer than ceil(1000 / 128) = 8
  // tiles, and 125 is the fewest splits that do.
  EXPECT_EQ(chooseNumSplits(1, 1000, 132), 125);
  // Never more splits than tiles.
  EXPECT_EQ(chooseNumSplits(1, 3, 132), 3);
  // Two CTAs an SM (one-warpgroup decode tiles, TilePolicy's
  // splitCtasPerSm): 264 slots; 32 splits of 32 tiles in one wave, where
  // FlashAttention's wave-fill rule took 31 (34 tiles each).
  EXPECT_EQ(chooseNumSplits(8, 1024, 2 * 132), 32);
  // A wave more pays when it shortens the longest split enough: 105 CTAs
  // on 132 slots, 1000 tiles: 5 splits (4 waves of 200 + 2) beat 1 (1002).
  EXPECT_EQ(chooseNumSplits(105, 1000, 132), 5);
}

TEST(SplitKvTest, ForcedCountsAreClamped) {
  EXPECT_EQ(splitsForCall(7, 2, 1000, 1, 132), 7); // empty splits allowed
  EXPECT_EQ(splitsForCall(1000, 1, 8, 64, 132), kMaxSplits);
  EXPECT_EQ(splitsForCall(100, 1000, 8, 64, 132), kMaxGridZ / 1000);
  EXPECT_EQ(splitsForCall(1, 1, 8, 64, 132), 1);
  // Auto on the host (no SM count) never splits.
  EXPECT_EQ(splitsForCall(0, 1, 8, 64, 0), 1);
  EXPECT_EQ(splitsForCall(0, 1, 8, 8, 132), 8);
}

TEST(SplitKvTest, WorkspaceLayout) {
  std::vector<float> workspace(1);
  SplitCall split;
  split.numSplits = 3;
  split.batchRows = 2;
  split.heads = 4;
  split.rows = 5;
  split.valueDim = 8;
  EXPECT_EQ(split.workspaceFloats(), size_t(2 * 3 * 4 * 5 * (8 + 1)));
  split.workspace = workspace.data();
  std::vector<attn::abi::CaptureValue> v = split.values();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].i64, 3);
  EXPECT_EQ(v[1].data, workspace.data());
  const int64_t outSizes[4] = {6, 4, 5, 8}, outStrides[4] = {160, 40, 8, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(v[1].sizes[i], outSizes[i]) << i;
    EXPECT_EQ(v[1].strides[i], outStrides[i]) << i;
  }
  // The LSEs follow the outputs.
  EXPECT_EQ(v[2].data, workspace.data() + 6 * 4 * 5 * 8);
  const int64_t lseSizes[3] = {6, 4, 5}, lseStrides[3] = {20, 5, 1};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(v[2].sizes[i], lseSizes[i]) << i;
    EXPECT_EQ(v[2].strides[i], lseStrides[i]) << i;
  }
}

} // namespace
