//===- CApiTest.cpp - The C API and the process-wide engine ---------------===//
//
// main() points the engine at a driver that does not exist and at a fresh
// cache directory before the first call, since the engine reads the
// environment once.
//
//===----------------------------------------------------------------------===//

#include "attn-jit/Runtime.h"
#include "attn-jit/attn_jit.h"
#include "FakeCompiler.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

using namespace attn;
using namespace attn::testing;

namespace {

constexpr const char *kMissingDriver = "libattn-jit-test-no-driver.so.1";

attn_fwd_args cudaArgs(Buffer &q, Buffer &k, Buffer &v, Buffer &o) {
  return makeForwardArgs(Layout::BHND, q.data(), k.data(), v.data(), o.data(),
                         nullptr, 1, 2, 16, 16, 64, ATTN_DTYPE_BF16);
}

TEST(CApiTest, NoDriverIsReportedCleanly) {
  Buffer q(4096), k(4096), v(4096), o(4096);
  attn_fwd_args args = cudaArgs(q, k, v, o);
  EXPECT_EQ(attn_forward(&args), ATTN_ERROR_NO_DRIVER);
  std::string message = attn_last_error();
  EXPECT_NE(message.find("cannot load the CUDA driver"), std::string::npos)
      << message;
  EXPECT_NE(message.find(kMissingDriver), std::string::npos) << message;
  EXPECT_TRUE(o.untouched());
  // Again, through the C++ API.
  Status status = forward(args);
  EXPECT_EQ(status.code(), ATTN_ERROR_NO_DRIVER);
  EXPECT_EQ(status.message(), message);
  EXPECT_NE(status.toString().find("ATTN_ERROR_NO_DRIVER: "), std::string::npos);
}

TEST(CApiTest, LastErrorIsPerThread) {
  Buffer q(4096), k(4096), v(4096), o(4096);
  attn_fwd_args args = cudaArgs(q, k, v, o);
  args.head_dim = 12;
  EXPECT_EQ(attn_forward(&args), ATTN_ERROR_UNSUPPORTED);
  std::string mine = attn_last_error();
  EXPECT_NE(mine.find("head_dim = 12"), std::string::npos);
  std::string other = "unset";
  std::thread([&] { other = attn_last_error(); }).join();
  EXPECT_EQ(other, "");
  std::thread([&] {
    attn_fwd_args bad = args;
    bad.batch = -3;
    EXPECT_EQ(attn_forward(&bad), ATTN_ERROR_INVALID_ARGUMENT);
    other = attn_last_error();
  }).join();
  EXPECT_NE(other.find("batch = -3"), std::string::npos);
  EXPECT_EQ(attn_last_error(), mine);
}

TEST(CApiTest, NullArgumentsAreErrors) {
  EXPECT_EQ(attn_forward(nullptr), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("args"), std::string::npos);
  EXPECT_EQ(attn_get_stats(nullptr), ATTN_ERROR_INVALID_ARGUMENT);
  attn_set_bhnd_strides(nullptr); // no crash
  attn_set_bnhd_strides(nullptr);
}

TEST(CApiTest, StatusStrings) {
  EXPECT_STREQ(attn_status_string(ATTN_OK), "ATTN_OK");
  EXPECT_STREQ(attn_status_string(ATTN_ERROR_NO_DRIVER), "ATTN_ERROR_NO_DRIVER");
  EXPECT_STREQ(attn_status_string(ATTN_ERROR_COMPILE), "ATTN_ERROR_COMPILE");
}

TEST(CApiTest, VersionIsTheCompilers) {
  EXPECT_STREQ(attn_version(), kFakeVersion);
  EXPECT_EQ(version(), kFakeVersion);
}

TEST(CApiTest, StrideHelpers) {
  attn_fwd_args args{};
  args.heads = 3;
  args.kv_heads = 0;
  args.seqlen_q = 5;
  args.seqlen_k = 7;
  args.head_dim = 8;
  attn_set_bhnd_strides(&args);
  int64_t q[4] = {3 * 5 * 8, 5 * 8, 8, 1}, k[4] = {3 * 7 * 8, 7 * 8, 8, 1};
  int64_t lse[3] = {15, 5, 1};
  EXPECT_EQ(0, std::memcmp(args.q_strides, q, sizeof q));
  EXPECT_EQ(0, std::memcmp(args.o_strides, q, sizeof q));
  EXPECT_EQ(0, std::memcmp(args.k_strides, k, sizeof k));
  EXPECT_EQ(0, std::memcmp(args.v_strides, k, sizeof k));
  EXPECT_EQ(0, std::memcmp(args.lse_strides, lse, sizeof lse));
  attn_set_bnhd_strides(&args);
  int64_t qn[4] = {5 * 3 * 8, 8, 3 * 8, 1}, kn[4] = {7 * 3 * 8, 8, 3 * 8, 1};
  EXPECT_EQ(0, std::memcmp(args.q_strides, qn, sizeof qn));
  EXPECT_EQ(0, std::memcmp(args.k_strides, kn, sizeof kn));
  EXPECT_EQ(0, std::memcmp(args.lse_strides, lse, sizeof lse));
  // Grouped-query attention: K and V strides follow kv_heads.
  args.kv_heads = 1;
  attn_set_bhnd_strides(&args);
  int64_t kg[4] = {7 * 8, 7 * 8, 8, 1};
  EXPECT_EQ(0, std::memcmp(args.q_strides, q, sizeof q));
  EXPECT_EQ(0, std::memcmp(args.k_strides, kg, sizeof kg));
  EXPECT_EQ(0, std::memcmp(args.v_strides, kg, sizeof kg));
  attn_set_bnhd_strides(&args);
  int64_t kgn[4] = {7 * 8, 8, 8, 1};
  EXPECT_EQ(0, std::memcmp(args.q_strides, qn, sizeof qn));
  EXPECT_EQ(0, std::memcmp(args.k_strides, kgn, sizeof kgn));
}

TEST(CApiTest, HostForwardStatsAndClear) {
  attn_stats before{};
  ASSERT_EQ(attn_get_stats(&before), ATTN_OK);
  float q[2] = {1, 0}, k[4] = {1, 0, 0, 1}, v[4] = {2, 4, 6, 8}, o[2] = {};
  attn_fwd_args args = makeForwardArgs(Layout::BHND, q, k, v, o, nullptr, 1, 1,
                                       1, 2, 2, ATTN_DTYPE_F32,
                                       ATTN_DEVICE_HOST);
  args.scale = 1.0f;
  ASSERT_EQ(attn_forward(&args), ATTN_OK) << attn_last_error();
  ASSERT_EQ(attn_forward(&args), ATTN_OK);
  double w = std::exp(1.0) / (std::exp(1.0) + 1.0);
  EXPECT_NEAR(o[0], 2 * w + 6 * (1 - w), 1e-5);
  Expected<attn_stats> after = getStats();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->compiles - before.compiles, 1u);
  EXPECT_EQ(after->memory_hits - before.memory_hits, 1u);
  EXPECT_EQ(after->launches - before.launches, 2u);
  clearMemoryCache();
  ASSERT_EQ(attn_forward(&args), ATTN_OK);
  EXPECT_EQ(getStats()->compiles - before.compiles, 2u);
  // Host calls are never tiered: nothing to wait for, no compile after.
  waitForCompiles();
  EXPECT_EQ(getStats()->compiles - before.compiles, 2u);
}

