//===- CompilePtxTest.cpp - the compiler library's NVIDIA entry point -----===//
//
// compilePtx as the runtime calls it: PTX for the forward kernel and the
// launch (threads, rows per CTA, shared bytes) that the lowering recorded on
// the kernel, for each mapping and schedule.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/KernelABI.h"
#include "attn/Compiler/TilePolicy.h"

#include <gtest/gtest.h>

using namespace attn::compiler;

namespace {

struct Case {
  int64_t headDim;
  MaskKind mask;
  const char *arch;
  const char *tensorCore;
};

class CompilePtxTest : public ::testing::TestWithParam<Case> {};

TEST_P(CompilePtxTest, LaunchMatchesThePlan) {
  const Case &c = GetParam();
  KernelConfig config;
  config.headDim = c.headDim;
  config.mask = c.mask;
  config.arch = c.arch;
  config.tensorCore = c.tensorCore;
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;

  PtxKernel kernel;
  ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
  ASSERT_EQ(kernel.kernels.size(), 1u);
  const KernelLaunch &launch = kernel.kernels[0];
  EXPECT_EQ(launch.name, attn::abi::kForwardKernel);
  EXPECT_NE(kernel.ptx.find(".entry attn_fwd"), std::string::npos);
  EXPECT_EQ(launch.threads, plan.threads());
  EXPECT_EQ(launch.blockM, plan.blockM);
  EXPECT_FALSE(launch.overKeys);
  // The allocation pass and the policy agree on the shared memory.
  EXPECT_EQ(launch.sharedBytes, plan.sharedBytes);
  bool wgmma = plan.mapping == "wgmma";
  EXPECT_EQ(kernel.ptx.find("wgmma.mma_async") != std::string::npos, wgmma);
  EXPECT_EQ(kernel.ptx.find("mma.sync.aligned") != std::string::npos, !wgmma);
}

INSTANTIATE_TEST_SUITE_P(
    Mappings, CompilePtxTest,
    ::testing::Values(Case{64, MaskKind::None, "sm_90a", "auto"},
                      Case{128, MaskKind::Causal, "sm_90a", "auto"},
                      Case{256, MaskKind::None, "sm_90a", "auto"},
                      Case{96, MaskKind::CausalBottomRight, "sm_90a", "auto"},
                      Case{96, MaskKind::Causal, "sm_90a", "mma.sync"},
                      Case{80, MaskKind::None, "sm_90a", "auto"},
                      Case{160, MaskKind::Causal, "sm_90a", "auto"},
                      Case{224, MaskKind::None, "sm_90a", "auto"},
                      Case{128, MaskKind::Causal, "sm_80", "auto"},
                      Case{72, MaskKind::None, "sm_80", "auto"}));

// The backward: two kernels in launch order, the query tiles' (dQ and the
// row terms) then the K/V tiles' (dK, dV), 64 x 64 tiles, wgmma on sm_90a
// and mma.sync on sm_80.
TEST(CompilePtxTest, BackwardIsTwoKernels) {
  for (const char *arch : {"sm_90a", "sm_80"}) {
    KernelConfig config;
    config.headDim = 64;
    config.mask = MaskKind::Causal;
    config.arch = arch;
    config.backward = true;
    KernelPlan plan;
    std::string error;
    ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
    bool wgmma = std::string(arch) == "sm_90a";
    EXPECT_EQ(plan.mapping, wgmma ? "wgmma" : "mma.sync");
    PtxKernel kernel;
    ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
    ASSERT_EQ(kernel.kernels.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      const KernelLaunch &launch = kernel.kernels[i];
      EXPECT_EQ(launch.name,
                attn::abi::kernelName(attn::abi::kBackwardKernel, i));
      EXPECT_NE(kernel.ptx.find(".entry " + launch.name), std::string::npos);
      EXPECT_EQ(launch.threads, 128);
      EXPECT_EQ(launch.blockM, 64);
      EXPECT_EQ(launch.overKeys, i == 1);
      EXPECT_GT(launch.sharedBytes, 0);
      EXPECT_LE(launch.sharedBytes, plan.sharedBytes);
    }
    EXPECT_NE(kernel.ptx.find(wgmma ? "wgmma.mma_async" : "mma.sync.aligned"),
              std::string::npos);
  }
}

// Past D = 128 dQ, dK and dV get a kernel each (splitsBackwardGrads): three
// kernels, the last two over K/V tiles. On sm_90a wgmma, one warpgroup of 64
// rows stepping over 64 rows of the other side by TMA at D = 256 (32 at
// D = 192), 16 by cp.async; on sm_80 mma.sync with 32 x 32 tiles and 2 warps.
TEST(CompilePtxTest, BackwardSplitsGradsPastD128) {
  EXPECT_FALSE(splitsBackwardGrads(128));
  EXPECT_TRUE(splitsBackwardGrads(136));
  struct Case {
    const char *arch;
    bool tma;
    const char *mapping;
    int64_t blockM, blockN, warps;
  };
  for (const Case &c : {Case{"sm_90a", true, "wgmma", 64, 64, 4},
                        Case{"sm_90a", false, "wgmma", 64, 16, 4},
                        Case{"sm_80", false, "mma.sync", 32, 32, 2}}) {
    SCOPED_TRACE(std::string(c.arch) + (c.tma ? " tma" : ""));
    KernelConfig config;
    config.headDim = 256;
    config.arch = c.arch;
    config.backward = true;
    config.tma = c.tma;
    KernelPlan plan;
    std::string error;
    ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
    EXPECT_EQ(plan.mapping, c.mapping);
    EXPECT_EQ(plan.blockM, c.blockM);
    EXPECT_EQ(plan.blockN, c.blockN);
    EXPECT_EQ(plan.warps, c.warps);
    PtxKernel kernel;
    ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
    ASSERT_EQ(kernel.kernels.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      const KernelLaunch &launch = kernel.kernels[i];
      EXPECT_EQ(launch.name,
                attn::abi::kernelName(attn::abi::kBackwardKernel, i));
      EXPECT_NE(kernel.ptx.find(".entry " + launch.name), std::string::npos);
      EXPECT_EQ(launch.threads, 32 * c.warps);
      EXPECT_EQ(launch.blockM, c.blockM);
      EXPECT_EQ(launch.overKeys, i > 0);
    }
    EXPECT_EQ(kernel.ptx.find("cp.async.bulk.tensor") != std::string::npos,
              c.tma);
  }
  // The atomic form keeps dK and dV together: asked for past D = 128 it
  // resolves to the deterministic kernels, TMA tiles included.
  KernelConfig atomic;
  atomic.headDim = 256;
  atomic.arch = "sm_90a";
  atomic.backward = true;
  atomic.deterministic = false;
  atomic.tma = true;
  KernelConfig r = atomic.resolved(/*nvidia=*/true);
  EXPECT_TRUE(r.deterministic);
  EXPECT_TRUE(r.tma);
  EXPECT_EQ(r.blockM, 64);
  EXPECT_EQ(r.blockN, 64);
  atomic.headDim = 192;
  EXPECT_EQ(atomic.resolved(/*nvidia=*/true).blockN, 32);
  EXPECT_FALSE(mapsAtomicBackward(/*nvidia=*/true, "wgmma", 256));
  EXPECT_TRUE(mapsAtomicBackward(/*nvidia=*/true, "wgmma", 128));
  EXPECT_TRUE(mapsAtomicBackward(/*nvidia=*/false, "auto", 256));
}

// Split-KV: the splits' kernel (grid z = B · num_splits, packed as the
// configuration) then the merge's (never packed), the plan's threads and
// rows; the merge has no products and no shared memory.
TEST(CompilePtxTest, SplitKvIsTwoKernels) {
  for (const char *arch : {"sm_90a", "sm_80"}) {
    KernelConfig config;
    config.headDim = 128;
    config.mask = MaskKind::CausalBottomRight;
    config.arch = arch;
    config.packGqa = true;
    config.split = true;
    KernelPlan plan;
    std::string error;
    ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
    PtxKernel kernel;
    ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
    ASSERT_EQ(kernel.kernels.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      const KernelLaunch &launch = kernel.kernels[i];
      EXPECT_EQ(launch.name,
                attn::abi::kernelName(attn::abi::kForwardKernel, i));
      EXPECT_NE(kernel.ptx.find(".entry " + launch.name), std::string::npos);
      EXPECT_EQ(launch.threads, plan.threads()) << arch;
      EXPECT_EQ(launch.blockM, plan.blockM) << arch;
      EXPECT_EQ(launch.overSplits, i == 0) << arch;
      EXPECT_EQ(launch.packGqa, i == 0) << arch;
      EXPECT_FALSE(launch.overKeys);
    }
    EXPECT_GT(kernel.kernels[0].sharedBytes, 0);
    EXPECT_EQ(kernel.kernels[1].sharedBytes, 0);
  }
}

// A paged decode kernel on wgmma at D = 128 (packed GQA heads or split-KV
// over a paged cache): three stages with the plain schedule, whose copies
// run two tiles ahead (the header waits with one group pending), where it
// had two stages and one tile ahead; the contiguous split kernel keeps its
// pipelined schedule.
TEST(CompilePtxTest, PagedDecodeKeepsTwoTilesInFlight) {
  struct Decode {
    int64_t pageSize;
    bool packGqa, split;
    const char *schedule;
  };
  for (Decode d : {Decode{16, true, false, "plain"},
                   Decode{64, true, true, "plain"},
                   Decode{256, false, true, "plain"},
                   Decode{0, true, true, "pv_in_flight"}}) {
    KernelConfig config;
    config.headDim = 128;
    config.mask = MaskKind::CausalBottomRight;
    config.arch = "sm_90a";
    config.varlen = d.pageSize > 0;
    config.pageSize = d.pageSize;
    config.packGqa = d.packGqa;
    config.split = d.split;
    KernelPlan plan;
    std::string error;
    ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
    std::string label = "page size " + std::to_string(d.pageSize);
    EXPECT_EQ(plan.mapping, "wgmma") << label;
    EXPECT_EQ(plan.stages, 3) << label;
    EXPECT_EQ(plan.schedule, d.schedule) << label;
    PtxKernel kernel;
    ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
    EXPECT_EQ(kernel.kernels[0].sharedBytes, plan.sharedBytes) << label;
    bool twoAhead = std::string(d.schedule) == "plain";
    EXPECT_EQ(kernel.ptx.find("cp.async.wait_group \t1;") != std::string::npos,
              twoAhead)
        << label;
  }
}

// A producer warpgroup by default for plain attention at every wgmma head
// dim from 80 to 256 and for the window, softcap and ALiBi variants there
// too, with the tiles its registers allow (the policy's one rule; the
// runtime asks it): not D = 48 or 64 (one warpgroup, two CTAs an SM), nor
// a head dim that is not a multiple of 16.
TEST(CompilePtxTest, ProducerByDefaultFromD80) {
  for (int64_t d = 80; d <= 256; d += 16)
    EXPECT_TRUE(producerByDefault(d, 0, false, false)) << d;
  EXPECT_FALSE(producerByDefault(48, 0, false, false));
  EXPECT_FALSE(producerByDefault(64, 0, false, false));
  EXPECT_FALSE(producerByDefault(136, 0, false, false));
  EXPECT_EQ(defaultTileSizes(96, true, 0, false, /*producer=*/true, true),
            (std::pair<int64_t, int64_t>{128, 128}));
  EXPECT_FALSE(producerByDefault(256, 0, /*varlen=*/true, false));
  EXPECT_FALSE(producerByDefault(192, 0, false, /*userMods=*/true));
  // At D = 80-256 the window, softcap and ALiBi variants and their
  // combinations; not the document mask, a bias table, nor another D.
  using namespace attn::abi;
  for (int64_t d : {80, 96, 112, 128, 192, 256}) {
    for (unsigned v : {unsigned(kWindow), unsigned(kSoftcap), unsigned(kAlibi),
                       kWindow | kSoftcap})
      EXPECT_TRUE(producerByDefault(d, v, false, false)) << d << " " << v;
    for (unsigned v : {unsigned(kDocument), unsigned(kBias), kWindow | kBias,
                       unsigned(kPrefixLm)})
      EXPECT_FALSE(producerByDefault(d, v, false, false)) << d << " " << v;
  }
  EXPECT_FALSE(producerByDefault(64, kWindow, false, false));
  EXPECT_FALSE(producerByDefault(104, kSoftcap, false, false));
  EXPECT_FALSE(producerByDefault(128, kWindow, /*varlen=*/true, false));
  // With the producer: D = 192 112 keys, D = 256 80, D = 224 64; without
  // it 64.
  EXPECT_EQ(defaultTileSizes(192, true, 0, false, /*producer=*/true),
            (std::pair<int64_t, int64_t>{128, 112}));
  EXPECT_EQ(defaultTileSizes(192, true), (std::pair<int64_t, int64_t>{128, 64}));
  EXPECT_EQ(defaultTileSizes(256, true, 0, false, true),
            (std::pair<int64_t, int64_t>{128, 80}));
  EXPECT_EQ(defaultTileSizes(224, true, 0, false, true),
            (std::pair<int64_t, int64_t>{128, 64}));
  KernelConfig config;
  config.headDim = 192;
  config.tma = config.warpSpecialize = true;
  KernelConfig r = config.resolved(/*nvidia=*/true);
  EXPECT_EQ(r.blockN, 112);
  EXPECT_TRUE(r.tma && r.warpSpecialize);
}

// A document mask at D = 128 takes 128-key tiles only with TMA copies and no
// producer (its default kernel); with cp.async or a producer 64, as a bias
// table always does. resolved() passes the TMA it keeps: not split-KV's.
TEST(CompilePtxTest, DocumentTilesFollowTheCopies) {
  using namespace attn::abi;
  using Tiles = std::pair<int64_t, int64_t>;
  EXPECT_EQ(defaultTileSizes(128, true, kDocument, false, false, /*tma=*/true),
            (Tiles{128, 128}));
  EXPECT_EQ(defaultTileSizes(128, true, kDocument), (Tiles{128, 64}));
  EXPECT_EQ(defaultTileSizes(128, true, kDocument, false, /*producer=*/true,
                             /*tma=*/true),
            (Tiles{128, 64}));
  EXPECT_EQ(defaultTileSizes(128, true, kBias, false, false, /*tma=*/true),
            (Tiles{128, 64}));
  KernelConfig config;
  config.headDim = 128;
  config.variants = kDocument;
  config.tma = true;
  EXPECT_EQ(config.resolved(/*nvidia=*/true).blockN, 128);
  config.split = true;
  EXPECT_EQ(config.resolved(/*nvidia=*/true).blockN, 64);
}

// Short sequences at D = 128 (both sides <= 2k), bf16 or f16, plain, no mask
// or top-left causal, and causal ones at D = 256 (both sides <= 8k): the
// default tiles in persistent CTAs with the producer; not past the bound,
// at another D, FP8, with a variant, another mask, a packed batch or user
// mods. A sliding window alone of at most 512 keys too, at any length.
TEST(CompilePtxTest, LengthTilesPersistentAtD128) {
  using attn::compiler::DType;
  using attn::compiler::MaskKind;
  auto persistent = [](int64_t d, DType dtype, MaskKind mask, int64_t queries,
                       int64_t keys, unsigned variants = 0, bool varlen = false,
                       bool userMods = false, int64_t windowKeys = 0) {
    LengthTiles t = lengthTiles(d, dtype, mask, variants, varlen, userMods,
                                queries, keys, windowKeys);
    // Q's buffers: the policy's choice in the band, one outside it. Short
    // work tiles: the D = 128 bands, not D = 256's long causal one.
    EXPECT_EQ(t.qStages, t.persistent ? 0 : 1);
    EXPECT_EQ(t.shortWorkTiles, t.persistent && d == 128);
    if (t.persistent) {
      EXPECT_TRUE(t.producer && t.blockM == 0 && t.blockN == 0);
    }
    return t.persistent;
  };
  EXPECT_TRUE(persistent(128, DType::BF16, MaskKind::Causal, 256, 256));
  EXPECT_TRUE(persistent(128, DType::F16, MaskKind::None, 1024, 1024));
  EXPECT_TRUE(persistent(128, DType::BF16, MaskKind::None, 1, 1000));
  EXPECT_TRUE(persistent(128, DType::BF16, MaskKind::Causal, 2048, 2048));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::None, 2048, 2049));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::Causal, 2049, 512));
  EXPECT_FALSE(persistent(64, DType::BF16, MaskKind::None, 1024, 1024));
  EXPECT_FALSE(persistent(256, DType::BF16, MaskKind::None, 1024, 1024));
  EXPECT_TRUE(persistent(256, DType::BF16, MaskKind::Causal, 8192, 8192));
  EXPECT_TRUE(persistent(256, DType::F16, MaskKind::Causal, 1, 300));
  EXPECT_FALSE(persistent(256, DType::BF16, MaskKind::Causal, 8192, 8193));
  EXPECT_FALSE(persistent(192, DType::BF16, MaskKind::Causal, 1024, 1024));
  EXPECT_FALSE(persistent(128, DType::E4M3, MaskKind::None, 1024, 1024));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::CausalBottomRight, 512,
                          512));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::Causal, 512, 512,
                          attn::abi::kSoftcap));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::None, 512, 512, 0,
                          /*varlen=*/true));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::None, 512, 512, 0,
                          false, /*userMods=*/true));
  // A sliding window alone of at most 512 keys, at any length.
  using attn::abi::kWindow;
  EXPECT_TRUE(persistent(128, DType::BF16, MaskKind::Causal, 16384, 16384,
                         kWindow, false, false, /*windowKeys=*/256));
  EXPECT_TRUE(persistent(128, DType::F16, MaskKind::None, 8192, 8192, kWindow,
                         false, false, 512));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::Causal, 8192, 8192,
                          kWindow, false, false, 513));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::Causal, 512, 512, kWindow,
                          false, false, /*unbounded=*/0));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::Causal, 8192, 8192,
                          kWindow | attn::abi::kSoftcap, false, false, 256));
  EXPECT_FALSE(persistent(256, DType::BF16, MaskKind::Causal, 8192, 8192,
                          kWindow, false, false, 256));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::CausalBottomRight, 8192,
                          8192, kWindow, false, false, 256));
  EXPECT_FALSE(persistent(128, DType::BF16, MaskKind::Causal, 8192, 8192,
                          kWindow, /*varlen=*/true, false, 256));
}

