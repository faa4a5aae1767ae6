package io.twinlog.replication;

import io.twinlog.common.tasks.BackgroundTasks;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * {@code num.replica.fetchers} {@link ReplicaFetcherThread}s per leader broker this broker follows partitions of, a
 * partition always on the same one (by a hash of topic and partition, as Kafka spreads them); threads start with their
 * first partition and stop with their last. Called from the metadata thread (and shutdown), hence synchronized.
 *
 * <p>More than one per leader lets a follower apply several fetch responses at once: each costs local appends and,
 * for a batch that starts a new leader epoch, Kafka's sync of the leader-epoch checkpoint (after a failover of many
 * mirror partitions, one per partition per replica).
 */
public final class ReplicaFetcherManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaFetcherManager.class);

    private final int localBrokerId;
    private final Function<Integer, Optional<Node>> brokerEndpoints;
    private final LongSupplier brokerEpoch;
    private final int fetchersPerLeader;
    private final ReplicaFetcherThread.FetchSettings settings;
    private final Time time;
    // concurrent: the MaxLag gauge reads it without the monitor, which a fetcher's shutdown (a join) may hold for long
    private final Map<FetcherKey, ReplicaFetcherThread> fetchers = new ConcurrentHashMap<>();
    private final Map<TopicPartition, FetcherKey> fetcherOf = new HashMap<>();
    private ReplicaManager replicaManager;
    /** Where each fetcher thread's liveness is reported, once the broker's metrics are enabled. */
    private Optional<BackgroundTasks> health = Optional.empty();

    /** One fetcher thread: the leader it fetches from and its index among that leader's. */
    private record FetcherKey(int leaderId, int fetcherId) {
    }

    /** @param channels a configured channel builder for a fetcher's connections (the inter-broker listener's) */
    public ReplicaFetcherManager(int localBrokerId, Function<Integer, Optional<Node>> brokerEndpoints,
                                 LongSupplier brokerEpoch, int fetchersPerLeader, int maxWaitMs, int minBytes,
                                 int maxBytes, int partitionMaxBytes, int requestTimeoutMs,
                                 Function<String, ChannelBuilder> channels, Time time) {
        if (fetchersPerLeader < 1) {
            throw new IllegalArgumentException("num.replica.fetchers must be at least 1: " + fetchersPerLeader);
        }
        this.localBrokerId = localBrokerId;
        this.brokerEndpoints = brokerEndpoints;
        this.brokerEpoch = brokerEpoch;
        this.fetchersPerLeader = fetchersPerLeader;
        this.settings = new ReplicaFetcherThread.FetchSettings(maxWaitMs, minBytes, maxBytes, partitionMaxBytes,
                requestTimeoutMs, channels);
        this.time = time;
    }

    synchronized void bind(ReplicaManager manager) {
        this.replicaManager = manager;
    }

    /** Reports the age of each fetcher thread's last completed round in {@code tasks}, from now on (decision 69). */
    synchronized void reportHealth(BackgroundTasks tasks) {
        health = Optional.of(tasks);
        fetchers.values().forEach(f -> tasks.register(f.liveness()));
    }

    /** Starts (or moves) fetching of {@code tp} from {@code leaderId} in {@code leaderEpoch}. */
    public synchronized void addPartition(TopicPartition tp, Uuid topicId, int leaderId, int leaderEpoch) {
        FetcherKey key = new FetcherKey(leaderId, fetcherId(tp));
        FetcherKey current = fetcherOf.get(tp);
        if (key.equals(current)) {
            fetchers.get(key).addPartition(tp, topicId, leaderEpoch); // same leader, new epoch: keep the thread
            return;
        }
        removePartition(tp);
        ReplicaFetcherThread t = fetchers.computeIfAbsent(key, k -> {
            ReplicaFetcherThread f = new ReplicaFetcherThread(localBrokerId, k.leaderId(), k.fetcherId(),
                    brokerEndpoints, brokerEpoch, replicaManager, settings, time);
            f.start();
            health.ifPresent(h -> h.register(f.liveness()));
            log.info("Started replica fetcher {} of broker {} from leader {}", k.fetcherId(), localBrokerId,
                    k.leaderId());
            return f;
        });
        t.addPartition(tp, topicId, leaderEpoch);
        fetcherOf.put(tp, key);
    }

    /** Kafka's {@code MaxLag}: the largest lag in records of any partition this broker follows. */
    public long maxLag() {
        long max = 0;
        for (ReplicaFetcherThread f : fetchers.values()) {
            max = Math.max(max, f.maxLag());
        }
        return max;
    }

    public synchronized void removePartition(TopicPartition tp) {
        FetcherKey key = fetcherOf.remove(tp);
        if (key == null) {
            return;
        }
        ReplicaFetcherThread t = fetchers.get(key);
        if (t != null) {
            t.removePartition(tp);
            if (t.isEmpty()) {
                fetchers.remove(key);
                health.ifPresent(h -> h.remove(t.liveness()));
                t.shutdown();
                log.info("Stopped replica fetcher {} of broker {} from leader {}: no partitions left", key.fetcherId(),
                        localBrokerId, key.leaderId());
            }
        }
    }

    /** Which of a leader's fetchers copies {@code tp}: the same one for as long as the setting stays. */
    int fetcherId(TopicPartition tp) {
        return Math.floorMod(31 * tp.topic().hashCode() + tp.partition(), fetchersPerLeader);
    }

    @Override
    public synchronized void close() {
        health.ifPresent(h -> fetchers.values().forEach(f -> h.remove(f.liveness())));
        fetchers.values().forEach(ReplicaFetcherThread::shutdown);
        fetchers.clear();
        fetcherOf.clear();
    }
}
