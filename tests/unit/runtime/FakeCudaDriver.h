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
#include "Engine.h"

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
  /// With FakeCudaState::tensorMapParam >= 0: the global address that each
  /// of the kTensorMapCount parameters from there holds (a fake map's
  /// first word, see FakeTensorMapEncode).
  std::vector<uint64_t> tensorMapAddresses;
};

/// One cuMemsetD32Async call (the fake writes the words too), and how many
/// launches came before it.
struct FakeMemset {
  void *pointer = nullptr;
  unsigned value = 0;
  size_t count = 0;
  CUstream stream = nullptr;
  size_t launchesBefore = 0;
};

/// The arguments of one cuTensorMapEncodeTiled call. The fake checks them
/// as the driver documents (rank 1-5, a 16-byte-aligned address, dims in
/// [1, 2^32], strides multiples of 16 below 2^40, box sides in [1, 256],
/// a box row of at most 128 bytes with the 128-byte swizzle) and returns
/// CUDA_ERROR_INVALID_VALUE otherwise; a valid map holds the address in
/// its first 8 bytes.
struct FakeTensorMapEncode {
  CUtensorMapDataType type;
  unsigned rank = 0;
  const void *address = nullptr;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box, elementStrides;
  CUtensorMapInterleave interleave;
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion l2;
  CUtensorMapFloatOOBfill fill;
  CUresult result = CUDA_SUCCESS;
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
  /// The index of a launch's first tensor-map parameter (-1: none read).
  int tensorMapParam = -1;
  /// Whether the table has cuTensorMapEncodeTiled (set before
  /// makeFakeCudaDriver).
  bool hasTensorMapEncode = true;
  /// Whether the table has the linker (cuLinkCreate .. cuLinkDestroy; set
  /// before makeFakeCudaDriver). Its cubin is kFakeCubinPrefix + the PTX.
  bool hasLinker = false;
  /// Whether the table has cuStreamIsCapturing (set before
  /// makeFakeCudaDriver), and what it reports for every stream.
  bool hasStreamIsCapturing = true;
  std::atomic<bool> capturing{false};
  /// How many cuModuleLoadDataEx of a cubin (an image that starts with
  /// kFakeCubinPrefix) to refuse, with CUDA_ERROR_INVALID_IMAGE, before
  /// loading them again.
  std::atomic<int> cubinLoadsToRefuse{0};
  /// What a JIT (a PTX load or a link) reports as CU_JIT_WALL_TIME.
  float jitWallMs = 12.5f;

  std::atomic<int> moduleLoads{0}, launches{0}, primaryRetains{0},
      setAttributeCalls{0}, lastSharedAttribute{0}, links{0},
      liveLinks{0};
  /// The CU_JIT_OPTIMIZATION_LEVEL of the last JIT, -1 when it had none.
  std::atomic<int> lastJitOptLevel{-1};
  /// The CU_JIT_SPLIT_COMPILE of the last JIT, -1 when it had none.
  std::atomic<int> lastJitSplitCompile{-1};
  /// A PTX load with CU_JIT_SPLIT_COMPILE fails with
  /// CUDA_ERROR_INVALID_VALUE (a driver without the option).
  std::atomic<bool> refusesSplitCompile{false};

  std::mutex mutex; // guards what follows
  std::vector<FakeLaunch> launchLog;
  std::vector<std::string> loadedPtx;
  std::vector<FakeTensorMapEncode> tensorMapLog;
  std::vector<std::string> functionNames; ///< a CUfunction is 1 + its index
  /// cuMemAllocAsync's live blocks, and every (pointer, bytes) it gave.
  std::vector<std::unique_ptr<char[]>> allocations;
  std::vector<std::pair<void *, size_t>> allocationLog;
  std::vector<FakeMemset> memsetLog;
  int liveAllocations = 0;
  struct Range {
    uintptr_t begin, end;
    CUmemorytype type;
  };
  std::vector<Range> memory;
};

/// How the fake linker's cubins start.
inline constexpr const char *kFakeCubinPrefix = "FAKE-CUBIN\n";

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

/// Options of an engine over the fakes that builds one kernel a
/// configuration: tiered first calls (the library's default) add a quick
/// kernel and a background build to every first call; their own tests
/// turn them on.
rt::EngineOptions oneKernelOptions();

} // namespace attn::testing

#endif // ATTN_TESTS_FAKECUDADRIVER_H
