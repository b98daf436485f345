#!/usr/bin/env bash
# Builds libzse_cuda.so into the directory given as $1 (the Maven build passes target/native), after its CPU
# emulation libzse_cuda_emu.so (emu/build.sh, needs g++), which the CUDA tests run on every machine.
# Without nvcc it prints one line and succeeds, so builds on machines without CUDA stay green.
# nvcc is looked up on PATH, then in $CUDA_HOME/bin ($CUDA_HOME defaults to /usr/local/cuda).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: build.sh OUTPUT_DIR}"

"$here/emu/build.sh" "$out"

nvcc="$(command -v nvcc || true)"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ -z "$nvcc" ] && [ -x "$cuda_home/bin/nvcc" ]; then nvcc="$cuda_home/bin/nvcc"; fi
if [ -z "$nvcc" ]; then
  echo "[zse] nvcc not found on PATH or in $cuda_home/bin: skipping libzse_cuda.so; the CPU backend is unaffected"
  exit 0
fi

library="$out/libzse_cuda.so"
sources=("$here"/*.cu "$here"/*.cuh "$here"/*.h "$here/build.sh")
if [ -f "$library" ] && [ -z "$(find "${sources[@]}" -newer "$library" -print -quit)" ]; then
  exit 0
fi

mkdir -p "$out"
# Real code for each Ampere/Ada/Hopper target plus compute_90 PTX, which the driver JIT-compiles for newer GPUs;
# ZSE_CUDA_ARCHS narrows the targets (tools/gpu/bundle.sh: "90", the lent H100/H200, for a smaller bundle).
# --threads compiles the targets in parallel; ZSE_NVCC_THREADS overrides it (default 2, the CI core count).
# -lineinfo: compute-sanitizer and ncu name source lines (no change to the code generated).
# The runtime is linked statically so the host needs only the NVIDIA driver (libcuda.so.1).
targets=()
for arch in ${ZSE_CUDA_ARCHS:-80 86 89 90}; do targets+=(-gencode "arch=compute_$arch,code=sm_$arch"); done
start=$(date +%s)
# nvcc's temporary files go to a folder of this build's own, removed after it
scratch="$(mktemp -d "$out/nvcc-tmp.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
compile() {
  TMPDIR="$scratch" "$nvcc" -std=c++17 -O3 -lineinfo -shared -cudart static \
    -Xcompiler -fPIC -Xcompiler -fvisibility=hidden \
    --threads "${ZSE_NVCC_THREADS:-2}" \
    "${targets[@]}" -gencode arch=compute_90,code=compute_90 \
    -I"$here" -o "$library.tmp" "$here"/*.cu
}
# Once in many builds nvcc's parallel jobs lost one of their own temporary files ("nvlink fatal: Could not read file
# .../tmpxft_..._dlink.reg.c"): a failed build is tried once more, and a second failure (a real error) stops it.
if ! compile; then
  echo "[zse] nvcc failed; building once more" >&2
  compile
fi
mv "$library.tmp" "$library"
echo "[zse] built $library with $("$nvcc" --version | tail -1) in $(( $(date +%s) - start )) s"
