#!/usr/bin/env bash
# Runs one Twinlog broker in the foreground: bin/twinlog-server-start.sh config/server.properties [--override k=v]
# SIGTERM (or Ctrl-C) shuts it down cleanly: logs flushed, checkpoints written.
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "Usage: $0 CONFIG [--override KEY=VALUE ...]" >&2
  exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" io.twinlog.server.Main "$@"
