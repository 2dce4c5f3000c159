//===- CudaDriverTest.cpp - Loading the driver with dlopen ----------------===//

#include "CudaDriver.h"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace attn;
using namespace attn::rt;

namespace {

TEST(CudaDriverTest, LooksUpTheVersionedSymbols) {
  // cuda.h maps these names to versioned symbols; dlsym needs the latter.
  EXPECT_STREQ(ATTN_CUDA_SYMBOL(cuInit), "cuInit");
  EXPECT_STREQ(ATTN_CUDA_SYMBOL(cuLaunchKernel), "cuLaunchKernel");
  EXPECT_STREQ(ATTN_CUDA_SYMBOL(cuCtxPushCurrent), "cuCtxPushCurrent_v2");
  EXPECT_STREQ(ATTN_CUDA_SYMBOL(cuMemAlloc), "cuMemAlloc_v2");
  EXPECT_STREQ(ATTN_CUDA_SYMBOL(cuCtxCreate), "cuCtxCreate_v4");
}

TEST(CudaDriverTest, MissingLibraryIsNoDriver) {
  auto driver = loadCudaDriver("libattn-jit-no-such-driver.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), ATTN_ERROR_NO_DRIVER);
  EXPECT_NE(driver.status().message().find("libattn-jit-no-such-driver.so.1"),
            std::string::npos)
      << driver.status().message();
}

TEST(CudaDriverTest, LibraryWithoutTheEntryPointsIsNoDriver) {
  // libm is a real library that has none of the driver's functions.
  auto driver = loadCudaDriver("libm.so.6");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), ATTN_ERROR_NO_DRIVER);
  EXPECT_NE(driver.status().message().find("lacks cuInit"), std::string::npos)
      << driver.status().message();
}

TEST(CudaDriverTest, ToolkitStubResolvesEverythingButIsNoDriver) {
  // The toolkit's link stub exports every entry point under its real name,
  // so loading it checks our symbol names against a real libcuda; its cuInit
  // then fails as a stub, which must read as "no driver".
#ifdef ATTN_CUDA_STUB
  if (::access(ATTN_CUDA_STUB, R_OK) != 0)
    GTEST_SKIP() << "no CUDA stub library at " << ATTN_CUDA_STUB;
  auto driver = loadCudaDriver(ATTN_CUDA_STUB);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), ATTN_ERROR_NO_DRIVER)
      << driver.status().message();
  EXPECT_NE(driver.status().message().find("cuInit failed"), std::string::npos)
      << driver.status().message();
#else
  GTEST_SKIP() << "ATTN_CUDA_STUB not defined";
#endif
}

} // namespace
