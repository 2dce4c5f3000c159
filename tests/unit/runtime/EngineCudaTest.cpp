//===- EngineCudaTest.cpp - The CUDA path on a fake driver ----------------===//
//
// Compile once per key, launch for every size, with the kernel ABI of
// Compiler.h; contexts, device limits and driver failures.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"
#include "FakeCompiler.h"
#include "FakeCudaDriver.h"
#include "TestUtil.h"
#include "attn/Compiler/TilePolicy.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <tuple>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

/// A paged call over `fwd`'s tensors: `batch` sequences of at most `maxQ`
/// queries, a block table of `maxPages` columns (rows `tableStride` apart,
/// 0: maxPages), `numPages` pages of `pageSize` rows; the query offsets,
/// table and key counts are registered fake memory the kernel never reads.
struct PagedTables {
  Buffer cuQ, table, used;
  attn_paged_args a{};
  PagedTables(const attn_fwd_args &fwd, int64_t batch, int64_t maxQ,
              int64_t maxPages, int64_t tableStride, int64_t numPages,
              int64_t pageSize)
      : cuQ((batch + 1) * 4),
        table(batch * std::max(maxPages, tableStride) * 4), used(batch * 4) {
    for (Buffer *b : {&cuQ, &table, &used})
      registerFakeMemory(b->data(), b->size());
    a.fwd = fwd;
    a.fwd.batch = batch;
    a.cu_seqlens_q = static_cast<const int32_t *>(cuQ.data());
    a.max_seqlen_q = maxQ;
    a.block_table = static_cast<const int32_t *>(table.data());
    a.max_pages = maxPages;
    a.block_table_stride = tableStride;
    a.seqused_k = static_cast<const int32_t *>(used.data());
    a.num_pages = numPages;
    a.page_size = pageSize;
    attn_set_paged_strides(&a);
  }
};

class EngineCudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    resetFakeCompiler();
    resetFakeCuda();
    options.driver = makeFakeCudaDriver();
    options.disk.enabled = false;
    // The unsplit launch, whatever the grid; SplitKv tests ask for auto.
    options.numSplits = 1;
  }
  Engine &engine() {
    if (!engine_)
      engine_ = std::make_unique<Engine>(options);
    return *engine_;
  }
  /// The tiles and copies of the configuration compiled last.
  void expectLastTiles(int64_t blockM, int64_t blockN, bool producer,
                       const char *why = "") {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.blockM, blockM) << why;
    EXPECT_EQ(fakeCompiler().lastConfig.blockN, blockN) << why;
    EXPECT_TRUE(fakeCompiler().lastConfig.tma) << why;
    EXPECT_EQ(fakeCompiler().lastConfig.warpSpecialize, producer) << why;
  }
  FakeLaunch lastLaunch() {
    std::lock_guard<std::mutex> lock(fakeCuda().mutex);
    return fakeCuda().launchLog.back();
  }
  /// The fake driver's launches and allocations so far, and how many of
  /// those are still allocated.
  struct Logs {
    std::vector<FakeLaunch> launches;
    std::vector<std::pair<void *, size_t>> allocations;
    int live = 0;
  };
  Logs logs() {
    std::lock_guard<std::mutex> lock(fakeCuda().mutex);
    return {fakeCuda().launchLog, fakeCuda().allocationLog,
            fakeCuda().liveAllocations};
  }

  EngineOptions options = oneKernelOptions();
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineCudaTest, SequenceLengthsBatchAndHeadsNeverRecompile) {
  // One kernel for every length: with ATTN_JIT_PERSISTENT=0, since short
  // D = 128 calls take a persistent kernel of their own by default (one
  // more compile for the band, ShortSequencesAtD128RunPersistent).
  options.persistent = false;
  int64_t shapes[][4] = {{1, 1, 64, 64},   {2, 8, 1000, 1000},
                         {1, 2, 1, 4096},  {3, 4, 4097, 17},
                         {1, 1, 8192, 64}, {7, 3, 129, 0}};
  for (auto &shape : shapes) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, shape[0], shape[1],
                        shape[2], shape[3], 128);
    Status status = engine().forward(&call.args);
    ASSERT_TRUE(status.ok()) << status.toString();
  }
  attn_stats stats = engine().stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  EXPECT_EQ(fakeCuda().moduleLoads, 1);
  EXPECT_EQ(stats.memory_hits, 5u);
  EXPECT_EQ(stats.launches, 6u);
  EXPECT_EQ(fakeCuda().launches, 6);
}

TEST_F(EngineCudaTest, CodeChangingArgumentsCompileSeparately) {
  auto run = [&](attn_dtype dtype, int64_t dim, attn_mask mask) {
    ForwardFixture call(ATTN_DEVICE_CUDA, dtype, 1, 1, 16, 16, dim);
    call.args.mask = mask;
    ASSERT_TRUE(engine().forward(&call.args).ok());
  };
  run(ATTN_DTYPE_BF16, 64, ATTN_MASK_NONE);
  run(ATTN_DTYPE_F16, 64, ATTN_MASK_NONE);
  run(ATTN_DTYPE_BF16, 128, ATTN_MASK_NONE);
  run(ATTN_DTYPE_BF16, 64, ATTN_MASK_CAUSAL);
  run(ATTN_DTYPE_BF16, 64, ATTN_MASK_CAUSAL_BOTTOM_RIGHT);
  run(ATTN_DTYPE_BF16, 64, ATTN_MASK_NONE); // again: cached
  EXPECT_EQ(fakeCompiler().ptxCompiles, 5);
  EXPECT_EQ(engine().stats().memory_hits, 1u);
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_EQ(fakeCompiler().lastConfig.mask,
            compiler::MaskKind::CausalBottomRight);
  EXPECT_EQ(fakeCompiler().lastConfig.arch, "sm_90a");
}

TEST_F(EngineCudaTest, LaunchFollowsTheKernelAbi) {
  // (B, N, H, D) layout, with LSE, a custom scale and a stream.
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 3, 5, 200, 77, 64);
  attn_set_bnhd_strides(&call.args);
  call.args.scale = 0.25f;
  call.args.stream = reinterpret_cast<void *>(0x5000);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  FakeLaunch launch = lastLaunch();
  const int blockM = 128; // resolved: the wgmma default for D = 64 on sm_90a
  EXPECT_EQ(launch.grid[0], unsigned((200 + blockM - 1) / blockM));
  EXPECT_EQ(launch.grid[1], 5u);
  EXPECT_EQ(launch.grid[2], 3u);
  EXPECT_EQ(launch.block[0], unsigned(kFakeThreads));
  EXPECT_EQ(launch.block[1], 1u);
  EXPECT_EQ(launch.block[2], 1u);
  EXPECT_EQ(launch.sharedBytes, unsigned(blockM * 64 * 2 * 3));
  EXPECT_EQ(launch.stream, reinterpret_cast<CUstream>(0x5000));
  EXPECT_EQ(launch.scale, 0.25f);

  auto address = [](const void *p) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
  };
  const attn_fwd_args &a = call.args;
  std::vector<int64_t> expected = {
      address(a.q), 3, 5, 200, 64, a.q_strides[0], a.q_strides[1],
      a.q_strides[2], a.q_strides[3],
      address(a.k), 3, 5, 77, 64, a.k_strides[0], a.k_strides[1],
      a.k_strides[2], a.k_strides[3],
      address(a.v), 3, 5, 77, 64, a.v_strides[0], a.v_strides[1],
      a.v_strides[2], a.v_strides[3],
      address(a.o), 3, 5, 200, 64, a.o_strides[0], a.o_strides[1],
      a.o_strides[2], a.o_strides[3],
      address(a.lse), 3, 5, 200, a.lse_strides[0], a.lse_strides[1],
      a.lse_strides[2]};
  EXPECT_EQ(launch.values, expected);
  // BNHD: the head stride is D, the row stride H * D.
  EXPECT_EQ(a.q_strides[1], 64);
  EXPECT_EQ(a.q_strides[2], 5 * 64);
}

TEST_F(EngineCudaTest, GroupedQueryAttentionPassesKvHeadsInKAndVSizes) {
  // H = 8 query heads over Hkv = 2 K/V heads: K and V are (B, 2, Nk, D); the
  // kernel derives the group from K's sizes, so MHA and every GQA grouping
  // share one kernel.
  for (int64_t kvHeads : {0, 2, 1, 8}) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 3, 8, 40, 24, 64,
                        true, kvHeads);
    ASSERT_TRUE(engine().forward(&call.args).ok()) << kvHeads;
    FakeLaunch launch = lastLaunch();
    int64_t hkv = kvHeads ? kvHeads : 8;
    const attn_fwd_args &a = call.args;
    const int k = 9, v = 18, o = 27; // first value of each tensor
    EXPECT_EQ(launch.grid[1], 8u);   // one CTA row per query head
    EXPECT_EQ(launch.values[1], 3);
    EXPECT_EQ(launch.values[2], 8);
    EXPECT_EQ(launch.values[k + 2], hkv) << kvHeads;
    EXPECT_EQ(launch.values[k + 3], 24);
    EXPECT_EQ(launch.values[k + 6], a.k_strides[1]);
    EXPECT_EQ(a.k_strides[0], hkv * 24 * 64);
    EXPECT_EQ(launch.values[v + 2], hkv);
    EXPECT_EQ(launch.values[v + 6], a.v_strides[1]);
    EXPECT_EQ(launch.values[o + 2], 8);
  }
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
}

