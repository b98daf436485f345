#!/usr/bin/env bash
# Soak of `zse serve`: streams, a disconnect storm, slow clients for 5 minutes (default); prints RSS over time, errors
# and the request objects still alive once idle. The server runs with the launcher's JVM flags plus $ZSE_JAVA_OPTS
# (e.g. ZSE_HEAP=256m, or the old settings: ZSE_JAVA_OPTS='-XX:+UseSerialGC -XX:MaxRAMPercentage=25').
# Usage: bench/soak.sh [MODEL.zse] [--seconds 300] [--interval 10] [--warmup 60] [--streams 64] [--storm 8] [--storm-pause 50]
#        [--slow-readers 4] [--slow-headers 2] [--max-tokens 32] [--slow-max-tokens 256]   (see bench/Soak.java)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/jdk.sh"
source "$root/bench/serve.sh"
model=""
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then model="$1"; shift; fi
port="${ZSE_BENCH_PORT:-18482}"
log="${ZSE_SOAK_LOG:-/tmp/zse-soak.log}"
trap serve_stop EXIT
serve_start "$port" "$log" "$model"
echo "model: $model_id (${model:-demo}); server pid $server_pid; JVM: $(tr '\0' ' ' < "/proc/$server_pid/cmdline" \
  | grep -oE -- '-X[^ ]+' | tr '\n' ' ')"
"$JAVA_HOME/bin/java" "$root/bench/Soak.java" "http://localhost:$port" "$model_id" "$server_pid" "$@"
