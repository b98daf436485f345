#!/usr/bin/env bash
# Container entrypoint of the JVM image: runs a zse command (default `serve`) through the repository launcher.
# `serve` also gets the AOT cache trained at build time ($ZSE_AOT_CACHE): it was recorded with the same JDK, jar and
# flags, so the JVM maps the classes it loaded in training instead of loading them again.
set -euo pipefail
app="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${1:-serve}" = "serve" ] && [ -n "${ZSE_AOT_CACHE:-}" ] && [ -f "$ZSE_AOT_CACHE" ]; then
  export ZSE_JAVA_OPTS="-XX:AOTCache=$ZSE_AOT_CACHE ${ZSE_JAVA_OPTS:-}"
fi
exec "$app/zse" "${@:-serve}"
