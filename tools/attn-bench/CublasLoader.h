//===- CublasLoader.h - the few cuBLAS entry points attn-bench uses -------===//
//
// Loaded with dlopen so attn-bench builds without cuBLAS and still runs (the
// baseline is then reported as skipped). The enum values below are cuBLAS's
// and CUDA's ABI (library_types.h, cublas_api.h of CUDA 13); they are spelled
// out so no cuBLAS header is needed at build time.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_TOOLS_CUBLAS_LOADER_H
#define ATTN_JIT_TOOLS_CUBLAS_LOADER_H

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace attn_tools {

enum : int { kCudaR32F = 0, kCudaR16F = 2, kCudaR16BF = 14 };     // cudaDataType
enum : int { kCublasOpN = 0, kCublasOpT = 1 };                     // cublasOperation_t
enum : int { kCublasCompute32F = 68 };                             // cublasComputeType_t
enum : int { kCublasGemmDefault = -1 };                            // cublasGemmAlgo_t

struct Cublas {
  using CreateFn = int (*)(void **);
  using DestroyFn = int (*)(void *);
  using SetStreamFn = int (*)(void *, CUstream);
  using GemmStridedBatchedExFn = int (*)(
      void *handle, int transa, int transb, int m, int n, int k,
      const void *alpha, const void *A, int Atype, int lda, long long strideA,
      const void *B, int Btype, int ldb, long long strideB, const void *beta,
      void *C, int Ctype, int ldc, long long strideC, int batchCount,
      int computeType, int algo);

  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  SetStreamFn set_stream = nullptr;
  GemmStridedBatchedExFn gemm = nullptr;
  void *handle = nullptr;
  std::string error;

  // Tries $ATTN_CUBLAS_DIR, the loader's search path, then /usr/local/cuda.
  // libcublasLt is loaded first (RTLD_GLOBAL) so libcublas finds it even
  // when loaded by full path from a directory not on the search path.
  bool load() {
    std::string dirs[3] = {getenv("ATTN_CUBLAS_DIR") ? std::string(getenv("ATTN_CUBLAS_DIR")) + "/" : "",
                           "", "/usr/local/cuda/lib64/"};
    void *lib = nullptr;
    for (const std::string &d : dirs) {
      if (&d == &dirs[0] && d.empty()) continue;
      dlopen((d + "libcublasLt.so.13").c_str(), RTLD_NOW | RTLD_GLOBAL);
      lib = dlopen((d + "libcublas.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
    }
    if (!lib) { error = std::string("cannot load libcublas.so.13: ") + dlerror(); return false; }
    create = reinterpret_cast<CreateFn>(dlsym(lib, "cublasCreate_v2"));
    destroy = reinterpret_cast<DestroyFn>(dlsym(lib, "cublasDestroy_v2"));
    set_stream = reinterpret_cast<SetStreamFn>(dlsym(lib, "cublasSetStream_v2"));
    gemm = reinterpret_cast<GemmStridedBatchedExFn>(dlsym(lib, "cublasGemmStridedBatchedEx"));
    if (!create || !destroy || !set_stream || !gemm) { error = "libcublas lacks a needed symbol"; return false; }
    int st = create(&handle);
    if (st != 0) { error = "cublasCreate failed: " + std::to_string(st); return false; }
    return true;
  }
};

} // namespace attn_tools

#endif // ATTN_JIT_TOOLS_CUBLAS_LOADER_H