TEST_F(EngineCudaTest, VarlenLaunchesOverSequencesWithTheirOffsets) {
  // Packed rows: 100 queries (H = 8) and 150 keys (Hkv = 2); the B + 1
  // offsets (their contents stay on the device) and the longest query
  // count follow the scale (KernelABI.h's kVarlenArgs).
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 8, 100, 150, 64,
                      true, 2);
  Buffer cuQ(16), cuK(16);
  registerFakeMemory(cuQ.data(), cuQ.size());
  registerFakeMemory(cuK.data(), cuK.size());
  attn_varlen_args a{};
  a.fwd = call.args;
  a.fwd.batch = 3;
  attn_set_varlen_strides(&a);
  a.cu_seqlens_q = static_cast<const int32_t *>(cuQ.data());
  a.cu_seqlens_k = static_cast<const int32_t *>(cuK.data());
  a.max_seqlen_q = 70;
  a.max_seqlen_k = 150;
  fakeCuda().paramsAfterScale = 7;
  Status status = engine().forwardVarlen(&a);
  ASSERT_TRUE(status.ok()) << status.toString();
  FakeLaunch launch = lastLaunch();
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.varlen);
    EXPECT_FALSE(fakeCompiler().lastConfig.packGqa);
    int blockM = fakeBlockM(fakeCompiler().lastConfig);
    EXPECT_EQ(launch.grid[0], unsigned((70 + blockM - 1) / blockM));
  }
  EXPECT_EQ(launch.grid[1], 8u);
  EXPECT_EQ(launch.grid[2], 3u); // one CTA plane per sequence
  {
    // TMA (D = 64), through ragged maps of the packed rows (KernelABI.h):
    // (D, N, Hkv, N + 1) from N rows before K and V; O's and Q's maps are
    // tiled.
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.tma);
    std::lock_guard<std::mutex> cudaLock(fakeCuda().mutex);
    ASSERT_EQ(fakeCuda().tensorMapLog.size(), 4u);
    EXPECT_EQ(fakeCuda().tensorMapLog[0].dims,
              (std::vector<uint64_t>{64, 150, 2, 151}));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(fakeCuda().tensorMapLog[0].address),
              reinterpret_cast<uintptr_t>(a.fwd.k) - 150 * 2 * 64 * 2);
  }
  const int k = 9;
  EXPECT_EQ(launch.values[1], 1); // one batch of packed rows
  EXPECT_EQ(launch.values[3], 100);
  EXPECT_EQ(launch.values[5], 0); // the batch stride is ignored
  EXPECT_EQ(launch.values[6], 64);      // head stride: D
  EXPECT_EQ(launch.values[7], 8 * 64);  // row stride: H * D
  EXPECT_EQ(launch.values[k + 2], 2);
  EXPECT_EQ(launch.values[k + 3], 150);
  std::vector<int64_t> expected = {
      int64_t(reinterpret_cast<uintptr_t>(cuQ.data())), 4, 1,
      int64_t(reinterpret_cast<uintptr_t>(cuK.data())), 4, 1, 70};
  EXPECT_EQ(launch.after, expected);
  // Other lengths, the same kernel.
  a.fwd.batch = 2;
  a.max_seqlen_q = 40;
  ASSERT_TRUE(engine().forwardVarlen(&a).ok());
  EXPECT_EQ(lastLaunch().grid[2], 2u);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  // Decoding (the group's 4 heads times at most 5 queries fit a tile):
  // the packed kernel, one of its own, over the K/V heads and the packed
  // rows of the longest sequence.
  a.max_seqlen_q = 5;
  ASSERT_TRUE(engine().forwardVarlen(&a).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.packGqa);
    int blockM = fakeBlockM(fakeCompiler().lastConfig);
    EXPECT_EQ(lastLaunch().grid[0], unsigned((4 * 5 + blockM - 1) / blockM));
  }
  EXPECT_EQ(lastLaunch().grid[1], 2u); // K/V heads
  EXPECT_EQ(lastLaunch().grid[2], 2u);
  // Back over the boundary: the unpacked kernel again, no compile.
  a.max_seqlen_q = 40;
  ASSERT_TRUE(engine().forwardVarlen(&a).ok());
  EXPECT_EQ(lastLaunch().grid[1], 8u);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  // Offsets in host memory cannot be read by the kernel.
  int32_t host[4] = {0, 1, 2, 3};
  a.cu_seqlens_k = host;
  status = engine().forwardVarlen(&a);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("cu_seqlens_k"), std::string::npos)
      << status.message();
}

TEST_F(EngineCudaTest, PagedLaunchesOverSequencesWithTheirTables) {
  // 100 packed query rows (H = 8) over caches of 40 pages of 16 rows (Hkv =
  // 2): K and V pass the pages as their first size and the page stride as
  // their first stride; the query offsets, the longest query count, the
  // block table (3 rows of 5 pages, 6 apart) and the key counts follow the
  // scale (KernelABI.h's kPagedArgs).
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 8, 100, 40 * 16,
                      64, true, 2);
  PagedTables paged(call.args, /*batch=*/3, /*maxQ=*/70, /*maxPages=*/5,
                    /*tableStride=*/6, /*numPages=*/40, /*pageSize=*/16);
  attn_paged_args &a = paged.a;
  Buffer &cuQ = paged.cuQ, &table = paged.table, &used = paged.used;
  fakeCuda().paramsAfterScale = 12;
  Status status = engine().forwardPaged(&a);
  ASSERT_TRUE(status.ok()) << status.toString();
  FakeLaunch launch = lastLaunch();
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.varlen);
    EXPECT_EQ(fakeCompiler().lastConfig.pageSize, 16);
    EXPECT_FALSE(fakeCompiler().lastConfig.packGqa);
    int blockM = fakeBlockM(fakeCompiler().lastConfig);
    EXPECT_EQ(launch.grid[0], unsigned((70 + blockM - 1) / blockM));
  }
  EXPECT_EQ(launch.grid[1], 8u);
  EXPECT_EQ(launch.grid[2], 3u); // one CTA plane per sequence
  {
    // Pages are no tensor a map describes: cp.async, no map.
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.tma);
    std::lock_guard<std::mutex> cudaLock(fakeCuda().mutex);
    EXPECT_TRUE(fakeCuda().tensorMapLog.empty());
  }
  const int k = 9;
  EXPECT_EQ(launch.values[k + 1], 40);           // pages
  EXPECT_EQ(launch.values[k + 2], 2);            // Hkv
  EXPECT_EQ(launch.values[k + 3], 16);           // rows per page
  EXPECT_EQ(launch.values[k + 5], 16 * 2 * 64);  // page stride
  EXPECT_EQ(launch.values[k + 6], 64);           // head stride
  EXPECT_EQ(launch.values[k + 7], 2 * 64);       // row stride
  std::vector<int64_t> expected = {
      int64_t(reinterpret_cast<uintptr_t>(cuQ.data())), 4, 1, 70,
      int64_t(reinterpret_cast<uintptr_t>(table.data())), 3, 5, 6, 1,
      int64_t(reinterpret_cast<uintptr_t>(used.data())), 3, 1};
  EXPECT_EQ(launch.after, expected);
  // Another page size is another kernel; other tables are not.
  a.max_pages = 4;
  ASSERT_TRUE(engine().forwardPaged(&a).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  a.page_size = 32;
  a.num_pages = 20;
  attn_set_paged_strides(&a);
  ASSERT_TRUE(engine().forwardPaged(&a).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  // A block table in host memory cannot be read by the kernel.
  int32_t host[18] = {};
  a.block_table = host;
  status = engine().forwardPaged(&a);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("block_table"), std::string::npos)
      << status.message();
}

TEST_F(EngineCudaTest, PagedDecodePacksGqaHeadsAndSplits) {
  // Speculative decoding over a paged cache: B = 2, H = 32 over Hkv = 8
  // (groups of 4), at most 2 queries a sequence, 256 pages of 16 a
  // sequence: packed heads (2 · 8 CTAs on 132 SMs) and auto splits, the
  // packed split kernel; then 4 queries a sequence, the same kernel; then
  // 40 (over the tile: not packed, and no auto split past
  // kMaxAutoSplitQueries), another.
  options.numSplits = 0;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 32, 80, 512 * 16,
                      128, true, 8);
  PagedTables paged(call.args, /*batch=*/2, /*maxQ=*/2, /*maxPages=*/256,
                    /*tableStride=*/256, /*numPages=*/512, /*pageSize=*/16);
  attn_paged_args &a = paged.a;
  fakeCuda().paramsAfterScale = 12 + 17; // kPagedArgs, then kSplitArgs
  Status status = engine().forwardPaged(&a);
  ASSERT_TRUE(status.ok()) << status.toString();
  int blockM = 0;
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.packGqa);
    EXPECT_TRUE(fakeCompiler().lastConfig.split);
    // A decoding paged call takes the policy's decode tiles (sm_90a).
    EXPECT_EQ(fakeCompiler().lastConfig.blockM, compiler::kDecodeBlock);
    EXPECT_EQ(fakeCompiler().lastConfig.blockN, compiler::kDecodeBlock);
    blockM = fakeBlockM(fakeCompiler().lastConfig);
  }
  ASSERT_GE(blockM, 4 * 4);
  auto [launches, allocations, live] = logs();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].grid[0], unsigned((4 * 2 + blockM - 1) / blockM));
  EXPECT_EQ(launches[0].grid[1], 8u); // K/V heads, packed
  EXPECT_GT(launches[0].grid[2], 2u); // B · num_splits
  EXPECT_EQ(launches[1].grid[1], 32u); // the merge: query heads
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  a.max_seqlen_q = 4;
  ASSERT_TRUE(engine().forwardPaged(&a).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  a.max_seqlen_q = 40;
  fakeCuda().paramsAfterScale = 12; // unsplit: kPagedArgs only
  ASSERT_TRUE(engine().forwardPaged(&a).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.packGqa);
    EXPECT_FALSE(fakeCompiler().lastConfig.split); // not a decode call
    // 4 · 40 rows a group: the default tiles.
    EXPECT_EQ(fakeCompiler().lastConfig.blockM, 128);
  }
  EXPECT_EQ(lastLaunch().grid[1], 32u);
}

TEST_F(EngineCudaTest, SplitKvDecodeLaunchesTheSplitsThenTheirMerge) {
  // Decode: B = 1, H = 32 over Hkv = 8 (packed: 8 CTAs on 132 SMs), one
  // query over 8192 keys: auto splits (SplitKv.h).
  options.numSplits = 0;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 32, 1, 8192, 128,
                      true, 8);
  fakeCuda().paramsAfterScale = 1 + 9 + 7; // kSplitArgs
  Status status = engine().forward(&call.args);
  ASSERT_TRUE(status.ok()) << status.toString();
  int64_t blockN = 0;
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.split);
    EXPECT_TRUE(fakeCompiler().lastConfig.packGqa);
    blockN = fakeCompiler().lastConfig.blockN;
  }
  int64_t splits = chooseNumSplits(8, (8192 + blockN - 1) / blockN, 132);
  ASSERT_GT(splits, 1);
  auto [launches, allocations, live] = logs();
  EXPECT_EQ(live, 0); // freed after the launches
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].name, "attn_fwd_0");
  EXPECT_EQ(launches[0].grid[1], 8u);                 // K/V heads, packed
  EXPECT_EQ(launches[0].grid[2], unsigned(splits));   // B · num_splits
  EXPECT_EQ(launches[1].name, "attn_fwd_1");
  EXPECT_EQ(launches[1].grid[0], 1u);                 // one query tile
  EXPECT_EQ(launches[1].grid[1], 32u);                // query heads
  EXPECT_EQ(launches[1].grid[2], 1u);
  // The workspace: (B · s, H, Nq, D) partial outputs, then their LSEs.
  ASSERT_EQ(allocations.size(), 1u);
  EXPECT_EQ(allocations[0].second, size_t(splits * 32 * 1 * 129 * 4));
  int64_t base = int64_t(reinterpret_cast<uintptr_t>(allocations[0].first));
  std::vector<int64_t> expected = {splits, base, splits, 32, 1, 128,
                                   32 * 128, 128, 128, 1,
                                   base + splits * 32 * 128 * 4, splits, 32,
                                   1, 32, 1, 1};
  EXPECT_EQ(launches[0].after, expected);
  EXPECT_EQ(launches[1].after, expected);

  // A forced count is an argument of the same kernel.
  ASSERT_TRUE(engine().setNumSplits(7).ok());
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  {
    std::lock_guard<std::mutex> lock(fakeCuda().mutex);
    EXPECT_EQ(fakeCuda().launchLog.size(), 4u);
    EXPECT_EQ(fakeCuda().launchLog[2].grid[2], 7u);
  }
  EXPECT_EQ(engine().setNumSplits(-1).code(), ATTN_ERROR_INVALID_ARGUMENT);

  // A batch that fills the GPU runs unsplit: the plain kernel, one launch
  // (no parameters after the scale).
  ASSERT_TRUE(engine().setNumSplits(0).ok());
  fakeCuda().paramsAfterScale = 0;
  ForwardFixture wide(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 64, 32, 1, 8192, 128,
                      true, 8);
  ASSERT_TRUE(engine().forward(&wide.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.split);
  }
  EXPECT_EQ(lastLaunch().grid[2], 64u);
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  EXPECT_EQ(fakeCuda().launchLog.size(), 5u);
}

