# Sourced by ./zse and ./run-tests: sets JAVA_HOME to a JDK 25 (JAVA_HOME first, then /usr/lib/jvm/*25*) or exits.
# A JDK's `release` file names its version: reading it costs nothing, where `java -version` starts a whole JVM.
zse_is_jdk25() {
  [ -x "$1/bin/java" ] || return 1
  if [ -f "$1/release" ]; then
    grep -q '^JAVA_VERSION="25' "$1/release"
  else
    "$1/bin/java" -version 2>&1 | grep -q 'version "25'
  fi
}
zse_find_jdk() {
  if [ -n "${JAVA_HOME:-}" ] && zse_is_jdk25 "$JAVA_HOME"; then
    echo "$JAVA_HOME"; return 0
  fi
  local d
  for d in /usr/lib/jvm/*25*; do
    if zse_is_jdk25 "$d"; then echo "$d"; return 0; fi
  done
  return 1
}
if ! JAVA_HOME="$(zse_find_jdk)"; then
  echo "zse: JDK 25 not found. Install a JDK 25 (e.g. Temurin 25: apt install temurin-25-jdk, or https://adoptium.net)" \
       "or set JAVA_HOME to one." >&2
  exit 1
fi
export JAVA_HOME
