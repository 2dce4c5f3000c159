#!/usr/bin/env bash
# Tiered first calls (ATTN_JIT_TIERED=1, issue 11's first call <= 300 ms):
# one script for the GPU machine, correctness first, then the first calls.
#
#   bash tools/device/run_tiered.sh BUNDLE_DIR [OUT_DIR]     (OUT_DIR defaults to $OUT)
#
# BUNDLE_DIR holds lib/libattn-jit.so and bin/attn-variants. Stages, each
# under a timeout, the whole run inside BUDGET_S seconds (default 540):
#   tests      with ATTN_JIT_TIERED=1 and an empty kernel cache, so that
#              each configuration's first call runs its quick kernel
#              (mma.sync, 64 x 16 tiles): tests/gpu/test_attention.py
#              --quick and tests/gpu/test_variants.py --quick --no-extras,
#              and at the same time compute-sanitizer memcheck over
#              bin/attn-variants (up to TESTS_S seconds, 240)
#   firstcall  tools/device/bench_firstcall.py --tiered: per configuration,
#              fresh processes, CUDA_CACHE_DISABLE=1: the default first
#              call and the tiered one, the quick kernel's time, when the
#              default kernel is loaded, |O quick - O default|
# Files in OUT_DIR: run.log, tests.jsonl, sanitizer.log, firstcall.jsonl.
# Exit status: 0 when every stage passed, 1 otherwise, 77 without a GPU.
source "$(dirname "${BASH_SOURCE[0]}")/run_common.sh" run_tiered.sh "$@"

t=$(left "${TESTS_S:-240}")
echo "=== [tests, memcheck] ATTN_JIT_TIERED=1, empty caches, in parallel, timeout ${t}s each"
pids=()
(export ATTN_JIT_TIERED=1 ATTN_JIT_CACHE_DIR="$WORK/cache-tests"
 timeout -k 10 "$t" "$PY" "$REPO/tests/gpu/test_attention.py" --lib "$LIB" --quick \
   --json "$OUT_DIR/tests.jsonl" --time-limit $((t / 2 - 15)) > "$WORK/attention.out" 2>&1
 echo $? > "$WORK/attention.rc"
 ATTN_JIT_CACHE_DIR="$WORK/cache-variants" timeout -k 10 "$((t / 2))" \
   "$PY" "$REPO/tests/gpu/test_variants.py" --quick --no-extras \
   --time-limit $((t / 2 - 15)) > "$WORK/variants.out" 2>&1
 echo $? > "$WORK/variants.rc") &
pids+=($!)
if [[ -x "$CS" && -x "$BUNDLE/bin/attn-variants" ]]; then
  ATTN_JIT_TIERED=1 start_sanitizer memcheck "$t" "$BUNDLE/bin/attn-variants" --b 1 --h 2
else
  echo "=== [memcheck] missing $CS or $BUNDLE/bin/attn-variants"
  FAILED=1
fi
wait "${pids[@]}"
for name in attention variants; do
  tail -12 "$WORK/$name.out"
  stage "test_$name (tiered)" "$(cat "$WORK/$name.rc" 2> /dev/null || echo 1)"
done
sanitizer_stage memcheck ATTN_JIT_TIERED=1

t=$(left 280)
echo "=== [firstcall] bench_firstcall.py --tiered, timeout ${t}s"
timeout -k 10 "$t" "$PY" "$REPO/tools/device/bench_firstcall.py" --lib "$LIB" --tiered \
  --configs "${CONFIGS:-d128-causal,d128-softcap,d128-alibi,d64-causal}" --reps 2 \
  --jit-levels "" --no-ptxas --json "$OUT_DIR/firstcall.jsonl"
stage firstcall $?

rm -rf "$WORK"
echo "=== run_tiered.sh: $([[ $FAILED == 0 ]] && echo "all stages passed" || echo "some stage FAILED")"
exit $FAILED
