#!/usr/bin/env bash
# Builds attn-jit and runs the whole test suite (lit, GoogleTest, tests/python)
# with ctest.
# GPU tests are not part of it: tools/device/run_gpu.sh runs them on a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
"$root/tools/build.sh"
ctest --test-dir "$build" --output-on-failure -j2
