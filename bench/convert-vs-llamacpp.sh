#!/usr/bin/env bash
# zse convert against llama.cpp's pipeline (convert_hf_to_gguf.py to F16, then llama-quantize) on one bf16 checkpoint,
# to Q8 (Q8_0) and Q4 (Q4_0): interleaved rounds (who goes first flips every round), the page cache warmed with the
# checkpoint before every run, real-time priority where we are root; medians at the end.
# Usage: bench/convert-vs-llamacpp.sh [rounds] [hf_dir] [workdir]
#   env PEER (llama.cpp checkout), PEER_BIN (its build/bin), PEER_PY (a python with its requirements)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}"
hf="${2:-/work/peer/l1b}"
work="${3:-/tmp/zse-convert-bench}"
peer="${PEER:-/work/peer/llama.cpp}"
bin="${PEER_BIN:-/work/peer/build/bin}"
py="${PEER_PY:-/work/peer/venv/bin/python}"
mkdir -p "$work"
rt=()
if [ "$(id -u)" = 0 ]; then rt=(chrt -f 10); fi
"$root/zse" --version >/dev/null # builds the app first if sources changed, outside the timings

warm() { cat "$hf"/*.safetensors >/dev/null; }

# Runs a command under /usr/bin/time; prints "wall user peak_rss_kb".
timed() {
  if ! /usr/bin/time -f '%e %U %M' -o "$work/time.txt" "${rt[@]}" "$@" >"$work/last.log" 2>&1; then
    cat "$work/last.log" >&2
    exit 1
  fi
  cat "$work/time.txt"
}

ours() { # quant
  warm
  read -r wall user rss < <(timed "$root/zse" convert "$hf" -o "$work/zse-$1.zse" --quant "$1" --force)
  echo "zse $1 wall $wall user $user rss_kb $rss bytes $(stat -c %s "$work/zse-$1.zse")"
}

theirs() { # quant llama_type
  warm
  read -r w1 u1 r1 < <(timed "$py" "$peer/convert_hf_to_gguf.py" "$hf" --outtype f16 --outfile "$work/f16.gguf")
  read -r w2 u2 r2 < <(timed "$bin/llama-quantize" "$work/f16.gguf" "$work/$2.gguf" "$2")
  rm -f "$work/f16.gguf"
  echo "llama.cpp $1 wall $(echo "$w1 + $w2" | bc) user $(echo "$u1 + $u2" | bc) rss_kb $((r1 > r2 ? r1 : r2))" \
    "bytes $(stat -c %s "$work/$2.gguf") (to-f16 $w1 s, quantize $w2 s)"
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); checkpoint $hf" \
  "($(du -sb --apparent-size "$hf" | cut -f1) bytes); zse $(git -C "$root" rev-parse --short HEAD)," \
  "llama.cpp $(git -C "$peer" rev-parse --short HEAD 2>/dev/null || echo '?')"
for ((round = 1; round <= rounds; round++)); do
  for pair in "q8 Q8_0" "q4 Q4_0"; do
    set -- $pair
    echo "## round $round, $1 (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    if ((round % 2)); then ours "$1"; theirs "$1" "$2"; else theirs "$1" "$2"; ours "$1"; fi
  done
done | tee "$work/raw.txt"

echo
printf '%-6s %14s %14s %8s %16s %16s\n' quant "zse s" "llama.cpp s" ratio "zse peak RSS MB" "llama peak MB"
for q in q8 q4; do
  median() { grep "^$1 $q " "$work/raw.txt" | awk -v f="$2" '{print $f}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  z=$(median zse 4); l=$(median llama.cpp 4)
  printf '%-6s %14s %14s %8.2f %16d %16d\n' "$q" "$z" "$l" "$(echo "$z / $l" | bc -l)" \
    $(( $(median zse 8) / 1024 )) $(( $(median llama.cpp 8) / 1024 ))
done