TEST_F(EngineCudaTest, PagedDecodeSplitsOverTheTablesWidth) {
  // Decode over a paged cache: B = 1, H = 32 over Hkv = 8 (packed: 8 CTAs
  // on 132 SMs, each holding the decode tiles' two CTAs), a table of 512
  // pages of 16. The key counts are device data, so auto counts the table's
  // 8192 keys; both kernels take kPagedArgs, then kSplitArgs.
  options.numSplits = 0;
  const int64_t pages = 512, page = 16;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 32, 1,
                      pages * page, 128, true, 8);
  PagedTables paged(call.args, /*batch=*/1, /*maxQ=*/1, /*maxPages=*/pages,
                    /*tableStride=*/0, /*numPages=*/pages, /*pageSize=*/page);
  attn_paged_args &a = paged.a;
  Buffer &cuQ = paged.cuQ, &table = paged.table, &used = paged.used;
  fakeCuda().paramsAfterScale = 12 + 17; // kPagedArgs, kSplitArgs
  Status status = engine().forwardPaged(&a);
  ASSERT_TRUE(status.ok()) << status.toString();
  int64_t blockN = 0, ctasPerSm = 0;
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.split);
    EXPECT_TRUE(fakeCompiler().lastConfig.packGqa);
    EXPECT_EQ(fakeCompiler().lastConfig.pageSize, page);
    blockN = fakeCompiler().lastConfig.blockN;
    ctasPerSm = compiler::splitCtasPerSm(fakeCompiler().lastConfig);
  }
  EXPECT_EQ(ctasPerSm, 2);
  int64_t chunk = std::max<int64_t>(blockN, kMinKeysPerSplit);
  int64_t splits = chooseNumSplits(8, (pages * page + chunk - 1) / chunk,
                                   132 * ctasPerSm);
  ASSERT_GT(splits, 1);
  auto [launches, allocations, live] = logs();
  EXPECT_EQ(live, 0); // freed after the launches
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].name, "attn_fwd_0");
  EXPECT_EQ(launches[0].grid[1], 8u); // K/V heads, packed
  EXPECT_EQ(launches[0].grid[2], unsigned(splits)); // sequences · num_splits
  EXPECT_EQ(launches[1].grid[1], 32u); // the merge: query heads
  EXPECT_EQ(launches[1].name, "attn_fwd_1");
  EXPECT_EQ(launches[1].grid[2], 1u);
  // The packed queries' partials: (s, H, total_q, D), then their LSEs.
  ASSERT_EQ(allocations.size(), 1u);
  EXPECT_EQ(allocations[0].second, size_t(splits * 32 * 129 * 4));
  int64_t base = int64_t(reinterpret_cast<uintptr_t>(allocations[0].first));
  std::vector<int64_t> expected = {
      int64_t(reinterpret_cast<uintptr_t>(cuQ.data())), 2, 1, 1,
      int64_t(reinterpret_cast<uintptr_t>(table.data())), 1, pages, pages, 1,
      int64_t(reinterpret_cast<uintptr_t>(used.data())), 1, 1,
      splits, base, splits, 32, 1, 128, 32 * 128, 128, 128, 1,
      base + splits * 32 * 128 * 4, splits, 32, 1, 32, 1, 1};
  EXPECT_EQ(launches[0].after, expected);
  EXPECT_EQ(launches[1].after, expected);
  // A forced count is an argument of the same kernel.
  ASSERT_TRUE(engine().setNumSplits(7).ok());
  ASSERT_TRUE(engine().forwardPaged(&a).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  ASSERT_EQ(fakeCuda().launchLog.size(), 4u);
  EXPECT_EQ(fakeCuda().launchLog[2].grid[2], 7u);
}

TEST_F(EngineCudaTest, SplitKvNeverSplitsAShortContext) {
  // Nq = Nk = 128 at D = 64: two 64-key tiles and 4 CTAs on 132 SMs, but
  // fewer keys than two chunks of kMinKeysPerSplit: one kernel, no
  // workspace (a split would cost a second launch for nothing).
  options.numSplits = 0;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 4, 128, 128, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.split);
  }
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  EXPECT_EQ(fakeCuda().launchLog.size(), 1u);
  EXPECT_TRUE(fakeCuda().allocationLog.empty());
}

TEST_F(EngineCudaTest, NullLseAndDefaultScale) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_F16, 1, 2, 10, 10, 128,
                      /*withLse=*/false);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  FakeLaunch launch = lastLaunch();
  EXPECT_FLOAT_EQ(launch.scale, 1.0f / std::sqrt(128.0f));
  const int lse = 4 * 9;
  EXPECT_EQ(launch.values[lse], 0); // null pointer: the kernel skips LSE
  EXPECT_EQ(launch.values[lse + 1], 1);
  EXPECT_EQ(launch.values[lse + 2], 2);
  EXPECT_EQ(launch.values[lse + 3], 10);
}

TEST_F(EngineCudaTest, SignOfTheScaleSelectsTheKernel) {
  // A positive scale (explicit or the default) may use the kernel that takes
  // the row max before scaling; a negative one needs the general kernel.
  auto run = [&](float scale) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 16, 16, 64);
    call.args.scale = scale;
    Status status = engine().forward(&call.args);
    ASSERT_TRUE(status.ok()) << status.toString();
    EXPECT_EQ(lastLaunch().scale, scale == 0 ? 0.125f : scale);
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.positiveScale, scale >= 0) << scale;
  };
  run(0);
  run(0.5f);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  run(-0.5f);
  run(-2.0f);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  EXPECT_EQ(engine().stats().launches, 4u);
}

TEST_F(EngineCudaTest, LargeSharedMemoryIsOptedInOnce) {
  // The fake kernel for D = 256 (block-m 128, the default on sm_90a) needs
  // 192 KiB of shared memory.
  for (int i = 0; i < 3; ++i) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 64, 64, 256);
    ASSERT_TRUE(engine().forward(&call.args).ok());
  }
  EXPECT_EQ(fakeCuda().setAttributeCalls, 1);
  EXPECT_EQ(fakeCuda().lastSharedAttribute, 128 * 256 * 2 * 3);
  // A small kernel does not need it.
  ForwardFixture small(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 64, 64, 64);
  ASSERT_TRUE(engine().forward(&small.args).ok());
  EXPECT_EQ(fakeCuda().setAttributeCalls, 1);
}

TEST_F(EngineCudaTest, ExplicitDefaultsShareTheDefaultKernel) {
  // On sm_90a, D = 128 defaults to wgmma with 128x128 tiles: asking for those
  // tiles, or for wgmma by name, is the same kernel (at 4k: calls up to 2k
  // that leave the tiles open run persistent CTAs, lengthTiles).
  auto run = [&](int64_t blockM, int64_t blockN) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 4096, 4096,
                        128);
    call.args.block_m = blockM;
    call.args.block_n = blockN;
    ASSERT_TRUE(engine().forward(&call.args).ok());
  };
  run(0, 0);
  run(128, 128);
  run(128, 0);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    const compiler::KernelConfig &config = fakeCompiler().lastConfig;
    EXPECT_EQ(config.blockM, 128);
    EXPECT_EQ(config.blockN, 128);
    EXPECT_EQ(config.warps, 8);
    EXPECT_EQ(config.tensorCore, "wgmma");
  }
  run(64, 128); // other tiles: another kernel
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
}

TEST_F(EngineCudaTest, VariantsAreKeyedByFlagsAndSizeTheirTiles) {
  // A variant loading per score (a bias table) gets 64-key tiles at D = 128
  // (TilePolicy) and TMA for K and V; a window keeps the default; document
  // ids 128-key tiles with TMA. A new bias (pointer, strides) reuses the
  // kernel.
  float tables[2][256] = {};
  for (float *table : tables) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 128);
    call.args.variant.flags = ATTN_VARIANT_BIAS;
    call.args.variant.bias = table;
    call.args.variant.bias_strides[0] = 16;
    call.args.variant.bias_strides[1] = 1;
    ASSERT_TRUE(engine().forward(&call.args).ok());
  }
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.variants, unsigned(ATTN_VARIANT_BIAS));
    EXPECT_EQ(fakeCompiler().lastConfig.blockN, 64);
    EXPECT_TRUE(fakeCompiler().lastConfig.tma);
  }
  ForwardFixture window(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 128);
  window.args.variant.flags = ATTN_VARIANT_WINDOW;
  ASSERT_TRUE(engine().forward(&window.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.blockN, 128);
  }
  int32_t ids[16] = {};
  ForwardFixture document(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 128);
  document.args.variant.flags = ATTN_VARIANT_DOCUMENT;
  document.args.variant.q_doc_ids = ids;
  ASSERT_TRUE(engine().forward(&document.args).ok());
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_EQ(fakeCompiler().lastConfig.blockN, 128);
  EXPECT_TRUE(fakeCompiler().lastConfig.tma);
  EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize);
}

TEST_F(EngineCudaTest, VariantsOffD128TakeTheProducerOrTma) {
  // TilePolicy.h: the window, softcap and ALiBi variants take TMA with the
  // producer from D = 80 to 256 as at 128 (producerByDefault), the document
  // mask TMA alone (tmaByDefault), a bias table cp.async (only D = 128's
  // kernel stages it with TMA).
  int32_t ids[16] = {};
  float table[256] = {};
  float slopes[1] = {0.5f};
  struct Case {
    unsigned flags;
    bool tma, producer;
  };
  for (int64_t headDim : {80, 96, 112, 192, 256}) {
    for (Case c : {Case{ATTN_VARIANT_WINDOW, true, true},
                   Case{ATTN_VARIANT_SOFTCAP | ATTN_VARIANT_ALIBI, true, true},
                   Case{ATTN_VARIANT_DOCUMENT, true, false},
                   Case{ATTN_VARIANT_BIAS, false, false}}) {
      ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16,
                          headDim);
      call.args.variant.flags = c.flags;
      call.args.variant.window_left = 4;
      call.args.variant.window_right = 0;
      call.args.variant.softcap = 30.0f;
      call.args.variant.alibi_slopes = slopes;
      call.args.variant.q_doc_ids = ids;
      call.args.variant.bias = table;
      call.args.variant.bias_strides[0] = 16;
      call.args.variant.bias_strides[1] = 1;
      Status status = engine().forward(&call.args);
      ASSERT_TRUE(status.ok()) << status.toString();
      std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
      EXPECT_EQ(fakeCompiler().lastConfig.tma, c.tma)
          << "D = " << headDim << ", flags " << c.flags;
      EXPECT_EQ(fakeCompiler().lastConfig.warpSpecialize, c.producer)
          << "D = " << headDim << ", flags " << c.flags;
    }
  }
}

