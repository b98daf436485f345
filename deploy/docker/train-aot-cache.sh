#!/usr/bin/env bash
# Training run for the server's JDK AOT cache, run once while the JVM image is built (and by ./zse serve once per
# build in a checkout): converts the bundled demo model, starts
# `zse serve` on the CPU with -XX:AOTCacheOutput, waits for readiness, calls the OpenAI API (models, a streamed and a
# plain chat completion), then stops the server with SIGTERM; the JVM assembles the cache as it exits.
# Usage: train-aot-cache.sh OUTPUT.aot   (run from the image's /app, or a checkout with target/quarkus-app built;
# ZSE_DEMO_CHECKPOINT names the demo model's folder where it is not at demo/tinystories-656k)
set -euo pipefail
out="${1:?usage: train-aot-cache.sh OUTPUT.aot}"
app="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -x "$app/zse" ] || app="$(cd "$app/.." && pwd)"  # a checkout: the script lies in deploy/docker/
demo="${ZSE_DEMO_CHECKPOINT:-$app/demo/tinystories-656k}"
work="$(mktemp -d)"
port="${ZSE_TRAINING_PORT:-18080}"
base="http://127.0.0.1:$port"
trap 'rm -rf "$work"' EXIT
# the launcher's server takes no cache of its own while one is being trained (nor trains one)
export ZSE_AOT_TRAINING=1

"$app/zse" convert "$demo" -o "$work/demo.zse" --quant q8 --force > "$work/convert.log" 2>&1 \
  || { cat "$work/convert.log" >&2; exit 1; }

ZSE_MODEL_PATH="$work/demo.zse" ZSE_BACKEND=cpu PORT="$port" \
  ZSE_JAVA_OPTS="-XX:AOTCacheOutput=$out ${ZSE_JAVA_OPTS:-}" \
  "$app/zse" serve > "$work/serve.log" 2>&1 &
server=$!

fail() {
  echo "train-aot-cache: $1" >&2
  tail -n 40 "$work/serve.log" >&2 || true
  kill -TERM "$server" 2>/dev/null || true
  exit 1
}

for _ in $(seq 1 240); do
  if curl -fs -o /dev/null "$base/q/health/ready"; then ready=1; break; fi  # quiet while it starts
  kill -0 "$server" 2>/dev/null || fail "the server exited before it was ready"
  sleep 0.5
done
[ -n "${ready:-}" ] || fail "the server was not ready after 120 s"

model="$(curl -fsS "$base/v1/models" | grep -o '"id" *: *"[^"]*"' | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/')"
[ -n "$model" ] || fail "GET /v1/models listed no model"
for stream in true false; do
  curl -fsS -N "$base/v1/chat/completions" -H 'Content-Type: application/json' \
    -d "{\"model\":\"$model\",\"stream\":$stream,\"max_tokens\":32,\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story.\"}]}" \
    > "$work/completion-$stream.txt" || fail "POST /v1/chat/completions (stream=$stream) failed"
done
grep -q '^data: \[DONE\]' "$work/completion-true.txt" || fail "the streamed completion did not end with data: [DONE]"

kill -TERM "$server"
wait "$server" || true
[ -s "$out" ] || fail "the JVM wrote no AOT cache at $out"
echo "train-aot-cache: wrote $out ($(du -h "$out" | cut -f1))"
