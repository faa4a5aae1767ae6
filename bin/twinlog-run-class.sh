#!/usr/bin/env bash
# Runs a Java main class with Twinlog's classpath; every script in bin/ goes through it.
#   bin/twinlog-run-class.sh [-daemon] [-name NAME] [-tool] CLASS [ARGS...]
#
# Classpath: libs/ next to bin/ in a release tarball; in a source tree twinlog-launcher's jar and target/lib (every
# runtime jar: the broker, the dashboard, the commands, Kafka's tools), after building Twinlog with Maven if it is
# not built yet (the only case where a script calls Maven).
#
# Options, before CLASS:
#   -daemon   run in the background (nohup): output to $LOG_DIR/NAME.out, GC log to $LOG_DIR/NAME-gc.log
#   -name     NAME of those files (default: the class's simple name)
#   -tool     a command-line tool: small heap, quick start, its log at WARN on stderr (config/tools-log4j2.properties)
# Environment (Kafka's kafka-run-class.sh conventions under Twinlog's names):
#   JAVA_HOME                     the Java 17 or newer to run (default: java on the PATH)
#   TWINLOG_HEAP_OPTS             heap options (default -Xmx1g, tools -Xmx256m)
#   TWINLOG_JVM_PERFORMANCE_OPTS  GC and JIT options (default G1 with a 20 ms pause goal, tools the serial GC)
#   TWINLOG_OPTS                  anything else for the JVM: system properties, JMX, agents
#   TWINLOG_LOG4J                 Log4j 2 configuration (default config/log4j2.properties, tools config/tools-log4j2.properties)
#   TWINLOG_LOG_FORMAT            text (default) or json, in any case; -Dtwinlog.log.format in TWINLOG_OPTS wins over it
#   LOG_DIR                       directory of -daemon's files (default $TWINLOG_HOME/logs); given to Log4j as
#                                 ${sys:twinlog.logs.dir} for configurations that write files
set -euo pipefail
TWINLOG_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