TEST_F(EngineCudaTest, UserModsAreInspectedOnceAndKeyedByTheirText) {
  // The fake compiler accepts kFakeUserMods (one f32 capture). Capture
  // values are arguments: a new value reuses the kernel.
  float gains[] = {0.5f, 2.0f};
  for (float gain : gains) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
    attn_capture capture{};
    capture.f32 = gain;
    call.args.variant.mods = attn::testing::kFakeUserMods;
    call.args.variant.captures = &capture;
    call.args.variant.num_captures = 1;
    ASSERT_TRUE(engine().forward(&call.args).ok());
  }
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.userMods,
              std::string("canonical(") + attn::testing::kFakeUserMods + ")");
  }
  ForwardFixture bad(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
  bad.args.variant.mods = "not mods";
  Status status = engine().forward(&bad.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("user-mods:1:1: error: fake parse failure"),
            std::string::npos)
      << status.message();
  ForwardFixture count(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 64);
  count.args.variant.mods = attn::testing::kFakeUserMods;
  status = engine().forward(&count.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("the mods take 1 captures"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
}

TEST_F(EngineCudaTest, TensorCoreSettingIsPartOfTheKey) {
  options.tensorCore = "mma.sync";
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 128);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  // The mma.sync defaults: 128x32 tiles, 4 warps.
  EXPECT_EQ(fakeCompiler().lastConfig.tensorCore, "mma.sync");
  EXPECT_EQ(fakeCompiler().lastConfig.blockN, 32);
  EXPECT_EQ(fakeCompiler().lastConfig.warps, 4);
}

TEST_F(EngineCudaTest, TmaKernelsTakeKVOAndQTensorMapsAfterTheirArguments) {
  options.tma = true;
  fakeCuda().tensorMapParam = attn::abi::forwardTensorParams() + 1;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 2, 4, 300, 500, 128);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.tma);
    EXPECT_EQ(fakeCompiler().lastConfig.tensorCore, "wgmma");
  }
  FakeLaunch launch = lastLaunch();
  EXPECT_EQ(launch.tensorMapAddresses,
            (std::vector<uint64_t>{reinterpret_cast<uintptr_t>(call.args.k),
                                   reinterpret_cast<uintptr_t>(call.args.v),
                                   reinterpret_cast<uintptr_t>(call.args.o),
                                   reinterpret_cast<uintptr_t>(call.args.q)}));
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  ASSERT_EQ(fakeCuda().tensorMapLog.size(), 4u);
  // The box: the resolved block_n (128 at D = 128 on wgmma) by 64 columns;
  // O's: one warp's 16 rows; Q's: block_m (128).
  EXPECT_EQ(fakeCuda().tensorMapLog[0].box,
            (std::vector<uint32_t>{64, 128, 1, 1}));
  EXPECT_EQ(fakeCuda().tensorMapLog[2].box,
            (std::vector<uint32_t>{64, 16, 1, 1}));
  EXPECT_EQ(fakeCuda().tensorMapLog[3].box,
            (std::vector<uint32_t>{64, 128, 1, 1}));
}

TEST_F(EngineCudaTest, TmaByDefaultUpToD128AndPerCallWhereLayoutsAllow) {
  // Unset: D = 64 and 128 take TMA (TilePolicy.h's tmaByDefault), D = 96,
  // 112 and 256 with their producer warpgroup (producerByDefault), D = 48
  // keeps cp.async; ATTN_JIT_TMA=0 never.
  for (auto [headDim, expected] :
       {std::pair{64, true}, std::pair{128, true}, std::pair{96, true},
        std::pair{112, true}, std::pair{48, false}, std::pair{256, true}}) {
    ForwardFixture byDefault(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64,
                             headDim);
    ASSERT_TRUE(engine().forward(&byDefault.args).ok());
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.tma, expected) << "D = " << headDim;
  }
  engine_.reset();
  options.tma = false;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.tma);
  }
  engine_.reset();
  options.tma = true;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  // One K head expanded over two (head stride 0, valid on CUDA but not in
  // a tensor map): the cp.async kernel, compiled under its own key, and no
  // map encoded.
  ForwardFixture padded(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 32, 64);
  padded.args.k_strides[1] = 0;
  int compiles = fakeCompiler().ptxCompiles;
  ASSERT_TRUE(engine().forward(&padded.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, compiles + 1);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.tma);
  }
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  // K's, V's, O's and Q's maps of the calls at D = 64, 96, 112, 128 and 256
  // by default and of the forced call; none for D = 48, ATTN_JIT_TMA=0 or
  // the expanded heads.
  EXPECT_EQ(fakeCuda().tensorMapLog.size(), 24u);
}

TEST_F(EngineCudaTest, WarpSpecializedKernelsOnlyWithTmaUnderTheirOwnKey) {
  // Off by default at D = 64 (TMA alone); on (ATTN_JIT_WARPSPEC=1), a call
  // that takes TMA gets the producer kernel, launched with the block size
  // that kernel reports.
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.tma);
    EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize);
  }
  EXPECT_EQ(lastLaunch().block[0], unsigned(kFakeThreads));
  engine_.reset();
  options.warpSpecialize = true;
  int compiles = fakeCompiler().ptxCompiles;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, compiles + 1);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.tma);
    EXPECT_TRUE(fakeCompiler().lastConfig.warpSpecialize);
  }
  EXPECT_EQ(lastLaunch().block[0],
            unsigned(kFakeThreads + kFakeProducerThreads));
  // A layout TMA cannot read (expanded heads) keeps cp.async: no producer.
  ForwardFixture expanded(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 32,
                          64);
  expanded.args.k_strides[1] = 0;
  ASSERT_TRUE(engine().forward(&expanded.args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.tma);
    EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize);
  }
  EXPECT_EQ(lastLaunch().block[0], unsigned(kFakeThreads));
  // ATTN_JIT_TMA=0: no TMA, so no producer either.
  engine_.reset();
  options.tma = false;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize);
}

TEST_F(EngineCudaTest, ProducerByDefaultFromD80) {
  // Unset: D = 80-256 plain calls take TMA with the producer warpgroup
  // (TilePolicy.h's producerByDefault), D = 80-128 with 128-key tiles, 192
  // with 112, 256 with 80; so do the softcap at D = 192 and a window at
  // D = 128, but not a prefix-LM mask at D = 192; ATTN_JIT_WARPSPEC=0 turns
  // both off.
  for (int headDim : {80, 96, 112, 128, 160, 192, 224, 256}) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64,
                        headDim);
    ASSERT_TRUE(engine().forward(&call.args).ok());
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.tma) << "D = " << headDim;
    EXPECT_TRUE(fakeCompiler().lastConfig.warpSpecialize) << "D = " << headDim;
    EXPECT_EQ(fakeCompiler().lastConfig.blockN, headDim <= 128   ? 128
                                                : headDim == 192 ? 112
                                                : headDim == 256 ? 80
                                                                 : 64);
  }
  // (head dim, variant, producer).
  for (auto [headDim, flags, producer] :
       {std::tuple{192, ATTN_VARIANT_SOFTCAP, true},
        std::tuple{128, ATTN_VARIANT_WINDOW, true},
        std::tuple{192, ATTN_VARIANT_PREFIX_LM, false}}) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64,
                        headDim);
    call.args.variant.flags = flags;
    call.args.variant.softcap = 30.0f;
    call.args.variant.window_left = 16;
    call.args.variant.prefix_len = 8;
    if (flags == ATTN_VARIANT_PREFIX_LM)
      call.args.mask = ATTN_MASK_CAUSAL;
    Status status = engine().forward(&call.args);
    ASSERT_TRUE(status.ok()) << status.toString();
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.tma, producer) << headDim;
    EXPECT_EQ(fakeCompiler().lastConfig.warpSpecialize, producer) << headDim;
  }
  // A decode call that splits its keys keeps cp.async, so the cp.async
  // kernel's 64-key tiles, not the producer's 112.
  engine_.reset();
  options.numSplits = 0;
  ForwardFixture decode(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 1, 8192, 192);
  fakeCuda().paramsAfterScale = 1 + 9 + 7; // kSplitArgs
  ASSERT_TRUE(engine().forward(&decode.args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.split);
    EXPECT_FALSE(fakeCompiler().lastConfig.tma);
    EXPECT_EQ(fakeCompiler().lastConfig.blockN, 64);
  }
  engine_.reset();
  options.numSplits = 1;
  fakeCuda().paramsAfterScale = 0;
  options.warpSpecialize = false;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 192);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_FALSE(fakeCompiler().lastConfig.tma);
  EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize);
  EXPECT_EQ(fakeCompiler().lastConfig.blockN, 64);
}

TEST_F(EngineCudaTest, LongSequencesAtD64TakeTallTilesWithTheProducer) {
  // TilePolicy.h's lengthTiles: queries and keys both >= 8k at
  // D = 64, tiles left open: 192 x 128 with TMA and the producer, a kernel
  // of its own; one query short of it, explicit tiles, or ATTN_JIT_WARPSPEC
  // =0 keep the default kernel.
  ForwardFixture longCall(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8192, 8192,
                          64);
  ASSERT_TRUE(engine().forward(&longCall.args).ok());
  expectLastTiles(192, 128, /*producer=*/true);
  EXPECT_EQ(lastLaunch().block[0],
            unsigned(kFakeThreads + kFakeProducerThreads));
  auto expectDefault = [&](const char *why) {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_NE(fakeCompiler().lastConfig.blockM, 192) << why;
    EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize) << why;
  };
  ForwardFixture shorter(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8191, 8192,
                         64);
  ASSERT_TRUE(engine().forward(&shorter.args).ok());
  expectDefault("8191 queries");
  longCall.args.block_m = 128;
  longCall.args.block_n = 64;
  ASSERT_TRUE(engine().forward(&longCall.args).ok());
  expectDefault("explicit tiles");
  engine_.reset();
  options.warpSpecialize = false;
  longCall.args.block_m = longCall.args.block_n = 0;
  ASSERT_TRUE(engine().forward(&longCall.args).ok());
  expectDefault("ATTN_JIT_WARPSPEC=0");
}

