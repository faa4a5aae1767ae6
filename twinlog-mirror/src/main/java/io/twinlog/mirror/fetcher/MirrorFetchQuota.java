package io.twinlog.mirror.fetcher;

import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.config.ReplicationQuotaManagerConfig;
import org.apache.kafka.server.quota.QuotaType;
import org.apache.kafka.server.quota.ReplicationQuotaManager;

/**
 * A mirror's bandwidth cap on this broker ({@code mirror.replication.throttled.rate}): the bytes per second its
 * fetch threads may take from the source, all source brokers together, measured and enforced by Kafka's own
 * {@link ReplicationQuotaManager} as a Kafka follower's {@code follower.replication.throttled.rate} is. A fetch
 * thread sends no request while the rate is over the cap, and asks for no more than one second's worth at a time, so
 * a low cap is not taken in bursts of a full fetch followed by long silences.
 *
 * <p>The manager sits on a {@link Metrics} of its own: its sensor's name is fixed and carries no tag, so two mirrors
 * in the broker's registry would share one rate. Thread-safe (the fetch threads of the mirror share it; the mirror
 * manager updates the cap).
 */
public final class MirrorFetchQuota implements AutoCloseable {
    /** No cap: nothing is measured. */
    public static final long UNLIMITED = Long.MAX_VALUE;

    private final Metrics metrics;
    private final ReplicationQuotaManager manager;
    private volatile long bytesPerSecond = UNLIMITED;

    /**
     * How the rate is measured: over {@code samples} windows ({@code replication.quota.window.num}) of
     * {@code windowSeconds} each ({@code replication.quota.window.size.seconds}), Kafka's replication quota configs.
     */
    public record Windows(int samples, int windowSeconds) {
        public static final Windows KAFKA_DEFAULT = new Windows(11, 1);
    }

    public MirrorFetchQuota(Windows windows, Time time) {
        this.metrics = new Metrics(time);
        this.manager = new ReplicationQuotaManager(new ReplicationQuotaManagerConfig(windows.samples(),
                windows.windowSeconds()), metrics, QuotaType.FOLLOWER_REPLICATION, time);
    }

    /** Sets the cap ({@link #UNLIMITED} for none); the rate measured so far stays. */
    public void update(long bytesPerSecond) {
        if (this.bytesPerSecond != bytesPerSecond) {
            manager.updateQuota(new Quota(bytesPerSecond, true));
            this.bytesPerSecond = bytesPerSecond;
        }
    }

    public long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** Whether the fetch threads must wait before asking for more. */
    boolean exceeded() {
        return bytesPerSecond != UNLIMITED && manager.isQuotaExceeded();
    }

    /** Bytes fetched from the source (whether appended or not: they crossed the link). */
    void record(long bytes) {
        if (bytesPerSecond != UNLIMITED && bytes > 0) {
            manager.record(bytes);
        }
    }

    /** The most one fetch may ask for: {@code wanted}, or one second's worth under a cap. */
    int maxBytes(int wanted) {
        long cap = bytesPerSecond;
        return cap == UNLIMITED ? wanted : (int) Math.max(1, Math.min(wanted, cap));
    }

    @Override
    public void close() {
        metrics.close();
    }
}
