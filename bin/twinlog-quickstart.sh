#!/usr/bin/env bash
# The embedded default: a 3-broker Twinlog cluster on 127.0.0.1:9092-9094 with an embedded ZooKeeper
# (127.0.0.1:2181), data in ./data. Ctrl-C stops it cleanly; run it again and topics and records are still there.
set -euo pipefail
TWINLOG_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${TWINLOG_DATA:-$PWD/data}"
mkdir -p "$DATA"
cat <<MSG
Twinlog quickstart: 3 brokers, embedded ZooKeeper, data in $DATA
  bootstrap servers: 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094

When the log says "Local cluster of 3 brokers is up", try it with Kafka's own tools (Kafka 4.x), in another terminal:
  kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --create --topic hello --partitions 3 --replication-factor 3
  kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --describe --topic hello
  kafka-console-producer.sh --bootstrap-server 127.0.0.1:9092 --topic hello --producer-property acks=all
  kafka-console-consumer.sh --bootstrap-server 127.0.0.1:9092 --topic hello --partition 0 --offset earliest

MSG
exec "$TWINLOG_HOME/bin/twinlog-run-class.sh" io.twinlog.server.LocalClusterMain --brokers 3 --first-port 9092 \
  --zookeeper-port 2181 --data "$DATA" "$@"