TEST_F(EngineCudaTest, ShortAndMidSequencesAtD64TakeOneWarpgroupTiles) {
  // TilePolicy.h's lengthTiles: causal, queries and keys both <= 2k at
  // D = 64, tiles left open: 64 x 64 with TMA, no producer; a longer call
  // (2049 keys, 1000 queries: neither end), no mask, or explicit tiles keep
  // the default kernel; both lengths in (2k, 8k): 64 x 128.
  ForwardFixture shortCall(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 2, 4, 1000,
                           2048, 64);
  shortCall.args.mask = ATTN_MASK_CAUSAL;
  ASSERT_TRUE(engine().forward(&shortCall.args).ok());
  expectLastTiles(64, 64, /*producer=*/false);
  EXPECT_EQ(lastLaunch().grid[0], unsigned((1000 + 63) / 64));
  auto expectDefault = [&](const char *why) {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().lastConfig.blockM, 128) << why;
  };
  ForwardFixture longer(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 1000, 2049,
                        64);
  longer.args.mask = ATTN_MASK_CAUSAL;
  ASSERT_TRUE(engine().forward(&longer.args).ok());
  expectDefault("2049 keys");
  shortCall.args.mask = ATTN_MASK_NONE;
  ASSERT_TRUE(engine().forward(&shortCall.args).ok());
  expectDefault("no mask");
  shortCall.args.mask = ATTN_MASK_CAUSAL;
  shortCall.args.block_m = 128;
  shortCall.args.block_n = 64;
  ASSERT_TRUE(engine().forward(&shortCall.args).ok());
  expectDefault("explicit tiles");
  // Between the ends (both above 2k, below 8k): 64 x 128.
  ForwardFixture midCall(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 4096, 3000,
                         64);
  ASSERT_TRUE(engine().forward(&midCall.args).ok());
  expectLastTiles(64, 128, /*producer=*/false, "between the ends");
}

TEST_F(EngineCudaTest, PersistentKernelsRunAtMostACtaPerSm) {
  // ATTN_JIT_PERSISTENT=1: a call with the producer warpgroup (D = 128 by
  // default) gets the persistent kernel, a compile of its own, launched on
  // min(tiles, SMs) CTAs along x; without the producer the key (and the
  // grid) stay the usual ones.
  // (ATTN_JIT_PERSISTENT=0 first: these short calls are persistent by
  // default, ShortSequencesAtD128RunPersistent below.)
  ForwardFixture big(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 4, 8, 1024, 256, 128);
  ForwardFixture small(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 200, 256,
                       128);
  engine_.reset();
  options.persistent = false;
  ASSERT_TRUE(engine().forward(&big.args).ok());
  FakeLaunch usual = lastLaunch();
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.warpSpecialize);
    EXPECT_FALSE(fakeCompiler().lastConfig.persistent);
  }
  unsigned tiles = usual.grid[0] * usual.grid[1] * usual.grid[2];
  ASSERT_GT(tiles, unsigned(fakeCuda().multiprocessors));
  engine_.reset();
  options.persistent = true;
  int compiles = fakeCompiler().ptxCompiles;
  ASSERT_TRUE(engine().forward(&big.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, compiles + 1);
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.persistent);
  }
  FakeLaunch launch = lastLaunch();
  EXPECT_EQ(launch.grid[0], unsigned(fakeCuda().multiprocessors));
  EXPECT_EQ(launch.grid[1], 1u);
  EXPECT_EQ(launch.grid[2], 1u);
  EXPECT_EQ(launch.block[0], usual.block[0]);
  // Fewer tiles than SMs: a CTA each. Same kernel.
  ASSERT_TRUE(engine().forward(&small.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, compiles + 1);
  launch = lastLaunch();
  EXPECT_EQ(launch.grid[0], 2u * 2u); // ceil(200 / 128) tiles x 2 heads
  EXPECT_EQ(launch.grid[1], 1u);
  EXPECT_EQ(launch.grid[2], 1u);
  // ATTN_JIT_PERSISTENT_CTAS caps the launch (tests: many work tiles a
  // CTA); the same kernel.
  engine_.reset();
  options.persistentCtas = 5;
  ASSERT_TRUE(engine().forward(&big.args).ok());
  launch = lastLaunch();
  EXPECT_EQ(launch.grid[0], 5u);
  EXPECT_EQ(launch.grid[1] * launch.grid[2], 1u);
  options.persistentCtas = 0;
  // No producer (ATTN_JIT_WARPSPEC=0): not persistent, the usual grid.
  engine_.reset();
  options.warpSpecialize = false;
  ASSERT_TRUE(engine().forward(&big.args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize);
    EXPECT_FALSE(fakeCompiler().lastConfig.persistent);
  }
  launch = lastLaunch();
  EXPECT_GT(launch.grid[1] * launch.grid[2], 1u);
}

TEST_F(EngineCudaTest, ShortSequencesAtD128RunPersistent) {
  // TilePolicy.h's lengthTiles: plain D = 128 calls whose queries and keys
  // are both at most 2k, tiles left open, run persistent CTAs (their own
  // kernel, with two Q buffers by the policy); a longer call, explicit
  // tiles or ATTN_JIT_PERSISTENT=0 keep the usual kernel.
  auto persistent = [&] {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    return fakeCompiler().lastConfig.persistent;
  };
  ForwardFixture shortCall(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 64, 4, 256, 256,
                           128);
  shortCall.args.mask = ATTN_MASK_CAUSAL;
  ASSERT_TRUE(engine().forward(&shortCall.args).ok());
  EXPECT_TRUE(persistent());
  EXPECT_EQ(lastLaunch().grid[0], unsigned(fakeCuda().multiprocessors));
  ForwardFixture longer(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 2048, 2049,
                        128);
  ASSERT_TRUE(engine().forward(&longer.args).ok());
  EXPECT_FALSE(persistent()) << "2049 keys";
  shortCall.args.block_m = 128;
  shortCall.args.block_n = 128;
  ASSERT_TRUE(engine().forward(&shortCall.args).ok());
  EXPECT_FALSE(persistent()) << "explicit tiles";
  engine_.reset();
  options.persistent = false;
  shortCall.args.block_m = shortCall.args.block_n = 0;
  ASSERT_TRUE(engine().forward(&shortCall.args).ok());
  EXPECT_FALSE(persistent()) << "ATTN_JIT_PERSISTENT=0";
}

TEST_F(EngineCudaTest, PersistenceOutsideTheBandTakesOneQBuffer) {
  // LengthTiles::qStages: the tile policy chooses Q's buffers (0) where
  // lengthTiles made the call persistent; ATTN_JIT_PERSISTENT=1 elsewhere
  // gets one; ATTN_JIT_Q_STAGES decides wherever it is set. Each call runs
  // in a fresh engine, so that it compiles and lastConfig is its own.
  auto qStages = [&](int64_t n) {
    engine_.reset();
    int compiles = fakeCompiler().ptxCompiles;
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, n, n, 128);
    call.args.mask = ATTN_MASK_CAUSAL;
    Status status = engine().forward(&call.args);
    EXPECT_TRUE(status.ok()) << status.toString();
    EXPECT_GT(fakeCompiler().ptxCompiles, compiles) << n;
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.persistent) << n;
    // Short work tiles (the query tile the grid's fastest index) in the
    // band only: forced persistence at 4k keeps the sort across heads.
    EXPECT_EQ(fakeCompiler().lastConfig.shortWorkTiles,
              n <= compiler::kPersistentMaxSequence)
        << n;
    return fakeCompiler().lastConfig.qStages;
  };
  options.persistent = true;
  EXPECT_EQ(qStages(512), 0) << "the band: the policy's two";
  EXPECT_EQ(qStages(4096), 1) << "asked outside the band";
  options.qStages = 2;
  EXPECT_EQ(qStages(4096), 2) << "ATTN_JIT_Q_STAGES=2";
}

TEST_F(EngineCudaTest, ShortWindowsAtD128RunPersistent) {
  // TilePolicy.h's lengthTiles: a sliding window alone at D = 128 through
  // which a query sees at most 512 keys runs persistent CTAs, however long
  // the sequences; a wider window, an unbounded side or another variant
  // with it keep the usual kernel. Each call runs in a fresh engine, so
  // that it compiles (calls of one key would hit the first's kernel) and
  // lastConfig is its own.
  auto persistent = [&](int64_t left, int64_t right, attn_mask mask,
                        unsigned extra = 0) {
    engine_.reset();
    int compiles = fakeCompiler().ptxCompiles;
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 4096, 4096,
                        128);
    call.args.mask = mask;
    call.args.variant.flags = ATTN_VARIANT_WINDOW | extra;
    call.args.variant.window_left = left;
    call.args.variant.window_right = right;
    call.args.variant.softcap = 30.0f;
    Status status = engine().forward(&call.args);
    EXPECT_TRUE(status.ok()) << status.toString();
    EXPECT_GT(fakeCompiler().ptxCompiles, compiles);
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    return fakeCompiler().lastConfig.persistent;
  };
  EXPECT_TRUE(persistent(255, 0, ATTN_MASK_CAUSAL));
  EXPECT_TRUE(persistent(511, 0, ATTN_MASK_CAUSAL)) << "512 keys";
  EXPECT_TRUE(persistent(511, -1, ATTN_MASK_CAUSAL)) << "causal bounds it";
  EXPECT_TRUE(persistent(200, 311, ATTN_MASK_NONE)) << "512 keys";
  EXPECT_FALSE(persistent(512, 0, ATTN_MASK_CAUSAL)) << "513 keys";
  EXPECT_FALSE(persistent(1023, 0, ATTN_MASK_CAUSAL)) << "1024 keys";
  EXPECT_FALSE(persistent(-1, 0, ATTN_MASK_CAUSAL)) << "unbounded left";
  EXPECT_FALSE(persistent(255, -1, ATTN_MASK_NONE)) << "unbounded right";
  EXPECT_FALSE(persistent(255, 0, ATTN_MASK_CAUSAL, ATTN_VARIANT_SOFTCAP));
}

TEST(EngineOptionsTest, QStagesFromTheEnvironment) {
  for (auto [text, count] : {std::pair<const char *, int64_t>{"1", 1},
                             {"2", 2},
                             {"0", 0},
                             {"3", EngineOptions::kBadQStages},
                             {"-1", EngineOptions::kBadQStages},
                             {"two", EngineOptions::kBadQStages}}) {
    ScopedEnv q("ATTN_JIT_Q_STAGES", text);
    EXPECT_EQ(EngineOptions::fromEnvironment().qStages, count) << text;
  }
}

TEST_F(EngineCudaTest, BadQStagesFailTheCallWithTheVariablesName) {
  // Like the other numeric variables: a value that is not one is an error
  // status naming it, not silently the default.
  engine_.reset();
  options.qStages = EngineOptions::kBadQStages;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("ATTN_JIT_Q_STAGES"), std::string::npos)
      << status.toString();
}

TEST(EngineOptionsTest, TieredFromTheEnvironment) {
  {
    ScopedEnv t("ATTN_JIT_TIERED", std::nullopt);
    EXPECT_TRUE(EngineOptions::fromEnvironment().tiered);
  }
  {
    ScopedEnv t("ATTN_JIT_TIERED", "1");
    EXPECT_TRUE(EngineOptions::fromEnvironment().tiered);
  }
  {
    ScopedEnv t("ATTN_JIT_TIERED", "0");
    EXPECT_FALSE(EngineOptions::fromEnvironment().tiered);
  }
}