// Long sequences at D = 64 (both sides >= 8k), bf16 or f16, plain: the
// tall tiles with the producer; short causal ones (both sides <= 2k) 64 x 64
// without it; between (both above 2k, below 8k; none or causal) 64 x 128; not a side past the bound, another D, FP8, a variant, a
// packed batch or user mods; short ones only with the top-left causal mask.
TEST(CompilePtxTest, LengthTilesAtD64) {
  using attn::compiler::DType;
  using attn::compiler::MaskKind;
  auto tiles = [](int64_t d, DType dtype, MaskKind mask, int64_t queries,
                  int64_t keys, unsigned variants = 0, bool varlen = false,
                  bool userMods = false) {
    LengthTiles t = lengthTiles(d, dtype, mask, variants, varlen, userMods,
                                queries, keys);
    return std::tuple(t.blockM, t.blockN, t.producer);
  };
  const auto tall = std::tuple(int64_t(192), int64_t(128), true);
  const auto small = std::tuple(int64_t(64), int64_t(64), false);
  const auto mid = std::tuple(int64_t(64), int64_t(128), false);
  const auto none = std::tuple(int64_t(0), int64_t(0), false);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 8192, 8192), tall);
  EXPECT_EQ(tiles(64, DType::F16, MaskKind::Causal, 16384, 9000), tall);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 8191, 8192), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 8192, 8191), none);
  EXPECT_EQ(tiles(128, DType::BF16, MaskKind::None, 8192, 8192), none);
  EXPECT_EQ(tiles(64, DType::E4M3, MaskKind::None, 8192, 8192), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 8192, 8192,
                  attn::abi::kWindow),
            none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 8192, 8192, 0,
                  /*varlen=*/true),
            none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 8192, 8192, 0, false,
                  /*userMods=*/true),
            none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::Causal, 2048, 2048), small);
  EXPECT_EQ(tiles(64, DType::F16, MaskKind::Causal, 1, 256), small);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::Causal, 2049, 2048), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::Causal, 2048, 2049), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 1024, 1024), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 2048, 2048), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 2049, 8191), mid);
  EXPECT_EQ(tiles(64, DType::F16, MaskKind::Causal, 4096, 4096), mid);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::None, 4096, 8192), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::CausalBottomRight, 4096, 4096),
            none);
  EXPECT_EQ(tiles(128, DType::BF16, MaskKind::None, 4096, 4096), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::CausalBottomRight, 1024, 1024),
            none);
  EXPECT_EQ(tiles(64, DType::E4M3, MaskKind::Causal, 1024, 1024), none);
  EXPECT_EQ(tiles(64, DType::BF16, MaskKind::Causal, 1024, 1024,
                  attn::abi::kSoftcap),
            none);
}

