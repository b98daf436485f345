# Sourced by ./zse and ./run-tests: sets JAVA_HOME to a JDK 25 (JAVA_HOME first, then /usr/lib/jvm/*25*) or exits.
zse_find_jdk() {
  if [ -n "${JAVA_HOME:-}" ] && "$JAVA_HOME/bin/java" -version 2>&1 | grep -q 'version "25'; then
    echo "$JAVA_HOME"; return 0
  fi
  local d
  for d in /usr/lib/jvm/*25*; do
    if [ -x "$d/bin/java" ] && "$d/bin/java" -version 2>&1 | grep -q 'version "25'; then echo "$d"; return 0; fi
  done
  return 1
}
if ! JAVA_HOME="$(zse_find_jdk)"; then
  echo "zse: JDK 25 not found. Install a JDK 25 (e.g. Temurin 25: apt install temurin-25-jdk, or https://adoptium.net)" \
       "or set JAVA_HOME to one." >&2
  exit 1
fi
export JAVA_HOME
