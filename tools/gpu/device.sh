#!/usr/bin/env bash
# The GPU machine's run (it has nvcc, PyTorch, compute-sanitizer and ncu, no JDK): unpacks .gpu/bundle.tar.xz made
# here by tools/gpu/bundle.sh, then, each step under its own time limit so the whole stays inside one device call:
#   1. the CUDA test classes on the real GPU (kernels against the CPU backend, greedy parity, graphs, serving);
#   2. the kernel tests under compute-sanitizer memcheck, racecheck and synccheck;
#   3. bench/gpu.sh (7B-class Q4 synthesized and converted in the background while 1 and 2 run);
#   4. llama.cpp's CUDA build on the same checkpoint (tools/gpu/peer.sh: built, converted and quantized in the
#      background from the start, at low priority; benchmarked last);
#   ab. variants of the backend beside each other on that model (bench/gpu-ab.sh), one experiment a line of
#      $AB_PLAN (default tools/gpu/ab.plan): "BENCH OPTIONS ; PATTERN ; VARIANT..." (AB_ROUNDS rounds, default 2),
#      into ab.txt; a line stops at the call's AB_BY-th second (default 570, or 470 when the peer's step comes after
#      it) and the lines left are listed as skipped, so the call ends in time for its logs to come back.
# A session's device time is 15 minutes, machine start included: one call of "tests sanitizer bench ab peer" (the
# default below) under a 595 s timeout, the goal figures first and the variants in what time is left.
# Logs go to $OUT (the device tool's folder) or /tmp/zse-gpu-out. Usage: tools/gpu/device.sh [STEPS] (default "tests
# sanitizer bench ab peer"); TEST_CLASSES replaces step 1's classes (Class or Class#method); SANITIZER_TOOLS (default
# "memcheck racecheck synccheck") and RACECHECK_CLASSES narrow step 2.
# Time limits in seconds: TEST_SECONDS (90), SANITIZER_SECONDS (45 each: with the tests, about the time the model's
# synthesis and conversion take beside them),
# BENCH_SECONDS (240), PEER_SECONDS (100, after waiting for the peer's preparation until the call's PEER_READY_BY-th
# second, default 480: the device's calls end at 600 s).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
steps="${1:-tests sanitizer bench ab peer}"
started=$(date +%s)
out="${OUT:-/tmp/zse-gpu-out}"
mkdir -p "$out"
bundle=/tmp/zse-bundle
rm -rf "$bundle" && mkdir -p "$bundle" && tar -xJf .gpu/bundle.tar.xz -C "$bundle" || exit 1
export JAVA_HOME="$bundle/runtime"
export ZSE_COMMIT="$(cat "$bundle/COMMIT" 2>/dev/null)"  # what bench/gpu.sh names as the code it measured
# ZSE_CUDA_LIBRARY (the backend's own override) names another build for the tests and benches too: the emulation's,
# to rehearse this script on a machine without a GPU
library="${ZSE_CUDA_LIBRARY:-$bundle/app/lib/native/libzse_cuda.so}"
# Where the launcher and the tests look for the app and the built library.
mkdir -p target/native && rm -rf target/quarkus-app && ln -s "$bundle/app" target/quarkus-app \
  && ln -sf "$library" target/native/libzse_cuda.so
# ./zse rebuilds when a source is newer than the app (the copied tree's times are the copy's): the app is the build
touch "$bundle/app/quarkus-run.jar"
nvidia-smi 2>&1 | head -15 | tee "$out/summary.txt"
# The tests that read ../shared/tokenizers find the bundle's copies, and the AOT caches' training its demo checkpoint
# where a checkout keeps it (the tree travels without src/test/resources).
mkdir -p ../shared/tokenizers src/test/resources/models
for tokenizer in "$bundle"/tokenizers/*; do
  [ -e "../shared/tokenizers/${tokenizer##*/}" ] || ln -s "$tokenizer" ../shared/tokenizers/
done
# (The device's copy of the tree can hold a folder there without the files: the fifth run's test for the path alone
# left the training without its checkpoint.)
demo=src/test/resources/models/tinystories-656k
[ -f "$demo/config.json" ] || { rm -rf "$demo" && ln -s "$bundle/demo/tinystories-656k" "$demo"; }

