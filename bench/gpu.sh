#!/usr/bin/env bash
# GPU figures on a CUDA machine, one result file per run: the link's and the HBM's measured peaks (PyTorch copies), the
# weight upload in GB/s (copied out of the mapping and read from the file), process start -> first token with the
# page cache dropped and warm, 1-stream prefill (512 prompt tokens) and decode tok/s with the share of the HBM roofline
# (zse bench), the server's aggregate decode at 1, 16 and 64 streams (continuous batching on the GPU;
# bench/EngineLoad), peak VRAM, and ncu on the decode kernels.
#
# Usage: bench/gpu.sh [preset] [workdir]   (default: a synthetic llama-3-8b, 7B-class, converted to q4, in /tmp/zse-gpu;
#                                           ~16 GB for the BF16 synth + ~5 GB for the .zse)
# Runs from a checkout with target/quarkus-app built (with lib/native/libzse_cuda.so), whose ./zse launches
# the first-token runs. Environment:
#   JAVA_HOME       a JDK 25 or the jlinked runtime of tools/gpu/bundle.sh
#   RESULTS         where the result file goes (default bench/results)
#   ENGINE_LOAD_CP  a class path holding a compiled bench/EngineLoad (default: run the source file, needs a full JDK)
#   TOKENIZER       tokenizer folder for zse synth when the preset's is not in ../shared/tokenizers
#   STREAMS         server load concurrencies (default "1 16 64"); TOKENS tokens per request (default 128)
#   KV_CACHE        the KV cache type of zse's runs (default f16, as llama.cpp's)
#   BATCHES         sequences zse bench decodes together (--batch; default 16,64)
#   NCU             0 skips the ncu section (default 1, when ncu is on PATH)
#   BENCH           0 skips the zse bench sections (decode, batches, upload, profile): the start's figures alone
#   WARM_RUNS       process start -> first token runs with the page cache warm (default 1)
#   ZSE_COMMIT      the commit printed as the code measured (tools/gpu/device.sh sets the bundle's)
#   BACKGROUND_GROUPS  a file of process group ids (one a line) stopped while the CPU-bound figures are taken
#                   (tools/gpu/device.sh lists the peer's build and conversion there)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${1:-llama-3-8b}"
work="${2:-/tmp/zse-gpu}"
java="${JAVA_HOME:?set JAVA_HOME}/bin/java"
app="$root/target/quarkus-app/quarkus-run.jar"
results="${RESULTS:-$root/bench/results}"
streams="${STREAMS:-1 16 64}"
tokens="${TOKENS:-128}"
kv="${KV_CACHE:-f16}"  # llama.cpp's default KV type, so both read the same bytes of cache
batches="${BATCHES:-16,64}"  # sequences zse bench also decodes together, beside the server's streams
vm=(--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED)
zse() { "$java" "${vm[@]}" -jar "$app" "$@"; }
mkdir -p "$work" "$results"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//')"
out="$results/gpu-${gpu:-unknown}-$(date -u +%Y%m%dT%H%M%SZ).txt"
log() { echo "$*" | tee -a "$out"; }
seconds_since() { awk -v from="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.2f", now - from }'; }

# The process groups of BACKGROUND_GROUPS stopped (STOP) or let go on (CONT); those already gone are skipped.
background() {
  [ -s "${BACKGROUND_GROUPS:-}" ] || return 0
  local group stopped=0
  while read -r group; do kill "-$1" -- "-$group" 2>/dev/null && stopped=$((stopped + 1)); done < "$BACKGROUND_GROUPS"
  [ "$1" = STOP ] && log "(background jobs stopped while timing: $stopped process groups)"
  return 0
}
trap 'background CONT' EXIT

commit="${ZSE_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')}"
log "# bench/gpu.sh $preset, $(date -u +%FT%TZ), commit $commit"
log "# $(nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.max,pcie.link.width.max \
  --format=csv,noheader)"
