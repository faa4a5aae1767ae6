#!/usr/bin/env bash
# Apache Kafka's kafka-console-share-consumer.sh: org.apache.kafka.tools.consumer.ConsoleShareConsumer from kafka-tools 4.4.0, with Kafka's options (--help lists them).
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" -tool org.apache.kafka.tools.consumer.ConsoleShareConsumer "$@"
