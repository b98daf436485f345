#!/usr/bin/env bash
# GPU figures on a CUDA machine: weight upload GB/s and load time, process start -> first token, decode tok/s, each
# on the CPU and the CUDA backend for comparison. Usage: bench/gpu.sh [preset] [workdir]
#   (default: a synthetic llama-3-8b (7B-class) converted to q4; needs ~16 GB for the BF16 synth + ~5 GB .zse)
# Runs from a checkout with target/quarkus-app built (and target/quarkus-app/lib/native/libzse_cuda.so);
# JAVA_HOME may point at a jlinked runtime (src/main/native/README.md, "Carrying a runtime").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${1:-llama-3-8b}"
work="${2:-/tmp/zse-gpu}"
java="${JAVA_HOME:?set JAVA_HOME}/bin/java"
app="$root/target/quarkus-app/quarkus-run.jar"
zse() { "$java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar "$app" "$@"; }
mkdir -p "$work"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv,noheader || true

hf="$work/$preset"
model="$work/$preset-q4.zse"
[ -f "$hf/config.json" ] || zse synth --preset "$preset" -o "$hf" --force >&2
[ -f "$model" ] || zse convert "$hf" -o "$model" --quant q4 --force >&2
size=$(stat -c %s "$model")
echo "model $model: $((size / 1000000)) MB"

# Cold-ish start to first token: page cache dropped when permitted, so the upload reads the disk like a fresh pod.
sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "(page cache not dropped: not root)"
start=$(date +%s.%N)
zse generate --model "$model" --backend cuda --prompt "Once upon a time" --max-tokens 1 --temperature 0 >/dev/null
end=$(date +%s.%N)
echo "process start -> first token (cuda): $(echo "$end - $start" | bc) s"

for backend in cuda cpu; do
  echo "== zse bench --backend $backend (load = open + upload; upload GB/s = file size / load)"
  zse bench --model "$model" --backend "$backend" --prompt-tokens 128 --tokens 128 --warmup 1 | tee "$work/bench-$backend.txt"
done
# Upload at PCIe speed: the weights through pinned staging buffers on several streams, timed from the first weight to
# the last landed (zse bench prints it for the CUDA backend); compare with the link's ~25 GB/s (PCIe 4 x16) or ~50 GB/s
# (PCIe 5 x16), and with a plain copy of the file's bytes to the device by nvidia's bandwidthTest where installed.
grep '^upload' "$work/bench-cuda.txt" || echo "upload: no line from zse bench --backend cuda"
command -v bandwidthTest >/dev/null && bandwidthTest --htod --memory=pinned | grep -i 'host to device' -A3 || true
# Decode roofline: each token streams every weight byte once, so tok/s x file size = achieved bandwidth.
decode=$(awk '/^decode/ {print $2}' "$work/bench-cuda.txt")
echo "achieved weight bandwidth at batch 1: $(echo "scale=1; $decode * $size / 1000000000" | bc) GB/s (compare with the HBM peak above)"
