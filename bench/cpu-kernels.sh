#!/usr/bin/env bash
# CPU speed against llama.cpp on the same checkpoint: prefill and decode tok/s of `zse bench` and `llama-bench`, for
# each pair of files given and each thread count, in interleaved rounds (ours first in odd rounds, theirs first in
# even ones), medians printed as a table. Raw output goes to bench/results/cpu-kernels-<time>.txt.
#
# Usage: bench/cpu-kernels.sh ROUNDS THREADS "LABEL ZSE_FILE GGUF_FILE" ...
#   e.g. bench/cpu-kernels.sh 3 "1 2" "Q4/Q4_0 /work/peer/l1b-q4.zse /work/peer/l1b-q4_0.gguf"
# Environment: PROMPT (default 128) and TOKENS (default 64) as llama-bench's -p and -n; LLAMA_BENCH (default
# /work/peer/build/bin/llama-bench); ZSE (default this checkout's ./zse) the command run as `zse`, e.g. a wrapper
# around a copy of target/quarkus-app, so that editing sources mid-run rebuilds nothing; ZSE_CPU_KERNELS passes
# through. On a machine of your own run it as root: every measurement then runs at real-time priority (chrt -f 10), so
# other jobs' threads do not take its cores mid-run; REALTIME=0 runs at normal priority (a machine shared with others).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
rounds="${1:?usage: cpu-kernels.sh ROUNDS THREADS PAIR...}"
threads="${2:?usage: cpu-kernels.sh ROUNDS THREADS PAIR...}"
shift 2
prompt="${PROMPT:-128}"
tokens="${TOKENS:-64}"
llama_bench="${LLAMA_BENCH:-/work/peer/build/bin/llama-bench}"
read -r -a zse <<< "${ZSE:-$root/zse}"
mkdir -p "$root/bench/results"
out="$root/bench/results/cpu-kernels-$(date -u +%Y%m%dT%H%M%SZ).txt"
rt=()
if [ "${REALTIME:-1}" != 0 ] && chrt -f 10 true 2>/dev/null; then rt=(chrt -f 10); fi
{
  echo "# $(date -u) $(uname -n) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) cores=$(nproc)"
  echo "# zse $(git -C "$root" rev-parse --short HEAD); llama.cpp $(cat /work/peer/llama.cpp/COMMIT 2>/dev/null || echo '?')"
  echo "# prompt $prompt, tokens $tokens, rounds $rounds, priority: ${rt[*]:-normal}"
} > "$out"

# zse bench's row: "threads load TTFT prefill decode ..." -> "prefill decode"
ours() { # $1 file $2 threads
  "${rt[@]}" "${zse[@]}" bench --model "$1" --prompt-tokens "$prompt" --tokens "$tokens" --warmup 1 \
    --threads "$2" --bandwidth-mb 0 2>>"$out" | tee -a "$out" | tail -1 | awk '{print $4, $5}'
}
# llama-bench CSV: avg_ts of the pp row, then of the tg row
theirs() { # $1 file $2 threads
  "${rt[@]}" "$llama_bench" -m "$1" -p "$prompt" -n "$tokens" -t "$2" -r 1 -o csv 2>>"$out" | tee -a "$out" \
    | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); if (h == "avg_ts") c = i }; next }
               { gsub(/"/, "", $c); printf "%s ", $c } END { print "" }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A results
for pair in "$@"; do
  read -r label zse_file gguf_file <<< "$pair"
  for t in $threads; do
    for ((r = 1; r <= rounds; r++)); do
      echo "## $label threads=$t round $r" >> "$out"
      if (( r % 2 )); then a=$(ours "$zse_file" "$t"); b=$(theirs "$gguf_file" "$t")
      else b=$(theirs "$gguf_file" "$t"); a=$(ours "$zse_file" "$t"); fi
      results["$label $t"]+="$a $b"$'\n'
    done
  done
done

{
  printf '\n%-10s %7s %14s %14s %7s %14s %14s %7s\n' pair threads "zse prefill" "llama prefill" ratio \
    "zse decode" "llama decode" ratio
  for pair in "$@"; do
    read -r label _ _ <<< "$pair"
    for t in $threads; do
      rows="${results["$label $t"]}"
      zp=$(awk 'NF {print $1}' <<< "$rows" | median); zd=$(awk 'NF {print $2}' <<< "$rows" | median)
      lp=$(awk 'NF {print $3}' <<< "$rows" | median); ld=$(awk 'NF {print $4}' <<< "$rows" | median)
      printf '%-10s %7s %14.1f %14.1f %7.2f %14.2f %14.2f %7.2f\n' "$label" "$t" "$zp" "$lp" \
        "$(awk -v a="$zp" -v b="$lp" 'BEGIN {print a / b}')" "$zd" "$ld" \
        "$(awk -v a="$zd" -v b="$ld" 'BEGIN {print a / b}')"
    done
  done
} | tee -a "$out"
echo "raw output: $out"
