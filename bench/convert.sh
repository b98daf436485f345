#!/usr/bin/env bash
# Convert throughput, peak RSS and file size per quant type on a synthetic checkpoint, then open time of the
# smallest and largest result. Usage: bench/convert.sh [preset] [workdir]   (default llama-3.2-1b, /tmp/zse-bench)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${1:-llama-3.2-1b}"
work="${2:-/tmp/zse-bench}"
mkdir -p "$work"
hf="$work/$preset"
if [ ! -f "$hf/config.json" ]; then
  "$root/zse" synth --preset "$preset" -o "$hf" --force >&2
fi
input_mb=$(du -sm --apparent-size "$hf" | cut -f1)
printf '%-6s %10s %10s %12s %12s\n' quant seconds "MB/s in" "peak RSS MB" "file MB"
for q in f32 f16 bf16 q8 q4 nf4; do
  out="$work/$preset-$q.zse"
  /usr/bin/time -f '%e %M' -o "$work/time.txt" "$root/zse" convert "$hf" -o "$out" --quant "$q" --force \
    >/dev/null 2>"$work/convert-$q.log"
  read -r secs rss_kb < "$work/time.txt"
  size_mb=$(( $(stat -c %s "$out") / 1000000 ))
  printf '%-6s %10s %10.0f %12d %12d\n' "$q" "$secs" "$(echo "$input_mb / $secs" | bc -l)" $((rss_kb / 1024)) "$size_mb"
done
echo
printf '%-30s %12s %14s\n' file "file MB" "open ms"
small="$work/tinystories-q8.zse"
"$root/zse" convert "$root/src/test/resources/models/tinystories-656k" -o "$small" --quant q8 --force >/dev/null 2>&1
for f in "$small" "$work/$preset-q4.zse" "$work/$preset-f32.zse"; do
  ms=$("$root/zse" inspect "$f" --json | grep '"open_ms"' | tr -dc '0-9.')
  printf '%-30s %12d %14s\n' "$(basename "$f")" $(( $(stat -c %s "$f") / 1000000 )) "$ms"
done