// Masks compare 32-bit gaps in the 16-bit TMA kernels only: the cp.async
// kernels (mma.sync, wgmma without TMA) and FP8's spilled with them.
TEST(CompilePtxTest, NarrowComparesOnlyWhereTheRegistersAllow) {
  KernelConfig config;
  config.headDim = 128;
  config.mask = MaskKind::Causal;
  config.arch = "sm_90a";
  config.tensorCore = "wgmma";
  KernelPlan plan;
  std::string error;
  config.tma = true;
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
  EXPECT_TRUE(plan.narrowCompares);
  config.tma = false;
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
  EXPECT_FALSE(plan.narrowCompares);
  config.tensorCore = "mma.sync";
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
  EXPECT_FALSE(plan.narrowCompares);
  config.tensorCore = "wgmma";
  config.dtype = DType::E4M3;
  config.mask = MaskKind::None;
  config.tma = true;
  ASSERT_TRUE(planKernel(config.resolved(/*nvidia=*/true), /*nvidia=*/true,
                         plan, error))
      << error;
  EXPECT_FALSE(plan.narrowCompares);
}

// The atomic backward on wgmma: at D = 128 two warpgroups of 64 keys whose
// dQ part (64 query rows) splits over the head dim; at D = 64 (one 64-column
// block) one warpgroup, 64 x 64; the deterministic form keeps 64 x 64. A
// 64-row part over two warpgroups is refused where the head dim is not whole
// 64-column blocks a warpgroup.
TEST(CompilePtxTest, AtomicBackwardSplitsDqOverTwoWarpgroups) {
  EXPECT_TRUE(splitsDqOverHeadDim(64, 8, 128));
  EXPECT_FALSE(splitsDqOverHeadDim(64, 8, 64));
  EXPECT_FALSE(splitsDqOverHeadDim(64, 8, 96));
  EXPECT_FALSE(splitsDqOverHeadDim(64, 4, 128));
  EXPECT_FALSE(splitsDqOverHeadDim(128, 8, 128));
  KernelConfig config;
  config.headDim = 128;
  config.arch = "sm_90a";
  config.backward = true;
  config.deterministic = false;
  KernelConfig r = config.resolved(/*nvidia=*/true);
  EXPECT_EQ(r.tensorCore, "wgmma");
  EXPECT_FALSE(r.deterministic);
  EXPECT_EQ(r.blockM, 128);
  EXPECT_EQ(r.blockN, 64);
  EXPECT_EQ(r.warps, 8);
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(planKernel(r, /*nvidia=*/true, plan, error)) << error;
  config.headDim = 64;
  r = config.resolved(/*nvidia=*/true);
  EXPECT_EQ(r.blockM, 64);
  EXPECT_EQ(r.warps, 4);
  config.headDim = 128;
  config.deterministic = true;
  EXPECT_EQ(config.resolved(/*nvidia=*/true).blockM, 64);
  // 128 x 64 at D = 64: the part's 64 rows cannot split over two
  // warpgroups (32 columns each).
  config.headDim = 64;
  config.deterministic = false;
  config.blockM = 128;
  config.blockN = 64;
  EXPECT_FALSE(planKernel(config.resolved(/*nvidia=*/true), /*nvidia=*/true,
                          plan, error));
  EXPECT_NE(error.find("64-column blocks over the warpgroups"),
            std::string::npos)
      << error;
}

