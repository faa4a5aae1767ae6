#!/usr/bin/env bash
# Runs a standalone ZooKeeper server (or one member of an ensemble) for Twinlog clusters made of separate broker
# processes, on one machine or several: bin/twinlog-zookeeper-start.sh [-daemon] config/zookeeper.properties
# It is Apache ZooKeeper's own server (QuorumPeerMain) from the jars Twinlog ships with. -daemon runs it in the
# background with its output in $LOG_DIR/zookeeper.out; bin/twinlog-zookeeper-stop.sh stops it.
set -euo pipefail
DAEMON=()
if [[ "${1:-}" == "-daemon" ]]; then
  DAEMON=(-daemon -name zookeeper)
  shift
fi
if [[ $# -lt 1 ]]; then
  echo "Usage: $0 [-daemon] CONFIG   (see config/zookeeper.properties)" >&2
  exit 1
fi
export TWINLOG_HEAP_OPTS="${TWINLOG_HEAP_OPTS:--Xmx512m}"
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" ${DAEMON[@]+"${DAEMON[@]}"} \
  org.apache.zookeeper.server.quorum.QuorumPeerMain "$1"
