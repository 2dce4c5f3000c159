//===- EngineHostTest.cpp - The host path with the fake compiler ----------===//
//
// The fake HostKernel computes naive f32 attention, so these tests check
// what the runtime hands it: pointers, sizes, strides, scale, mask config.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"
#include "FakeCompiler.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace attn;
using namespace attn::rt;
using namespace attn::testing;

namespace {

class EngineHostTest : public ::testing::Test {
protected:
  void SetUp() override {
    resetFakeCompiler();
    options.disk.enabled = true; // host kernels must not use it anyway
    options.disk.directory = dir.path() + "/cache";
    engine = std::make_unique<Engine>(options);
  }
  TempDir dir;
  EngineOptions options;
  std::unique_ptr<Engine> engine;
};

TEST_F(EngineHostTest, WorkedExampleOfTheSeed) {
  // One query, two keys, scores [0, ln 2], values [10, 20]: 50/3.
  float q[1] = {1.0f}, k[2] = {0.0f, std::log(2.0f)}, v[2] = {10.0f, 20.0f};
  float o[1] = {0}, lse[1] = {0};
  attn_fwd_args args = makeForwardArgs(Layout::BHND, q, k, v, o, lse, 1, 1, 1,
                                       2, 1, ATTN_DTYPE_F32, ATTN_DEVICE_HOST);
  args.scale = 1.0f;
  Status status = engine->forward(&args);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_NEAR(o[0], 50.0 / 3.0, 1e-5);
  EXPECT_NEAR(lse[0], std::log(3.0), 1e-6);
}

TEST_F(EngineHostTest, LayoutsGiveTheSameResult) {
  const int64_t B = 2, H = 3, Nq = 5, Nk = 7, D = 4;
  auto value = [](int tensor, int64_t b, int64_t h, int64_t n, int64_t d) {
    return std::sin(0.3f * tensor + 0.7f * b + 1.1f * h + 0.13f * n + 0.5f * d);
  };
  std::vector<float> results[2];
  for (Layout layout : {Layout::BHND, Layout::BNHD}) {
    std::vector<float> q(B * H * Nq * D), k(B * H * Nk * D), v(k.size()),
        o(q.size(), -1.0f), lse(B * H * Nq);
    attn_fwd_args args =
        makeForwardArgs(layout, q.data(), k.data(), v.data(), o.data(),
                        lse.data(), B, H, Nq, Nk, D, ATTN_DTYPE_F32,
                        ATTN_DEVICE_HOST);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d) {
          for (int64_t n = 0; n < Nq; ++n)
            q[b * args.q_strides[0] + h * args.q_strides[1] +
              n * args.q_strides[2] + d] = value(0, b, h, n, d);
          for (int64_t n = 0; n < Nk; ++n) {
            k[b * args.k_strides[0] + h * args.k_strides[1] +
              n * args.k_strides[2] + d] = value(1, b, h, n, d);
            v[b * args.v_strides[0] + h * args.v_strides[1] +
              n * args.v_strides[2] + d] = value(2, b, h, n, d);
          }
        }
    args.mask = ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    ASSERT_TRUE(engine->forward(&args).ok());
    // Gather O in logical (b, h, n, d) order.
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t n = 0; n < Nq; ++n)
          for (int64_t d = 0; d < D; ++d)
            results[int(layout)].push_back(
                o[b * args.o_strides[0] + h * args.o_strides[1] +
                  n * args.o_strides[2] + d]);
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i)
    EXPECT_FLOAT_EQ(results[0][i], results[1][i]) << i;
  EXPECT_EQ(fakeCompiler().hostCompiles, 1);
  EXPECT_EQ(engine->stats().memory_hits, 1u);
}