// TMA by default at the wgmma head dims from 64 to 128, for the document
// mask up to 256, with a bias table only at D = 128 (the policy's one rule;
// the runtime asks it).
TEST(CompilePtxTest, TmaByDefaultTakesBiasTablesOnlyAtD128) {
  EXPECT_TRUE(tmaByDefault(64));
  EXPECT_TRUE(tmaByDefault(128, attn::abi::kAlibi | attn::abi::kSoftcap));
  for (int64_t d : {80, 96, 112, 192, 256})
    EXPECT_TRUE(tmaByDefault(d, attn::abi::kDocument)) << d;
  EXPECT_FALSE(tmaByDefault(48));
  EXPECT_FALSE(tmaByDefault(104));
  EXPECT_FALSE(tmaByDefault(256));
  EXPECT_FALSE(tmaByDefault(192, attn::abi::kPrefixLm));
  EXPECT_TRUE(tmaByDefault(128, attn::abi::kBias));
  EXPECT_FALSE(tmaByDefault(64, attn::abi::kBias | attn::abi::kAlibi));
  EXPECT_FALSE(tmaByDefault(96, attn::abi::kBias));
}

// A call's copies, decided once (chooseCopies): the policy's producer
// brings TMA; TMA alone where tmaByDefault says; the caller's settings win.
TEST(CompilePtxTest, ChooseCopiesTakesTmaWithThePolicysProducer) {
  using attn::abi::kDocument;
  using attn::abi::kWindow;
  auto copies = [](int64_t d, unsigned variants, bool lengths,
                   std::optional<bool> tma = std::nullopt,
                   std::optional<bool> producer = std::nullopt) {
    Copies c = chooseCopies(d, variants, /*varlen=*/false, /*userMods=*/false,
                            lengths, tma, producer);
    return std::pair<bool, bool>{c.tma, c.producer};
  };
  using TP = std::pair<bool, bool>; // (tma, producer)
  EXPECT_EQ(copies(128, 0, false), TP(true, true));
  EXPECT_EQ(copies(256, kWindow, false), TP(true, true));
  // TMA alone: D = 64, the document mask up to 256.
  EXPECT_EQ(copies(64, 0, false), TP(true, false));
  EXPECT_EQ(copies(192, kDocument, false), TP(true, false));
  // D = 64 by its lengths: lengthTiles' producer brings TMA.
  EXPECT_EQ(copies(64, 0, true), TP(true, true));
  // Neither: head dims off the wgmma multiples, D = 48.
  EXPECT_EQ(copies(104, 0, false), TP(false, false));
  EXPECT_EQ(copies(48, 0, false), TP(false, false));
  // The caller's settings: no producer keeps TMA only where it is the
  // default alone (not at D = 256); a producer asked for at D = 48 comes
  // without TMA unless TMA is asked for too.
  EXPECT_EQ(copies(256, 0, false, std::nullopt, false), TP(false, false));
  EXPECT_EQ(copies(128, 0, false, std::nullopt, false), TP(true, false));
  EXPECT_EQ(copies(48, 0, false, std::nullopt, true), TP(false, true));
  EXPECT_EQ(copies(48, 0, false, true, true), TP(true, true));
  EXPECT_EQ(copies(128, 0, false, false), TP(false, true));
}

