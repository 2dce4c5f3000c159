//===- FakeCudaDriver.h - A CudaDriver table of fakes ---------------------===//
//
// Drives the runtime's CUDA path without a GPU: contexts, device attributes,
// pointer attributes, module loads and launches are simulated, and every
// launch is recorded (grid, block, shared memory and the decoded kernel
// parameters) so that tests can check the ABI.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TESTS_FAKECUDADRIVER_H
#define ATTN_TESTS_FAKECUDADRIVER_H

#include "CudaDriver.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attn::testing {

struct FakeLaunch {
  CUfunction function = nullptr;
  unsigned grid[3] = {}, block[3] = {}, sharedBytes = 0;
  CUstream stream = nullptr;
  std::string name;            ///< the kernel's name (cuModuleGetFunction)
  std::vector<int64_t> values; ///< the tensors' i64 parameters (KernelABI.h)
  float scale = 0;
  /// FakeCudaState::paramsAfterScale 64-bit parameters after the scale.
  std::vector<int64_t> after;
};

struct FakeCudaState {
  int major = 9, minor = 0;
  int maxSharedBytes = 227 * 1024;
  int multiprocessors = 132; ///< an H100 / H200 SXM
  CUresult initResult = CUDA_SUCCESS;
  int deviceCount = 1;
  CUresult moduleLoadResult = CUDA_SUCCESS;
  std::string moduleLoadErrorLog; ///< written into the JIT error log
  CUresult launchResult = CUDA_SUCCESS;
  /// How many 64-bit parameters after the scale a launch records (a test
  /// that knows its kernel's arguments sets it).
  int paramsAfterScale = 0;

  std::atomic<int> moduleLoads{0}, launches{0}, primaryRetains{0},
      setAttributeCalls{0}, lastSharedAttribute{0};

  std::mutex mutex; // guards what follows
  std::vector<FakeLaunch> launchLog;
  std::vector<std::string> loadedPtx;
  std::vector<std::string> functionNames; ///< a CUfunction is 1 + its index
  /// cuMemAllocAsync's live blocks, and every (pointer, bytes) it gave.
  std::vector<std::unique_ptr<char[]>> allocations;
  std::vector<std::pair<void *, size_t>> allocationLog;
  int liveAllocations = 0;
  struct Range {
    uintptr_t begin, end;
    CUmemorytype type;
  };
  std::vector<Range> memory;
};

FakeCudaState &fakeCuda();
void resetFakeCuda();

/// Registers [data, data + bytes) as memory of `type` for
/// cuPointerGetAttribute; any other address is unknown to the fake driver.
void registerFakeMemory(const void *data, size_t bytes,
                        CUmemorytype type = CU_MEMORYTYPE_DEVICE);

/// The context the fake primary context is, and one a "user" can create.
CUcontext fakePrimaryContext();
CUcontext fakeUserContext();
/// Sets the calling thread's current context in the fake driver.
void setFakeCurrentContext(CUcontext context);

/// A table whose entries are the fakes.
std::shared_ptr<const rt::CudaDriver> makeFakeCudaDriver();

} // namespace attn::testing

#endif // ATTN_TESTS_FAKECUDADRIVER_H
