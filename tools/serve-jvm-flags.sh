#!/usr/bin/env bash
# The JVM memory flags of `zse serve`, one per line (the launcher adds them; tests check them).
# ZSE_THP_SETTING: the kernel's transparent huge page setting to read (default: /sys/kernel/mm/...; tests name a file).
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
# The heap in transparent huge pages where the kernel offers them: a start fills about 100 MB of young generation with
# fresh pages, and taking them 2 MiB rather than 4 KiB at a time made ./zse serve ready 5-12 % sooner on a 2-core VM
# that backs its memory lazily (bench/README.md, "Server cold start"), for 16-25 MB more RSS. Only there: a JVM
# asked for them where the kernel has them off warns at each start.
thp="${ZSE_THP_SETTING:-/sys/kernel/mm/transparent_hugepage/enabled}"
if [ -r "$thp" ] && grep -qE '\[(always|madvise)\]' "$thp"; then
  echo -XX:+UseTransparentHugePages
fi