log "# $(nproc) CPUs, $(awk '/MemTotal/ {print int($2 / 1048576) " GiB"}' /proc/meminfo)"

# The ceilings, measured: pinned host -> device copies (the link as this machine gives it) and a device copy (HBM).
python3 - <<'PY' 2>&1 | tee -a "$out"
import time, torch
n = 2 << 30
host = torch.empty(n, dtype=torch.uint8).pin_memory()
dev = torch.empty(n, dtype=torch.uint8, device="cuda")
dev.copy_(host, non_blocking=True); torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(4):
    dev.copy_(host, non_blocking=True)
torch.cuda.synchronize()
print(f"ceiling host->device, pinned 2 GiB copies (PyTorch): {4 * n / (time.perf_counter() - t) / 1e9:.1f} GB/s")
other = torch.empty_like(dev)
other.copy_(dev); torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(10):
    other.copy_(dev)
end.record(); torch.cuda.synchronize()
seconds = start.elapsed_time(end) / 1e3
print(f"ceiling HBM, device copy counting read + write (PyTorch): {10 * 2 * n / seconds / 1e9:.0f} GB/s")
PY

hf="$work/$preset"
model="$work/$preset-q4.zse"
if [ ! -f "$hf/config.json" ]; then
  t=$(date +%s.%N)
  zse synth --preset "$preset" -o "$hf" --force ${TOKENIZER:+--tokenizer "$TOKENIZER"} >&2 \
    && log "synth $preset: $(seconds_since "$t") s"
fi
if [ ! -f "$model" ]; then
  t=$(date +%s.%N); zse convert "$hf" -o "$model" --quant q4 --force >&2
  log "convert to q4: $(seconds_since "$t") s ($(nproc) CPUs)"
fi
[ -f "$model" ] || { log "no model: synth or convert failed"; exit 1; }
size=$(stat -c %s "$model")
log "model $model: $((size / 1000000)) MB"

# What reading the file alone takes (page cache as the runs above left it): the upload cannot beat it.
t=$(date +%s.%N); cat "$model" > /dev/null
read_rate=$(awk -v s="$size" -v t="$(seconds_since "$t")" 'BEGIN { printf "%.2f GB/s", s / t / 1e9 }')
log "read the .zse file once (cat > /dev/null): $read_rate"

# Process start -> first token through the user's launcher (./zse: a plain class path, no Quarkus, and the JDK AOT
# cache of the compute commands, which this first run trains): the page cache dropped (a fresh pod reading its
# volume), then warm (a restart).
"$root/zse" generate --model "$model" --backend cuda --prompt "Once upon a time" --max-tokens 1 --temperature 0 \
  > "$work/generate-train.log" 2>&1 || { log "zse generate (training the AOT cache) failed:"; \
  tail -5 "$work/generate-train.log" | tee -a "$out"; }
# ./zse goes on without its cache where the training fails (and tries again on every run, a JVM start each time)
[ -f "$root/target/zse-cli.aot" ] || { log "the compute commands' AOT cache was not trained:"; \
  grep -vE "^WARNING" "$work/generate-train.log" | tail -5 | tee -a "$out"; }
background STOP
# (page cache warm) What the upload's lanes can copy into staging: out of the mapping against positional reads of
# the file (8 threads, as 8 lanes)
staging=("$java" "$root/bench/StagingCopy.java")
[ -n "${ENGINE_LOAD_CP:-}" ] && staging=("$java" -cp "$ENGINE_LOAD_CP" StagingCopy)
[ "${BENCH:-1}" != 0 ] && "${staging[@]}" "$model" 8 3 2>&1 | tee -a "$out"
# The page cache dropped twice: without the readahead of the model as it opens (ZSE_READAHEAD=off), then with it.
for cache in dropped-no-readahead dropped $(printf 'warm %.0s' $(seq "${WARM_RUNS:-1}")); do
  readahead=on
  case "$cache" in
    dropped*) sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || log "(page cache not dropped: not root)" ;;
  esac
  [ "$cache" = dropped-no-readahead ] && readahead=off
  # wall time to the token on stdout and to the exit (tools/gpu/peer.sh times llama-simple alike), then zse's own
  ZSE_READAHEAD=$readahead python3 "$root/tools/gpu/first_output.py" "zse generate, cuda, page cache $cache" \
    "$work/generate-$cache.err" "$root/zse" generate --model "$model" --backend cuda --prompt "Once upon a time" \
    --max-tokens 1 --temperature 0 --timings | tee -a "$out" \
    || { log "generate failed:"; tail -5 "$work/generate-$cache.err" | tee -a "$out"; }
  grep "^timings" "$work/generate-$cache.err" | tee -a "$out"
