#!/usr/bin/env bash
# llama.cpp's CUDA build beside ours on the GPU machine (no network there): from the source tree tools/gpu/bundle.sh
# packs into .gpu/llama.cpp.tar.xz, on the same synthetic checkpoint as bench/gpu.sh. tools/gpu/device.sh runs it.
#   peer.sh build WORK          unpack into WORK/src; configure -DGGML_CUDA=ON for sm_90 (H100, H200); build
#                               llama-bench, llama-server, llama-quantize and llama-simple on every CPU, at low
#                               priority
#   peer.sh gguf HF_DIR WORK    WORK/f16.gguf from the checkpoint: llama.cpp's convert_hf_to_gguf.py where the Python
#                               modules it needs are installed, else tools/gpu/llama_gguf.py (numpy only; the same
#                               tensors byte for byte, bench/README.md); then WORK/q4_0.gguf and WORK/q4_k_m.gguf
#   peer.sh bench WORK          llama-bench -ngl 99 (prompt 512, 128 generated, 3 repetitions) on both files, then
#                               llama-server on Q4_0 with 16 and 64 slots under bench/EngineLoad, as gpu.sh drives ours
# Environment: JAVA_HOME and ENGINE_LOAD_CP as for bench/gpu.sh; STREAMS (default "1 16 64"), TOKENS (default 128),
# PEER_TYPES (the GGUF types quantized, default "Q4_0 Q4_K_M").
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
step="${1:?usage: peer.sh build WORK | gguf HF_DIR WORK | bench WORK}"
seconds_since() { awk -v from="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.2f", now - from }'; }

case "$step" in
build)
  work="${2:?WORK}"
  mkdir -p "$work/src" && tar -xJf "$root/.gpu/llama.cpp.tar.xz" -C "$work/src" || exit 1
  t=$(date +%s.%N)
  nice -n 19 cmake -S "$work/src" -B "$work/build" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF > "$work/cmake.log" 2>&1 \
    && nice -n 19 cmake --build "$work/build" -j "$(nproc)" --target llama-bench llama-server llama-quantize \
      llama-simple \
      > "$work/build.log" 2>&1
  status=$?
  echo "llama.cpp $(cat "$work/src/COMMIT" 2>/dev/null) CUDA build: exit $status after $(seconds_since "$t") s"
  [ "$status" = 0 ] || { touch "$work/build-failed"; tail -20 "$work/cmake.log" "$work/build.log"; }
  exit "$status";;
gguf)
  hf="${2:?HF_DIR}" work="${3:?WORK}"
  mkdir -p "$work"
  t=$(date +%s.%N)
  if python3 -c "import numpy, torch, transformers, sentencepiece, yaml" 2>/dev/null; then
    PYTHONPATH="$work/src/gguf-py" nice -n 19 python3 "$work/src/convert_hf_to_gguf.py" "$hf" \
      --outfile "$work/f16.gguf" --outtype f16 > "$work/convert.log" 2>&1
    echo "f16.gguf by convert_hf_to_gguf.py: exit $? after $(seconds_since "$t") s"
  else
    echo "(convert_hf_to_gguf.py cannot run here: $(python3 -c "import numpy, torch, transformers, sentencepiece, \
yaml" 2>&1 | tail -1))"
    nice -n 19 python3 "$root/tools/gpu/llama_gguf.py" "$hf" "$work/f16.gguf"
    echo "f16.gguf by tools/gpu/llama_gguf.py: exit $? after $(seconds_since "$t") s"
  fi
  until [ -x "$work/build/bin/llama-quantize" ] || [ -f "$work/build-failed" ]; do sleep 2; done
  for type in ${PEER_TYPES:-Q4_0 Q4_K_M}; do
    t=$(date +%s.%N)
    lower="$(echo "$type" | tr 'A-Z' 'a-z')"
    nice -n 19 "$work/build/bin/llama-quantize" "$work/f16.gguf" "$work/$lower.gguf" "$type" "$(nproc)" \
      > "$work/quantize-$lower.log" 2>&1
    status=$?
    echo "llama-quantize $type: exit $status after $(seconds_since "$t") s, \
$(($(stat -c %s "$work/$lower.gguf" 2>/dev/null || echo 0) / 1000000)) MB"
  done;;
bench)
  work="${2:?WORK}"
  bin="$work/build/bin"
  [ -x "$bin/llama-bench" ] && [ -f "$work/q4_0.gguf" ] || { echo "no llama.cpp build or GGUF in $work"; exit 1; }
  echo "== llama-bench -ngl 99 -p 512 -n 128 -r 3 (llama.cpp $(cat "$work/src/COMMIT" 2>/dev/null), CUDA)"
  models=(-m "$work/q4_0.gguf")
  [ -f "$work/q4_k_m.gguf" ] && models+=(-m "$work/q4_k_m.gguf")
  "$bin/llama-bench" "${models[@]}" -ngl 99 -p 512 -n 128 -r 3 2>&1 | grep -aE "^\||error"
  # process start -> first token printed and -> exit, as gpu.sh times zse generate (page cache warm: llama-bench has
  # just read the file); unbuffered, or a piped llama-simple prints everything at its exit
  if [ -x "$bin/llama-simple" ]; then
    python3 "$root/tools/gpu/first_output.py" "llama-simple -n 1, Q4_0, page cache warm" "$work/simple.err" \
      stdbuf -o0 "$bin/llama-simple" -m "$work/q4_0.gguf" -ngl 99 -n 1 "Once upon a time"
  fi
  java="${JAVA_HOME:?set JAVA_HOME}/bin/java"
  load=("$java" "$root/bench/EngineLoad.java")
  [ -n "${ENGINE_LOAD_CP:-}" ] && load=("$java" -cp "$ENGINE_LOAD_CP" EngineLoad)
  tokens="${TOKENS:-128}"
  port=8392
  for streams in ${STREAMS:-1 16 64}; do
    # one slot per stream, each with room for the prompt (80 words) and the answer
    t=$(date +%s.%N)
    "$bin/llama-server" -m "$work/q4_0.gguf" -ngl 99 -np "$streams" -c $((streams * 512)) --port "$port" \
      > "$work/server-$streams.log" 2>&1 &
    server=$!
    for _ in $(seq 600); do curl -sf "localhost:$port/health" > /dev/null 2>&1 && break; sleep 0.1; done
    echo "== llama-server -np $streams (Q4_0): start -> ready $(seconds_since "$t") s"
    "${load[@]}" "http://localhost:$port" llama.cpp-cuda load "$tokens" 80 "$streams" 2>&1
    # (llama-server c392e5094 may abort as it stops, status 134: not this step's)
    kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true
  done;;
*)
  echo "unknown step $step" >&2; exit 2;;
esac
