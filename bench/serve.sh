# Sourced by the serve benchmarks: starts `zse serve` on $port in the background and waits until it is ready.
# Usage: serve_start PORT LOG [MODEL.zse]   (no model: the bundled demo model)
# Sets server_pid (the JVM's own pid: the launcher execs java) and model_id (the id /v1/models reports); the caller's
# EXIT trap should call serve_stop.
serve_start() {
  local port="$1" log="$2" model="${3:-}"
  local args=(serve --port "$port")
  [ -n "$model" ] && args+=(--model "$model")
  "$root/zse" "${args[@]}" > "$log" 2>&1 &
  server_pid=$!
  until curl -sf "localhost:$port/q/health/ready" > /dev/null; do
    kill -0 "$server_pid" 2>/dev/null || { cat "$log"; return 1; }
    sleep 0.2
  done
  model_id="$(curl -s "localhost:$port/v1/models" | sed -E 's/.*"id":"([^"]+)".*/\1/')"
}

serve_stop() {
  [ -n "${server_pid:-}" ] || return 0
  kill "$server_pid" 2>/dev/null
  wait "$server_pid" 2>/dev/null || true
}