// A tiered first call's quick kernel (quickKernelConfig): the attention of
// the full config on mma.sync 64 x 16 tiles, its PTX from LLVM at O0,
// compiled for real without a spill-prone plan, at every head dim the
// runtime takes and with the variants; none for the backward, FP8, split-KV,
// paged and f32 configs, nor for a config that already is the quick one.
TEST(CompilePtxTest, QuickKernelIsTheSameAttentionOnSmallMmaSyncTiles) {
  using attn::abi::kSoftcap;
  using attn::abi::kWindow;
  auto full = [](int64_t d, unsigned variants = 0) {
    KernelConfig c;
    c.headDim = d;
    c.arch = "sm_90a";
    c.mask = MaskKind::Causal;
    c.variants = variants;
    c.tma = c.warpSpecialize = true;
    return c.resolved(/*nvidia=*/true);
  };
  for (auto [d, variants] : {std::pair<int64_t, unsigned>{64, 0},
                             {128, 0},
                             {128, kSoftcap | kWindow},
                             {96, 0},
                             {256, 0}}) {
    KernelConfig quick;
    ASSERT_TRUE(quickKernelConfig(full(d, variants), quick)) << d;
    EXPECT_EQ(quick.tensorCore, "mma.sync");
    EXPECT_EQ(quick.blockM, kQuickBlockM);
    EXPECT_EQ(quick.blockN, kQuickBlockN);
    EXPECT_FALSE(quick.tma || quick.warpSpecialize || quick.persistent);
    EXPECT_EQ(quick.llvmOptLevel, kQuickLlvmOptLevel);
    EXPECT_EQ(quick.headDim, d);
    EXPECT_EQ(quick.mask, MaskKind::Causal);
    EXPECT_EQ(quick.variants, variants);
    PtxKernel kernel;
    std::string error;
    ASSERT_TRUE(compilePtx(quick, kernel, error)) << d << ": " << error;
    ASSERT_EQ(kernel.kernels.size(), 1u);
    EXPECT_EQ(kernel.kernels[0].blockM, kQuickBlockM);
  }
  KernelConfig quick;
  KernelConfig backward = full(128);
  backward.backward = true;
  EXPECT_FALSE(quickKernelConfig(backward, quick));
  KernelConfig fp8 = full(128);
  fp8.dtype = DType::E4M3;
  EXPECT_FALSE(quickKernelConfig(fp8, quick));
  KernelConfig split = full(128);
  split.split = true;
  EXPECT_FALSE(quickKernelConfig(split, quick));
  KernelConfig paged = full(128);
  paged.varlen = true;
  paged.pageSize = 16;
  EXPECT_FALSE(quickKernelConfig(paged, quick));
  KernelConfig already;
  ASSERT_TRUE(quickKernelConfig(full(128), already));
  EXPECT_FALSE(quickKernelConfig(already, quick));
}

