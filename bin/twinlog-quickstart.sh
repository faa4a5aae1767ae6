#!/usr/bin/env bash
# The embedded default: two 3-broker Twinlog clusters in one process, each with an embedded ZooKeeper —
# a source on 127.0.0.1:9092-9094 and a destination on 127.0.0.1:9192-9194 — and a cluster mirror
# "quickstart" on the destination pulling from the source. Data in ./data. Ctrl-C stops everything cleanly;
# run it again and topics, records and the mirror are still there.
set -euo pipefail
TWINLOG_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${TWINLOG_DATA:-$PWD/data}"
mkdir -p "$DATA"
# --demo walks through everything itself: the instructions below are for trying it by hand
DEMO=false
for arg in "$@"; do [[ "$arg" == "--demo" ]] && DEMO=true; done
$DEMO || cat <<MSG
Twinlog quickstart: two 3-broker clusters with a cluster mirror between them, data in $DATA
  source      bootstrap servers: 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094   (ZooKeeper 127.0.0.1:2181)
  destination bootstrap servers: 127.0.0.1:9192,127.0.0.1:9193,127.0.0.1:9194   (ZooKeeper 127.0.0.1:2182)

Mirror dashboard (when the log says both clusters are up; failover/pause/resume buttons enabled):
  destination http://127.0.0.1:8080/    source http://127.0.0.1:8081/    JSON: http://127.0.0.1:8080/api/v1/mirrors

Metrics for Prometheus (Kafka's names, docs/operations.md), one endpoint per broker:
  source http://127.0.0.1:9404/metrics (9404-9406)    destination http://127.0.0.1:9504/metrics (9504-9506)

When the log says both clusters are up, in another terminal (Apache Kafka's own tools, shipped in bin/):
  cd $TWINLOG_HOME
  # 1. a topic with data on the source, and an application reading it with a consumer group
  bin/kafka-topics.sh --bootstrap-server :9092 --create --topic orders --partitions 3 --replication-factor 3
  bin/kafka-console-producer.sh --bootstrap-server :9092 --topic orders
  bin/kafka-console-consumer.sh --bootstrap-server :9092 --topic orders --group billing --from-beginning
  # 2. mirror it: same topic ID, offsets and epochs on the destination (read-only there); the group's
  #    committed offsets are synced every 5 s while it has no members on the destination
  bin/twinlog-mirrors.sh --bootstrap-server :9192 --start --mirror quickstart --topic orders
  bin/twinlog-mirrors.sh --bootstrap-server :9192 --describe --mirror quickstart
  bin/kafka-console-consumer.sh --bootstrap-server :9192 --topic orders --partition 0 --offset earliest
  # 3. fail over (works with the source down too): the destination topic becomes writable, and the
  #    application moves over with its group, resuming where it was (stop it on the source first)
  bin/twinlog-mirrors.sh --bootstrap-server :9192 --remove --topic '.*' --mirror quickstart
  bin/kafka-console-producer.sh --bootstrap-server :9192 --topic orders
  bin/kafka-console-consumer.sh --bootstrap-server :9192 --topic orders --group billing
  # 4. fail back: the source mirrors the destination, keeping what both share (cut at the last mirrored
  #    epoch; its own later records go to __twinlog_quarantine), then serves again
  bin/twinlog-mirrors.sh --bootstrap-server :9092 --create --mirror back --source-bootstrap-server 127.0.0.1:9192
  bin/twinlog-mirrors.sh --bootstrap-server :9092 --start --mirror back --topic orders
  bin/twinlog-mirrors.sh --bootstrap-server :9092 --verify --mirror back
  bin/twinlog-mirrors.sh --bootstrap-server :9092 --remove --topic orders --mirror back

Or let bin/twinlog-quickstart.sh --demo walk through all of it by itself (about a minute, every step checked).

MSG
exec "$TWINLOG_HOME/bin/twinlog-run-class.sh" io.twinlog.launcher.LocalClusterMain --brokers 3 --first-port 9092 \
  --zookeeper-port 2181 --data "$DATA" --mirror quickstart --dashboard-port 8080 --dashboard-actions \
  --metrics-port 9404 "$@"
