#!/usr/bin/env bash
# The java that runs the CUDA kernel tests on libzse_cuda_emu_asan.so (pom.xml, execution cuda-kernels-asan): the
# compiler's AddressSanitizer runtime is preloaded, as a sanitized library loaded into an unsanitized process needs.
# The JVM handles SIGSEGV itself (null checks, safepoints), so ASan leaves that signal alone; leak checking is off
# because the JVM never frees much of what it maps. The java is $ZSE_JAVA (Maven passes its own), else java on PATH.
set -euo pipefail
java="${ZSE_JAVA:-java}"
runtime="$("${CXX:-g++}" -print-file-name=libasan.so 2>/dev/null || true)"
if [ -n "$runtime" ] && [ -f "$runtime" ]; then
  export LD_PRELOAD="$runtime${LD_PRELOAD:+:$LD_PRELOAD}"
  export ASAN_OPTIONS="handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
exec "$java" "$@"