done
if [ "${BENCH:-1}" != 0 ]; then
log "== zse bench --backend cuda --kv-cache $kv --prompt-tokens 512 --tokens $tokens --batch $batches"
log "(load ms = open + upload)"
zse bench --model "$model" --backend cuda --kv-cache "$kv" --prompt-tokens 512 --tokens "$tokens" --warmup 1 \
  --batch "$batches" --bandwidth-mb 0 2>&1 \
  | tee "$work/bench-cuda.txt" | tee -a "$out"
# The same decode at a 16-token prompt: what the context costs a step (the fifth run's 1-stream decode lost 15 % to
# the third's at 512-token prompts and nothing at the server's 94)
log "== the same, 1 stream, 16-token prompt"
zse bench --model "$model" --backend cuda --kv-cache "$kv" --prompt-tokens 16 --tokens "$tokens" --warmup 1 \
  --bandwidth-mb 0 2>&1 | grep -E '^ +[0-9]+ +[0-9.]+ +[0-9.]+ ' | tee -a "$out"
# The upload out of the mapping (the default) against positional reads of the file (ZSE_CUDA_UPLOAD_SOURCE=reads),
# interleaved: the fourth run's mapping won before its pages were let go after each chunk, which costs it a copy.
# (The fifth run's third source, the DMA reading the mapping's pages registered in place, gave 4.8-6.2 GB/s against
# 16-17: registering pinned the page cache at 1.6 GB/s a lane. It is gone.)
for round in 1 2; do
  for source in mapping reads; do
    ZSE_CUDA_UPLOAD_SOURCE=$source zse bench --model "$model" --backend cuda --prompt-tokens 16 --tokens 2 \
      --warmup 0 --bandwidth-mb 0 2>&1 | grep -E '^upload' | sed "s/^/$source, round $round: /" | tee -a "$out"
  done
done
# Where the time of a prefill, a 1-row step and a 16-row step goes, op by op (each op waited for: no graphs, no
# overlap; the ops' shares are what to read, not the totals)
log "== zse bench --profile --batch 16, 16 tokens decoded"
zse bench --model "$model" --backend cuda --kv-cache "$kv" --prompt-tokens 512 --tokens 16 --warmup 1 --batch 16 \
  --bandwidth-mb 0 --profile 2>&1 | grep -vE '^WARNING' | tee -a "$out"
background CONT
decode=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ && NF >= 5 {print $5}' "$work/bench-cuda.txt" | tail -1)
streamed=$(awk -v d="${decode:-0}" -v s="$size" 'BEGIN { printf "%.1f", d * s / 1e9 }')
[ -n "$decode" ] && log "weights streamed at 1 stream: $streamed GB/s \
(tok/s x file size; against the HBM ceiling above)"
fi

# The server: continuous batching on the GPU, the same client as bench/engine-v2.sh. Started as users start it
# (./zse serve, with the JDK AOT cache the launcher trains once per build: trained here before the timing).
port=8391
ZSE_DEMO_CHECKPOINT="$root/src/test/resources/models/tinystories-656k" \
  "$root/deploy/docker/train-aot-cache.sh" "$root/target/zse-serve.aot" > "$work/aot-train.log" 2>&1 \
  || { log "the server's AOT cache was not trained:"; tail -5 "$work/aot-train.log" | tee -a "$out"; }