vm=(--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED)
work=/tmp/zse-gpu
mkdir -p "$work"
# The device returns 8 files of $OUT at most: the preparations' logs stay in $work, their tails go to summary.txt (the
# peer's whole log to peer-bench.txt), so that a call of every step leaves 7 (summary, tests, sanitizer, gpu-bench.log,
# gpu.sh's result file, ab, peer-bench).
# The peer's preparation runs in process groups of its own, listed here: bench/gpu.sh stops them while it times what
# the CPUs take part in (the upload, the first token, the server's start) and lets them go on after.
export BACKGROUND_GROUPS="$work/background.pgids"
: > "$BACKGROUND_GROUPS"
peer=""
case " $steps " in *" peer "*)
  if [ -f .gpu/llama.cpp.tar.xz ]; then
    peer="$work/peer"
    setsid tools/gpu/peer.sh build "$peer" >> "$work/peer-prepare.txt" 2>&1 &
    echo $! >> "$BACKGROUND_GROUPS"
  else
    echo "peer: no .gpu/llama.cpp.tar.xz (tools/gpu/bundle.sh packs it when it finds the llama.cpp source)" \
      | tee -a "$out/summary.txt"
  fi;;
esac
# The 7B-class weights for steps 3, 4 and ab (PRESET, another zse synth preset of the Llama 3 vocabulary, to rehearse
# with a smaller one), made on the CPUs while the GPU runs the tests; not made for a call without those steps.
preset="${PRESET:-llama-3-8b}"
prepare=""
case " $steps " in *" bench "*|*" ab "*|*" peer "*)
(zse() { "$JAVA_HOME/bin/java" "${vm[@]}" -jar target/quarkus-app/quarkus-run.jar "$@"; }
 t=$(date +%s)
 zse synth --preset "$preset" -o "$work/$preset" --force --tokenizer "$bundle/tokenizers/llama3_1" \
   && echo "synth $(( $(date +%s) - t )) s" || exit 1
 # the peer's GGUF goes on after this job ends (step 3 waits for this job only)
 [ -n "$peer" ] && { setsid tools/gpu/peer.sh gguf "$work/$preset" "$peer" >> "$work/peer-prepare.txt" 2>&1 &
   echo $! >> "$BACKGROUND_GROUPS"; }
 t=$(date +%s) && zse convert "$work/$preset" -o "$work/$preset-q4.zse" --quant q4 --force \
   && echo "convert q4 $(( $(date +%s) - t )) s") > "$work/prepare.txt" 2>&1 &
prepare=$!;;
esac

# Waits for the weights of steps 3, 4 and ab; the first wait puts their preparation's times in summary.txt.
weights_ready() {
  wait "$prepare"
  [ -n "${prepared:-}" ] && return 0
  prepared=1
  grep -vE "^(synth|convert): +[0-9]+%" "$work/prepare.txt" | tail -3 | tee -a "$out/summary.txt"
}

classpath="$bundle/test-classes:$bundle/tools:$(ls "$bundle"/junit/*.jar "$bundle"/app/app/*.jar \
  "$bundle"/app/lib/main/*.jar "$bundle"/app/lib/boot/*.jar | paste -sd:)"
tests() { # LIMIT_SECONDS LOG [WRAPPER...] -- CLASSES...
  local limit="$1" file="$2"; shift 2
  local wrapper=()
  while [ "$1" != -- ]; do wrapper+=("$1"); shift; done
  shift
  local t; t=$(date +%s)
  timeout -k 5 "$limit" "${wrapper[@]}" "$JAVA_HOME/bin/java" "${vm[@]}" -Xss4m -Xmx8g \
    -Djava.util.logging.manager=org.jboss.logmanager.LogManager -Dzse.cuda.test.library="$library" \
    -cp "$classpath" RunTests "$@" > "$out/$file" 2>&1
  echo "$file: exit $? after $(( $(date +%s) - t )) s" | tee -a "$out/summary.txt"
}
kernels=(io.zse.backend.cuda.CudaSamplingTest io.zse.backend.cuda.CudaFusionTest io.zse.backend.cuda.CudaGraphTest
  io.zse.backend.cuda.CudaPagedAttentionTest io.zse.backend.cuda.CudaBackendParityTest)
case " $steps " in *" tests "*)
  all=("${kernels[@]}" io.zse.backend.cuda.CudaProbeTest io.zse.backend.cuda.CudaUploadOrderTest
    io.zse.backend.cuda.CudaPromptProductsTest io.zse.backend.cuda.QuantizedActivationsTest
    io.zse.backend.cuda.CudaHeaderBindingTest
    io.zse.model.CudaGoldenTest io.zse.model.CudaDecodeGraphTest io.zse.serve.CudaEngineSamplingTest)
  # shellcheck disable=SC2206
  [ -n "${TEST_CLASSES:-}" ] && all=($TEST_CLASSES)
  tests "${TEST_SECONDS:-90}" tests.txt -- "${all[@]}"
  grep -cE "^SUCCESSFUL" "$out/tests.txt" | sed 's/^/successful: /' | tee -a "$out/summary.txt"
  grep -E "^(FAILED|ABORTED|SKIPPED)" "$out/tests.txt" | head -40 | tee -a "$out/summary.txt";;
