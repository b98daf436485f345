#!/usr/bin/env bash
# Jlama 0.8.4 beside zse on the same weights (issue 4, "Speed and memory"). Jlama lives in its own Maven module
# (bench/jlama/pom.xml), never on the app's classpath.
#
#   bench/jlama.sh MODEL_DIR [--q4] [--zse FILE.zse] [--runs N] [--threads N] [--prompt-tokens N] [--tokens N]
#                  [--warmup N]
#       load ms, TTFT, prefill and decode tok/s, peak RSS of Jlama on the Hugging Face dir MODEL_DIR (as loaded, or
#       with --q4 after Jlama's offline quantizeModel into $JLAMA_WORK/jlama-NAME-q4), each after N warm-up runs;
#       with --zse also `zse bench` on FILE.zse, the engines alternating run by run; medians and spread at the end.
#   bench/jlama.sh MODEL_DIR --first-token [--q4] [--zse FILE.zse] [--runs N] [--prompt TEXT]
#       whole-process seconds to one generated token (JVM start included): Jlama's generate() against
#       `zse generate --max-tokens 1 --backend cpu`, alternating.
# Defaults: 2 threads, 128 prompt tokens, 64 decoded, 2 warm-up runs, 3 runs (5 with --first-token), JLAMA_WORK=/tmp.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/jdk.sh"

usage() { sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
model_dir="$1"; shift
[ -f "$model_dir/config.json" ] || { echo "jlama.sh: $model_dir has no config.json" >&2; exit 2; }
q4=0 first_token=0 zse_file="" runs="" threads=2 prompt_tokens=128 tokens=64 warmup=2 prompt="Hello"
while [ $# -gt 0 ]; do
  case "$1" in
    --q4) q4=1 ;;
    --first-token) first_token=1 ;;
    --zse) zse_file="$2"; shift ;;
    --runs) runs="$2"; shift ;;
    --threads) threads="$2"; shift ;;
    --prompt-tokens) prompt_tokens="$2"; shift ;;
    --tokens) tokens="$2"; shift ;;
    --warmup) warmup="$2"; shift ;;
    --prompt) prompt="$2"; shift ;;
    *) echo "jlama.sh: unknown option $1" >&2; usage ;;
  esac
  shift
done
[ -z "$zse_file" ] || [ -f "$zse_file" ] || { echo "jlama.sh: no file $zse_file" >&2; exit 2; }
runs="${runs:-$([ $first_token = 1 ] && echo 5 || echo 3)}"

# Build the benchmark module when it is missing or its sources changed.
module="$root/bench/jlama"
stamp="$module/target/built"
if [ ! -f "$stamp" ] || [ -n "$(find "$module/src" "$module/pom.xml" -newer "$stamp" -type f -print -quit)" ]; then
  echo "jlama.sh: building bench/jlama..." >&2
  "$root/mvnw" -q -B -o -f "$module/pom.xml" package >&2
  touch "$stamp"
fi
jlama=("$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED
       ${JLAMA_JAVA_OPTS:-} -cp "$module/target/classes:$module/target/lib/*" io.zse.bench.jlama.JlamaBench)

if [ $q4 = 1 ]; then
  q4_dir="${JLAMA_WORK:-/tmp}/jlama-$(basename "$(cd "$model_dir" && pwd)")-q4"
  if [ ! -f "$q4_dir/model.safetensors" ]; then
    rm -rf "$q4_dir"
    echo "jlama.sh: quantizing $model_dir to Jlama Q4 in $q4_dir..." >&2
    "${jlama[@]}" quantize "$model_dir" "$q4_dir" 2>/dev/null
  fi
  echo "Jlama Q4 weights: $(( $(stat -c %s "$q4_dir/model.safetensors") / 1000000 )) MB ($q4_dir/model.safetensors)"
  model_dir="$q4_dir"
fi

# Median and min-max of column $2 of the rows in file $1.
stats() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2;
  printf "%.2f (%.2f-%.2f)", m, v[1], v[NR]}'; }

now_ns() { date +%s%N; }

if [ $first_token = 1 ]; then
  log="$(mktemp)"; trap 'rm -f "$log" "$log".*' EXIT
  printf '%-6s %4s %9s  %s\n' engine run seconds output
  for run in $(seq "$runs"); do
    t0=$(now_ns); out=$("${jlama[@]}" first-token "$model_dir" --threads "$threads" --prompt "$prompt" 2>/dev/null)
    secs=$(printf '%.2f' "$(echo "($(now_ns) - $t0) / 1000000000" | bc -l)")
    printf '%-6s %4d %9.2f  %q\n' jlama "$run" "$secs" "$out"; printf '%s\n' "$secs" >> "$log.jlama"
    if [ -n "$zse_file" ]; then
      t0=$(now_ns); out=$("$root/zse" generate --model "$zse_file" --prompt "$prompt" --max-tokens 1 \
        --temperature 0 --backend cpu --threads "$threads" 2>/dev/null)
      secs=$(printf '%.2f' "$(echo "($(now_ns) - $t0) / 1000000000" | bc -l)")
      printf '%-6s %4d %9.2f  %q\n' zse "$run" "$secs" "$out"; printf '%s\n' "$secs" >> "$log.zse"
    fi
  done
  for engine in jlama zse; do
    [ -f "$log.$engine" ] && printf '%-6s median (min-max) seconds: %s\n' "$engine" "$(stats "$log.$engine" 1)"
  done
  exit 0
fi

log="$(mktemp)"; trap 'rm -f "$log" "$log".*' EXIT
printf '%-6s %4s  %s\n' engine run "threads  load ms  TTFT ms  prefill tok/s  decode tok/s  ...  peak RSS MiB"
for run in $(seq "$runs"); do
  "${jlama[@]}" bench "$model_dir" --threads "$threads" --prompt-tokens "$prompt_tokens" --tokens "$tokens" \
    --warmup "$warmup" 2>/dev/null > "$log.out"
  [ "$run" = 1 ] && head -1 "$log.out"
  row=$(tail -1 "$log.out")
  printf '%-6s %4d  %s\n' jlama "$run" "$row"
  echo "$row" | awk '{print $2, $3, $4, $5, $7}' >> "$log.jlama"
  if [ -n "$zse_file" ]; then
    "$root/zse" bench --model "$zse_file" --threads "$threads" --prompt-tokens "$prompt_tokens" --tokens "$tokens" \
      --warmup "$warmup" --bandwidth-mb 0 2>/dev/null > "$log.out"
    [ "$run" = 1 ] && head -1 "$log.out"
    row=$(tail -1 "$log.out")
    printf '%-6s %4d  %s\n' zse "$run" "$row"
    echo "$row" | awk '{print $2, $3, $4, $5, $NF}' >> "$log.zse"
  fi
done
echo
echo "median (min-max) of $runs runs, $threads threads, prompt $prompt_tokens, $tokens decoded, $warmup warm-up runs"
printf '%-6s %-26s %-26s %-26s %-26s %s\n' engine "load ms" "TTFT ms" "prefill tok/s" "decode tok/s" "peak RSS MiB"
for engine in jlama zse; do
  [ -f "$log.$engine" ] || continue
  printf '%-6s' "$engine"
  for c in 1 2 3 4 5; do printf ' %-26s' "$(stats "$log.$engine" $c)"; done
  echo
done
