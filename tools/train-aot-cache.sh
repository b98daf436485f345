#!/usr/bin/env bash
# Writes the JDK AOT cache ./zse gives the compute commands: one `zse generate` run on the bundled TinyStories model,
# converted to Q4 (its embeddings stay Q8), records the classes it loads and links and the profiles of the methods it
# runs, the tokenizer, sampler and the Q4/Q8 kernels among them. A cache is only used with the exact JVM flags and
# class path it was trained with, so ./zse passes its own.
# Usage: tools/train-aot-cache.sh CACHE_FILE JAVA_FLAGS... -cp CLASSPATH MAIN_CLASS
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$1"
shift
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "zse: training the start-up cache (once per build)..."
rm -f "$cache"
"$JAVA_HOME/bin/java" "$@" convert "$root/src/test/resources/models/tinystories-656k" -o "$work/demo-q4.zse" \
  --quant q4 >"$work/convert.log" 2>&1 || { cat "$work/convert.log"; exit 1; }
"$JAVA_HOME/bin/java" -XX:AOTCacheOutput="$cache" -Xlog:aot=error:file="$work/aot.log" "$@" generate \
  --model "$work/demo-q4.zse" --prompt "Once upon a time there was a little girl named Lily. She loved to play" \
  --max-tokens 48 --temperature 0 >"$work/generate.log" 2>&1 || { cat "$work/generate.log" "$work/aot.log"; exit 1; }
[ -s "$cache" ]
