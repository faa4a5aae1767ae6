#!/usr/bin/env bash
# Runs a standalone ZooKeeper server (or one member of an ensemble) in the foreground, for Twinlog clusters made
# of separate broker processes, on one machine or several: bin/twinlog-zookeeper-start.sh config/zookeeper.properties
# It is Apache ZooKeeper's own server (QuorumPeerMain) from the jars Twinlog ships with.
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "Usage: $0 CONFIG   (see config/zookeeper.properties)" >&2
  exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" org.apache.zookeeper.server.quorum.QuorumPeerMain "$1"
