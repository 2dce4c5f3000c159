// Row softmax of the unfused attention baseline: S (f32, rows of length nk,
// contiguous) -> P (bf16 or f16, same layout), with the causal masks applied.
// Compiled to PTX at build time (nvcc -ptx) and embedded in attn-bench, which
// loads it with cuModuleLoadData; it needs no CUDA runtime.
//
// One 256-thread block per row. Pass 1 keeps a running (max, sum) per thread
// and merges them across the block; pass 2 re-reads the row (usually from L2)
// and writes P = exp(s - max) / sum, zero where masked. Fully masked rows get
// P = 0, so O = P V = 0 as attn-jit's semantics require.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

constexpr int kThreads = 256;

struct MaxSum {
  float m, l;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f}; // both empty: avoid exp(-inf + inf)
  return {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
}

__device__ __forceinline__ void store(__nv_bfloat16 *p, float x) { *p = __float2bfloat16_rn(x); }
__device__ __forceinline__ void store(__half *p, float x) { *p = __float2half_rn(x); }

// mask: 0 none; otherwise key j is visible from query row i iff
// j <= i + diag_offset (0 for top-left causal, nk - nq for bottom-right).
template <class T>
__device__ void softmax_row(const float *__restrict__ S, T *__restrict__ P,
                            long long nq, long long nk, int mask,
                            long long diag_offset) {
  const long long row = blockIdx.x;
  const float *s = S + row * nk;
  T *p = P + row * nk;
  long long limit = nk; // keys j < limit are visible
  if (mask) {
    long long last = row % nq + diag_offset;
    limit = last < 0 ? 0 : (last + 1 < nk ? last + 1 : nk);
  }

  MaxSum t{-INFINITY, 0.f};
  for (long long j = threadIdx.x; j < limit; j += kThreads) {
    float x = s[j];
    float m = fmaxf(t.m, x);
    t.l = t.l * expf(t.m - m) + expf(x - m);
    t.m = m;
  }
  for (int off = 16; off > 0; off >>= 1) {
    MaxSum o{__shfl_xor_sync(0xffffffffu, t.m, off), __shfl_xor_sync(0xffffffffu, t.l, off)};
    t = merge(t, o);
  }
  __shared__ MaxSum warp_part[kThreads / 32];
  __shared__ MaxSum total;
  if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x / 32] = t;
  __syncthreads();
  if (threadIdx.x == 0) {
    MaxSum r = warp_part[0];
    for (int w = 1; w < kThreads / 32; ++w) r = merge(r, warp_part[w]);
    total = r;
  }
  __syncthreads();
  const float m = total.m;
  const float inv = total.l > 0.f ? 1.f / total.l : 0.f;
  for (long long j = threadIdx.x; j < nk; j += kThreads)
    store(p + j, j < limit ? expf(s[j] - m) * inv : 0.f);
}

} // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
row_softmax_bf16(const float *S, __nv_bfloat16 *P, long long nq, long long nk,
                 int mask, long long diag_offset) {
  softmax_row(S, P, nq, nk, mask, diag_offset);
}

extern "C" __global__ void __launch_bounds__(kThreads)
row_softmax_f16(const float *S, __half *P, long long nq, long long nk,
                int mask, long long diag_offset) {
  softmax_row(S, P, nq, nk, mask, diag_offset);
}