DAEMON=false
TOOL=false
NAME=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -daemon) DAEMON=true; shift ;;
    -tool) TOOL=true; shift ;;
    -name)
      [[ $# -ge 2 ]] || { echo "twinlog-run-class: -name needs a value" >&2; exit 1; }
      NAME="$2"; shift 2 ;;
    *) break ;;
  esac
done
if [[ $# -lt 1 ]]; then
  echo "Usage: $0 [-daemon] [-name NAME] [-tool] CLASS [ARGS...]" >&2
  exit 1
fi
CLASS="$1"
shift

# Java: JAVA_HOME's, else the PATH's; 17 or newer. One line and exit 1 otherwise, before anything else happens.
if [[ -n "${JAVA_HOME:-}" ]]; then
  JAVA="$JAVA_HOME/bin/java"
  WHERE="JAVA_HOME=$JAVA_HOME"
else
  JAVA="$(command -v java || true)"
  WHERE="the PATH"
fi
if [[ -z "$JAVA" || ! -x "$JAVA" ]]; then
  echo "twinlog: no java found in $WHERE: Twinlog needs Java 17 or newer (install one, or set JAVA_HOME)" >&2
  exit 1
fi
# 'openjdk version "17.0.15" 2025-04-15', 'java version "1.8.0_381"', 'openjdk version "21" 2023-09-19' (maybe after a
# "Picked up JAVA_TOOL_OPTIONS" line)
JAVA_VERSION_OUTPUT="$("$JAVA" -version 2>&1 || true)"
JAVA_MAJOR=0
if [[ "$JAVA_VERSION_OUTPUT" =~ version\ \"([0-9]+)(\.([0-9]+))? ]]; then
  JAVA_MAJOR="${BASH_REMATCH[1]}"
  [[ "$JAVA_MAJOR" != 1 ]] || JAVA_MAJOR="${BASH_REMATCH[3]:-0}"
fi
if (( JAVA_MAJOR < 17 )); then
  (( JAVA_MAJOR > 0 )) || JAVA_MAJOR="of an unknown version"
  echo "twinlog: $JAVA (from $WHERE) is Java $JAVA_MAJOR, Twinlog needs Java 17 or newer: set JAVA_HOME to a Java 17+" >&2
  exit 1
fi

# Log format (not for tools, whose configuration has one): config/log4j2.properties names its appender after it, so
# any value but text or json (JSON, Json, a typo) would match none and the broker would log nothing at all
LOG_FORMAT_OPTS=()
if ! $TOOL; then
  LOG_FORMAT="${TWINLOG_LOG_FORMAT:-}"
  LOG_FORMAT_FROM="TWINLOG_LOG_FORMAT"
  read -r -a OPTS <<<"${TWINLOG_OPTS:-}"
  for OPT in ${OPTS[@]+"${OPTS[@]}"}; do
    if [[ "$OPT" == -Dtwinlog.log.format=* ]]; then
      LOG_FORMAT="${OPT#-Dtwinlog.log.format=}"
      LOG_FORMAT_FROM="-Dtwinlog.log.format in TWINLOG_OPTS"
    fi
  done
  case "$(printf '%s' "$LOG_FORMAT" | tr '[:upper:]' '[:lower:]')" in
    "" | text) LOG_FORMAT_OPTS=("-Dtwinlog.log.format=text") ;;
    json) LOG_FORMAT_OPTS=("-Dtwinlog.log.format=json") ;;
    *)
      echo "twinlog: unknown log format '$LOG_FORMAT' ($LOG_FORMAT_FROM): use text or json" >&2
      exit 1 ;;
  esac
fi

if [[ -d "$TWINLOG_HOME/libs" ]]; then
  CLASSPATH="$TWINLOG_HOME/libs/*"
elif [[ -f "$TWINLOG_HOME/pom.xml" ]]; then
  LIB="$TWINLOG_HOME/twinlog-launcher/target/lib"
  jar_of() { ls "$TWINLOG_HOME"/twinlog-launcher/target/twinlog-launcher-*.jar 2>/dev/null | grep -v sources | head -1 || true; }
  JAR="$(jar_of)"
  # kafka-tools: a lib directory built before Kafka's tools were bundled (bin/kafka-*.sh) is rebuilt too
  if [[ -z "$JAR" || ! -d "$LIB" ]] || ! ls "$LIB"/kafka-tools-*.jar >/dev/null 2>&1; then
    echo "Twinlog is not built yet: building it with Maven (once, about a minute)..." >&2
    (cd "$TWINLOG_HOME" && mvn -B -q -DskipTests install) >&2
    JAR="$(jar_of)"
  fi
  CLASSPATH="$JAR:$LIB/*"
else
  echo "twinlog: no libs/ next to $TWINLOG_HOME/bin and no source tree to build: unpack the whole release tarball" >&2
  exit 1
fi

LOG_DIR="${LOG_DIR:-$TWINLOG_HOME/logs}"
if $TOOL; then
  HEAP_OPTS="${TWINLOG_HEAP_OPTS:--Xmx256m}"
  # quick start matters more than peak speed for a tool; the perf tools set TWINLOG_JVM_PERFORMANCE_OPTS themselves
  PERFORMANCE_OPTS="${TWINLOG_JVM_PERFORMANCE_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true}"
  LOG4J="${TWINLOG_LOG4J:-$TWINLOG_HOME/config/tools-log4j2.properties}"
else
  HEAP_OPTS="${TWINLOG_HEAP_OPTS:--Xmx1g}"
  PERFORMANCE_OPTS="${TWINLOG_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true}"
  LOG4J="${TWINLOG_LOG4J:-$TWINLOG_HOME/config/log4j2.properties}"
fi

# -Dtwinlog.home names this installation on the command line: bin/twinlog-server-stop.sh stops only its own processes;
# the checked log format comes after TWINLOG_OPTS, so it is the one the JVM keeps
# (word splitting of the *_OPTS variables is intended: each holds several JVM options)
# shellcheck disable=SC2206
COMMAND=("$JAVA" $HEAP_OPTS $PERFORMANCE_OPTS ${TWINLOG_OPTS:-} ${LOG_FORMAT_OPTS[@]+"${LOG_FORMAT_OPTS[@]}"}
  "-Dtwinlog.home=$TWINLOG_HOME" "-Dtwinlog.logs.dir=$LOG_DIR" "-Dlog4j2.configurationFile=$LOG4J" -cp "$CLASSPATH"
  "$CLASS" "$@")

if $DAEMON; then
  NAME="${NAME:-${CLASS##*.}}"
  mkdir -p "$LOG_DIR"
  OUT="$LOG_DIR/$NAME.out"
  # the GC log goes in the command after the JVM options: -Xlog rotates it (10 files of 100 MB)
  COMMAND=("${COMMAND[0]}" "-Xlog:gc*:file=$LOG_DIR/$NAME-gc.log:time,tags:filecount=10,filesize=100m"
    "${COMMAND[@]:1}")
  nohup "${COMMAND[@]}" >"$OUT" 2>&1 </dev/null &
  echo "$NAME started in the background (pid $!), output in $OUT"
  exit 0
fi
exec "${COMMAND[@]}"
