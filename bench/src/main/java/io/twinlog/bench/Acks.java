package io.twinlog.bench;

/**
 * The producer durability settings measured. {@code acks=1} runs without idempotence (Kafka refuses idempotence
 * with {@code acks=1}); {@code acks=all} runs with idempotence, the client default, so the broker's producer-ID
 * allocation (InitProducerId) and sequence checks are part of the measurement.
 */
public enum Acks {
    ONE("1", false),
    ALL("all", true);

    private final String config;
    private final boolean idempotence;

    Acks(String config, boolean idempotence) {
        this.config = config;
        this.idempotence = idempotence;
    }

    /** The value of the producer's {@code acks} setting. */
    public String config() {
        return config;
    }

    public boolean idempotence() {
        return idempotence;
    }
}