/// A D = 128 sm_90a forward over a paged cache of 16-row pages.
KernelConfig pagedConfig() {
  KernelConfig config;
  config.headDim = 128;
  config.arch = "sm_90a";
  config.varlen = true;
  config.pageSize = 16;
  return config;
}

// Decoding over a paged cache (TilePolicy's pagedDecodes): one-warpgroup
// 64 x 64 tiles, three stages in half an SM's shared memory, two CTAs an SM
// -- the split kernel too, whose 128 threads keep every register there;
// the default 128 x 128 split kernel runs one.
TEST(CompilePtxTest, PagedDecodeTilesRunTwoCtasAnSm) {
  EXPECT_TRUE(pagedDecodes(/*pageSize=*/16, /*rowsPerGroup=*/4));
  EXPECT_TRUE(pagedDecodes(16, kDecodeBlock));
  EXPECT_FALSE(pagedDecodes(16, kDecodeBlock + 1));
  EXPECT_FALSE(pagedDecodes(/*pageSize=*/0, 4));
  EXPECT_EQ(pagedDecodeTiles(128, /*wgmma=*/true),
            std::make_pair(kDecodeBlock, kDecodeBlock));
  EXPECT_EQ(pagedDecodeTiles(96, /*wgmma=*/true),
            std::make_pair(kDecodeBlock, kDecodeBlock));
  EXPECT_EQ(pagedDecodeTiles(64, /*wgmma=*/true), std::make_pair(0L, 0L));
  EXPECT_EQ(pagedDecodeTiles(128, /*wgmma=*/false), std::make_pair(0L, 0L));
  for (bool split : {false, true}) {
    KernelConfig config = pagedConfig();
    config.packGqa = true;
    config.split = split;
    config.blockM = config.blockN = kDecodeBlock;
    KernelPlan plan;
    std::string error;
    ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
    EXPECT_EQ(plan.warps, 4);
    EXPECT_EQ(plan.stages, 3);
    EXPECT_EQ(plan.minCtasPerSm, 2) << "split " << split;
    EXPECT_EQ(splitCtasPerSm(config), 2);
    PtxKernel kernel;
    ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
    EXPECT_NE(kernel.ptx.find(".minnctapersm 2"), std::string::npos);
    config.blockM = config.blockN = 0;
    EXPECT_EQ(splitCtasPerSm(config), 1);
  }
}

