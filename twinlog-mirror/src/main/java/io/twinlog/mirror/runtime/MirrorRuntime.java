package io.twinlog.mirror.runtime;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Cluster mirroring as it runs inside one destination broker: the {@link MirrorManager} (a {@link MirrorWorker} per
 * mirror: the state machine of the mirror partitions this broker leads, their fetchers, the peer lookups of a
 * failback) and the
 * {@link MirrorMetadataSync} (topic discovery, partition and config following, consumer group offset sync, on the
 * controller broker only). The broker gives it its partitions ({@link LocalPartitions}), its topic administration
 * ({@link LocalTopics}) and whether it is the controller; everything else is the mirror module's own.
 */
public final class MirrorRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorRuntime.class);
    /** Bound of each admin call to a source cluster (topic lookups of a start, the sync's passes). */
    public static final int SOURCE_TIMEOUT_MS = 15_000;

    private final MirrorManager manager;
    private final MirrorMetadataSync metadataSync;
    private final MirrorTopicStarter topicStarter;
    private final MirrorQuarantine quarantine;
    private final MirrorMetrics metrics;

    /**
     * @param localClients   the configs with which this broker's own clients reach its cluster (address and
     *                       security; empty while it is not known yet): the quarantine's producer, the group offset
     *                       sync's admin
     * @param stateTimeoutMs how long a partition may wait for the controller's epoch bump or a source leader before
     *                       it goes FAILED (retried with backoff)
     * @param brokerMetrics  the broker's registry, where the mirror metrics go ({@link MirrorMetrics})
     */
    public MirrorRuntime(int brokerId, MirrorStore store, CuratorFramework zk, MetadataWatcher metadata,
                         LocalPartitions partitions, LocalTopics topics, BooleanSupplier isController,
                         Supplier<Optional<Map<String, Object>>> localClients, long stateTimeoutMs,
                         MirrorFetchQuota.Windows quotaWindows, BrokerMetrics brokerMetrics, Time time) {
        this.metrics = new MirrorMetrics(brokerMetrics, time);
        this.topicStarter = new MirrorTopicStarter(store, metadata, topics, SOURCE_TIMEOUT_MS);
        this.quarantine = new MirrorQuarantine(localClients, topics, metadata);
        this.manager = new MirrorManager(brokerId, MirrorRecords.of(store, zk), MirrorMetadata.of(metadata), partitions,
                MirrorSource.fetchers(stateTimeoutMs, metrics, quotaWindows, time), MirrorPeer.of(quarantine), metrics,
                stateTimeoutMs, time);
        this.metadataSync = new MirrorMetadataSync(store, metadata, topics, topicStarter, isController, brokerId,
                localClients, metrics);
    }

    /** Starting a source topic's mirroring, for the StartMirrorTopics API. */
    public MirrorTopicStarter topicStarter() {
        return topicStarter;
    }

    public void start() {
        manager.start();
        metadataSync.start();
    }

    @Override
    public void close() {
        // the sync first: it may start topics the manager would otherwise pick up while stopping
        closeQuietly("mirror metadata sync", metadataSync);
        closeQuietly("mirror manager", manager);
        closeQuietly("mirror quarantine", quarantine);
        closeQuietly("mirror metrics", metrics); // after the threads that record them
    }

    private static void closeQuietly(String what, AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) { // broad: one part failing to close must not keep the others open; logged
            log.warn("Closing the {} failed", what, e);
        }
    }
}