TEST_F(EngineHostTest, GroupedQueryAttentionEqualsExpandedKv) {
  // H = 6 query heads over Hkv = 2 K/V heads (BNHD) against plain attention
  // with each K/V head copied to its group of 3 query heads.
  const int64_t B = 2, H = 6, Hkv = 2, Nq = 5, Nk = 7, D = 4, G = H / Hkv;
  auto value = [](int tensor, int64_t b, int64_t h, int64_t n, int64_t d) {
    return std::cos(0.4f * tensor + 0.9f * b + 1.3f * h + 0.17f * n + 0.6f * d);
  };
  std::vector<float> q(B * H * Nq * D), k(B * Hkv * Nk * D), v(k.size()),
      o(q.size(), -1.0f), lse(B * H * Nq);
  attn_fwd_args gqa =
      makeForwardArgs(Layout::BNHD, q.data(), k.data(), v.data(), o.data(),
                      lse.data(), B, H, Nq, Nk, D, ATTN_DTYPE_F32,
                      ATTN_DEVICE_HOST, Hkv);
  std::vector<float> kFull(B * H * Nk * D), vFull(kFull.size()),
      oFull(q.size(), -2.0f), lseFull(lse.size());
  attn_fwd_args full =
      makeForwardArgs(Layout::BHND, q.data(), kFull.data(), vFull.data(),
                      oFull.data(), lseFull.data(), B, H, Nq, Nk, D,
                      ATTN_DTYPE_F32, ATTN_DEVICE_HOST);
  full.q_strides[0] = gqa.q_strides[0]; // Q is shared: keep its layout
  full.q_strides[1] = gqa.q_strides[1];
  full.q_strides[2] = gqa.q_strides[2];
  for (int64_t b = 0; b < B; ++b)
    for (int64_t d = 0; d < D; ++d) {
      for (int64_t h = 0; h < H; ++h)
        for (int64_t n = 0; n < Nq; ++n)
          q[b * gqa.q_strides[0] + h * gqa.q_strides[1] +
            n * gqa.q_strides[2] + d] = value(0, b, h, n, d);
      for (int64_t n = 0; n < Nk; ++n)
        for (int64_t h = 0; h < H; ++h) {
          float kv[2] = {value(1, b, h / G, n, d), value(2, b, h / G, n, d)};
          if (h % G == 0) {
            k[b * gqa.k_strides[0] + (h / G) * gqa.k_strides[1] +
              n * gqa.k_strides[2] + d] = kv[0];
            v[b * gqa.v_strides[0] + (h / G) * gqa.v_strides[1] +
              n * gqa.v_strides[2] + d] = kv[1];
          }
          kFull[b * full.k_strides[0] + h * full.k_strides[1] +
                n * full.k_strides[2] + d] = kv[0];
          vFull[b * full.v_strides[0] + h * full.v_strides[1] +
                n * full.v_strides[2] + d] = kv[1];
        }
    }
  for (attn_fwd_args *args : {&gqa, &full}) {
    args->mask = ATTN_MASK_CAUSAL;
    Status status = engine->forward(args);
    ASSERT_TRUE(status.ok()) << status.toString();
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < Nq; ++n) {
        for (int64_t d = 0; d < D; ++d) {
          int64_t at = b * gqa.o_strides[0] + h * gqa.o_strides[1] +
                       n * gqa.o_strides[2] + d;
          int64_t atFull = b * full.o_strides[0] + h * full.o_strides[1] +
                           n * full.o_strides[2] + d;
          EXPECT_FLOAT_EQ(o[at], oFull[atFull]) << b << h << n << d;
        }
        EXPECT_FLOAT_EQ(lse[b * H * Nq + h * Nq + n],
                        lseFull[b * H * Nq + h * Nq + n]);
      }
  // Each group's 3 x 5 queries fit one query tile: the GQA call packs
  // them (a kernel of its own); the expanded call cannot (groups of 1).
  EXPECT_EQ(fakeCompiler().hostCompiles, 2);
}

TEST_F(EngineHostTest, GroupedQueryPrefillSharesTheKernel) {
  // Groups whose queries do not fit one tile run unpacked: the K/V head
  // count is then a launch argument, not part of the kernel.
  const int64_t B = 1, H = 4, Hkv = 2, Nq = 300, Nk = 8, D = 4;
  std::vector<float> q(B * H * Nq * D, 0.5f), k(B * H * Nk * D, 0.25f),
      v(k.size(), 1.0f), o(q.size()), lse(B * H * Nq);
  attn_fwd_args gqa = makeForwardArgs(Layout::BHND, q.data(), k.data(),
                                      v.data(), o.data(), lse.data(), B, H,
                                      Nq, Nk, D, ATTN_DTYPE_F32,
                                      ATTN_DEVICE_HOST, Hkv);
  attn_fwd_args full = makeForwardArgs(Layout::BHND, q.data(), k.data(),
                                       v.data(), o.data(), lse.data(), B, H,
                                       Nq, Nk, D, ATTN_DTYPE_F32,
                                       ATTN_DEVICE_HOST);
  for (attn_fwd_args *args : {&gqa, &full}) {
    Status status = engine->forward(args);
    ASSERT_TRUE(status.ok()) << status.toString();
  }
  EXPECT_EQ(fakeCompiler().hostCompiles, 1);
  for (float x : o)
    EXPECT_FLOAT_EQ(x, 1.0f); // every V row is 1
}

