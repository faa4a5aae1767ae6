package io.twinlog.bench;

/**
 * How the failover benchmark stops a partition's leader. What each mode does depends on the system (see
 * {@link ReplicatedCluster#stop(int, FailureMode)}); the report prints {@link ReplicatedCluster#describe}.
 */
enum FailureMode {
    /**
     * A crash: the broker stops serving at once and says nothing to the controller, so the cluster learns of it
     * only when its session expires (Twinlog: ZooKeeper session; Kafka: KRaft broker heartbeat session).
     */
    CRASH("crash"),
    /**
     * Twinlog only: {@code BrokerServer.abort()} as it is, which closes the broker's ZooKeeper session before
     * stopping, so the controller sees the broker vanish at once instead of after the session timeout.
     */
    ABORT("abort()"),
    /** A clean, controlled shutdown: leadership moves to another ISR member before the broker stops. */
    CONTROLLED("controlled shutdown");

    private final String label;

    FailureMode(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }

}
