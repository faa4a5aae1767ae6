#!/usr/bin/env bash
# Cluster mirrors on a Twinlog destination cluster: create, list, describe, delete; start/stop (failover)/pause/resume
# of mirror topics. bin/twinlog-mirrors.sh --help prints the usage. Results go to stdout; errors and log output to
# stderr, one line each, with exit code 1.
#   bin/twinlog-mirrors.sh --bootstrap-server :9192 --list
set -euo pipefail
TWINLOG_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export TWINLOG_HEAP_OPTS="${TWINLOG_HEAP_OPTS:--Xmx256m}"
export TWINLOG_LOG4J="${TWINLOG_LOG4J:-classpath:twinlog-cli-log4j2.properties}"
exec "$TWINLOG_HOME/bin/twinlog-run-class.sh" io.twinlog.cli.MirrorsCommand "$@"
