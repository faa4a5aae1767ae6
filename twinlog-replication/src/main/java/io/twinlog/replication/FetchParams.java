package io.twinlog.replication;

import org.apache.kafka.server.storage.log.FetchIsolation;

/** Request-level fetch settings: long-poll wait, byte bounds and the isolation that caps what is visible. */
public record FetchParams(int replicaId, long replicaEpoch, long maxWaitMs, int minBytes, int maxBytes,
                          FetchIsolation isolation) {
}
