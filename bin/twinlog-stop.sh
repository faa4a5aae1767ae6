#!/usr/bin/env bash
# Stops the Twinlog processes of one kind started from this installation (bin/twinlog-server-stop.sh and
# bin/twinlog-zookeeper-stop.sh use it): bin/twinlog-stop.sh CLASS WHAT
# Sends SIGTERM (or $SIGNAL) to every java process running CLASS with this installation's -Dtwinlog.home (set by
# bin/twinlog-run-class.sh), then waits up to $TWINLOG_STOP_TIMEOUT_S seconds (default 60) for them to exit: a
# broker's controlled shutdown moves its leaderships first (controlled.shutdown.timeout.ms, 30 s by default).
# Exit code 1 when none was running or one is still running at the deadline.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "Usage: $0 CLASS WHAT" >&2
  exit 1
fi
CLASS="$1"
WHAT="$2"
TWINLOG_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PIDS=()
while read -r pid args; do
  if [[ " $args " == *" -Dtwinlog.home=$TWINLOG_HOME "* && " $args " == *" $CLASS "* ]]; then
    PIDS+=("$pid")
  fi
done < <(ps -A -ww -o pid= -o args=)
if [[ ${#PIDS[@]} -eq 0 ]]; then
  echo "No $WHAT of $TWINLOG_HOME to stop" >&2
  exit 1
fi
kill -s "${SIGNAL:-TERM}" "${PIDS[@]}"
DEADLINE=$((SECONDS + ${TWINLOG_STOP_TIMEOUT_S:-60}))
for pid in "${PIDS[@]}"; do
  while kill -0 "$pid" 2>/dev/null; do
    if (( SECONDS >= DEADLINE )); then
      echo "$WHAT (pid $pid) still running after ${TWINLOG_STOP_TIMEOUT_S:-60} s" >&2
      exit 1
    fi
    sleep 0.5
  done
done
echo "Stopped $WHAT (pid ${PIDS[*]})"
