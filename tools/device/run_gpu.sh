#!/usr/bin/env bash
# The one script to run on the GPU machine; it builds nothing.
#
#   bash tools/device/run_gpu.sh BUNDLE_DIR [OUT_DIR]     (OUT_DIR defaults to $OUT)
#
# BUNDLE_DIR holds bin/ (attn-bench, attn-variants, optionally runtime_gpu_test)
# and lib/libattn-jit.so, as built on the development machine. Stages, each under
# a timeout, the whole run inside BUDGET_S seconds (default 530, under 9 minutes):
#   info        nvidia-smi
#   runtime     bin/runtime_gpu_test (if present)
#   correctness tests/gpu/test_attention.py, tests/gpu/test_fp8.py --quick (then
#               tests/gpu/test_fp8_package.py) and, in
#               parallel, compute-sanitizer
#               memcheck and racecheck over bin/attn-variants (every D x dtype x
#               mask kind on a small shape, as auto maps it, and again on
#               mma.sync at D = 32, 64, 96, 128, 256); correctness work only, so sharing
#               the GPU costs nothing but time
#   bench       bin/attn-bench over the FlashAttention-convention shapes, then
#               the mma.sync mapping (ATTN_JIT_TENSOR_CORES) at N = 2k, 8k
#   ab          only with OLD_BUNDLE=/path/to/old/bundle (then on by default):
#               tools/device/ab_bench.py times $OLD_BUNDLE/lib/libattn-jit.so and
#               this bundle's, and torch SDPA cuDNN/FA2, side by side in one process
#               (convention shapes, GQA prefill, decode), then again with
#               ATTN_JIT_TENSOR_CORES=mma.sync for D = 96, 128 at N = 2k, 8k. Its
#               JSON lines go into bench.jsonl with "tool":"ab_bench" (no file of
#               its own: make_report.py reads only "tool":"attn-bench" lines
#               there); the summary gets new/old median and min per invocation.
#               It takes what is left of BUDGET_S like every stage: for an A/B
#               run alone use STAGES="info ab" (about 1.5-2.5 minutes).
#   firstcall   attn-bench --first-call, empty cache dir, then the same dir again
#   anchors     tools/device/sdpa_anchors.py (torch SDPA cuDNN/FA2/math, ceilings)
#   report      tools/device/make_report.py -> BENCHMARKS-table.md, bench.png
# STAGES="..." picks stages (default: all, in that order); QUICK=1 runs the
# quick variants of the tests, benchmark and anchors.
# Files written to OUT (8 at most, flat): run.log (everything printed),
# sanitizer.log, tests.jsonl, bench.jsonl (attn-bench, and ab_bench's lines
# marked "tool":"ab_bench"), anchors.jsonl, BENCHMARKS-table.md, bench.png,
# summary.txt. The summary is printed last.
# Exit status: 0 when every stage that ran passed, 1 otherwise, 77 without a GPU.
set -u -o pipefail
export PYTHONUNBUFFERED=1

BUNDLE=${1:?usage: run_gpu.sh BUNDLE_DIR [OUT_DIR]}
OUT_DIR=${2:-${OUT:?set OUT or pass OUT_DIR}}
BUNDLE=$(cd "$BUNDLE" && pwd) || exit 2
mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OLD_BUNDLE=${OLD_BUNDLE:-}
if [[ -n "$OLD_BUNDLE" ]]; then
  STAGES=${STAGES:-info runtime correctness bench ab firstcall anchors report}
else
  STAGES=${STAGES:-info runtime correctness bench firstcall anchors report}
fi
BUDGET_S=${BUDGET_S:-530}
QUICK_ARGS=()
[[ "${QUICK:-0}" == 1 ]] && QUICK_ARGS=(--quick)
START=$(date +%s)
DEADLINE=$((START + BUDGET_S))
WORK=$(mktemp -d /tmp/attn-gpu-run-XXXXXX)
SUMMARY=()
FAILED=0
PY=${PYTHON:-python3}
CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}

# No LD_LIBRARY_PATH: the bundle's programs find lib/ through their RUNPATH
# ($ORIGIN/../lib) and attn-bench finds cuBLAS in /usr/local/cuda/lib64 itself,
# while a global path to /usr/local/cuda/lib64 could make torch load that
# cuBLAS instead of its own.
export ATTN_JIT_LIB="$BUNDLE/lib/libattn-jit.so"

