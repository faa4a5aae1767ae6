package io.twinlog.replication;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * One {@link ReplicaFetcherThread} per leader broker this broker follows partitions of; threads start with their
 * first partition and stop with their last. Called from the metadata thread (and shutdown), hence synchronized.
 */
public final class ReplicaFetcherManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaFetcherManager.class);

    private final int localBrokerId;
    private final Function<Integer, Optional<Node>> brokerEndpoints;
    private final LongSupplier brokerEpoch;
    private final ReplicaFetcherThread.FetchSettings settings;
    private final Time time;
    private final Map<Integer, ReplicaFetcherThread> fetchers = new HashMap<>();
    private final Map<TopicPartition, Integer> leaderOf = new HashMap<>();
    private ReplicaManager replicaManager;

    public ReplicaFetcherManager(int localBrokerId, Function<Integer, Optional<Node>> brokerEndpoints,
                                 LongSupplier brokerEpoch, int maxWaitMs, int minBytes, int maxBytes,
                                 int partitionMaxBytes, int requestTimeoutMs, Time time) {
        this.localBrokerId = localBrokerId;
        this.brokerEndpoints = brokerEndpoints;
        this.brokerEpoch = brokerEpoch;
        this.settings = new ReplicaFetcherThread.FetchSettings(maxWaitMs, minBytes, maxBytes, partitionMaxBytes,
                requestTimeoutMs);
        this.time = time;
    }

    synchronized void bind(ReplicaManager manager) {
        this.replicaManager = manager;
    }

    /** Starts (or moves) fetching of {@code tp} from {@code leaderId} in {@code leaderEpoch}. */
    public synchronized void addPartition(TopicPartition tp, Uuid topicId, int leaderId, int leaderEpoch) {
        Integer current = leaderOf.get(tp);
        if (current != null && current == leaderId) {
            fetchers.get(leaderId).addPartition(tp, topicId, leaderEpoch); // same leader, new epoch: keep the thread
            return;
        }
        removePartition(tp);
        ReplicaFetcherThread t = fetchers.computeIfAbsent(leaderId, id -> {
            ReplicaFetcherThread f = new ReplicaFetcherThread(localBrokerId, id, brokerEndpoints, brokerEpoch,
                    replicaManager, settings, time);
            f.start();
            log.info("Started replica fetcher of broker {} from leader {}", localBrokerId, id);
            return f;
        });
        t.addPartition(tp, topicId, leaderEpoch);
        leaderOf.put(tp, leaderId);
    }

    public synchronized void removePartition(TopicPartition tp) {
        Integer leader = leaderOf.remove(tp);
        if (leader == null) {
            return;
        }
        ReplicaFetcherThread t = fetchers.get(leader);
        if (t != null) {
            t.removePartition(tp);
            if (t.isEmpty()) {
                fetchers.remove(leader);
                t.shutdown();
                log.info("Stopped replica fetcher of broker {} from leader {}: no partitions left", localBrokerId, leader);
            }
        }
    }

    @Override
    public synchronized void close() {
        fetchers.values().forEach(ReplicaFetcherThread::shutdown);
        fetchers.clear();
        leaderOf.clear();
    }
}
