#!/usr/bin/env bash
# Builds libzse_cpu.so into the directory given as $1 (the Maven build passes target/native).
# Without a C compiler it prints one line and succeeds: the Java kernels run instead.
# The compiler is $CC, else cc, else gcc.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: build.sh OUTPUT_DIR}"

cc="${CC:-}"
if [ -z "$cc" ]; then cc="$(command -v cc || command -v gcc || true)"; fi
if [ -z "$cc" ]; then
  echo "[zse] no C compiler (cc, gcc or \$CC) found: skipping libzse_cpu.so; the Java CPU kernels run instead"
  exit 0
fi

library="$out/libzse_cpu.so"
if [ -f "$library" ] && [ -z "$(find "$here" -newer "$library" -type f -print -quit)" ]; then
  exit 0
fi

mkdir -p "$out/cpu-objects"
objects="$out/cpu-objects"
# -ffp-contract=fast lets the plain C fuse multiply-adds; no -ffast-math, so results do not depend on the compiler's
# choice of reassociation beyond that.
flags=(-std=c11 -O3 -fPIC -fvisibility=hidden -fno-math-errno -ffp-contract=fast -Wall -Wextra -I"$here")
"$cc" "${flags[@]}" -c "$here/dispatch.c" -o "$objects/dispatch.o"
"$cc" "${flags[@]}" -c "$here/kernels_generic.c" -o "$objects/kernels_generic.o"
# The converter's quantizers must repeat Java's float operations exactly: no fused multiply-adds there.
"$cc" "${flags[@]}" -ffp-contract=off -c "$here/quantize.c" -o "$objects/quantize.o"
parts=("$objects/dispatch.o" "$objects/kernels_generic.o" "$objects/quantize.o")
case "$("$cc" -dumpmachine)" in
  x86_64-*)
    "$cc" "${flags[@]}" -mavx2 -mfma -mf16c -c "$here/kernels_x86.c" -o "$objects/kernels_avx2.o"
    "$cc" "${flags[@]}" -DZSE_AVX512 -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512vnni \
      -c "$here/kernels_x86.c" -o "$objects/kernels_avx512.o"
    parts+=("$objects/kernels_avx2.o" "$objects/kernels_avx512.o")
    ;;
  aarch64-*)
    "$cc" "${flags[@]}" -march=armv8.2-a+dotprod -c "$here/kernels_arm.c" -o "$objects/kernels_neon.o"
    parts+=("$objects/kernels_neon.o")
    ;;
esac
"$cc" -shared -o "$library.tmp" "${parts[@]}" -lm
mv "$library.tmp" "$library"
echo "[zse] built $library ($("$cc" -dumpfullversion 2>/dev/null || "$cc" -dumpversion), $("$cc" -dumpmachine))"