esac
case " $steps " in *" sanitizer "*)
  for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
    limit="${SANITIZER_SECONDS:-45}"
    # The API errors CudaGraphTest provokes on purpose (synchronizing a capturing stream) are not reports.
    # racecheck is the slowest (the fifth run's 90 and 80 s finished the fusion class alone, and found no hazard in it
    # or in what it ran of the parity and paged-attention ones): the classes it did not reach or finish come first
    classes=("${kernels[@]}")
    # shellcheck disable=SC2206
    [ "$tool" = racecheck ] && classes=(${RACECHECK_CLASSES:-io.zse.backend.cuda.CudaSamplingTest \
      io.zse.backend.cuda.CudaPagedAttentionTest io.zse.backend.cuda.CudaFusionTest \
      io.zse.backend.cuda.CudaBackendParityTest})
    tests "$limit" "sanitizer-$tool.txt" compute-sanitizer --tool "$tool" --error-exitcode 3 \
      --report-api-errors no --print-limit 20 \
      -- "${classes[@]}"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Tests (successful|failed)" "$out/sanitizer-$tool.txt" \
      | tee -a "$out/summary.txt"
    # one file for the three: the device returns 8 files at most
    { echo "=== $tool"; cat "$out/sanitizer-$tool.txt"; } >> "$out/sanitizer.txt" && rm "$out/sanitizer-$tool.txt"
  done;;
esac
case " $steps " in *" bench "*)
  weights_ready
  echo "bench: starts at the call's $(( $(date +%s) - started ))th second" | tee -a "$out/summary.txt"
  TOKENIZER="$bundle/tokenizers/llama3_1" RESULTS="$out" ENGINE_LOAD_CP="$bundle/tools" \
    timeout -k 5 "${BENCH_SECONDS:-240}" bench/gpu.sh "$preset" "$work" > "$out/gpu-bench.log" 2>&1
  echo "bench/gpu.sh: exit $?" | tee -a "$out/summary.txt"
  # the peer's jobs go on even where gpu.sh was stopped by its time limit while they were stopped
  while read -r group; do kill -CONT -- "-$group" 2>/dev/null; done < "$BACKGROUND_GROUPS";;
esac
case " $steps " in *" ab "*)
  weights_ready
  ab_by=570
  case " $steps " in *" peer "*) ab_by=470;; esac  # the peer's bench (PEER_SECONDS) still has to fit
  while IFS=';' read -r options pattern variants; do
    [ -n "${options// /}" ] || continue
    left=$(( ${AB_BY:-$ab_by} - ($(date +%s) - started) ))
    if [ "$left" -lt 30 ]; then
      echo "== skipped, the call's time is spent: bench $options" >> "$out/ab.txt"
      continue
    fi
    echo "== bench $options" >> "$out/ab.txt"
    # shellcheck disable=SC2086
    timeout -k 5 "$left" bench/gpu-ab.sh "$work/$preset-q4.zse" "${AB_ROUNDS:-2}" "$options" "$(echo $pattern)" \
      $variants >> "$out/ab.txt" 2>&1
    status=$?
    if [ "$status" -ne 0 ]; then
      echo "(stopped or failed: exit $status)" >> "$out/ab.txt"
      pkill -f "quarkus-run.jar bench" 2>/dev/null  # a stopped line's bench would outlive its script
    fi
  done < "${AB_PLAN:-tools/gpu/ab.plan}"
  echo "ab: done at $(( $(date +%s) - started )) s" | tee -a "$out/summary.txt";;
esac
case " $steps " in *" peer "*)
  [ -n "$peer" ] || exit 0
  # the preparation runs in the background: wait for it while the call has time left
  until [ -f "$peer/q4_0.gguf" ] && ! pgrep -f llama-quantize > /dev/null || [ -f "$peer/build-failed" ] \
      || [ $(( $(date +%s) - started )) -gt "${PEER_READY_BY:-480}" ]; do sleep 2; done
  cat "$work/peer-prepare.txt" 2>/dev/null | grep -vE "^\[" | tail -8 | tee -a "$out/summary.txt"
  ENGINE_LOAD_CP="$bundle/tools" timeout -k 5 "${PEER_SECONDS:-100}" tools/gpu/peer.sh bench "$peer" \
    > "$out/peer-bench.txt" 2>&1
  echo "peer bench: exit $?" | tee -a "$out/summary.txt"
  { echo "=== tools/gpu/peer.sh build and gguf"; grep -vE "^\[" "$work/peer-prepare.txt"; } >> "$out/peer-bench.txt";;
esac
