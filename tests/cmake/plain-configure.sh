#!/usr/bin/env bash
# Issue 14, defect 8: a plain `cmake -S . -B build -G Ninja`, without the
# -DLLVM_EXTERNAL_LIT that tools/build.sh passes, must give ctest a lit test
# whose command is an existing lit (it was only "-sv <dir>": AddLLVM's
# default build/bin/llvm-lit does not exist outside LLVM's own tree).
# Usage: plain-configure.sh SOURCE_DIR
set -euo pipefail
src=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake -S "$src" -B "$dir" -G Ninja > "$dir/configure.log" 2>&1 || {
  cat "$dir/configure.log"; echo "FAIL: a plain configure failed"; exit 1; }
line=$(grep -E '^add_test\(\[=\[lit\]=\]|^add_test\(lit ' "$dir/tests/CTestTestfile.cmake" || true)
[[ -n $line ]] || { echo "FAIL: no lit test in $dir/tests/CTestTestfile.cmake"; exit 1; }
lit=$(sed -E 's/^add_test\((\[=\[lit\]=\]|lit) +"?([^" ]+)"?.*/\2/' <<< "$line")
if [[ $lit != /* || ! -x $lit ]]; then
  echo "FAIL: the lit test's command starts with '$lit', not an executable lit: $line"
  exit 1
fi
echo "PASS: the lit test runs $lit"
