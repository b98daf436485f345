#!/usr/bin/env bash
# Cold-start cost of the tokenizer: whole-process time of `zse tokenize` on a one-layer Qwen2.5 .zse (151k vocab,
# compiled tokenizer section) against the same command on tokenizer.json and against `zse --version` (JVM start-up
# alone). Usage: bench/tokenizer-load.sh [workdir]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-/tmp/zse-bench}"
mkdir -p "$work"
hf="$work/qwen-1layer"
[ -f "$hf/config.json" ] || "$root/zse" synth --preset qwen2.5-0.5b --layers 1 -o "$hf" --force >&2
zse="$work/qwen-1layer-q8.zse"
[ -f "$zse" ] || "$root/zse" convert "$hf" -o "$zse" --quant q8 >/dev/null 2>&1
runs=5
time_of() {
  local best=999999 t
  for _ in $(seq $runs); do
    echo 'Hello, world! 你好' | /usr/bin/time -f '%e' -o "$work/t.txt" "$@" >/dev/null 2>&1
    t=$(tail -1 "$work/t.txt")
    best=$(echo "if ($t < $best) $t else $best" | bc -l)
  done
  echo "$best"
}
printf '%-44s %10s\n' "command (best of $runs, whole process)" seconds
printf '%-44s %10s\n' "zse --version (JVM + app start)" "$(time_of "$root/zse" --version)"
printf '%-44s %10s\n' "zse tokenize --model qwen .zse (compiled)" "$(time_of "$root/zse" tokenize --model "$zse")"
printf '%-44s %10s\n' "zse tokenize --model qwen tokenizer.json" "$(time_of "$root/zse" tokenize --model "$hf/tokenizer.json")"
