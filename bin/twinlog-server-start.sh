#!/usr/bin/env bash
# Runs one Twinlog broker: bin/twinlog-server-start.sh [-daemon] CONFIG [--override KEY=VALUE ...]
# In the foreground by default; -daemon runs it in the background with its output in $LOG_DIR/twinlogServer.out.
# SIGTERM (Ctrl-C, bin/twinlog-server-stop.sh) shuts it down cleanly: leaderships moved, logs flushed, checkpoints
# written. Environment: see bin/twinlog-run-class.sh (JAVA_HOME, TWINLOG_HEAP_OPTS, TWINLOG_OPTS, LOG_DIR, ...).
set -euo pipefail
DAEMON=()
if [[ "${1:-}" == "-daemon" ]]; then
  DAEMON=(-daemon -name twinlogServer)
  shift
fi
if [[ $# -lt 1 ]]; then
  echo "Usage: $0 [-daemon] CONFIG [--override KEY=VALUE ...]" >&2
  exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" ${DAEMON[@]+"${DAEMON[@]}"} io.twinlog.server.Main "$@"
