#!/usr/bin/env bash
# Apache Kafka's kafka-cluster.sh: org.apache.kafka.tools.ClusterTool from kafka-tools 4.4.0, with Kafka's options (--help lists them). On Twinlog: cluster-id, and unregister --id N for a broker gone for good (docs/replication.md).
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-run-class.sh" -tool org.apache.kafka.tools.ClusterTool "$@"