want() { [[ " $STAGES " == *" $1 "* ]]; }

# Seconds a stage may take: its cap, clamped to what is left of the budget.
stage_limit() {
  local cap=$1 left=$((DEADLINE - $(date +%s) - 10))
  ((left < cap)) && cap=$left
  echo "$cap"
}

# record NAME STATUS SECONDS NOTE
record() {
  SUMMARY+=("$(printf '%-15s %-13s %5s  %s' "$1" "$2" "$3" "$4")")
  # "skipped": not asked for or nothing to run; a program's own SKIP (77) on
  # the GPU machine means it could not test (no torch, no device): a failure.
  [[ "$2" == ok || "$2" == skipped ]] || FAILED=1
}

status_of() {  # rc -> word
  case "$1" in
    0) echo ok ;;
    77) echo "skipped(77)" ;;
    124 | 137) echo TIMEOUT ;;
    *) echo "FAILED(rc=$1)" ;;
  esac
}

# run_stage NAME CAP CMD...: runs CMD under a timeout, output to the log and
# to $WORK/NAME.out; records status and the last line of output.
run_stage() {
  local name=$1 cap=$2
  shift 2
  local t
  t=$(stage_limit "$cap")
  if ((t < 15)); then
    record "$name" "skipped" 0 "time budget spent"
    return
  fi
  echo
  echo "=== [$name] timeout ${t}s: $*"
  local t0=$SECONDS
  timeout -k 10 "$t" "$@" 2>&1 | tee "$WORK/$name.out"
  local rc=${PIPESTATUS[0]}
  record "$name" "$(status_of "$rc")" $((SECONDS - t0)) "$("${NOTE_FN:-last_line}" "$WORK/$name.out" | cut -c1-90)"
}

# Notes for the summary, from a stage's output file.
last_line() { grep -v '^\s*$' "$1" | tail -n 1; }
bench_note() {
  echo "$(grep -c '^{"tool":"attn-bench"' "$1") configs measured;" \
    "attn-jit not ok on $(grep -c '^attn-jit D=' "$1")"
}
ab_note() {
  local l
  l=$(grep '^ab summary' "$1" | tail -n 1 | sed 's/^ab summary //')
  [[ -n "$l" ]] && echo "$l" || last_line "$1"
}
firstcall_note() { grep -oE '"(first_call_ms|compiles|disk_hits)":[0-9.]+' "$1" | head -n 3 | tr '\n' ' '; }

