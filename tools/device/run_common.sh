# Sourced by the one-purpose device scripts (run_tma.sh, run_tiered.sh):
#   source "$(dirname "${BASH_SOURCE[0]}")/run_common.sh" NAME "$@"
# takes their arguments (BUNDLE_DIR [OUT_DIR], OUT_DIR defaulting to $OUT),
# sets BUNDLE, OUT_DIR, REPO, PY, CS (compute-sanitizer), LIB (exported as
# ATTN_JIT_LIB), BUDGET_S (default 540), DEADLINE, WORK (a temporary
# directory) and FAILED, sends everything printed to OUT_DIR/run.log too,
# exits 77 without a GPU and 2 without the library, and defines
#   left CAP      seconds for a stage: CAP, at most what the budget has left
#   stage NAME S  prints a stage's outcome (S its exit status), FAILED=1 if not 0
#   start_sanitizer TOOL SECONDS CMD...  compute-sanitizer --tool TOOL over
#                 CMD in the background (variables set before the call reach
#                 it), with a kernel cache of its own, under a timeout; its
#                 output in WORK/TOOL.out, its status in WORK/TOOL.rc, its pid
#                 appended to the caller's `pids`
#   sanitizer_stage TOOL [NOTE]  the outcome of a compute-sanitizer run that
#                 left WORK/TOOL.out and WORK/TOOL.rc: appended to
#                 OUT_DIR/sanitizer.log, its tail printed, a stage (nothing
#                 when it did not run)
set -u -o pipefail
export PYTHONUNBUFFERED=1

NAME=${1:?run_common.sh needs the name of the script}
BUNDLE=${2:?usage: $NAME BUNDLE_DIR [OUT_DIR]}
OUT_DIR=${3:-${OUT:?set OUT or pass OUT_DIR}}
BUNDLE=$(cd "$BUNDLE" && pwd) || exit 2
mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${PYTHON:-python3}
CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
LIB="$BUNDLE/lib/libattn-jit.so"
BUDGET_S=${BUDGET_S:-540}
DEADLINE=$(($(date +%s) + BUDGET_S))
FAILED=0
exec > >(tee -a "$OUT_DIR/run.log") 2>&1

if ! command -v nvidia-smi > /dev/null || ! nvidia-smi > /dev/null 2>&1; then
  echo "SKIP: no GPU"
  exit 77
fi
[[ -f "$LIB" ]] || { echo "missing $LIB"; exit 2; }
export ATTN_JIT_LIB="$LIB"
WORK=$(mktemp -d "/tmp/attn-${NAME%.sh}-XXXXXX")

left() {
  local rest=$((DEADLINE - $(date +%s)))
  (( rest < $1 )) && echo "$rest" || echo "$1"
}
stage() {
  echo "=== [$1] $([[ $2 == 0 ]] && echo passed || echo "FAILED ($2)")"
  [[ $2 == 0 ]] || FAILED=1
}
start_sanitizer() {
  local tool=$1 secs=$2
  shift 2
  (ATTN_JIT_CACHE_DIR="$WORK/cache-$tool" timeout -k 10 "$secs" \
     "$CS" --tool "$tool" --error-exitcode 99 --print-limit 50 "$@" \
     > "$WORK/$tool.out" 2>&1
   echo $? > "$WORK/$tool.rc") &
  pids+=($!)
}
sanitizer_stage() {
  [[ -f "$WORK/$1.rc" ]] || return 0
  { echo "=== compute-sanitizer --tool $1${2:+ ($2)}: exit $(cat "$WORK/$1.rc")"
    cat "$WORK/$1.out"; } >> "$OUT_DIR/sanitizer.log"
  tail -5 "$WORK/$1.out"
  stage "$1" "$(cat "$WORK/$1.rc")"
}
