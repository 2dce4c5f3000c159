//===- FakeCudaDriver.cpp - A CudaDriver table of fakes -------------------===//

#include "FakeCudaDriver.h"
#include "CudaKernel.h"
#include "attn/Compiler/KernelABI.h"

#include <algorithm>
#include <cstring>

namespace attn::testing {

namespace {

thread_local CUcontext currentContext = nullptr;
char primaryStorage, userStorage;

CUresult fakeInit(unsigned) { return fakeCuda().initResult; }
CUresult fakeDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
CUresult fakeGetErrorName(CUresult result, const char **name) {
  *name = result == CUDA_ERROR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX"
                                           : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult fakeGetErrorString(CUresult, const char **text) {
  *text = "a fake driver error";
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal >= fakeCuda().deviceCount)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGetCount(int *count) {
  *count = fakeCuda().deviceCount;
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                CUdevice) {
  FakeCudaState &state = fakeCuda();
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = state.major;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = state.minor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = state.maxSharedBytes;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = state.multiprocessors;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult fakePrimaryCtxRetain(CUcontext *context, CUdevice) {
  ++fakeCuda().primaryRetains;
  *context = fakePrimaryContext();
  return CUDA_SUCCESS;
}
CUresult fakeCtxGetCurrent(CUcontext *context) {
  *context = currentContext;
  return CUDA_SUCCESS;
}
CUresult fakeCtxSetCurrent(CUcontext context) {
  currentContext = context;
  return CUDA_SUCCESS;
}
CUresult fakeCtxGetDevice(CUdevice *device) {
  if (!currentContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult fakeCtxGetId(CUcontext context, unsigned long long *id) {
  *id = context == fakePrimaryContext() ? 1 : 2;
  return CUDA_SUCCESS;
}
bool isFakeCubin(const char *image) {
  return std::strncmp(image, kFakeCubinPrefix, std::strlen(kFakeCubinPrefix)) ==
         0;
}
/// What the driver does with a JIT's options: records the level and writes
/// the wall time into its option value (a float, as documented).
void fakeJit(unsigned count, CUjit_option *options, void **values) {
  FakeCudaState &state = fakeCuda();
  state.lastJitOptLevel = -1;
  state.lastJitSplitCompile = -1;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == CU_JIT_OPTIMIZATION_LEVEL)
      state.lastJitOptLevel =
          static_cast<int>(reinterpret_cast<uintptr_t>(values[i]));
    if (options[i] == CU_JIT_SPLIT_COMPILE)
      state.lastJitSplitCompile =
          static_cast<int>(reinterpret_cast<uintptr_t>(values[i]));
    if (options[i] == CU_JIT_WALL_TIME) {
      values[i] = nullptr;
      std::memcpy(&values[i], &state.jitWallMs, sizeof(float));
    }
  }
}
CUresult fakeModuleLoadDataEx(CUmodule *module, const void *image,
                              unsigned count, CUjit_option *options,
                              void **values) {
  FakeCudaState &state = fakeCuda();
  ++state.moduleLoads;
  bool cubin = isFakeCubin(static_cast<const char *>(image));
  if (cubin && state.cubinLoadsToRefuse > 0) {
    --state.cubinLoadsToRefuse;
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (!cubin)
    fakeJit(count, options, values);
  if (!cubin && state.refusesSplitCompile && state.lastJitSplitCompile >= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (state.moduleLoadResult != CUDA_SUCCESS) {
    for (unsigned i = 0; i + 1 < count; ++i)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER &&
          options[i + 1] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
        size_t size = reinterpret_cast<uintptr_t>(values[i + 1]);
        std::strncpy(static_cast<char *>(values[i]),
                     state.moduleLoadErrorLog.c_str(), size);
      }
    return state.moduleLoadResult;
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  state.loadedPtx.emplace_back(static_cast<const char *>(image));
  *module = reinterpret_cast<CUmodule>(state.loadedPtx.size());
  return CUDA_SUCCESS;
}
/// The fake linker: one PTX input, whose cubin is kFakeCubinPrefix + it.
struct FakeLink {
  std::string cubin;
  unsigned count;
  CUjit_option *options;
  void **values;
};
CUresult fakeLinkCreate(unsigned count, CUjit_option *options, void **values,
                        CUlinkState *state) {
  ++fakeCuda().links;
  ++fakeCuda().liveLinks;
  *state = reinterpret_cast<CUlinkState>(
      new FakeLink{kFakeCubinPrefix, count, options, values});
  return CUDA_SUCCESS;
}
CUresult fakeLinkAddData(CUlinkState state, CUjitInputType type, void *data,
                         size_t size, const char *, unsigned, CUjit_option *,
                         void **) {
  if (type != CU_JIT_INPUT_PTX || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  auto *link = reinterpret_cast<FakeLink *>(state);
  // The size counts the PTX's terminating NUL.
  link->cubin.append(static_cast<const char *>(data), size - 1);
  if (fakeCuda().moduleLoadResult != CUDA_SUCCESS)
    return fakeCuda().moduleLoadResult;
  fakeJit(link->count, link->options, link->values);
  return CUDA_SUCCESS;
}
CUresult fakeLinkComplete(CUlinkState state, void **cubin, size_t *size) {
  auto *link = reinterpret_cast<FakeLink *>(state);
  *cubin = link->cubin.data();
  *size = link->cubin.size();
  return CUDA_SUCCESS;
}
CUresult fakeLinkDestroy(CUlinkState state) {
  --fakeCuda().liveLinks;
  delete reinterpret_cast<FakeLink *>(state);
  return CUDA_SUCCESS;
}
CUresult fakeModuleGetFunction(CUfunction *function, CUmodule,
                               const char *name) {
  FakeCudaState &state = fakeCuda();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.functionNames.emplace_back(name);
  *function = reinterpret_cast<CUfunction>(state.functionNames.size());
  return CUDA_SUCCESS;
}
/// The name of a fake CUfunction (under the state's mutex).
const std::string &functionName(FakeCudaState &state, CUfunction function) {
  return state.functionNames.at(reinterpret_cast<uintptr_t>(function) - 1);
}
CUresult fakeMemAllocAsync(CUdeviceptr *pointer, size_t bytes, CUstream) {
  FakeCudaState &state = fakeCuda();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.allocations.push_back(std::make_unique<char[]>(bytes));
  void *data = state.allocations.back().get();
  state.allocationLog.push_back({data, bytes});
  state.memory.push_back({reinterpret_cast<uintptr_t>(data),
                          reinterpret_cast<uintptr_t>(data) + bytes,
                          CU_MEMORYTYPE_DEVICE});
  ++state.liveAllocations;
  *pointer = reinterpret_cast<CUdeviceptr>(data);
  return CUDA_SUCCESS;
}
CUresult fakeMemFreeAsync(CUdeviceptr, CUstream) {
  FakeCudaState &state = fakeCuda();
  std::lock_guard<std::mutex> lock(state.mutex);
  --state.liveAllocations; // the memory stays until reset: logs point at it
  return CUDA_SUCCESS;
}
CUresult fakeStreamIsCapturing(CUstream, CUstreamCaptureStatus *status) {
  *status = fakeCuda().capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                 : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult fakeMemsetD32Async(CUdeviceptr pointer, unsigned value, size_t count,
                            CUstream stream) {
  FakeCudaState &state = fakeCuda();
  std::lock_guard<std::mutex> lock(state.mutex);
  auto *words = reinterpret_cast<unsigned *>(pointer);
  std::fill(words, words + count, value);
  state.memsetLog.push_back(
      {words, value, count, stream, state.launchLog.size()});
  return CUDA_SUCCESS;
}
CUresult fakeFuncSetAttribute(CUfunction, CUfunction_attribute attribute,
                              int value) {
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    ++fakeCuda().setAttributeCalls;
    fakeCuda().lastSharedAttribute = value;
  }
  return CUDA_SUCCESS;
}
CUresult fakeLaunchKernel(CUfunction function, unsigned gx, unsigned gy,
                          unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared, CUstream stream, void **params,
                          void **extra) {
  FakeCudaState &state = fakeCuda();
  if (state.launchResult != CUDA_SUCCESS)
    return state.launchResult;
  FakeLaunch launch;
  launch.function = function;
  launch.grid[0] = gx, launch.grid[1] = gy, launch.grid[2] = gz;
  launch.block[0] = bx, launch.block[1] = by, launch.block[2] = bz;
  launch.sharedBytes = shared;
  launch.stream = stream;
  std::lock_guard<std::mutex> lock(state.mutex);
  launch.name = functionName(state, function);
  // The parameters (KernelABI.h): the forward's or the backward's tensors,
  // then the scale.
  const int tensorValues = attn::abi::isBackwardKernel(launch.name)
                               ? attn::abi::backwardTensorParams()
                               : attn::abi::forwardTensorParams();
  for (int i = 0; i < tensorValues; ++i)
    launch.values.push_back(*static_cast<int64_t *>(params[i]));
  launch.scale = *static_cast<float *>(params[tensorValues]);
  for (int i = 0; i < state.paramsAfterScale; ++i)
    launch.after.push_back(
        *static_cast<int64_t *>(params[tensorValues + 1 + i]));
  if (state.tensorMapParam >= 0)
    for (int m = 0; m < attn::abi::kTensorMapCount; ++m) {
      uint64_t word;
      std::memcpy(&word, params[state.tensorMapParam + m], sizeof(word));
      launch.tensorMapAddresses.push_back(word);
    }
  ++state.launches;
  state.launchLog.push_back(std::move(launch));
  return CUDA_SUCCESS;
}

CUresult fakeTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill fill) {
  FakeCudaState &state = fakeCuda();
  FakeTensorMapEncode call;
  call.type = type;
  call.rank = rank;
  call.address = address;
  call.interleave = interleave;
  call.swizzle = swizzle;
  call.l2 = l2;
  call.fill = fill;
  bool valid = map && rank >= 1 && rank <= 5 &&
               reinterpret_cast<uintptr_t>(address) % 16 == 0;
  int64_t elementBytes = type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ||
                                 type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                             ? 2
                             : 4;
  for (cuuint32_t i = 0; valid && i < rank; ++i) {
    call.dims.push_back(dims[i]);
    call.box.push_back(box[i]);
    call.elementStrides.push_back(elementStrides[i]);
    valid = dims[i] >= 1 && dims[i] <= (uint64_t(1) << 32) && box[i] >= 1 &&
            box[i] <= 256 && elementStrides[i] >= 1 && elementStrides[i] <= 8;
    if (i + 1 < rank) {
      call.strides.push_back(strides[i]);
      valid = valid && strides[i] % 16 == 0 && strides[i] < (uint64_t(1) << 40);
    }
  }
  if (valid && swizzle == CU_TENSOR_MAP_SWIZZLE_128B)
    valid = box[0] * elementBytes <= 128;
  call.result = valid ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  if (valid) {
    std::memset(map, 0, sizeof(*map));
    auto word = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(address));
    std::memcpy(map, &word, sizeof(word));
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  state.tensorMapLog.push_back(call);
  return call.result;
}
CUresult fakePointerGetAttribute(void *data, CUpointer_attribute attribute,
                                 CUdeviceptr pointer) {
  FakeCudaState &state = fakeCuda();
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
    return CUDA_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::mutex> lock(state.mutex);
  for (const auto &range : state.memory)
    if (pointer >= range.begin && pointer < range.end) {
      *static_cast<unsigned *>(data) = range.type;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

} // namespace

FakeCudaState &fakeCuda() {
  static FakeCudaState state;
  return state;
}

void resetFakeCuda() {
  FakeCudaState &state = fakeCuda();
  state.major = 9;
  state.minor = 0;
  state.maxSharedBytes = 227 * 1024;
  state.initResult = CUDA_SUCCESS;
  state.deviceCount = 1;
  state.moduleLoadResult = CUDA_SUCCESS;
  state.moduleLoadErrorLog.clear();
  state.launchResult = CUDA_SUCCESS;
  state.paramsAfterScale = 0;
  state.tensorMapParam = -1;
  state.hasTensorMapEncode = true;
  state.hasLinker = false;
  state.hasStreamIsCapturing = true;
  state.capturing = false;
  state.cubinLoadsToRefuse = 0;
  state.jitWallMs = 12.5f;
  state.links = 0;
  state.liveLinks = 0;
  state.lastJitOptLevel = -1;
  state.lastJitSplitCompile = -1;
  state.refusesSplitCompile = false;
  state.moduleLoads = 0;
  state.launches = 0;
  state.primaryRetains = 0;
  state.setAttributeCalls = 0;
  state.lastSharedAttribute = 0;
  std::lock_guard<std::mutex> lock(state.mutex);
  state.launchLog.clear();
  state.loadedPtx.clear();
  state.tensorMapLog.clear();
  state.functionNames.clear();
  state.allocations.clear();
  state.allocationLog.clear();
  state.memsetLog.clear();
  state.liveAllocations = 0;
  state.memory.clear();
  currentContext = nullptr;
}

void registerFakeMemory(const void *data, size_t bytes, CUmemorytype type) {
  FakeCudaState &state = fakeCuda();
  std::lock_guard<std::mutex> lock(state.mutex);
  auto begin = reinterpret_cast<uintptr_t>(data);
  state.memory.push_back({begin, begin + bytes, type});
}

CUcontext fakePrimaryContext() {
  return reinterpret_cast<CUcontext>(&primaryStorage);
}
CUcontext fakeUserContext() { return reinterpret_cast<CUcontext>(&userStorage); }
void setFakeCurrentContext(CUcontext context) { currentContext = context; }

std::shared_ptr<const rt::CudaDriver> makeFakeCudaDriver() {
  auto driver = std::make_shared<rt::CudaDriver>();
  driver->cuInit = fakeInit;
  driver->cuDriverGetVersion = fakeDriverGetVersion;
  driver->cuGetErrorName = fakeGetErrorName;
  driver->cuGetErrorString = fakeGetErrorString;
  driver->cuDeviceGet = fakeDeviceGet;
  driver->cuDeviceGetCount = fakeDeviceGetCount;
  driver->cuDeviceGetAttribute = fakeDeviceGetAttribute;
  driver->cuDevicePrimaryCtxRetain = fakePrimaryCtxRetain;
  driver->cuCtxGetCurrent = fakeCtxGetCurrent;
  driver->cuCtxSetCurrent = fakeCtxSetCurrent;
  driver->cuCtxGetDevice = fakeCtxGetDevice;
  driver->cuCtxGetId = fakeCtxGetId;
  driver->cuModuleLoadDataEx = fakeModuleLoadDataEx;
  driver->cuModuleGetFunction = fakeModuleGetFunction;
  driver->cuFuncSetAttribute = fakeFuncSetAttribute;
  driver->cuLaunchKernel = fakeLaunchKernel;
  driver->cuPointerGetAttribute = fakePointerGetAttribute;
  driver->cuMemAllocAsync = fakeMemAllocAsync;
  driver->cuMemFreeAsync = fakeMemFreeAsync;
  driver->cuMemsetD32Async = fakeMemsetD32Async;
  if (fakeCuda().hasTensorMapEncode)
    driver->cuTensorMapEncodeTiled = fakeTensorMapEncodeTiled;
  if (fakeCuda().hasStreamIsCapturing)
    driver->cuStreamIsCapturing = fakeStreamIsCapturing;
  if (fakeCuda().hasLinker) {
    driver->cuLinkCreate = fakeLinkCreate;
    driver->cuLinkAddData = fakeLinkAddData;
    driver->cuLinkComplete = fakeLinkComplete;
    driver->cuLinkDestroy = fakeLinkDestroy;
  }
  return driver;
}

rt::EngineOptions oneKernelOptions() {
  rt::EngineOptions options;
  options.tiered = false;
  return options;
}

} // namespace attn::testing
