#!/usr/bin/env bash
# Apache Kafka's kafka-producer-perf-test.sh: org.apache.kafka.tools.ProducerPerformance from kafka-tools 4.4.0, with Kafka's options (--help lists them).
# a throughput test: the full JIT and a larger heap, not the quick-start defaults of the other tools
export TWINLOG_HEAP_OPTS="${TWINLOG_HEAP_OPTS:--Xmx512m}"
export TWINLOG_JVM_PERFORMANCE_OPTS="${TWINLOG_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -Djava.awt.headless=true}"
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" -tool org.apache.kafka.tools.ProducerPerformance "$@"
