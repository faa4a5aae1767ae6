#!/usr/bin/env bash
# Runs a Java main class of Twinlog with the broker's runtime classpath, building the project first if needed.
# Usage: bin/twinlog-run-class.sh CLASS [ARGS...]
set -euo pipefail
TWINLOG_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIB="$TWINLOG_HOME/twinlog-server/target/lib"
JAR=$(ls "$TWINLOG_HOME"/twinlog-server/target/twinlog-server-*.jar 2>/dev/null | grep -v sources | head -1 || true)
if [[ -z "$JAR" || ! -d "$LIB" ]]; then
  echo "Twinlog is not built yet: building it with Maven (once, about a minute)..." >&2
  (cd "$TWINLOG_HOME" && mvn -B -q -DskipTests install) >&2
  JAR=$(ls "$TWINLOG_HOME"/twinlog-server/target/twinlog-server-*.jar | grep -v sources | head -1 || true)
fi
LOG4J="${TWINLOG_LOG4J:-$TWINLOG_HOME/config/log4j2.properties}"
exec java ${TWINLOG_HEAP_OPTS:--Xmx1g} ${TWINLOG_OPTS:-} \
  -Dlog4j2.configurationFile="$LOG4J" \
  -cp "$JAR:$LIB/*" "$@"
