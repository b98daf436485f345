#!/usr/bin/env bash
# Aggregate generated tok/s and p50/p95 time to first token at 1, 4, 16 and 64 concurrent streams.
# Usage: bench/serve-load.sh [MODEL.zse] [MAX_TOKENS]   (default: the demo model, 32 tokens per stream)
# For the synthetic 1B Q4: ./zse synth --preset llama-3.2-1b -o /tmp/l1b && ./zse convert /tmp/l1b -o /tmp/l1b-q4.zse --quant q4
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/jdk.sh"
model="${1:-}"
max_tokens="${2:-32}"
port="${ZSE_BENCH_PORT:-18481}"
args=(serve --port "$port")
[ -n "$model" ] && args+=(--model "$model")
"$root/zse" "${args[@]}" > /tmp/zse-serve-load.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
until curl -sf "localhost:$port/q/health/ready" > /dev/null; do
  kill -0 $pid 2>/dev/null || { cat /tmp/zse-serve-load.log; exit 1; }
  sleep 0.2
done
id="$(curl -s "localhost:$port/v1/models" | sed -E 's/.*"id":"([^"]+)".*/\1/')"
echo "model: $id (${model:-demo}), $max_tokens tokens per stream, $(nproc) cores"
"$JAVA_HOME/bin/java" "$root/bench/ServeLoad.java" "http://localhost:$port" "$id" "$max_tokens" 1 4 16 64
