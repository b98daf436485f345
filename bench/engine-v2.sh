#!/usr/bin/env bash
# Engine v2 against llama.cpp's llama-server: the same client (bench/EngineLoad.java), the same weights, the two
# servers up side by side and measured in turn (ours first in odd rounds, theirs first in even ones), so load from
# other jobs on the machine hits both alike. One result file per run under bench/results/, with the machine, the
# commits, the load average before every measurement and the servers' logs' key lines.
#
# Usage:
#   bench/engine-v2.sh load   [ROUNDS] [MAX_TOKENS] [CONCURRENCY...]   default: 3 rounds, 32 tokens, 1 16 64
#   bench/engine-v2.sh prefix [ROUNDS] [REQUESTS] [PARALLEL]           ours with the prefix cache vs ZSE_PREFIX_CACHE=false
#                                                                      (+ llama-server, cache_prompt on), default 1 16 1;
#                                                                      NOCACHE_REQUESTS / THEIRS_REQUESTS: fewer for those sides
#   bench/engine-v2.sh memory [MODEL.zse] [CONCURRENCY]                ours only: ZSE_HEAP=512m, no max_tokens, peak RSS
# Environment:
#   ZSE             our launcher (default: this checkout's ./zse)
#   LLAMA_SERVER    llama-server binary (default /work/peer/build/bin/llama-server)
#   ZSE_MODEL       default /work/peer/l1b-q4.zse;  GGUF_MODEL  default /work/peer/l1b-q4_0.gguf
#   LLAMA_NP, LLAMA_CTX   llama-server -np / -c (default: 16 / 8192; for more streams, one slot per stream of
#                         128 + MAX_TOKENS context rounded up to 256: 64 / 16384 at 32 tokens, 64 / 32768 at 256)
#   PROMPT_WORDS    words per load prompt (default 80, ~100 tokens with the chat template)
#   ZSE_* (ZSE_MAX_RUNNING, ZSE_MAX_BATCH_TOKENS, ZSE_KV_CACHE_MEMORY, ZSE_KV_CACHE, ...) pass through to our server.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
zse="${ZSE:-$root/zse}"
llama_server="${LLAMA_SERVER:-/work/peer/build/bin/llama-server}"
zse_model="${ZSE_MODEL:-/work/peer/l1b-q4.zse}"
gguf_model="${GGUF_MODEL:-/work/peer/l1b-q4_0.gguf}"
prompt_words="${PROMPT_WORDS:-80}"
# the weight checksum runs once after ready on a background thread; off, so it does not overlap the first round
export ZSE_VERIFY_WEIGHTS="${ZSE_VERIFY_WEIGHTS:-off}"
mode="${1:?usage: engine-v2.sh load|prefix|memory ...}"
shift
mkdir -p "$root/bench/results"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$root/bench/results/engine-v2-$mode-$stamp.txt"
logdir="$(mktemp -d /tmp/engine-v2.XXXXXX)"
pids=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

log() { echo "$*" | tee -a "$out"; }

header() {
  log "# engine-v2 $mode, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  log "# machine: nproc=$(nproc), $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(free -g | awk '/Mem:/{print $2}') GiB RAM"
  log "# zse: $zse at $(git -C "$(dirname "$zse")" rev-parse --short HEAD 2>/dev/null || cat "$(dirname "$zse")/COMMIT" 2>/dev/null || echo '?')"
  log "# llama-server: $llama_server ($(cat /work/peer/llama.cpp/COMMIT 2>/dev/null || echo '?'))"
  log "# ZSE_* env: $(env | grep '^ZSE_' | sort | tr '\n' ' ')"
}

wait_ready() { # URL PID LOG
  until curl -sf "$1" > /dev/null; do
    kill -0 "$2" 2>/dev/null || { tail -n 30 "$3"; return 1; }
    sleep 0.3
  done
}

start_ours() { # PORT NAME [ENV...]
  local port="$1" name="$2"
  shift 2
  env "$@" "$zse" serve --model "$zse_model" --port "$port" > "$logdir/$name.log" 2>&1 &
  pids+=($!)
  wait_ready "localhost:$port/q/health/ready" "$!" "$logdir/$name.log"
  log "# $name: port $port, pid $! $*: $(grep -o 'KV cache pool:.*' "$logdir/$name.log" | head -1)"
}

start_theirs() { # PORT NAME NP CTX
  "$llama_server" -m "$gguf_model" -np "$3" -c "$4" -t "$(nproc)" --port "$2" > "$logdir/$1.log" 2>&1 &
  pids+=($!)
  wait_ready "localhost:$2/health" "$!" "$logdir/$1.log"
  log "# $1: port $2, pid $! llama-server -m $gguf_model -np $3 -c $4 -t $(nproc): $(grep -o 'n_ctx_per_seq = [0-9]*' "$logdir/$1.log" | head -1), $(grep -o 'KV self size *= *[0-9.]* MiB.*' "$logdir/$1.log" | head -1)"
}

