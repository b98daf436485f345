#!/usr/bin/env bash
# Smoke test of a RunPod load-balancing endpoint: the gateway at https://ENDPOINT_ID.api.runpod.ai forwards every
# path to the worker (our server), so the OpenAI API is at /v1 there. The RunPod API key authenticates at the gateway.
# Usage: RUNPOD_ENDPOINT_ID=abc123 RUNPOD_API_KEY=rpa_... deploy/runpod/smoke.sh [smoke.py options]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
url="https://${RUNPOD_ENDPOINT_ID:?set RUNPOD_ENDPOINT_ID}.api.runpod.ai"
# /ping answers 204 while the model loads and 200 when ready; show it once for the record.
echo "ping: HTTP $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${RUNPOD_API_KEY:?set RUNPOD_API_KEY}" "$url/ping")" >&2
exec python3 "$here/../smoke.py" --url "$url" --api-key "$RUNPOD_API_KEY" "$@"
