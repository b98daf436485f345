#!/usr/bin/env bash
# Variants of the CUDA backend (the environment switches of io.zse.backend.cuda: ZSE_CUDA_MMA_ROWS, _PRODUCT_SPLITS,
# _ROW_WARPS, _SWIGLU, _SWIGLU_AHEAD, _NORM, _ROPE, _OVERLAP, _ATTENTION_KEYS, _UPLOAD_LANES, _UPLOAD_SOURCE,
# _UPLOAD_CHUNK_MB, _UPLOAD_ISSUE, _PREFILL_TILE, _PROMPT_PRODUCTS) timed beside each other by zse bench, interleaved round by round on one machine and
# model; prints the lines of each run that match a pattern, prefixed with the variant.
#
# Usage: bench/gpu-ab.sh MODEL ROUNDS "BENCH OPTIONS" PATTERN VARIANT...
#   VARIANT: one or more VAR=value or --option=value joined by commas (an option is added to that variant's bench
#   options: --kv-cache=int8 against --kv-cache=f16, say), or "default" (no switch set)
# e.g. bench/gpu-ab.sh m.zse 2 "--prompt-tokens 128 --tokens 64 --batch 16" "together" \
#        default ZSE_CUDA_MMA_ROWS=32
# Runs from a checkout with target/quarkus-app built; JAVA_HOME a JDK 25 or tools/gpu/bundle.sh's runtime.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 5 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
model="$1" rounds="$2" options="$3" pattern="$4"
shift 4
java="${JAVA_HOME:?set JAVA_HOME}/bin/java"
for round in $(seq "$rounds"); do
  for variant in "$@"; do
    items=() settings=() extra=()
    [ "$variant" = default ] || IFS=, read -ra items <<< "$variant"
    for item in "${items[@]}"; do
      case "$item" in --*) extra+=("$item");; *) settings+=("$item");; esac
    done
    # shellcheck disable=SC2086
    env "${settings[@]}" "$java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
      -jar "$root/target/quarkus-app/quarkus-run.jar" bench --model "$model" --backend cuda $options "${extra[@]}" \
      2>&1 \
      | grep -E "$pattern" | sed "s|^|round $round, $variant: |"
  done
done