/// A causal D = 128 call at 4k: the default kernel (wgmma, 128-row tiles)
/// launches 32 query tiles, the quick one (64 rows) 64.
struct TieredCall : ForwardFixture {
  TieredCall()
      : ForwardFixture(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 4096, 4096,
                       128) {
    args.mask = ATTN_MASK_CAUSAL;
  }
  static constexpr unsigned kQuickTiles = 4096 / compiler::kQuickBlockM;
  static constexpr unsigned kDefaultTiles = 4096 / 128;
};

TEST_F(EngineCudaTest, TieredFirstCallRunsTheQuickKernelWhileItsOwnBuilds) {
  // ATTN_JIT_TIERED: the first call compiles and launches the quick kernel
  // (compiler::quickKernelConfig) while the default one builds on the
  // background thread -- it does not wait for it; calls before that one is
  // loaded take the quick kernel too, those after it the default one. Two
  // compiles in all.
  options.tiered = true;
  fakeCompiler().wgmmaDelayMs = 400;
  TieredCall call;
  auto start = std::chrono::steady_clock::now();
  Status status = engine().forward(&call.args);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(300))
      << "the first call waited for the default kernel";
  EXPECT_EQ(lastLaunch().grid[0], TieredCall::kQuickTiles);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(lastLaunch().grid[0], TieredCall::kQuickTiles) << "still building";
  Engine::waitForBackgroundBuilds();
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(lastLaunch().grid[0], TieredCall::kDefaultTiles);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(lastLaunch().grid[0], TieredCall::kDefaultTiles);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_EQ(fakeCompiler().lastConfig.tensorCore, "wgmma");
}

TEST_F(EngineCudaTest, TieredCallsWaitWhereAGraphWouldKeepTheQuickKernel) {
  // A stream capturing into a CUDA graph, or a driver that cannot say
  // (no cuStreamIsCapturing): the call builds its own kernel and waits.
  options.tiered = true;
  fakeCuda().capturing = true;
  TieredCall call;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(lastLaunch().grid[0], TieredCall::kDefaultTiles);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);

  engine_.reset();
  resetFakeCompiler();
  fakeCuda().capturing = false;
  fakeCuda().hasStreamIsCapturing = false;
  options.driver = makeFakeCudaDriver();
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(lastLaunch().grid[0], TieredCall::kDefaultTiles);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
}

TEST_F(EngineCudaTest, TieredCallsWaitWhereTheQuickKernelWouldRunLonger) {
  // More than EngineOptions::maxTieredFlops (4 B H Nq Nk D), lowered here
  // below TieredCall's 17 GFLOP (the default's 50 TFLOP would take
  // gigabytes of fake tensors): the call builds its own kernel and waits.
  options.tiered = true;
  options.maxTieredFlops = 1e10;
  TieredCall call;
  static_assert(4.0 * 1 * 2 * 4096 * 4096 * 128 > 1e10);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  Engine::waitForBackgroundBuilds();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_EQ(fakeCompiler().lastConfig.tensorCore, "wgmma");
}

TEST_F(EngineCudaTest, TieredBackgroundFailureIsTheNextCallsError) {
  // The default kernel fails to compile in the background: the first call
  // ran the quick kernel; the next builds the default one in its own path
  // and reports the compiler's error, as without tiers.
  options.tiered = true;
  fakeCompiler().failWgmma = true;
  TieredCall call;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  Engine::waitForBackgroundBuilds();
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_COMPILE) << status.toString();
}

TEST_F(EngineCudaTest, TieredWaitInAForkedChildReturns) {
  // A child forked while a build runs in the background inherits the count
  // of pending builds but not the thread: its wait (attn_wait_for_compiles,
  // or the atexit handler at its exit) must return, not hang.
  options.tiered = true;
  fakeCompiler().wgmmaDelayMs = 500;
  TieredCall call;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Engine::waitForBackgroundBuilds();
    ::_exit(0);
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 500 && done == 0; ++i) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ADD_FAILURE() << "the forked child's wait hung";
  } else {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Engine::waitForBackgroundBuilds();
}

TEST_F(EngineCudaTest, TieredCallsOnlyForTheForward) {
  // The backward builds its own kernel in the call.
  options.tiered = true;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 256, 256, 128);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 256, 256, 128);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  Engine::waitForBackgroundBuilds();
  int compiles = fakeCompiler().ptxCompiles;
  attn_bwd_args args = backwardArgs(call, grads);
  Status status = engine().backward(&args);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(fakeCompiler().ptxCompiles, compiles + 1);
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_TRUE(fakeCompiler().lastConfig.backward);
  EXPECT_NE(fakeCompiler().lastConfig.tensorCore, "mma.sync");
}

TEST(EngineOptionsTest, PersistentFromTheEnvironment) {
  {
    ScopedEnv p("ATTN_JIT_PERSISTENT", std::nullopt);
    EXPECT_EQ(EngineOptions::fromEnvironment().persistent, std::nullopt);
  }
  {
    ScopedEnv p("ATTN_JIT_PERSISTENT", "1");
    EXPECT_EQ(EngineOptions::fromEnvironment().persistent, true);
  }
  {
    ScopedEnv p("ATTN_JIT_PERSISTENT", "0");
    EXPECT_EQ(EngineOptions::fromEnvironment().persistent, false);
  }
  // The CTA cap: a count >= 1, anything else leaves it unset (0).
  for (auto [text, count] : {std::pair<const char *, int64_t>{"7", 7},
                             {"0", 0},
                             {"-3", 0},
                             {"many", 0}}) {
    ScopedEnv c("ATTN_JIT_PERSISTENT_CTAS", text);
    EXPECT_EQ(EngineOptions::fromEnvironment().persistentCtas, count) << text;
  }
}

TEST(EngineOptionsTest, WarpSpecializeFromTheEnvironment) {
  {
    ScopedEnv ws("ATTN_JIT_WARPSPEC", std::nullopt);
    EXPECT_EQ(EngineOptions::fromEnvironment().warpSpecialize, std::nullopt);
  }
  {
    ScopedEnv ws("ATTN_JIT_WARPSPEC", "1");
    EXPECT_EQ(EngineOptions::fromEnvironment().warpSpecialize, true);
  }
  {
    ScopedEnv ws("ATTN_JIT_WARPSPEC", "0");
    EXPECT_EQ(EngineOptions::fromEnvironment().warpSpecialize, false);
  }
}

TEST_F(EngineCudaTest, UnknownTensorCoreSettingIsAnError) {
  options.tensorCore = "tcgen05";
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 128);
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("ATTN_JIT_TENSOR_CORES = 'tcgen05'"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 0);
}

TEST_F(EngineCudaTest, KernelLargerThanTheDeviceAllowsIsUnsupported) {
  fakeCuda().maxSharedBytes = 48 * 1024;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 64, 64, 256);
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED);
  EXPECT_NE(status.message().find("bytes of shared memory"), std::string::npos)
      << status.message();
  EXPECT_EQ(fakeCuda().moduleLoads, 0);
}

TEST_F(EngineCudaTest, ArchComesFromTheDevice) {
  fakeCuda().major = 8;
  fakeCuda().minor = 6;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_EQ(fakeCompiler().lastConfig.arch, "sm_86");
  // wgmma needs sm_90a: auto resolves to mma.sync.
  EXPECT_EQ(fakeCompiler().lastConfig.tensorCore, "mma.sync");
}

TEST_F(EngineCudaTest, OldGpusAreUnsupported) {
  fakeCuda().major = 7;
  fakeCuda().minor = 5;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED);
  EXPECT_NE(status.message().find("compute capability 7.5"), std::string::npos)
      << status.message();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 0);
}

TEST_F(EngineCudaTest, UsesThePrimaryContextWhenNoneIsCurrent) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(fakeCuda().primaryRetains, 1);
  CUcontext current = nullptr;
  options.driver->cuCtxGetCurrent(&current);
  EXPECT_EQ(current, fakePrimaryContext()); // made current, as cudart does
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(fakeCuda().primaryRetains, 1);
}

TEST_F(EngineCudaTest, KernelsAreLoadedPerContextButCompiledOnce) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  setFakeCurrentContext(fakeUserContext());
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(fakeCuda().primaryRetains, 0); // the caller's context is used
  setFakeCurrentContext(fakePrimaryContext());
  ASSERT_TRUE(engine().forward(&call.args).ok());
  setFakeCurrentContext(fakeUserContext());
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
  EXPECT_EQ(engine().stats().memory_hits, 1u);
  setFakeCurrentContext(nullptr);
}

TEST_F(EngineCudaTest, EightThreadsOneKeyCompileOnce) {
  fakeCompiler().delayMs = 200;
  engine(); // created before the threads race to use it
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      // Different sizes, one configuration.
      ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1 + i, 16 + i,
                          32, 64);
      if (!engine().forward(&call.args).ok())
        ++failures;
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  EXPECT_EQ(fakeCuda().moduleLoads, 1);
  EXPECT_EQ(fakeCuda().launches, 8);
  attn_stats stats = engine().stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.memory_hits, 7u);
  EXPECT_GE(stats.compile_ms_total, 150.0);
}

TEST_F(EngineCudaTest, DifferentKeysCompileConcurrently) {
  // Each compile waits until four run at once: only parallel builds finish
  // this quickly.
  fakeCompiler().rendezvous = 4;
  engine(); // created before the threads race to use it
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int64_t dim : {32, 64, 96, 128})
    threads.emplace_back([&, dim] {
      ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, dim);
      EXPECT_TRUE(engine().forward(&call.args).ok());
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(fakeCompiler().maxRunning, 4);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  EXPECT_EQ(fakeCompiler().ptxCompiles, 4);
}

TEST_F(EngineCudaTest, CompilerFailureIsReportedAndRetried) {
  fakeCompiler().fail = true;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_COMPILE);
  EXPECT_NE(status.message().find("fake compiler failure"), std::string::npos);
  EXPECT_NE(status.message().find("head_dim=64"), std::string::npos)
      << "the message names the key: " << status.message();
  EXPECT_TRUE(call.o->untouched());
  fakeCompiler().fail = false;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(engine().stats().compiles, 1u);
}