client() { # URL LABEL ARGS...
  log "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
  "$JAVA_HOME/bin/java" "$root/bench/EngineLoad.java" "$@" | tee -a "$out"
}

rss() { grep -E "^$1:" "/proc/$2/status" | awk '{print $2/1024 " MiB"}'; }

header
case "$mode" in
  load)
    rounds="${1:-3}"; max_tokens="${2:-32}"; shift $(( $# >= 2 ? 2 : $# ))
    concurrency=("${@:-1 16 64}")
    concurrency=(${concurrency[*]})
    np="${LLAMA_NP:-16}"; ctx="${LLAMA_CTX:-8192}"
    for c in "${concurrency[@]}"; do
      # every slot holds a ~100-token prompt and max_tokens more, rounded up to 256
      per_slot=$(( (128 + max_tokens + 255) / 256 * 256 ))
      if [ "$c" -gt "$np" ]; then np="${LLAMA_NP:-$c}"; ctx="${LLAMA_CTX:-$(( c * per_slot ))}"; fi
    done
    start_ours 18601 ours
    start_theirs theirs 18602 "$np" "$ctx"
    log "# warm-up: one stream each"
    client http://localhost:18601 ours load "$max_tokens" "$prompt_words" 1 > /dev/null
    client http://localhost:18602 theirs load "$max_tokens" "$prompt_words" 1 > /dev/null
    for r in $(seq 1 "$rounds"); do
      for c in "${concurrency[@]}"; do
        if [ $(( r % 2 )) -eq 1 ]; then order=(ours theirs); else order=(theirs ours); fi
        for side in "${order[@]}"; do
          if [ "$side" = ours ]; then port=18601; else port=18602; fi
          log "# round $r"
          client "http://localhost:$port" "$side" load "$max_tokens" "$prompt_words" "$c"
        done
      done
    done
    log "# ours peak RSS $(rss VmHWM "${pids[0]}"), theirs $(rss VmHWM "${pids[1]}")"
    ;;
  prefix)
    rounds="${1:-1}"; requests="${2:-16}"; parallel="${3:-1}"
    start_ours 18611 ours-cache
    start_ours 18612 ours-nocache ZSE_PREFIX_CACHE=false
    start_theirs theirs 18613 4 8192
    for r in $(seq 1 "$rounds"); do
      if [ $(( r % 2 )) -eq 1 ]; then order=(ours-cache ours-nocache theirs); else order=(ours-nocache ours-cache theirs); fi
      for side in "${order[@]}"; do
        n="$requests"
        case "$side" in
          ours-cache) port=18611 ;;
          ours-nocache) port=18612; n="${NOCACHE_REQUESTS:-$requests}" ;;
          theirs) port=18613; n="${THEIRS_REQUESTS:-$requests}" ;;
        esac
        log "# round $r"
        client "http://localhost:$port" "$side" prefix 4 "${SYSTEM_WORDS:-940}" "$n" "$parallel"
      done
    done
    ;;
  memory)
    zse_model="${1:-/work/peer/q05-q4.zse}"; c="${2:-64}"
    export ZSE_HEAP="${ZSE_HEAP:-512m}"
    export ZSE_MAX_MODEL_LEN="${ZSE_MAX_MODEL_LEN:-1024}"
    log "# model $zse_model, ZSE_HEAP=$ZSE_HEAP ZSE_MAX_MODEL_LEN=$ZSE_MAX_MODEL_LEN"
    start_ours 18621 ours
    pid="${pids[0]}"
    log "# RSS at ready $(rss VmRSS "$pid")"
    ( peak=0; while kill -0 "$pid" 2>/dev/null; do
        v=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        echo "$(date +%s) $v" >> "$logdir/rss.txt"; sleep 1; done ) &
    client http://localhost:18621 ours flood "$c"
    log "# peak RSS (VmHWM) $(rss VmHWM "$pid"), RSS now $(rss VmRSS "$pid")"
    log "# RSS samples (KiB), min/max over the run: $(awk 'NR==1{mn=$2;mx=$2} {if($2<mn)mn=$2; if($2>mx)mx=$2} END{print mn, mx}' "$logdir/rss.txt")"
    grep -iE 'exception|error|preempt' "$logdir/ours.log" | head -n 20 | sed 's/^/# log: /' | tee -a "$out" || true
    ;;
esac
log "# server logs in $logdir"
