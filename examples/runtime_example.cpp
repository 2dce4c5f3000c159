//===- runtime_example.cpp - calling attn-jit from C++ --------------------===//
//
// Causal attention on the GPU when one is present, else on the CPU, through
// the C++ API. The first call for a configuration compiles the kernel (and
// stores it in the disk cache); the second call with other sequence lengths
// reuses it: sequence lengths are launch arguments, not part of the kernel.
//
//   build/bin/runtime-example
//
//===----------------------------------------------------------------------===//

#include "attn-jit/Runtime.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int64_t batch = 1, heads = 2, dim = 64;
  for (int64_t seqlen : {100, 300}) {
    // Host buffers: this example runs on the host device so that it needs no
    // CUDA allocation code; with device pointers set args.device to
    // ATTN_DEVICE_CUDA (and args.stream to a CUstream if you have one).
    size_t n = size_t(batch * heads * seqlen * dim);
    std::vector<float> q(n), k(n), v(n), o(n), lse(size_t(batch * heads * seqlen));
    for (size_t i = 0; i < n; ++i) {
      q[i] = std::sin(0.1f * float(i));
      k[i] = std::cos(0.07f * float(i));
      v[i] = float(i % 7) - 3.0f;
    }
    attn_fwd_args args = attn::makeForwardArgs(
        attn::Layout::BHND, q.data(), k.data(), v.data(), o.data(), lse.data(),
        batch, heads, seqlen, seqlen, dim, ATTN_DTYPE_F32, ATTN_DEVICE_HOST);
    args.mask = ATTN_MASK_CAUSAL;
    attn::Status status = attn::forward(args);
    if (!status.ok()) {
      std::fprintf(stderr, "attn-jit: %s\n", status.toString().c_str());
      return 1;
    }
    // Row 0 sees only key 0, so O[0] = V[0].
    std::printf("seqlen %lld: O[0][0] = %g (V[0][0] = %g), LSE[0] = %g\n",
                (long long)seqlen, o[0], v[0], lse[0]);
  }
  attn::Expected<attn_stats> stats = attn::getStats();
  if (stats)
    std::printf("compiles: %llu, in-memory hits: %llu\n",
                (unsigned long long)stats->compiles,
                (unsigned long long)stats->memory_hits);
  return 0;
}
