#!/usr/bin/env bash
# Cluster mirrors on a Twinlog destination cluster: create, list, describe, delete; start/stop (failover)/pause/resume
# of mirror topics. bin/twinlog-mirrors.sh --help prints the usage. Results go to stdout; errors and log output to
# stderr, one line each, with exit code 1.
#   bin/twinlog-mirrors.sh --bootstrap-server :9192 --list
set -euo pipefail
export TWINLOG_LOG4J="${TWINLOG_LOG4J:-classpath:twinlog-cli-log4j2.properties}"
# the full JIT, not the quick-start default of a tool: --verify --full reads and compares whole logs
export TWINLOG_JVM_PERFORMANCE_OPTS="${TWINLOG_JVM_PERFORMANCE_OPTS:--XX:+UseSerialGC -Djava.awt.headless=true}"
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" -tool io.twinlog.cli.MirrorsCommand "$@"
