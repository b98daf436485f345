#!/usr/bin/env bash
# Builds the CPU emulation of libzse_cuda into the directory given as $1: the same .cu sources compiled as host C++
# under emu/cuda_emu.h, with the same C ABI. Two libraries:
#   libzse_cuda_emu.so        optimised; `--backend cuda` runs on it when zse.cuda.library / ZSE_CUDA_LIBRARY names it
#   libzse_cuda_emu_asan.so   with AddressSanitizer, for the kernel tests (an out-of-bounds read in a kernel fails them)
# Without g++ it prints one line and succeeds. Each library is rebuilt only when a source is newer.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cuda="$(dirname "$here")"
out="${1:?usage: build.sh OUTPUT_DIR}"

cxx="${CXX:-g++}"
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "[zse] $cxx not found: skipping libzse_cuda_emu.so (the CUDA kernels' CPU emulation and its tests)"
  exit 0
fi

sources=("$cuda"/*.cu "$cuda"/*.cuh "$cuda"/*.h "$here"/*.h "$here"/*.cpp "$here/build.sh")
# -fno-strict-aliasing: kernels read a 16-byte load's bytes through narrower pointers, as nvcc allows.
flags=(-std=c++17 -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden -fno-strict-aliasing
       -DZSE_CUDA_EMULATION -Wall -Wno-unknown-pragmas -I"$cuda")

build() { # library, extra flags...
  local library="$out/$1"; shift
  if [ -f "$library" ] && [ -z "$(find "${sources[@]}" -newer "$library" -print -quit)" ]; then
    return 0
  fi
  mkdir -p "$out"
  local start; start=$(date +%s)
  "$cxx" "${flags[@]}" "$@" -x c++ "$cuda"/*.cu -x none "$here"/*.cpp -o "$library.tmp"
  mv "$library.tmp" "$library"
  echo "[zse] built $library with $("$cxx" --version | head -1) in $(( $(date +%s) - start )) s"
}

build libzse_cuda_emu.so -O2 -g
# The sanitizer build needs the compiler's ASan runtime; the tests preload it into the JVM (emu/asan-jvm/bin/java).
if echo 'int main(){}' | "$cxx" -fsanitize=address -x c++ - -o /dev/null >/dev/null 2>&1; then
  build libzse_cuda_emu_asan.so -O1 -g -fsanitize=address -fno-omit-frame-pointer
else
  echo "[zse] $cxx cannot build with -fsanitize=address: skipping libzse_cuda_emu_asan.so"
fi
