#!/usr/bin/env bash
# Cold start of `zse serve`: process start -> HTTP up (/q/health/live), -> ready (/q/health/ready UP), -> first
# streamed token of a chat request. For: no model (a path that does not exist: HTTP and health only), the demo model,
# and a .zse given as $1 (e.g. a synthetic 1B Q4); each on the plain JVM and with the JDK AOT cache (-XX:AOTCache,
# trained once per model by a run that serves a few requests). Median of RUNS (default 3). Prints a table.
# Usage: bench/cold-start.sh [MODEL.zse]
# Make the 1B Q4: ./zse synth --preset llama-3.2-1b -o /tmp/l1b && ./zse convert /tmp/l1b -o /tmp/l1b-q4.zse --quant q4
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/jdk.sh"
big="${1:-}"
runs="${RUNS:-3}"
port="${ZSE_BENCH_PORT:-18482}"
jar="$root/target/quarkus-app/quarkus-run.jar"
[ -f "$jar" ] || (cd "$root" && ./mvnw -q -B -DskipTests package)
aot_dir="$root/target/aot"
mkdir -p "$aot_dir"
flags=(--enable-native-access=ALL-UNNAMED -XX:+UseSerialGC --add-modules jdk.incubator.vector)
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

# one run: prints "live_ms ready_ms first_token_ms" (ready/first token "-" when the model is absent)
measure() { # $1 model arg ("" demo, "none" no model, else a path)  $2 extra JVM flags
  local model="$1" extra="$2" args=(serve --port "$port") t0 pid live ready first
  case "$model" in
    "") ;;
    none) args+=(--model /nonexistent.zse) ;;
    *) args+=(--model "$model") ;;
  esac
  t0=$(now)
  # shellcheck disable=SC2086
  "$JAVA_HOME/bin/java" "${flags[@]}" $extra -jar "$jar" "${args[@]}" > /tmp/zse-cold.log 2>&1 &
  pid=$!
  server_pid=$pid
  until curl -sf -o /dev/null "localhost:$port/q/health/live"; do sleep 0.005; done
  live=$(now)
  if [ "$model" = none ]; then
    kill $pid; wait $pid 2>/dev/null || true
    echo "$(ms "$t0" "$live") - -"; return
  fi
  until curl -sf -o /dev/null "localhost:$port/q/health/ready"; do sleep 0.005; done
  ready=$(now)
  local id
  id="$(curl -s "localhost:$port/v1/models" | sed -E 's/.*"id":"([^"]+)".*/\1/')"
  curl -sN "localhost:$port/v1/chat/completions" -H 'Content-Type: application/json' \
    -d "{\"model\":\"$id\",\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":8,\"stream\":true}" |
    while IFS= read -r line; do
      case "$line" in *'"content":"'[!\"]*) break ;; esac
    done || true # curl dies of SIGPIPE once we stop reading
  first=$(now)
  kill $pid; wait $pid 2>/dev/null || true
  echo "$(ms "$t0" "$live") $(ms "$t0" "$ready") $(ms "$t0" "$first")"
}

server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; true' EXIT

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0 || a[1]=="-") print "-"; else print a[int((NR+1)/2)]}'; }

train() { # $1 model arg, $2 cache file: a run that serves requests, then exits and writes the AOT cache
  local model="$1" cache="$2"
  [ -f "$cache" ] && return
  echo "training AOT cache $cache ..." >&2
  measure "$model" "-XX:AOTCacheOutput=$cache" > /dev/null
  sleep 1
}

printf '%-28s %-6s %10s %10s %16s\n' "model" "JVM" "HTTP up ms" "ready ms" "first token ms"
models=(none "")
[ -n "$big" ] && models+=("$big")
for model in "${models[@]}"; do
  name="${model:-demo (tinystories-656k q8)}"
  [ "$model" = none ] && name="no model"
  for mode in plain aot; do
    extra=""
    if [ "$mode" = aot ]; then
      cache="$aot_dir/$(basename "${model:-demo}" .zse).aot"
      train "$model" "$cache"
      extra="-XX:AOTCache=$cache"
    fi
    results=()
    for _ in $(seq "$runs"); do results+=("$(measure "$model" "$extra")"); done
    col() { printf '%s\n' "${results[@]}" | awk -v c="$1" '{print $c}' | median; }
    printf '%-28s %-6s %10s %10s %16s\n' "$(basename "$name")" "$mode" "$(col 1)" "$(col 2)" "$(col 3)"
  done
done
