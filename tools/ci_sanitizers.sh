#!/usr/bin/env bash
# CI's sanitizer and fuzzing jobs, run by .ci/run after tools/test.sh; each
# builds with clang (tools/setup.sh installs it) in a build directory of its
# own, only the targets its tests need, and stops at the first report:
#  1. build-asan (ASan + UBSan): the runtime's units and RecoverFatalErrors'
#     tests, the compiler's units and the lit suite (whose CHECK lines also
#     catch IR whose order follows the host compiler: docs/testing.md), then
#     the compiler on every input of attn-opt-fuzzer, linked with libFuzzer,
#     ATTN_FUZZ_RUNS inputs (1000, seed 1: reproducible) within at most
#     ATTN_FUZZ_SECONDS (300) from the seed corpus: every .mlir under tests/
#     and examples/.
#  2. build-tsan (TSan): the runtime's units, its concurrency tests among
#     them (single-flight, processes sharing the disk cache, engine threads),
#     and the compiler's concurrent recovered compiles (RecoverFatalErrors).
# A finding of the fuzzer is left in build-asan/fuzz/ (crash-*, timeout-*,
# oom-*): replay it with `build/bin/attn-opt-fuzzer <file>`, and make it a
# lit test once fixed (docs/testing.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
llvm=/usr/lib/llvm-22
fuzz_seconds=${ATTN_FUZZ_SECONDS:-300}
fuzz_runs=${ATTN_FUZZ_RUNS:-1000}

# Stop at the first report, with its stack; a leak is a report too.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its free space when
# compiled with ASan, and our instrumented copy of its inline code shares the
# allocators of the uninstrumented MLIR, which never unpoisons it: every
# MLIRContext would be a use-after-poison.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:allow_user_poisoning=0
export LSAN_OPTIONS=suppressions=$root/tools/lsan-suppressions.txt:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:abort_on_error=1:second_deadlock_stack=1

configure() { # <build dir> <cmake options...>
  local dir=$1
  shift
  [[ -f $dir/build.ninja ]] && return
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=$llvm/bin/clang -DCMAKE_CXX_COMPILER=$llvm/bin/clang++ \
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
    -DLLVM_USE_LINKER=lld -DLLVM_EXTERNAL_LIT=$llvm/bin/lit "$@"
}
step() { echo "== ci_sanitizers: $*"; }

"$root/tools/setup.sh" --sanitizers

runtime_units=(attn-runtime-tests attn-runtime-capi-tests attn-recover-fatal-errors-tests)
compiler_units=(attn-compiler-tests attn-compile-ptx-tests attn-ptx-target-tests
                attn-host-threads-tests attn-host-libcalls-tests)

step "ASan + UBSan build"
asan=$root/build-asan
configure "$asan" -DATTN_SANITIZER=address,undefined -DATTN_LIBFUZZER=ON
ninja -C "$asan" attn-opt-fuzzer "${runtime_units[@]}" "${compiler_units[@]}"
step "ASan + UBSan: the runtime's units and recovered compiles"
for unit in "${runtime_units[@]}"; do
  "$asan/bin/$unit"
done
step "ASan + UBSan: the compiler's units"
for unit in "${compiler_units[@]}"; do
  ATTN_JIT_DISK_CACHE=0 "$asan/bin/$unit"
done
step "ASan + UBSan: the lit suite (check-attn builds the tools it runs)"
ninja -C "$asan" check-attn

step "attn-opt-fuzzer: ${fuzz_runs} inputs of libFuzzer (at most ${fuzz_seconds} s)"
seeds=$asan/fuzz/seeds
rm -rf "$seeds" && mkdir -p "$seeds" "$asan/fuzz/corpus"
# One file per test, named after its path.
(cd "$root" && find tests examples -name '*.mlir' | while read -r f; do
   cp "$f" "$seeds/${f//\//_}"
 done)
# A dictionary of the seeds' op names and attribute keys, so that mutations
# insert whole words of the dialects.
grep -hv '^[[:space:]]*//' "$seeds"/* |
  grep -oE '\b[a-z_]+\.[a-z_.]+\b|\b[a-z_]+ = ' | sort -u |
  sed 's/.*/"&"/' > "$asan/fuzz/attn.dict"
# A fixed seed and a bounded number of inputs: the same build fuzzes the
# same inputs on every machine, so a CI result can be replayed exactly;
# max_total_time only caps a slow machine.
"$asan/bin/attn-opt-fuzzer" "$asan/fuzz/corpus" "$seeds" \
  -dict="$asan/fuzz/attn.dict" -seed=1 -runs="$fuzz_runs" \
  -max_total_time="$fuzz_seconds" -timeout=300 -rss_limit_mb=6144 \
  -artifact_prefix="$asan/fuzz/" -print_final_stats=1

step "TSan build"
tsan=$root/build-tsan
configure "$tsan" -DATTN_SANITIZER=thread
ninja -C "$tsan" "${runtime_units[@]}"
step "TSan: the runtime's units and concurrent recovered compiles"
"$tsan/bin/attn-runtime-tests"
"$tsan/bin/attn-runtime-capi-tests"
# Not AbortIsAFailure: leaving a signal handler by longjmp (how LLVM's
# CrashRecoveryContext recovers a crash) is, to TSan, the handler's code
# still running: a "signal-unsafe call inside of a signal". ASan runs it.
"$tsan/bin/attn-recover-fatal-errors-tests" \
  --gtest_filter=-RecoverFatalErrorsTest.AbortIsAFailure
step "all sanitizer and fuzzing jobs passed"
