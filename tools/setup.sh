#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test attn-jit.
# Costs nothing when everything is present. Needs root (or sudo) to install.
# --sanitizers: also clang 22 and its sanitizer and libFuzzer runtimes
# (tools/ci_sanitizers.sh).
set -euo pipefail

packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libfmt-dev
          ninja-build cmake g++ lld libzstd-dev libgtest-dev python3 python3-numpy)
if [[ ${1:-} == --sanitizers ]]; then
  packages+=(clang-22 libclang-rt-22-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi
if [[ ! -f /usr/local/cuda/include/cuda.h ]]; then
  echo "setup: the CUDA toolkit headers (/usr/local/cuda/include/cuda.h) are missing;" >&2
  echo "setup: install CUDA 13 or configure with -DATTN_CUDA_ROOT=<toolkit>" >&2
  exit 1
fi