TEST(CApiTest, ExceptionsDoNotCrossTheCApi) {
  float q[2] = {1, 0}, k[2] = {1, 0}, v[2] = {2, 4}, o[2] = {7, 7};
  attn_fwd_args args = makeForwardArgs(Layout::BHND, q, k, v, o, nullptr, 1, 1,
                                       1, 1, 2, ATTN_DTYPE_F32,
                                       ATTN_DEVICE_HOST);
  // Thrown by the compiler: SingleFlight reports it to the caller.
  args.mask = ATTN_MASK_CAUSAL; // a key no other test compiled
  fakeCompiler().throwInCompile = true;
  EXPECT_EQ(attn_forward(&args), ATTN_ERROR_INTERNAL);
  EXPECT_NE(std::string(attn_last_error()).find("fake compiler threw"),
            std::string::npos)
      << attn_last_error();
  fakeCompiler().throwInCompile = false;
  // Thrown by the kernel: attn_forward reports it.
  fakeCompiler().throwInRun = true;
  EXPECT_EQ(attn_forward(&args), ATTN_ERROR_INTERNAL);
  EXPECT_STREQ(attn_last_error(),
               "attn_forward threw an exception: fake kernel threw");
  fakeCompiler().throwInRun = false;
  EXPECT_EQ(attn_forward(&args), ATTN_OK) << attn_last_error();
}

TEST(CApiTest, ExpectedAndStatusValues) {
  Expected<int> value = 3;
  EXPECT_TRUE(value.ok());
  EXPECT_EQ(*value, 3);
  EXPECT_TRUE(value.status().ok());
  Expected<int> error = Status(ATTN_ERROR_INTERNAL, "why");
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.status().toString(), "ATTN_ERROR_INTERNAL: why");
  EXPECT_EQ(Status().toString(), "ATTN_OK");
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Before the first call: the engine reads these once.
  TempDir cache;
  ::setenv("ATTN_JIT_LIBCUDA", kMissingDriver, 1);
  ::setenv("ATTN_JIT_CACHE_DIR", cache.path().c_str(), 1);
  ::unsetenv("ATTN_JIT_DISK_CACHE");
  ::unsetenv("ATTN_JIT_LOG");
  return RUN_ALL_TESTS();
}
