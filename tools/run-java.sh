#!/usr/bin/env bash
# Runs a java command line (all arguments) with one line dropped from its stderr: the JVM's
# "WARNING: Using incubator modules: jdk.incubator.vector", which it prints on every start that loads the Vector API
# and offers no flag to silence. The commands' own failures are then the one line they print. The filter ignores
# SIGINT, so Ctrl-C reaches the command alone (zse chat stops a reply on it); the exit status is java's, and the
# filter's last lines are out before this script returns.
set -uo pipefail
{ "$@" 2>&1 1>&3 3>&- | (trap '' INT; exec grep -v --line-buffered -x \
    'WARNING: Using incubator modules: jdk.incubator.vector' >&2); } 3>&1
exit "${PIPESTATUS[0]}"
