#!/usr/bin/env bash
# Cold start of `zse serve` as the launcher runs it (./zse serve): process start -> HTTP up (/q/health/live), -> ready
# (/q/health/ready UP), -> first streamed token of a chat request, and the server's RSS then (its whole process: the
# launcher execs the JVM). For: no model (a path that does not exist: HTTP and health only), the demo model, and a
# .zse given as $1 (e.g. a synthetic 1B Q4); each with the server's JDK AOT cache (the launcher's, trained once per
# build) and without it (ZSE_AOT_CACHE=off). With LLAMA_SERVER (a llama-server binary) and a GGUF of the same weights
# as $2, llama-server beside them (ready: /health 200). The rows of a model run in turn, round by round; medians of
# RUNS rounds (default 3). With BASELINE (another checkout of this project, built), its launcher's rows beside (with
# its cache), to compare two versions. Prints a table.
# Usage: [LLAMA_SERVER=.../llama-server] [BASELINE=DIR] bench/cold-start.sh [MODEL.zse [SAME-WEIGHTS.gguf]]
# Make the 1B Q4: ./zse synth --preset llama-3.2-1b -o /tmp/l1b && ./zse convert /tmp/l1b -o /tmp/l1b-q4.zse --quant q4
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
big="${1:-}"
gguf="${2:-}"
runs="${RUNS:-3}"
port="${ZSE_BENCH_PORT:-18482}"
threads="${THREADS:-$(nproc)}"
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
log="$(mktemp)"
server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -f "$log"; true' EXIT

# Streams a chat completion until its first content token, then stops reading (curl dies of SIGPIPE).
first_token() { # URL MODEL_ID
  local body="{\"model\":\"$2\",\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],"
  body+="\"max_tokens\":8,\"stream\":true}"
  curl -sN "$1/v1/chat/completions" -H 'Content-Type: application/json' -d "$body" |
    while IFS= read -r line; do
      case "$line" in *'"content":"'[!\"]*) break ;; esac
    done || true
}

# One run; prints "live_ms ready_ms first_token_ms rss_mib" ("-" for what a run without a model cannot reach).
measure() { # ENGINE (zse, zse-plain, baseline, llama) MODEL ("" demo, "none", or a path)
  local engine="$1" model="$2" t0 live ready first base="http://localhost:$port"
  t0=$(now)
  if [ "$engine" = llama ]; then
    "$LLAMA_SERVER" -m "$model" --port "$port" -t "$threads" > "$log" 2>&1 &
  else
    local args=(serve --port "$port")
    case "$model" in
      "") ;;
      none) args+=(--model /nonexistent.zse) ;;
      *) args+=(--model "$model") ;;
    esac
    local cache="" launcher="$root/zse"
    [ "$engine" = zse-plain ] && cache=off
    [ "$engine" = baseline ] && launcher="$BASELINE/zse"
    ZSE_AOT_CACHE="$cache" ZSE_VERIFY_WEIGHTS=off "$launcher" "${args[@]}" > "$log" 2>&1 &
  fi
  server_pid=$!
  if [ "$engine" = llama ]; then
    # llama-server answers /health with 503 while it loads and 200 once ready
    until curl -sf -o /dev/null "$base/health"; do sleep 0.005; done
    live=$(now)
    ready=$live
  else
    until curl -sf -o /dev/null "$base/q/health/live"; do sleep 0.005; done
    live=$(now)
    if [ "$model" = none ]; then
      kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
      echo "$(ms "$t0" "$live") - - -"; return
    fi
    until curl -sf -o /dev/null "$base/q/health/ready"; do sleep 0.005; done
    ready=$(now)
  fi
  local id
  id="$(curl -s "$base/v1/models" | sed -E 's/.*"id" *: *"([^"]+)".*/\1/')"
  first_token "$base" "$id"
  first=$(now)
  local rss
  rss=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$server_pid/status" 2>/dev/null || echo -)
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  server_pid=""
  echo "$(ms "$t0" "$live") $(ms "$t0" "$ready") $(ms "$t0" "$first") ${rss:--}"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0 || a[1]=="-") print "-"; else print a[int((NR+1)/2)]}'; }

# a first run builds the app where needed and trains the launcher's cache, outside the timings
measure zse none > /dev/null
[ -n "${BASELINE:-}" ] && measure baseline none > /dev/null
printf '%-28s %-22s %10s %10s %16s %9s\n' "model" "server" "HTTP up ms" "ready ms" "first token ms" "RSS MiB"
models=(none "")
[ -n "$big" ] && models+=("$big")
for model in "${models[@]}"; do
  name="${model:-demo (tinystories-656k q8)}"
  [ "$model" = none ] && name="no model"
  engines=(zse zse-plain)
  [ -n "${BASELINE:-}" ] && engines+=(baseline)
  [ -n "$gguf" ] && [ "$model" = "$big" ] && [ -n "${LLAMA_SERVER:-}" ] && engines+=(llama)
  declare -A results=()
  for _ in $(seq "$runs"); do
    for engine in "${engines[@]}"; do
      weights="$model"
      [ "$engine" = llama ] && weights="$gguf"
      results[$engine]+="$(measure "$engine" "$weights")"$'\n'
    done
  done
  for engine in "${engines[@]}"; do
    col() { printf '%s' "${results[$engine]}" | awk -v c="$1" 'NF {print $c}' | median; }
    case "$engine" in
      zse) label="zse serve, AOT cache" ;;
      zse-plain) label="zse serve, no cache" ;;
      baseline) label="baseline, AOT cache" ;;
      llama) label="llama-server ($(basename "$gguf"))" ;;
    esac
    printf '%-28s %-22s %10s %10s %16s %9s\n' "$(basename "$name")" "$label" "$(col 1)" "$(col 2)" "$(col 3)" \
      "$(col 4)"
  done
  unset results
done