TEST_F(EngineCudaTest, CompilerExceptionIsAnInternalErrorForEveryCaller) {
  fakeCompiler().throwInCompile = true;
  fakeCompiler().delayMs = 100;
  engine(); // created before the threads race to use it
  std::vector<std::thread> threads;
  std::atomic<int> internal{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
      Status status = engine().forward(&call.args);
      if (status.code() == ATTN_ERROR_INTERNAL &&
          status.message().find("threw an exception: fake compiler threw") !=
              std::string::npos)
        ++internal;
      else
        ADD_FAILURE() << status.toString();
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(internal, 4);
  EXPECT_EQ(fakeCuda().launches, 0);
  // Not cached: the next call compiles.
  fakeCompiler().throwInCompile = false;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  Status status = engine().forward(&call.args);
  EXPECT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
}

TEST_F(EngineCudaTest, ModuleLoadFailureCarriesTheJitLog) {
  fakeCuda().moduleLoadResult = CUDA_ERROR_INVALID_PTX;
  fakeCuda().moduleLoadErrorLog = "ptxas fatal   : Unresolved extern function";
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_CUDA);
  EXPECT_NE(status.message().find("CUDA_ERROR_INVALID_PTX"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("Unresolved extern function"),
            std::string::npos)
      << status.message();
  // The PTX stays cached: a retry loads again without compiling again.
  fakeCuda().moduleLoadResult = CUDA_SUCCESS;
  ASSERT_TRUE(engine().forward(&call.args).ok());
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
}

TEST_F(EngineCudaTest, LaunchFailureIsACudaError) {
  fakeCuda().launchResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_CUDA);
  EXPECT_NE(status.message().find("cuLaunchKernel"), std::string::npos);
  EXPECT_EQ(engine().stats().launches, 0u);
}

TEST_F(EngineCudaTest, NoDriverLibrary) {
  options.driver = nullptr;
  options.libcuda = "libattn-jit-no-such-driver.so.1";
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  for (int i = 0; i < 2; ++i) { // the second call reports it just as well
    Status status = engine().forward(&call.args);
    EXPECT_EQ(status.code(), ATTN_ERROR_NO_DRIVER);
    EXPECT_NE(status.message().find("cannot load the CUDA driver"),
              std::string::npos)
        << status.message();
  }
  EXPECT_TRUE(call.o->untouched());
  // The host path works without a driver.
  ForwardFixture cpu(ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 1, 1, 4, 4, 8);
  EXPECT_TRUE(engine().forward(&cpu.args).ok());
}

TEST_F(EngineCudaTest, NoDeviceAndBrokenDrivers) {
  auto driver = std::make_shared<CudaDriver>(*makeFakeCudaDriver());
  fakeCuda().initResult = CUDA_ERROR_NO_DEVICE;
  Status status = initializeCudaDriver(*driver);
  EXPECT_EQ(status.code(), ATTN_ERROR_NO_DEVICE);
  fakeCuda().initResult = CUDA_SUCCESS;
  fakeCuda().deviceCount = 0;
  EXPECT_EQ(initializeCudaDriver(*driver).code(), ATTN_ERROR_NO_DEVICE);
  fakeCuda().deviceCount = 1;
  fakeCuda().initResult = CUDA_ERROR_STUB_LIBRARY;
  EXPECT_EQ(initializeCudaDriver(*driver).code(), ATTN_ERROR_NO_DRIVER);
  fakeCuda().initResult = CUDA_SUCCESS;
  EXPECT_TRUE(initializeCudaDriver(*driver).ok());
  EXPECT_EQ(driver->version, 13000);
}

TEST_F(EngineCudaTest, ClearMemoryCacheReloads) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  engine().clearMemoryCache();
  ASSERT_TRUE(engine().forward(&call.args).ok());
  // No disk cache here: the kernel is compiled again.
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
}

} // namespace

TEST_F(EngineCudaTest, TilesTheChipCannotHoldAreUnsupportedNotACompilerBug) {
  // 256x256 tiles at D = 256 need far more shared memory than an SM has:
  // the plan refuses them before any compile, with the reason.
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16, 256);
  call.args.block_m = 256;
  call.args.block_n = 256;
  Status status = engine().forward(&call.args);
  EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED) << status.toString();
  EXPECT_NE(status.message().find("shared memory"), std::string::npos)
      << status.message();
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 0);
}

// The per-thread memo of loaded kernels (HotCache.h) in front of the shared
// caches: what a cached call still checks, and what it must never find.

TEST_F(EngineCudaTest, CachedCallsStillRejectHostPointers) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  ASSERT_TRUE(engine().forward(&call.args).ok()); // from this thread's memo
  std::vector<char> host(1 << 20);
  attn_fwd_args args = call.args;
  args.o = host.data(); // unknown to the fake driver: not CUDA memory
  Status status = engine().forward(&args);
  EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("not CUDA memory"), std::string::npos)
      << status.message();
  EXPECT_EQ(fakeCuda().launches, 2);
}

TEST_F(EngineCudaTest, CachedGqaCallsPackOrNotByTheirSizes) {
  // H = 8 over Hkv = 2: one decode query per head packs a group's 4 queries
  // into one tile (grid over K/V heads); 200 queries do not. One call key,
  // two kernels, each loaded once and then found by every later call.
  auto run = [&](int64_t seqlenQ) {
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 8, seqlenQ, 300,
                        64, true, 2);
    Status status = engine().forward(&call.args);
    EXPECT_TRUE(status.ok()) << status.toString();
    return lastLaunch().grid[1];
  };
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(run(1), 2u) << round;   // packed: the grid runs over Hkv
    EXPECT_EQ(run(200), 8u) << round; // unpacked: over H
  }
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
  EXPECT_EQ(engine().stats().memory_hits, 2u);
}

TEST_F(EngineCudaTest, AnotherEngineNeverFindsThisThreadsKernels) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  ASSERT_TRUE(engine().forward(&call.args).ok());
  Engine other(options);
  ASSERT_TRUE(other.forward(&call.args).ok());
  EXPECT_EQ(fakeCuda().moduleLoads, 2); // its own module, not the first's
  EXPECT_EQ(other.stats().memory_hits, 0u);
  EXPECT_EQ(engine().stats().memory_hits, 1u);
}

TEST_F(EngineCudaTest, ClearingFromAnotherThreadReachesEveryThreadsMemo) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 8, 8, 64);
  auto callOnce = [&] {
    std::thread worker([&] {
      setFakeCurrentContext(fakePrimaryContext());
      EXPECT_TRUE(engine().forward(&call.args).ok());
    });
    worker.join();
  };
  engine(); // built before the threads
  std::thread worker([&] {
    setFakeCurrentContext(fakePrimaryContext());
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(engine().forward(&call.args).ok());
      if (i == 1) {
        std::thread clearer([&] { engine().clearMemoryCache(); });
        clearer.join();
      }
    }
  });
  worker.join();
  // Loaded, then loaded again after the clear.
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
  // Another thread's first call finds the kernel in the shared cache.
  callOnce();
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  EXPECT_EQ(engine().stats().launches, 4u);
}

TEST_F(EngineCudaTest, BackwardSharesTheCachedPath) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  attn_bwd_args args = backwardArgs(call, grads);
  for (int i = 0; i < 3; ++i) {
    Status status = engine().backward(&args);
    EXPECT_TRUE(status.ok()) << status.toString();
  }
  // The forward's kernel and the backward's: two keys, each loaded once,
  // the backward's then found twice.
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
  EXPECT_EQ(engine().stats().memory_hits, 2u);
}

/// The fake driver, reporting `version` (cuDriverGetVersion's number).
static std::shared_ptr<const CudaDriver> fakeDriverOfVersion(int version) {
  auto driver = std::make_shared<CudaDriver>(*makeFakeCudaDriver());
  driver->version = version;
  return driver;
}

// A module of several kernels (the backward's two) JIT-compiles them on
// the driver's threads, CU_JIT_SPLIT_COMPILE = 0 (as many as the CPUs),
// where the driver has the option (CUDA 12.9); the forward's one kernel,
// and any module on an older driver, passes none.
TEST_F(EngineCudaTest, SeveralKernelsJitOnTheDriversThreads) {
  for (int version :
       {kSplitCompileDriverVersion, kSplitCompileDriverVersion - 10}) {
    options.driver = fakeDriverOfVersion(version);
    engine_.reset();
    resetFakeCuda();
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
    ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
    ASSERT_TRUE(engine().forward(&call.args).ok());
    EXPECT_EQ(fakeCuda().lastJitSplitCompile, -1) << version;
    attn_bwd_args args = backwardArgs(call, grads);
    Status status = engine().backward(&args);
    ASSERT_TRUE(status.ok()) << status.toString();
    EXPECT_EQ(fakeCuda().moduleLoads, 2) << version;
    EXPECT_EQ(fakeCuda().lastJitSplitCompile,
              version >= kSplitCompileDriverVersion ? 0 : -1)
        << version;
  }
}

// A driver that refuses the option (CUDA_ERROR_INVALID_VALUE) gets the
// same load again without it: the backward still runs.
TEST_F(EngineCudaTest, ARefusedSplitCompileLoadsWithoutIt) {
  options.driver = fakeDriverOfVersion(kSplitCompileDriverVersion);
  fakeCuda().refusesSplitCompile = true;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  attn_bwd_args args = backwardArgs(call, grads);
  Status status = engine().backward(&args);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(fakeCuda().moduleLoads, 3); // the forward's, the backward's two
  EXPECT_EQ(fakeCuda().lastJitSplitCompile, -1);
}

// attn_set_deterministic(0) on sm_90a (wgmma): the atomic form's kernels
// (a key of their own, so a second compile), its accumulator (B, H, Nq, D)
// f32 allocated on the caller's stream and zeroed there before any launch,
// passed after the scale to the three kernels: query tiles (row terms), K/V
// tiles (dK, dV, dQ's parts added), query tiles (dQ); both workspaces freed.
TEST_F(EngineCudaTest, AtomicBackwardZeroesItsAccumulatorBeforeItsKernels) {
  options.gpuAtomicBackward = true;
  const int64_t B = 2, H = 4, Nq = 100, Nk = 70, D = 64;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, B, H, Nq, Nk, D);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, B, H, Nq, Nk, D);
  call.args.stream = reinterpret_cast<void *>(0x7000);
  attn_bwd_args args = backwardArgs(call, grads);
  ASSERT_TRUE(engine().backward(&args).ok());
  ASSERT_TRUE(engine().setDeterministic(0).ok());
  fakeCuda().paramsAfterScale = 9; // kAtomicBackwardArgs: one 4-D tensor
  {
    std::lock_guard<std::mutex> lock(fakeCuda().mutex);
    fakeCuda().launchLog.clear();
    fakeCuda().allocationLog.clear();
  }
  Status status = engine().backward(&args);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  EXPECT_FALSE(fakeCompiler().lastConfig.deterministic);

  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  const std::vector<FakeLaunch> &launches = fakeCuda().launchLog;
  const auto &allocations = fakeCuda().allocationLog;
  const std::vector<FakeMemset> &memsets = fakeCuda().memsetLog;
  EXPECT_EQ(fakeCuda().liveAllocations, 0);
  ASSERT_EQ(allocations.size(), 2u); // the row terms, the accumulator
  EXPECT_EQ(allocations[1].second, size_t(B * H * Nq * D * sizeof(float)));
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(memsets[0].pointer, allocations[1].first);
  EXPECT_EQ(memsets[0].value, 0u);
  EXPECT_EQ(memsets[0].count, size_t(B * H * Nq * D));
  EXPECT_EQ(memsets[0].stream, reinterpret_cast<CUstream>(0x7000));
  EXPECT_EQ(memsets[0].launchesBefore, 0u);
  ASSERT_EQ(launches.size(), 3u);
  const unsigned queryTiles =
      unsigned((Nq + fakeBlockM(fakeCompiler().lastConfig) - 1) /
               fakeBlockM(fakeCompiler().lastConfig));
  const unsigned grid0[] = {queryTiles,
                            unsigned((Nk + kFakeBackwardKeyTile - 1) /
                                     kFakeBackwardKeyTile),
                            queryTiles};
  const std::vector<int64_t> accum = {
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(allocations[1].first)),
      B, H, Nq, D, H * Nq * D, Nq * D, D, 1};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(launches[i].name,
              attn::abi::kernelName(attn::abi::kBackwardKernel, i));
    EXPECT_EQ(launches[i].grid[0], grid0[i]) << i;
    EXPECT_EQ(launches[i].after, accum) << i;
  }
}

