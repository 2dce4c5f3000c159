#!/usr/bin/env bash
# The backward's schedule experiments (issue 12, 1.5 x FA2 at D = 128, 8k):
# one script for the GPU machine, correctness first, then the speed of a
# new build against older ones, each in one process.
#
#   AB_OLD=LABEL=DIR[,LABEL=DIR...] bash tools/device/run_backward_ab.sh BUNDLE_DIR [OUT_DIR]
#
# BUNDLE_DIR is the new build (lib/libattn-jit.so); each AB_OLD directory an
# older one (its lib/libattn-jit.so), e.g. main=/tmp/main. Stages, each under
# a timeout, the whole run inside BUDGET_S seconds (default 540):
#   tests      tests/gpu/test_backward.py on the new build (every gradient
#              against float64 within 1.25 x torch's error, bitwise
#              determinism over 10 runs, masks, GQA, odd shapes, variants,
#              D = 64-256) and at the same time compute-sanitizer memcheck
#              and racecheck over test_backward.py --small --no-torch, up to
#              TESTS_S seconds (200)
#   ab LABEL   tools/device/bench_backward.py --old-lib LABEL's build, one
#              process, D = 64 and 128, N 2k and 8k (DIMS, SEQLENS), with
#              torch's FA2 and cuDNN backwards, up to AB_S seconds each (160)
# Files in OUT_DIR: run.log, sanitizer.log, ab-LABEL.jsonl.
# Exit status: 0 when every stage passed, 1 otherwise, 77 without a GPU.
source "$(dirname "${BASH_SOURCE[0]}")/run_common.sh" run_backward_ab.sh "$@"

t=$(left "${TESTS_S:-200}")
echo "=== [tests, memcheck, racecheck] in parallel, timeout ${t}s each"
pids=()
(ATTN_JIT_CACHE_DIR="$WORK/cache-tests" timeout -k 10 "$t" \
   "$PY" "$REPO/tests/gpu/test_backward.py" --lib "$LIB" > "$WORK/tests.out" 2>&1
 echo $? > "$WORK/tests.rc") &
pids+=($!)
if [[ -x "$CS" ]]; then
  for tool in memcheck racecheck; do
    start_sanitizer "$tool" "$t" \
      "$PY" "$REPO/tests/gpu/test_backward.py" --lib "$LIB" --small --no-torch
  done
else
  echo "=== [sanitizer] missing $CS"
  FAILED=1
fi
# Their pids only: a bare wait would also wait for the log's tee.
wait "${pids[@]}"
tail -25 "$WORK/tests.out"
stage test_backward "$(cat "$WORK/tests.rc")"
for tool in memcheck racecheck; do
  sanitizer_stage "$tool"
done

IFS=, read -r -a olds <<< "${AB_OLD:-}"
for old in "${olds[@]}"; do
  label=${old%%=*} dir=${old#*=}
  t=$(left "${AB_S:-160}")
  echo "=== [ab $label] old = $dir, new = $BUNDLE, timeout ${t}s"
  ATTN_JIT_CACHE_DIR="$WORK/cache-ab-$label" timeout -k 10 "$t" \
    "$PY" "$REPO/tools/device/bench_backward.py" --old-lib "$dir/lib/libattn-jit.so" \
    --dims "${DIMS:-64,128}" --seqlens "${SEQLENS:-2048,8192}" \
    --json "$OUT_DIR/ab-$label.jsonl" --time-limit $((t - 20))
  stage "ab $label" $?
done

rm -rf "$WORK"
echo "=== run_backward_ab.sh: $([[ $FAILED == 0 ]] && echo "all stages passed" || echo "some stage FAILED")"
exit $FAILED