TEST_F(EngineHostTest, CausalMaskAndDefaultScaleReachTheKernel) {
  // With a causal mask, query 0 sees key 0 only: O[0] = V[0].
  const int64_t N = 3, D = 2;
  std::vector<float> q = {1, 2, 3, 4, 5, 6}, k = {1, 0, 0, 1, 1, 1},
                     v = {10, 20, 30, 40, 50, 60}, o(6), lse(3);
  attn_fwd_args args =
      makeForwardArgs(Layout::BHND, q.data(), k.data(), v.data(), o.data(),
                      lse.data(), 1, 1, N, N, D, ATTN_DTYPE_F32,
                      ATTN_DEVICE_HOST);
  args.mask = ATTN_MASK_CAUSAL;
  ASSERT_TRUE(engine->forward(&args).ok());
  EXPECT_FLOAT_EQ(o[0], 10);
  EXPECT_FLOAT_EQ(o[1], 20);
  // Query 1 sees keys 0 and 1 with scores (3, 4) / sqrt(2).
  double s0 = 3 / std::sqrt(2.0), s1 = 4 / std::sqrt(2.0);
  double w1 = std::exp(s1) / (std::exp(s0) + std::exp(s1));
  EXPECT_NEAR(o[2], 10 * (1 - w1) + 30 * w1, 1e-4);
  EXPECT_NEAR(lse[1], std::log(std::exp(s0) + std::exp(s1)), 1e-5);
}

TEST_F(EngineHostTest, NegativeScaleReachesTheKernel) {
  // One query, two keys, scores [0, ln 2] times -1: weights 2/3 and 1/3.
  float q[1] = {1.0f}, k[2] = {0.0f, std::log(2.0f)}, v[2] = {10.0f, 20.0f};
  float o[1] = {0}, lse[1] = {0};
  attn_fwd_args args = makeForwardArgs(Layout::BHND, q, k, v, o, lse, 1, 1, 1,
                                       2, 1, ATTN_DTYPE_F32, ATTN_DEVICE_HOST);
  args.scale = -1.0f;
  Status status = engine->forward(&args);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_NEAR(o[0], 40.0 / 3.0, 1e-5);
  EXPECT_NEAR(lse[0], std::log(1.5), 1e-6);
  std::lock_guard<std::mutex> lock(fakeCompiler().mutex);
  EXPECT_FALSE(fakeCompiler().lastConfig.positiveScale);
}

TEST_F(EngineHostTest, AnyHeadDimUpTo512) {
  for (int64_t dim : {1, 7, 33, 512}) {
    std::vector<float> q(dim, 0.1f), k(2 * dim, 0.2f), v(2 * dim, 3.0f),
        o(dim, 0);
    attn_fwd_args args =
        makeForwardArgs(Layout::BHND, q.data(), k.data(), v.data(), o.data(),
                        nullptr, 1, 1, 1, 2, dim, ATTN_DTYPE_F32,
                        ATTN_DEVICE_HOST);
    Status status = engine->forward(&args);
    ASSERT_TRUE(status.ok()) << dim << ": " << status.toString();
    EXPECT_FLOAT_EQ(o[dim - 1], 3.0f);
  }
  EXPECT_EQ(fakeCompiler().hostCompiles, 4);
}

TEST_F(EngineHostTest, HostKernelsStayInMemoryOnly) {
  float q[8] = {}, k[8] = {}, v[8] = {}, o[8] = {};
  attn_fwd_args args = makeForwardArgs(Layout::BHND, q, k, v, o, nullptr, 1, 1,
                                       1, 1, 8, ATTN_DTYPE_F32,
                                       ATTN_DEVICE_HOST);
  ASSERT_TRUE(engine->forward(&args).ok());
  EXPECT_EQ(::access(options.disk.directory.c_str(), F_OK), -1);
  attn_stats stats = engine->stats();
  EXPECT_EQ(stats.disk_hits + stats.disk_misses, 0u);
  engine->clearMemoryCache();
  ASSERT_TRUE(engine->forward(&args).ok());
  EXPECT_EQ(fakeCompiler().hostCompiles, 2);
}