// Without ATTN_JIT_GPU_ATOMIC_BACKWARD=1, attn_set_deterministic(0) leaves
// CUDA calls on the deterministic kernels (the wgmma atomic form is opt-in
// until it pays and is right on the device): one key, no accumulator.
TEST_F(EngineCudaTest, AtomicBackwardOnCudaIsOptIn) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  attn_bwd_args args = backwardArgs(call, grads);
  ASSERT_TRUE(engine().backward(&args).ok());
  ASSERT_TRUE(engine().setDeterministic(0).ok());
  Status status = engine().backward(&args);
  EXPECT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 1);
  EXPECT_TRUE(fakeCompiler().lastConfig.deterministic);
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  EXPECT_TRUE(fakeCuda().memsetLog.empty());
}

// mma.sync (sm_80) has no MN-major A: attn_set_deterministic(0) resolves
// to the deterministic kernels there (the same key, compiled once), with
// no accumulator.
TEST_F(EngineCudaTest, AtomicBackwardFormResolvesToDeterministicOnMmaSync) {
  options.gpuAtomicBackward = true;
  fakeCuda().major = 8;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 64, 64, 64);
  ASSERT_TRUE(engine().forward(&call.args).ok());
  attn_bwd_args args = backwardArgs(call, grads);
  ASSERT_TRUE(engine().backward(&args).ok());
  ASSERT_TRUE(engine().setDeterministic(0).ok());
  Status status = engine().backward(&args);
  EXPECT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(fakeCompiler().ptxCompiles, 2);
  EXPECT_EQ(fakeCuda().moduleLoads, 2);
  EXPECT_TRUE(fakeCompiler().lastConfig.deterministic);
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  EXPECT_EQ(fakeCuda().launchLog.size(), 5u); // forward, then 2 + 2
  EXPECT_TRUE(fakeCuda().memsetLog.empty());
  EXPECT_EQ(fakeCuda().allocationLog.size(), 2u); // the row terms, twice
}

// The deterministic backward by TMA unless ATTN_JIT_TMA=0: each kernel
// takes the maps of K, V, Q and dO (kBackwardTensorMaps) after its scale,
// boxes of block_n rows; with ATTN_JIT_TMA=0, cp.async.
TEST_F(EngineCudaTest, BackwardTakesKVQAndDoTensorMapsUnlessTmaIsOff) {
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 200, 200, 128);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 200, 200, 128);
  attn_bwd_args args = backwardArgs(call, grads);
  options.tma = false; // ATTN_JIT_TMA=0
  ASSERT_TRUE(engine().backward(&args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_FALSE(fakeCompiler().lastConfig.tma);
  }
  engine_.reset();
  options.tma = std::nullopt; // the default
  fakeCuda().tensorMapParam = attn::abi::backwardTensorParams() + 1;
  ASSERT_TRUE(engine().backward(&args).ok());
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.tma);
    EXPECT_TRUE(fakeCompiler().lastConfig.backward);
    EXPECT_FALSE(fakeCompiler().lastConfig.warpSpecialize);
  }
  std::vector<FakeLaunch> launches;
  {
    std::lock_guard<std::mutex> lock(fakeCuda().mutex);
    launches = fakeCuda().launchLog;
    ASSERT_EQ(fakeCuda().tensorMapLog.size(), 4u);
    for (const FakeTensorMapEncode &map : fakeCuda().tensorMapLog)
      EXPECT_EQ(map.box, (std::vector<uint32_t>{64, 64, 1, 1}));
  }
  ASSERT_GE(launches.size(), 2u);
  for (size_t i = launches.size() - 2; i < launches.size(); ++i)
    EXPECT_EQ(launches[i].tensorMapAddresses,
              (std::vector<uint64_t>{reinterpret_cast<uintptr_t>(call.args.k),
                                     reinterpret_cast<uintptr_t>(call.args.v),
                                     reinterpret_cast<uintptr_t>(call.args.q),
                                     reinterpret_cast<uintptr_t>(args.d_o)}));
}

TEST_F(EngineCudaTest, BackwardKeepsCpAsyncWhereDoCannotBeMapped) {
  // dO broadcast over the heads (head stride 0, as torch's expand makes
  // it): no tensor map describes it, so the call takes the cp.async kernel
  // rather than failing at its launch.
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 200, 200, 128);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 2, 200, 200, 128);
  attn_bwd_args args = backwardArgs(call, grads);
  args.do_strides[1] = 0;
  Status status = engine().backward(&args);
  ASSERT_TRUE(status.ok()) << status.toString();
  {
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_TRUE(fakeCompiler().lastConfig.backward);
    EXPECT_FALSE(fakeCompiler().lastConfig.tma);
  }
  std::lock_guard<std::mutex> lock(fakeCuda().mutex);
  EXPECT_TRUE(fakeCuda().tensorMapLog.empty());
}

TEST_F(EngineCudaTest, BackwardLaunchesBothKernelsOverTheirGrids) {
  // GQA, Nq != Nk, (B, N, H, D) layout: the query tiles' kernel over (Nq
  // tiles, H, B), then the K/V tiles' over (Nk tiles, Hkv, B), on the
  // caller's stream with the same parameters: the tensors of KernelABI.h's
  // backward, the row-terms workspace last, allocated and freed on the
  // stream.
  const int64_t B = 2, H = 4, Hkv = 2, Nq = 100, Nk = 70, D = 64;
  ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, B, H, Nq, Nk, D);
  ForwardFixture grads(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, B, H, Nq, Nk, D);
  for (ForwardFixture *f : {&call, &grads}) {
    f->args.kv_heads = Hkv;
    attn_set_bnhd_strides(&f->args);
  }
  call.args.stream = reinterpret_cast<void *>(0x7000);
  call.args.scale = 0.5f;
  attn_bwd_args args = backwardArgs(call, grads);
  ASSERT_TRUE(engine().backward(&args).ok());

  std::vector<FakeLaunch> launches;
  std::vector<std::pair<void *, size_t>> allocations;
  {
    std::lock_guard<std::mutex> lock(fakeCuda().mutex);
    launches = fakeCuda().launchLog;
    allocations = fakeCuda().allocationLog;
    EXPECT_EQ(fakeCuda().liveAllocations, 0);
  }
  ASSERT_EQ(launches.size(), 2u);
  ASSERT_EQ(allocations.size(), 1u);
  EXPECT_EQ(allocations[0].second, size_t(B * H * Nq * sizeof(float)));
  const FakeLaunch &queries = launches[0], &keys = launches[1];
  EXPECT_EQ(queries.name, attn::abi::kernelName(attn::abi::kBackwardKernel, 0));
  EXPECT_EQ(keys.name, attn::abi::kernelName(attn::abi::kBackwardKernel, 1));
  const unsigned blockM = fakeBlockM(fakeCompiler().lastConfig);
  EXPECT_EQ(queries.grid[0], unsigned((Nq + blockM - 1) / blockM));
  EXPECT_EQ(queries.grid[1], unsigned(H));
  EXPECT_EQ(keys.grid[0],
            unsigned((Nk + kFakeBackwardKeyTile - 1) / kFakeBackwardKeyTile));
  EXPECT_EQ(keys.grid[1], unsigned(Hkv));
  for (const FakeLaunch &l : launches) {
    EXPECT_EQ(l.grid[2], unsigned(B));
    EXPECT_EQ(l.stream, reinterpret_cast<CUstream>(0x7000));
    EXPECT_EQ(l.scale, 0.5f);
  }
  EXPECT_EQ(queries.values, keys.values);

  auto address = [](const void *p) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
  };
  auto tensor = [&](const void *p, std::initializer_list<int64_t> sizes,
                    const int64_t *strides) {
    std::vector<int64_t> v = {address(p)};
    v.insert(v.end(), sizes);
    v.insert(v.end(), strides, strides + sizes.size());
    return v;
  };
  const attn_fwd_args &a = args.fwd;
  const int64_t deltaStrides[3] = {H * Nq, Nq, 1};
  std::vector<int64_t> expected;
  for (const std::vector<int64_t> &t :
       {tensor(a.q, {B, H, Nq, D}, a.q_strides),
        tensor(a.k, {B, Hkv, Nk, D}, a.k_strides),
        tensor(a.v, {B, Hkv, Nk, D}, a.v_strides),
        tensor(a.o, {B, H, Nq, D}, a.o_strides),
        tensor(args.d_o, {B, H, Nq, D}, args.do_strides),
        tensor(a.lse, {B, H, Nq}, a.lse_strides),
        tensor(args.dq, {B, H, Nq, D}, args.dq_strides),
        tensor(args.dk, {B, Hkv, Nk, D}, args.dk_strides),
        tensor(args.dv, {B, Hkv, Nk, D}, args.dv_strides),
        tensor(allocations[0].first, {B, H, Nq}, deltaStrides)})
    expected.insert(expected.end(), t.begin(), t.end());
  EXPECT_EQ(queries.values, expected);
}

TEST_F(EngineCudaTest, WgmmaWhereItCannotRunIsUnsupportedInOneLine) {
  // ATTN_JIT_TENSOR_CORES=wgmma on sm_80, or with D = 72: the plan refuses
  // it before any compile (issue 14: it was ATTN_ERROR_COMPILE, "a bug in
  // attn-jit", with ~3 KB of IR).
  options.tensorCore = "wgmma";
  struct {
    int major, minor;
    int64_t headDim;
    const char *why;
  } cases[] = {{8, 0, 64, "tensor-core=wgmma needs sm_90a, got sm_80"},
               {9, 0, 72, "tensor-core=wgmma needs a head dim that is a "
                          "multiple of 16"}};
  for (auto c : cases) {
    resetFakeCompiler();
    fakeCuda().major = c.major;
    fakeCuda().minor = c.minor;
    engine_.reset();
    ForwardFixture call(ATTN_DEVICE_CUDA, ATTN_DTYPE_BF16, 1, 1, 16, 16,
                        c.headDim);
    Status status = engine().forward(&call.args);
    EXPECT_EQ(status.code(), ATTN_ERROR_UNSUPPORTED) << status.toString();
    EXPECT_NE(status.message().find(c.why), std::string::npos)
        << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos)
        << status.message();
    std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
    EXPECT_EQ(fakeCompiler().ptxCompiles, 0);
  }
}