background STOP
t=$(date +%s.%N)
ZSE_BACKEND=cuda ZSE_KV_CACHE="$kv" ZSE_VERIFY_WEIGHTS=off ZSE_HEAP=2g \
  "$root/zse" serve --model "$model" --port "$port" > "$work/serve.log" 2>&1 &
server=$!
ready() { curl -sf "$1" > /dev/null 2>&1; }
until ready "localhost:$port/q/health/ready"; do
  # a model that fails to load leaves the server up and never ready
  if ! kill -0 "$server" 2>/dev/null || grep -q "failed to load" "$work/serve.log"; then
    log "the server did not get ready:"; grep -iE "failed|error" "$work/serve.log" | head -5 | tee -a "$out"
    kill "$server" 2>/dev/null; exit 1
  fi
  sleep 0.1
done
log "serve start -> ready (cuda): $(seconds_since "$t") s"
background CONT
grep -E "KV cache pool|backend|CUDA|cuda" "$work/serve.log" | head -5 | tee -a "$out"
(while kill -0 "$server" 2>/dev/null; do
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.5
done) > "$work/vram.txt" 2>/dev/null &
load=("$java" "$root/bench/EngineLoad.java")
[ -n "${ENGINE_LOAD_CP:-}" ] && load=("$java" -cp "$ENGINE_LOAD_CP" EngineLoad)
# shellcheck disable=SC2086
"${load[@]}" "http://localhost:$port" zse-cuda load "$tokens" 80 $streams 2>&1 | tee -a "$out"
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
log "peak VRAM during the server run: $(sort -n "$work/vram.txt" | tail -1) MiB"
grep -iE "exception|error" "$work/serve.log" | head -5 | tee -a "$out"

if [ "${NCU:-1}" != 0 ] && command -v ncu > /dev/null; then
  # 1 stream: every kernel of the decode steps in a window past the prefill and the first, unrecorded steps, summed by
  # kernel; only 1-row steps count (the prompt's passes start with the embedding too). A prompt of about 500 tokens,
  # as the bench's: attention's share grows with the context.
  log "== ncu: the kernels of 1-stream decode steps after a ~500-token prompt, by time (clocks left alone)"
  ncu --clock-control none --csv --page raw --print-units base --launch-skip 1400 --launch-count 1400 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    "$java" "${vm[@]}" -jar "$app" generate --model "$model" --backend cuda --kv-cache "$kv" \
    --prompt "$(printf 'Once upon a time there was a little girl who liked to play. %.0s' $(seq 40))" \
    --max-tokens 24 --temperature 0 > "$work/ncu-steps.csv" 2> "$work/ncu-steps.err"
  python3 "$root/tools/gpu/ncu_steps.py" "$work/ncu-steps.csv" embed_kernel "(1, 1, 1)" 2>&1 | tee -a "$out"
  # 16 sequences decoded together (zse bench --batch 16, 32-token prompts): every kernel of their steps. Before them
  # come about 7480 launches (the weights' deinterleave, about 450; the single-sequence run's prompt and 7 steps, and
  # the 16 prompts, about 293 a pass; counted on the emulation's trace for TinyStories and scaled to 32 layers); the
  # window reaches past the 7 steps' 2050, and only whole steps of 16 rows count
  log "== ncu: the kernels of decode steps of 16 sequences together, by time"
  ncu --clock-control none --csv --page raw --print-units base --launch-skip 6600 --launch-count 2800 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    "$java" "${vm[@]}" -jar "$app" bench --model "$model" --backend cuda --kv-cache "$kv" --prompt-tokens 32 \
    --tokens 8 --warmup 0 --batch 16 --bandwidth-mb 0 > "$work/ncu-batch.csv" 2> "$work/ncu-batch.err"
  python3 "$root/tools/gpu/ncu_steps.py" "$work/ncu-batch.csv" embed_kernel "(16, 1, 1)" 2>&1 | tee -a "$out"
fi
log "# result: $out"
