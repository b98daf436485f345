#!/usr/bin/env bash
# CPU prefill and decode of each architecture's synthetic preset beside Llama's: `zse synth` (bf16), `zse convert
# --quant Q` (default layout), then `zse bench`, in interleaved rounds; medians as a table. Raw output goes to
# bench/results/architectures-<time>.txt.
# Usage: bench/architectures.sh [ROUNDS] [QUANT] [PRESET...]   (defaults: 3, q4, llama-3.2-1b qwen3-0.6b gemma-3-1b
#        gemma-2-2b phi-3-mini-4k bitnet-b1.58-2b-4t)
# Environment: THREADS (default 2), PROMPT (64), TOKENS (32), WORK (/tmp/zse-architectures; each checkpoint is removed
# once converted, the .zse files stay).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
read -r -a zse <<< "${ZSE:-$root/zse}" # or a wrapper around a frozen copy of the app (bench/cpu-kernels.sh)
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
rounds="${1:-3}"
quant="${2:-q4}"
shift $(( $# > 2 ? 2 : $# ))
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(llama-3.2-1b qwen3-0.6b gemma-3-1b gemma-2-2b phi-3-mini-4k bitnet-b1.58-2b-4t)
threads="${THREADS:-2}"
work="${WORK:-/tmp/zse-architectures}"
mkdir -p "$work" "$root/bench/results"
out="$root/bench/results/architectures-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "# $(date -u) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) cores=$(nproc)"
  echo "# zse $(git -C "$root" rev-parse --short HEAD); $quant, threads $threads, prompt ${PROMPT:-64}, tokens ${TOKENS:-32}"
} > "$out"

for p in "${presets[@]}"; do
  zse_file="$work/$p-$quant.zse"
  if [ ! -f "$zse_file" ]; then
    "${zse[@]}" synth --preset "$p" -o "$work/$p" --force >>"$out" 2>&1
    # BitNet's projections are ternary in the checkpoint: they stay TERNARY whatever --quant says
    "${zse[@]}" convert "$work/$p" -o "$zse_file" --quant "$quant" --force >>"$out" 2>&1
    rm -rf "${work:?}/$p"
  fi
done

declare -A rows
for ((r = 1; r <= rounds; r++)); do
  for p in "${presets[@]}"; do
    echo "## $p round $r" >> "$out"
    # zse bench's row: "threads load TTFT prefill decode ..."
    row=$("${zse[@]}" bench --model "$work/$p-$quant.zse" --prompt-tokens "${PROMPT:-64}" --tokens "${TOKENS:-32}" \
      --warmup 1 --threads "$threads" --bandwidth-mb 0 2>>"$out" | tee -a "$out" | tail -1 | awk '{print $4, $5}')
    rows["$p"]+="$row"$'\n'
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
{
  printf '\n%-22s %10s %10s %10s %14s\n' preset "file MB" prefill decode "decode / llama"
  base=""
  for p in "${presets[@]}"; do
    prefill=$(printf '%s' "${rows[$p]}" | awk 'NF {print $1}' | median)
    decode=$(printf '%s' "${rows[$p]}" | awk 'NF {print $2}' | median)
    [ -n "$base" ] || base="$decode"
    printf '%-22s %10d %10.1f %10.2f %14.2f\n' "$p" $(( $(stat -c %s "$work/$p-$quant.zse") / 1000000 )) \
      "$prefill" "$decode" "$(echo "$decode / $base" | bc -l)"
  done
} | tee -a "$out"
echo "raw: $out"