// KernelConfig::pagedDecode: resolved() gives a decoding paged call's open
// tiles pagedDecodeTiles' and clears the flag (the tiles are the key); tiles
// the call names, a head dim without decode tiles, a contiguous cache or the
// host keep theirs.
TEST(CompilePtxTest, ResolvedTakesPagedDecodeTilesAndClearsTheFlag) {
  KernelConfig config = pagedConfig();
  config.pagedDecode = true;
  KernelConfig r = config.resolved(/*nvidia=*/true);
  EXPECT_EQ(r.blockM, kDecodeBlock);
  EXPECT_EQ(r.blockN, kDecodeBlock);
  EXPECT_FALSE(r.pagedDecode);
  KernelConfig plain = config;
  plain.pagedDecode = false;
  EXPECT_EQ(plain.resolved(true).blockM, 128);
  KernelConfig named = config;
  named.blockM = 128;
  named.blockN = 64;
  EXPECT_EQ(named.resolved(true).blockM, 128);
  EXPECT_EQ(named.resolved(true).blockN, 64);
  KernelConfig d64 = config, d64Plain = config;
  d64.headDim = d64Plain.headDim = 64;
  d64Plain.pagedDecode = false;
  EXPECT_EQ(d64.resolved(true).blockM, d64Plain.resolved(true).blockM);
  EXPECT_EQ(d64.resolved(true).blockN, d64Plain.resolved(true).blockN);
  KernelConfig contiguous = config;
  contiguous.pageSize = 0;
  EXPECT_EQ(contiguous.resolved(true).blockN, 128);
  EXPECT_FALSE(config.resolved(/*nvidia=*/false).pagedDecode);
  EXPECT_NE(config.resolved(false).blockM, kDecodeBlock);
  // The compile of the flagged config is the compile of its resolved tiles.
  PtxKernel flagged, resolved;
  std::string error;
  ASSERT_TRUE(compilePtx(config, flagged, error)) << error;
  ASSERT_TRUE(compilePtx(r, resolved, error)) << error;
  EXPECT_EQ(flagged.ptx, resolved.ptx);
}

} // namespace

// A packed batch's K/V take TMA (KernelABI.h's ragged maps); a paged
// cache's pages and split-KV's kernels keep cp.async.
TEST(CompilePtxTest, VarlenKernelsTakeTmaPagedAndSplitOnesDoNot) {
  KernelConfig config;
  config.headDim = 128;
  config.mask = MaskKind::Causal;
  config.arch = "sm_90a";
  config.varlen = true;
  config.tma = true;
  EXPECT_TRUE(config.resolved(/*nvidia=*/true).tma);
  PtxKernel kernel;
  std::string error;
  ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
  EXPECT_NE(kernel.ptx.find("cp.async.bulk.tensor.4d"), std::string::npos);
  KernelConfig paged = config;
  paged.pageSize = 16;
  EXPECT_FALSE(paged.resolved(/*nvidia=*/true).tma);
  KernelConfig split = config;
  split.split = true;
  EXPECT_FALSE(split.resolved(/*nvidia=*/true).tma);
}

// KernelConfig::persistent: kept for the wgmma forward over contiguous K/V
// with a producer warpgroup (TMA), in the plan and the pipeline options;
// cleared for the backward, a packed batch, a paged cache, split-KV,
// packed GQA heads, without the producer, and on the host.
TEST(CompilePtxTest, PersistentOnlyForWarpSpecialisedForwards) {
  KernelConfig config;
  config.headDim = 128;
  config.arch = "sm_90a";
  config.tensorCore = "wgmma";
  config.tma = config.warpSpecialize = config.persistent = true;
  KernelConfig r = config.resolved(/*nvidia=*/true);
  EXPECT_TRUE(r.tma && r.warpSpecialize && r.persistent);
  EXPECT_NE(r.pipelineOptions(true).find(" persistent=1"), std::string::npos)
      << r.pipelineOptions(true);
  EXPECT_EQ(r.resolved(/*nvidia=*/true).persistent, true); // idempotent
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
  EXPECT_TRUE(plan.persistent && plan.warpSpecialize);

  std::vector<std::pair<const char *, KernelConfig>> cleared;
  auto with = [&](const char *why, auto change) {
    KernelConfig c = config;
    change(c);
    cleared.emplace_back(why, c);
  };
  with("backward", [](KernelConfig &c) { c.backward = true; });
  with("varlen", [](KernelConfig &c) { c.varlen = true; });
  with("paged", [](KernelConfig &c) {
    c.varlen = true;
    c.pageSize = 16;
  });
  with("split", [](KernelConfig &c) { c.split = true; });
  with("packGqa", [](KernelConfig &c) { c.packGqa = true; });
  with("no producer", [](KernelConfig &c) { c.warpSpecialize = false; });
  with("no tma", [](KernelConfig &c) { c.tma = false; });
  with("mma.sync", [](KernelConfig &c) { c.tensorCore = "mma.sync"; });
  with("fp8", [](KernelConfig &c) { c.dtype = DType::E4M3; });
  for (const auto &[why, c] : cleared) {
    KernelConfig cr = c.resolved(/*nvidia=*/true);
    EXPECT_FALSE(cr.persistent) << why;
    EXPECT_EQ(cr.pipelineOptions(true).find("persistent"), std::string::npos)
        << why;
  }
  EXPECT_FALSE(config.resolved(/*nvidia=*/false).persistent);
  EXPECT_EQ(config.pipelineOptions(/*nvidia=*/false).find("persistent"),
            std::string::npos);
}

