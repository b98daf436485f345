#!/usr/bin/env bash
# Waits for the deployed Modal app to be ready (a cold start included) and streams one chat completion.
# Usage: MODAL_WORKSPACE=my-workspace ZSE_API_KEY=sk-... deploy/modal/smoke.sh [smoke.py options]
# The URL is the one `modal deploy` prints: https://WORKSPACE--zse.modal.run (label "zse" in app.py).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
url="${ZSE_URL:-https://${MODAL_WORKSPACE:?set MODAL_WORKSPACE (or ZSE_URL)}--zse.modal.run}"
exec python3 "$here/../smoke.py" --url "$url" "$@"
