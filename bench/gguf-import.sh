#!/usr/bin/env bash
# `zse convert` of GGUF files: seconds, throughput, peak RSS, bytes in and out, and what the import kept exactly.
# Usage: bench/gguf-import.sh FILE.gguf...   (e.g. llama.cpp's F16/BF16/Q8_0/Q4_0/Q4_K_M/Q5_K_M/Q6_K of one checkpoint)
# Each file is read once before its run so that the page cache holds it (the time is the import's, not the disk's).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
read -r -a zse <<< "${ZSE:-$root/zse}" # or a wrapper around a frozen copy of the app (bench/cpu-kernels.sh)
work="${WORK:-/tmp/zse-gguf-import}"
mkdir -p "$work"
printf '%-22s %9s %9s %8s %9s %12s  %s\n' gguf "GGUF MB" ".zse MB" seconds "MB/s in" "peak RSS MB" notes
for gguf in "$@"; do
  out="$work/$(basename "$gguf" .gguf).zse"
  cat "$gguf" > /dev/null
  /usr/bin/time -f '%e %M' -o "$work/time.txt" "${zse[@]}" convert "$gguf" -o "$out" --force \
    >"$work/convert.log" 2>&1
  read -r secs rss_kb < "$work/time.txt"
  in_mb=$(( $(stat -c %s "$gguf") / 1000000 ))
  notes=$(grep -o '[A-Z0-9_]* -> [A-Z0-9_]*[^,]*tensors\?' "$work/convert.log" | paste -sd ';' | cut -c1-120)
  printf '%-22s %9d %9d %8s %9.0f %12d  %s\n' "$(basename "$gguf")" "$in_mb" $(( $(stat -c %s "$out") / 1000000 )) \
    "$secs" "$(echo "$in_mb / $secs" | bc -l)" $((rss_kb / 1024)) "$notes"
  rm -f "$out"
done