// KernelConfig::qStages: a persistent CTA takes two Q buffers where two K/V
// stages fit beside them (D = 128: 2 x 32 KB + 2 x 64 KB, the plain
// schedule), one at D = 256; an explicit 1 keeps the three stages; the
// request is kept only with persistent, and only 0, 1 and 2 plan.
TEST(CompilePtxTest, PersistentQStages) {
  KernelConfig config;
  config.headDim = 128;
  config.arch = "sm_90a";
  config.tensorCore = "wgmma";
  config.tma = config.warpSpecialize = config.persistent = true;
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(planKernel(config, /*nvidia=*/true, plan, error)) << error;
  EXPECT_EQ(plan.qStages, 2);
  EXPECT_EQ(plan.stages, 2);
  EXPECT_EQ(plan.schedule, "plain");
  EXPECT_EQ(plan.sharedBytes, 2 * 32768 + 2 * 65536 + 1024);

  KernelConfig one = config;
  one.qStages = 1;
  ASSERT_TRUE(planKernel(one, /*nvidia=*/true, plan, error)) << error;
  EXPECT_EQ(plan.qStages, 1);
  EXPECT_EQ(plan.stages, 3);
  EXPECT_NE(one.resolved(true).pipelineOptions(true).find(" q-stages=1"),
            std::string::npos);

  // Short work tiles reach the pipeline (attn-configure's grid order) only
  // with persistent CTAs.
  KernelConfig shortTiles = config;
  shortTiles.shortWorkTiles = true;
  EXPECT_NE(shortTiles.resolved(true).pipelineOptions(true).find(
                " short-work-tiles=1"),
            std::string::npos);
  shortTiles.persistent = false;
  EXPECT_FALSE(shortTiles.resolved(true).shortWorkTiles);
  EXPECT_EQ(
      shortTiles.resolved(true).pipelineOptions(true).find("short-work-tiles"),
      std::string::npos);

  KernelConfig wide = config;
  wide.headDim = 256;
  ASSERT_TRUE(planKernel(wide, /*nvidia=*/true, plan, error)) << error;
  EXPECT_EQ(plan.qStages, 1);

  KernelConfig notPersistent = config;
  notPersistent.persistent = false;
  notPersistent.qStages = 2;
  EXPECT_EQ(notPersistent.resolved(true).qStages, 0);
  ASSERT_TRUE(planKernel(notPersistent, /*nvidia=*/true, plan, error))
      << error;
  EXPECT_EQ(plan.qStages, 1);

  KernelConfig three = config;
  three.qStages = 3;
  EXPECT_FALSE(planKernel(three, /*nvidia=*/true, plan, error));
  EXPECT_NE(error.find("q_stages must be 1, 2 or 0"), std::string::npos)
      << error;
}

// A bias table's score tiles are staged with K and V (attn-nv-stage-tables)
// in the cp.async kernel and in the TMA kernel without a producer (its CTA
// barrier per tile orders them), and the policy counts their stages: at
// D = 128 (128 x 64 tiles) Q 32 KB + 3 x (K, V 16 KB each + the f32 table's
// 32 KB) + the 1 KB swizzle slack, the cp.async kernel's own sum (the TMA
// kernel adds its mbarriers and their alignment, within the CTA's limit);
// read back as 8-byte pairs. A producer's kernel keeps the gather, and the
// policy no table stages.
TEST(CompilePtxTest, BiasTableStagesAgreeWithThePolicy) {
  for (bool producer : {false, true}) {
    for (bool tma : {false, true}) {
      if (producer && !tma)
        continue;
      KernelConfig config;
      config.headDim = 128;
      config.mask = MaskKind::Causal;
      config.arch = "sm_90a";
      config.variants = attn::abi::kBias;
      config.tma = tma;
      config.warpSpecialize = producer;
      KernelPlan plan;
      std::string error;
      ASSERT_TRUE(planKernel(config.resolved(/*nvidia=*/true),
                             /*nvidia=*/true, plan, error))
          << error;
      PtxKernel kernel;
      ASSERT_TRUE(compilePtx(config, kernel, error)) << error;
      bool staged = !producer;
      EXPECT_EQ(kernel.ptx.find("ld.shared.v2.b32") != std::string::npos,
                staged)
          << "tma " << tma << " producer " << producer;
      if (!staged) {
        EXPECT_LT(plan.sharedBytes, 230400 - 3 * 32768 + 1);
        continue;
      }
      EXPECT_EQ(plan.stages, 3);
      EXPECT_EQ(plan.sharedBytes, 230400);
      if (!tma) {
        EXPECT_EQ(kernel.kernels[0].sharedBytes, plan.sharedBytes);
      }
      EXPECT_LE(kernel.kernels[0].sharedBytes,
                maxSharedBytesPerBlock(config.arch));
    }
  }
}
