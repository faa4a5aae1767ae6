#!/usr/bin/env bash
# The embedded default: one Twinlog broker on 127.0.0.1:9092 with an embedded ZooKeeper, data in ./data.
# Ctrl-C stops it cleanly. Run it again and your topics and records are still there.
set -euo pipefail
TWINLOG_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${TWINLOG_DATA:-$PWD/data}"
mkdir -p "$DATA"
cat <<MSG
Twinlog quickstart: one broker, embedded ZooKeeper, data in $DATA
  bootstrap server: 127.0.0.1:9092

Try it with Kafka's own tools (from a Kafka 4.x distribution), in another terminal:
  kafka-console-producer.sh --bootstrap-server 127.0.0.1:9092 --topic hello
  kafka-console-consumer.sh --bootstrap-server 127.0.0.1:9092 --topic hello --partition 0 --offset earliest

MSG
exec "$TWINLOG_HOME/bin/twinlog-server-start.sh" "$TWINLOG_HOME/config/server.properties" \
  --override "log.dirs=$DATA/broker-0" \
  --override "zookeeper.embedded.data.dir=$DATA/zookeeper"
