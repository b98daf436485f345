#!/usr/bin/env bash
# The JVM memory flags of `zse serve`, one per line (the launcher adds them; tests check them).
# Heap for the server's own objects only: weights are mapped files (page cache) and the KV cache pool, direct buffers,
# metaspace and code cache live outside it (docs/deploy.md, "Memory"). ZSE_HEAP: a size (-Xmx, e.g. 1g) or a share of
# the container's memory limit (e.g. 10%). The other native areas are capped at a few times what the soak
# (bench/soak.sh) measured, so the process has a known ceiling.
set -euo pipefail
heap="${ZSE_HEAP:-512m}"
case "$heap" in
  *%) echo "-XX:MaxRAMPercentage=${heap%\%}" ;;
  *) echo "-Xmx$heap" ;;
esac
printf '%s\n' -XX:MaxDirectMemorySize=256m -XX:ReservedCodeCacheSize=128m -XX:MaxMetaspaceSize=256m
