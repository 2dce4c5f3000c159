#!/usr/bin/env bash
# TMA K/V loads in the Hopper forward (issue 16): one script for the GPU
# machine, correctness first, then the speed of TMA against cp.async.
#
#   bash tools/device/run_tma.sh BUNDLE_DIR [OUT_DIR]     (OUT_DIR defaults to $OUT)
#
# BUNDLE_DIR holds lib/libattn-jit.so and bin/attn-variants, built on the
# development machine from the tma branch. Stages, each under a timeout, the
# whole run inside BUDGET_S seconds (default 540):
#   tests      tests/gpu/test_attention.py with ATTN_JIT_TMA=1 (every head dim,
#              dtype, mask, GQA, odd lengths: the wgmma kernels take TMA where
#              the layout allows, the rest keeps cp.async), and at the same
#              time compute-sanitizer memcheck and racecheck over
#              bin/attn-variants with ATTN_JIT_TMA=1 (every D x dtype x mask
#              kind on a small shape), up to TESTS_S seconds (200; TESTS_ARGS
#              adds test_attention.py options, e.g. --quick)
#   ab         tools/device/ab_bench.py: the same library twice in one process,
#              "old" = TMA off (cp.async), "new" = ATTN_JIT_TMA=1, with torch
#              SDPA's cuDNN and FA2, on the FlashAttention convention shapes
#              (D 64/128/256, N 1k-16k, causal and not) and the GQA prefill
# Files in OUT_DIR: run.log, tests.jsonl, sanitizer.log, ab.jsonl.
# Exit status: 0 when every stage passed, 1 otherwise, 77 without a GPU.
source "$(dirname "${BASH_SOURCE[0]}")/run_common.sh" run_tma.sh "$@"

# Correctness work only, so the three share the GPU (as run_gpu.sh's
# correctness stage does); each with its own kernel cache.
t=$(left "${TESTS_S:-200}")
echo "=== [tests, memcheck, racecheck] ATTN_JIT_TMA=1, in parallel, timeout ${t}s each"
pids=()
(ATTN_JIT_TMA=1 ATTN_JIT_CACHE_DIR="$WORK/cache-tests" timeout -k 10 "$t" \
   "$PY" "$REPO/tests/gpu/test_attention.py" --lib "$LIB" ${TESTS_ARGS:-} \
   --json "$OUT_DIR/tests.jsonl" --time-limit $((t - 25)) > "$WORK/tests.out" 2>&1
 echo $? > "$WORK/tests.rc") &
pids+=($!)
if [[ -x "$CS" && -x "$BUNDLE/bin/attn-variants" ]]; then
  for tool in memcheck racecheck; do
    ATTN_JIT_TMA=1 start_sanitizer "$tool" "$t" "$BUNDLE/bin/attn-variants" --b 1 --h 2
  done
else
  echo "=== [sanitizer] missing $CS or $BUNDLE/bin/attn-variants"
  FAILED=1
fi
# Their pids only: a bare wait would also wait for the log's tee.
wait "${pids[@]}"
tail -15 "$WORK/tests.out"
stage tests "$(cat "$WORK/tests.rc")"
for tool in memcheck racecheck; do
  sanitizer_stage "$tool" "ATTN_JIT_TMA=1"
done

# One library, two files: a path loads once per process.
cp "$LIB" "$WORK/libattn-jit-cp-async.so"
t=$(left 320)
echo "=== [ab] old = cp.async (ATTN_JIT_TMA=0), new = TMA (ATTN_JIT_TMA=1), timeout ${t}s"
ATTN_JIT_CACHE_DIR="$WORK/cache-ab" timeout -k 10 "$t" \
  "$PY" "$REPO/tools/device/ab_bench.py" \
  --old "$WORK/libattn-jit-cp-async.so" --old-env ATTN_JIT_TMA=0 \
  --new "$LIB" --new-env ATTN_JIT_TMA=1 \
  --shapes conv,gqa --json "$OUT_DIR/ab.jsonl" --time-limit $((t - 30))
stage ab $?

rm -rf "$WORK"
echo "=== run_tma.sh: $([[ $FAILED == 0 ]] && echo "all stages passed" || echo "some stage FAILED")"
exit $FAILED
