#!/usr/bin/env bash
# Runs kernel_check.c and quantize_check.c against libzse_cpu built for this machine and, where an aarch64 cross
# compiler and qemu-user are installed (.ci/run installs them on Debian), against the aarch64 build under emulation,
# so the NEON kernels and quantizers are checked on x86 machines too. Without a C compiler it prints one line and
# succeeds, as build.sh does.
# Usage: check.sh OUTPUT_DIR   (the Maven build passes target/native-check)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cpu="$(dirname "$here")"
out="${1:?usage: check.sh OUTPUT_DIR}"

check() { # NAME CC [RUNNER...]
  local name="$1" cc="$2"
  shift 2
  local dir="$out/$name"
  mkdir -p "$dir"
  CC="$cc" bash "$cpu/build.sh" "$dir"
  for program in kernel_check quantize_check; do
    # -ffp-contract=off: quantize_check's reference repeats Java's float operations, unfused
    "$cc" -std=c11 -O1 -ffp-contract=off -Wall -Wextra -I"$cpu" "$here/$program.c" -o "$dir/$program" -L"$dir" \
      -lzse_cpu -lm -Wl,-rpath,'$ORIGIN'
  done
  echo "[zse] kernel check, $name:"
  "$@" "$dir/kernel_check"
  echo "[zse] quantizer check, $name:"
  "$@" "$dir/quantize_check"
}

cc="${CC:-$(command -v cc || command -v gcc || true)}"
if [ -z "$cc" ]; then
  echo "[zse] no C compiler: skipping the native kernel check"
  exit 0
fi
check host "$cc"

cross="$(command -v aarch64-linux-gnu-gcc || true)"
qemu="$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)"
if [ "$(uname -m)" = aarch64 ]; then
  exit 0
elif [ -n "$cross" ] && [ -n "$qemu" ]; then
  check aarch64 "$cross" "$qemu" -L /usr/aarch64-linux-gnu
else
  echo "[zse] no aarch64-linux-gnu-gcc or qemu-aarch64: the NEON kernels and quantizers are not checked here"
fi
