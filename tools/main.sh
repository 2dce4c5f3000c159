#!/usr/bin/env bash
# The main job: build attn-jit, compile examples/attention.mlir to PTX with
# attn-opt (and assemble it with ptxas when present), then run attention
# through the runtime and check it against a float64 reference: on the GPU
# when there is one, otherwise on the CPU (it says which).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
"$root/tools/build.sh" attn-opt attn-run

echo "== attn-opt: examples/attention.mlir -> PTX (sm_90a)"
"$build/bin/attn-opt" "$root/examples/attention.mlir" \
  --attn-to-ptx="ptx-file=$build/attention.ptx" -o /dev/null
# grep -c exits 1 on a count of 0: count without failing the job.
count() { grep -c "$1" "$build/attention.ptx" || true; }
echo "   tensor-core instructions: $(count wgmma.mma_async) wgmma.mma_async, $(count mma.sync.aligned) mma.sync"
if [[ -x /usr/local/cuda/bin/ptxas ]]; then
  /usr/local/cuda/bin/ptxas -arch=sm_90a -v "$build/attention.ptx" \
    -o "$build/attention.cubin" 2>&1 | grep -E "registers|spill" | sed 's/^/   ptxas: /'
else
  echo "   (no ptxas: skipped assembling the PTX)"
fi

echo "== attn-run: attention through the runtime, checked against float64"
"$build/bin/attn-run" --device auto --dtype bf16 --mask causal \
  --b 2 --h 8 --nq 1000 --nk 1000 --d 128
