#!/usr/bin/env bash
# Stops the ZooKeeper server started from this installation (bin/twinlog-zookeeper-start.sh) and waits for it to exit.
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-stop.sh" org.apache.zookeeper.server.quorum.QuorumPeerMain "ZooKeeper server"