main() {
  echo "# run_gpu.sh: bundle $BUNDLE, out $OUT_DIR, repo $REPO, stages: $STAGES, budget ${BUDGET_S}s"
  if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > /dev/null 2>&1; then
    echo "SKIP: no NVIDIA GPU visible (nvidia-smi)"
    return 77
  fi
  for f in "$ATTN_JIT_LIB" "$BUNDLE/bin/attn-bench" "$BUNDLE/bin/attn-variants"; do
    [[ -e "$f" ]] || echo "warning: $f missing from the bundle"
  done

  if want info; then
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,persistence_mode,compute_mode --format=csv
    record info ok 0 "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | head -n 1)"
  fi

  if want runtime; then
    if [[ -x "$BUNDLE/bin/runtime_gpu_test" ]]; then
      ATTN_JIT_CACHE_DIR="$WORK/cache-runtime" run_stage runtime 60 "$BUNDLE/bin/runtime_gpu_test" "${QUICK_ARGS[@]}"
    else
      record runtime skipped 0 "no bin/runtime_gpu_test in the bundle"
    fi
  fi

  if want correctness; then
    local t
    t=$(stage_limit 200)   # 160 s before the GQA sweep (~100 cases, +20-40 s)
    if ((t < 30)); then
      record correctness skipped 0 "time budget spent"
    else
      echo
      echo "=== [correctness] timeout ${t}s: test_attention.py || memcheck || racecheck"
      local t0=$SECONDS
      # Each job has its own kernel cache directory: they run at the same time.
      (ATTN_JIT_CACHE_DIR="$WORK/cache-tests" timeout -k 10 "$t" "$PY" "$REPO/tests/gpu/test_attention.py" \
        --lib "$ATTN_JIT_LIB" --json "$OUT_DIR/tests.jsonl" --time-limit $((t - 25)) "${QUICK_ARGS[@]}" \
        > "$WORK/tests.out" 2>&1; echo $? > "$WORK/tests.rc") &
      # The FP8 forward (attn_forward_fp8; needs torch's float8_e4m3fn), then
      # the package's call of it (attn_jit.attention_fp8).
      (export ATTN_JIT_CACHE_DIR="$WORK/cache-fp8"
       timeout -k 10 "$t" "$PY" "$REPO/tests/gpu/test_fp8.py" --lib "$ATTN_JIT_LIB" --quick \
         > "$WORK/fp8.out" 2>&1 &&
       PYTHONPATH="$BUNDLE/python${PYTHONPATH:+:$PYTHONPATH}" timeout -k 10 "$t" "$PY" \
         "$REPO/tests/gpu/test_fp8_package.py" >> "$WORK/fp8.out" 2>&1
       echo $? > "$WORK/fp8.rc") &
      local san_ok=1
      if [[ -x "$CS" && -x "$BUNDLE/bin/attn-variants" ]]; then
        # Every variant as the runtime picks it (wgmma on sm_90a for every
        # multiple of 16), then the mma.sync mapping (sm_80's, and the
        # ATTN_JIT_TENSOR_CORES=mma.sync fallback) of the usual head dims.
        for tool in memcheck racecheck; do
          (export ATTN_JIT_CACHE_DIR="$WORK/cache-$tool"
           timeout -k 10 "$t" "$CS" --tool "$tool" --error-exitcode 99 \
             --print-limit 50 "$BUNDLE/bin/attn-variants" --b 1 --h 2 > "$WORK/$tool.out" 2>&1 &&
           ATTN_JIT_TENSOR_CORES=mma.sync timeout -k 10 "$t" "$CS" --tool "$tool" --error-exitcode 99 \
             --print-limit 50 "$BUNDLE/bin/attn-variants" --b 1 --h 2 --d 32,64,96,128,256 >> "$WORK/$tool.out" 2>&1
           echo $? > "$WORK/$tool.rc") &
        done
      else
        san_ok=0
      fi
      wait
      local secs=$((SECONDS - t0)) rc
      cat "$WORK/tests.out"
      rc=$(cat "$WORK/tests.rc" 2> /dev/null || echo 1)
      record tests "$(status_of "$rc")" "$secs" "$(grep -E '^([0-9]+ passed|SKIP|error)' "$WORK/tests.out" | tail -n 1 | cut -c1-90)"
      cat "$WORK/fp8.out"
      rc=$(cat "$WORK/fp8.rc" 2> /dev/null || echo 1)
      record fp8 "$(status_of "$rc")" "$secs" "$(grep -E '^([0-9]+/[0-9]+ passed|all passed|[0-9]+ failed|SKIP|error)' "$WORK/fp8.out" | tr '\n' ' ' | cut -c1-90)"
      if ((san_ok)); then
        : > "$OUT_DIR/sanitizer.log"
        for tool in memcheck racecheck; do
          { echo "=== compute-sanitizer --tool $tool"; cat "$WORK/$tool.out"; } >> "$OUT_DIR/sanitizer.log"
          echo "--- $tool (full output in sanitizer.log), last lines:"
          tail -n 6 "$WORK/$tool.out"
          rc=$(cat "$WORK/$tool.rc" 2> /dev/null || echo 1)
          record "$tool" "$(status_of "$rc")" "$secs" "$(grep -E 'SUMMARY|passed,' "$WORK/$tool.out" | tr '\n' ' ' | sed 's/=========//g' | cut -c1-90)"
        done
      else
        record sanitizer FAILED 0 "missing $CS or bin/attn-variants"
      fi
    fi
  fi

  if want bench; then
    NOTE_FN=bench_note run_stage bench 130 "$BUNDLE/bin/attn-bench" --fresh-cache --json "$OUT_DIR/bench.jsonl" "${QUICK_ARGS[@]}"
    # The mma.sync mapping on the same machine, for the history in docs/.
    ATTN_JIT_TENSOR_CORES=mma.sync NOTE_FN=bench_note run_stage bench-mma.sync 60 "$BUNDLE/bin/attn-bench" \
      --fresh-cache --no-unfused --d 64,128,256 --n 2k,8k --reps 20
  fi

  if want ab; then
    if [[ -z "$OLD_BUNDLE" ]]; then
      record ab skipped 0 "OLD_BUNDLE not set"
    elif [[ ! -e "$OLD_BUNDLE/lib/libattn-jit.so" ]]; then
      record ab FAILED 0 "missing $OLD_BUNDLE/lib/libattn-jit.so"
    else
      local old_lib t tl ab_args=() mma_args=()
      old_lib=$(cd "$OLD_BUNDLE/lib" && pwd)/libattn-jit.so
      if [[ "${QUICK:-0}" == 1 ]]; then
        ab_args=(--d 128 --n "2048,8192" --reps 10)
        mma_args=(--reps 10)
      fi
      # --time-limit: ab_bench stops starting shapes in time to print its table.
      t=$(stage_limit 240)
      tl=$((t > 45 ? t - 30 : 15))
      ATTN_JIT_CACHE_DIR="$WORK/cache-ab" NOTE_FN=ab_note run_stage ab 240 "$PY" "$REPO/tools/device/ab_bench.py" \
        --old "$old_lib" --new "$ATTN_JIT_LIB" --json "$OUT_DIR/bench.jsonl" --time-limit "$tl" "${ab_args[@]}"
      t=$(stage_limit 90)
      tl=$((t > 45 ? t - 30 : 15))
      ATTN_JIT_TENSOR_CORES=mma.sync ATTN_JIT_CACHE_DIR="$WORK/cache-ab" NOTE_FN=ab_note run_stage ab-mma.sync 90 \
        "$PY" "$REPO/tools/device/ab_bench.py" --old "$old_lib" --new "$ATTN_JIT_LIB" --json "$OUT_DIR/bench.jsonl" \
        --shapes conv --d 96,128 --n 2048,8192 --causal 0,1 --time-limit "$tl" "${mma_args[@]}"
    fi
  fi

  if want firstcall; then
    local fc="$WORK/firstcall-cache"
    mkdir -p "$fc"
    local NOTE_FN=firstcall_note
    run_stage firstcall-cold 25 "$BUNDLE/bin/attn-bench" --first-call --d 128 --n 4096 --causal 1 \
      --cache-dir "$fc" --json "$OUT_DIR/bench.jsonl"
    run_stage firstcall-warm 25 "$BUNDLE/bin/attn-bench" --first-call --d 128 --n 4096 --causal 1 \
      --cache-dir "$fc" --json "$OUT_DIR/bench.jsonl"
    unset NOTE_FN
  fi

  if want anchors; then
    run_stage anchors 100 "$PY" "$REPO/tools/device/sdpa_anchors.py" --json "$OUT_DIR/anchors.jsonl" "${QUICK_ARGS[@]}"
  fi

  if want report; then
    run_stage report 20 "$PY" "$REPO/tools/device/make_report.py" --bench "$OUT_DIR/bench.jsonl" \
      --anchors "$OUT_DIR/anchors.jsonl" --md "$OUT_DIR/BENCHMARKS-table.md" --png "$OUT_DIR/bench.png" \
      --compact "$WORK/compact.txt"
  fi

  {
    echo
    echo "=== summary ($(($(date +%s) - START))s of ${BUDGET_S}s) ==="
    printf '%-15s %-13s %5s  %s\n' stage status secs note
    printf '%s\n' "${SUMMARY[@]}"
    [[ -s "$WORK/compact.txt" ]] && { echo; cat "$WORK/compact.txt"; }
    for f in "$WORK/ab.out" "$WORK/ab-mma.sync.out"; do
      [[ -s "$f" ]] && grep -h -E '^(new/old over|ab summary)' "$f"
    done
    grep -h '^FAIL' "$WORK/tests.out" 2> /dev/null | head -n 15 | cut -c1-200
    echo "overall: $([[ $FAILED == 0 ]] && echo PASS || echo FAIL)"
  } | tee "$OUT_DIR/summary.txt"
  return "$FAILED"
}

main 2>&1 | tee "$OUT_DIR/run.log"
rc=${PIPESTATUS[0]}
rm -rf "$WORK"
exit "$rc"