TEST_F(EngineHostTest, ThreadsShareOneCompile) {
  fakeCompiler().delayMs = 150;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      float q[4] = {}, k[4] = {}, v[4] = {}, o[4] = {};
      attn_fwd_args args = makeForwardArgs(Layout::BHND, q, k, v, o, nullptr,
                                           1, 1, 1, 1, 4, ATTN_DTYPE_F32,
                                           ATTN_DEVICE_HOST);
      EXPECT_TRUE(engine->forward(&args).ok());
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(fakeCompiler().hostCompiles, 1);
  EXPECT_EQ(engine->stats().launches, 8u);
}

TEST_F(EngineHostTest, CompileFailure) {
  fakeCompiler().fail = true;
  float q[8] = {}, k[8] = {}, v[8] = {}, o[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  attn_fwd_args args = makeForwardArgs(Layout::BHND, q, k, v, o, nullptr, 1, 1,
                                       1, 1, 8, ATTN_DTYPE_F32,
                                       ATTN_DEVICE_HOST);
  Status status = engine->forward(&args);
  EXPECT_EQ(status.code(), ATTN_ERROR_COMPILE);
  EXPECT_NE(status.message().find("target=host"), std::string::npos)
      << status.message();
  EXPECT_EQ(o[7], 8);
}

} // namespace

// ATTN_JIT_NUM_THREADS: a count is the host calls' thread count; anything
// else makes host calls fail with a message, not run on a guess.
TEST(EngineHostThreads, CountFromTheEnvironment) {
  {
    ScopedEnv threads("ATTN_JIT_NUM_THREADS", "3");
    EXPECT_EQ(EngineOptions::fromEnvironment().hostThreads, 3);
  }
  {
    ScopedEnv threads("ATTN_JIT_NUM_THREADS", std::nullopt);
    EXPECT_EQ(EngineOptions::fromEnvironment().hostThreads, 0);
  }
  for (const char *bad : {"0", "-2", "two", "4x", "100000"}) {
    ScopedEnv threads("ATTN_JIT_NUM_THREADS", bad);
    EngineOptions options = EngineOptions::fromEnvironment();
    EXPECT_EQ(options.hostThreads, EngineOptions::kBadThreadCount) << bad;
    options.disk.enabled = false;
    Engine engine(options);
    ForwardFixture call(ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 1, 1, 8, 8, 64);
    Status status = engine.forward(&call.args);
    EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(status.message().find("ATTN_JIT_NUM_THREADS"), std::string::npos)
        << status.message();
  }
}

// ATTN_JIT_DETERMINISTIC: 0 or 1 picks the backward's form; anything else
// makes backward calls fail with a message naming the variable.
TEST(EngineHostDeterministic, FormFromTheEnvironment) {
  resetFakeCompiler();
  {
    ScopedEnv mode("ATTN_JIT_DETERMINISTIC", std::nullopt);
    EXPECT_EQ(EngineOptions::fromEnvironment().deterministic, 1);
  }
  {
    ScopedEnv mode("ATTN_JIT_DETERMINISTIC", "0");
    EXPECT_EQ(EngineOptions::fromEnvironment().deterministic, 0);
  }
  {
    ScopedEnv mode("ATTN_JIT_DETERMINISTIC", "1");
    EXPECT_EQ(EngineOptions::fromEnvironment().deterministic, 1);
  }
  for (const char *bad : {"2", "yes", "-1"}) {
    ScopedEnv mode("ATTN_JIT_DETERMINISTIC", bad);
    EngineOptions options = EngineOptions::fromEnvironment();
    EXPECT_EQ(options.deterministic, EngineOptions::kBadDeterministic) << bad;
    options.disk.enabled = false;
    Engine engine(options);
    EXPECT_EQ(engine.setDeterministic(2).code(), ATTN_ERROR_INVALID_ARGUMENT);
    ForwardFixture call(ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 1, 1, 8, 8, 64);
    ForwardFixture grads(ATTN_DEVICE_HOST, ATTN_DTYPE_F32, 1, 1, 8, 8, 64);
    attn_bwd_args args = backwardArgs(call, grads);
    Status status = engine.backward(&args);
    EXPECT_EQ(status.code(), ATTN_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(status.message().find("ATTN_JIT_DETERMINISTIC"),
              std::string::npos)
        << status.message();
    // Set at run time, it holds.
    ASSERT_TRUE(engine.setDeterministic(0).ok());
    status = engine.backward(&args);
    EXPECT_TRUE(status.ok()) << status.toString();
  }
}
