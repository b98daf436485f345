#!/usr/bin/env bash
# Writes src/test/resources/eval/tinystories-sampled.txt: stories sampled from the F32 TinyStories-656K model
# (temperature 1.0, one fixed seed per prompt), the text `zse eval` and QualityComparisonTest run the models over.
# Text the model itself finds natural: a tiny model trained on children's stories is lost on any other text.
# Usage: tools/eval/story-text.sh   (needs nothing but the repository and a JDK 25)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
./zse convert src/test/resources/models/tinystories-656k -o "$work/f32.zse" --quant f32 --force >/dev/null 2>&1

prompts=(
  "Once upon a time"
  "One day, a little girl named Lily"
  "Tom and his dog"
  "There was a big red ball"
  "The sun was shining and"
  "Mom said"
  "A small bird"
  "Ben wanted to"
  "In the park, there was"
  "The cat was sad because"
  "Sara found a box"
  "It was a rainy day"
  "Max had a new toy"
  "The little boat"
  "Anna and her friend"
  "Once there was a kind old man"
  "Lucy liked to sing"
  "The big tree in the garden"
)
out=src/test/resources/eval/tinystories-sampled.txt
: > "$out"
seed=1
for prompt in "${prompts[@]}"; do
  story="$(./zse generate --model "$work/f32.zse" --prompt "$prompt" --max-tokens 400 --temperature 1.0 --seed "$seed")"
  # The prompt is part of the story: generate prints only the continuation.
  printf '%s%s\n\n' "$prompt" "$story" >> "$out"
  seed=$((seed + 1))
done
printf 'wrote %s: %s bytes, %s stories\n' "$out" "$(wc -c < "$out")" "${#prompts[@]}"
