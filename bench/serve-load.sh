#!/usr/bin/env bash
# Aggregate generated tok/s and p50/p95 time to first token at 1, 4, 16 and 64 concurrent streams.
# Usage: bench/serve-load.sh [MODEL.zse] [MAX_TOKENS]   (default: the demo model, 32 tokens per stream)
# For the synthetic 1B Q4: ./zse synth --preset llama-3.2-1b -o /tmp/l1b && ./zse convert /tmp/l1b -o /tmp/l1b-q4.zse --quant q4
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/jdk.sh"
source "$root/bench/serve.sh"
model="${1:-}"
max_tokens="${2:-32}"
port="${ZSE_BENCH_PORT:-18481}"
trap serve_stop EXIT
serve_start "$port" /tmp/zse-serve-load.log "$model"
echo "model: $model_id (${model:-demo}), $max_tokens tokens per stream, $(nproc) cores"
"$JAVA_HOME/bin/java" "$root/bench/ServeLoad.java" "http://localhost:$port" "$model_id" "$max_tokens" 1 4 16 64
