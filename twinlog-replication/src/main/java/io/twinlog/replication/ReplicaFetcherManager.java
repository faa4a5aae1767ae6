package io.twinlog.replication;

import io.twinlog.common.tasks.BackgroundTasks;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * {@code num.replica.fetchers} {@link ReplicaFetcherThread}s per leader broker this broker follows partitions of, a
 * partition always on the same one (by a hash of topic and partition, as Kafka spreads them); threads start with their
 * first partition and stop with their last. Called from the metadata thread, the reconfigure thread
 * ({@link #resize}) and shutdown: the assignment changes under this object's monitor, and a thread that lost its
 * last partition is stopped after the monitor is released, since stopping waits for its fetch to end.
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
    /** Written under the monitor, with every partition moved to its fetcher; read without it by the getter. */
    private volatile int fetchersPerLeader;
    private final ReplicaFetcherThread.FetchSettings settings;
    private final Time time;
    // concurrent: the MaxLag gauge reads it without the monitor
    private final Map<FetcherKey, ReplicaFetcherThread> fetchers = new ConcurrentHashMap<>();
    private final Map<TopicPartition, FetcherKey> fetcherOf = new HashMap<>();
    private ReplicaManager replicaManager;
    /** Where each fetcher thread's liveness is reported, once the broker's metrics are enabled. */
    private Optional<BackgroundTasks> health = Optional.empty();

    /** One fetcher thread: the leader it fetches from and its index among that leader's. */
    private record FetcherKey(int leaderId, int fetcherId) {
    }

    /** A fetcher taken out of service under the monitor, to be stopped once it is released. */
    private record Retired(FetcherKey key, ReplicaFetcherThread thread) {
    }

    /** Where a partition is fetched: from which leader, by which of its fetchers, in which leader epoch. */
    record Assignment(int leaderId, int fetcherId, int leaderEpoch) {
    }

    /** @param channels a configured channel builder for a fetcher's connections (the inter-broker listener's) */
    public ReplicaFetcherManager(int localBrokerId, Function<Integer, Optional<Node>> brokerEndpoints,
                                 LongSupplier brokerEpoch, int fetchersPerLeader, int maxWaitMs, int minBytes,
                                 int maxBytes, int partitionMaxBytes, int requestTimeoutMs,
                                 Function<String, ChannelBuilder> channels, Time time) {
        checkFetchersPerLeader(fetchersPerLeader);
        this.localBrokerId = localBrokerId;
        this.brokerEndpoints = brokerEndpoints;
        this.brokerEpoch = brokerEpoch;
        this.fetchersPerLeader = fetchersPerLeader;
        this.settings = new ReplicaFetcherThread.FetchSettings(maxWaitMs, minBytes, maxBytes, partitionMaxBytes,
                requestTimeoutMs, channels);
        this.time = time;
    }

    private static void checkFetchersPerLeader(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("num.replica.fetchers must be at least 1: " + n);
        }
    }

    synchronized void bind(ReplicaManager manager) {
        this.replicaManager = manager;
    }

    /** Reports the age of each fetcher thread's last completed round in {@code tasks}, from now on (decision 69). */
    synchronized void reportHealth(BackgroundTasks tasks) {
        health = Optional.of(tasks);
        fetchers.values().forEach(f -> tasks.register(f.liveness()));
    }

    /** {@code num.replica.fetchers} as it is now. */
    public int fetchersPerLeader() {
        return fetchersPerLeader;
    }

    /** Starts (or moves) fetching of {@code tp} from {@code leaderId} in {@code leaderEpoch}. */
    public void addPartition(TopicPartition tp, Uuid topicId, int leaderId, int leaderEpoch) {
        List<Retired> retired = new ArrayList<>();
        synchronized (this) {
            FetcherKey key = new FetcherKey(leaderId, fetcherId(tp));
            if (key.equals(fetcherOf.get(tp))) {
                fetchers.get(key).addPartition(tp, topicId, leaderEpoch); // same leader, new epoch: keep the thread
                return;
            }
            detach(tp, retired);
            attach(tp, key, topicId, leaderEpoch);
        }
        stop(retired, "no partitions left");
    }

    public void removePartition(TopicPartition tp) {
        List<Retired> retired = new ArrayList<>();
        synchronized (this) {
            detach(tp, retired);
        }
        stop(retired, "no partitions left");
    }

    /**
     * {@code num.replica.fetchers} changed: each partition whose fetcher the hash rule now picks differently moves
     * to it, with its topic ID and leader epoch (its fetch offset is its log end, read at every fetch), and the
     * fetchers left without partitions stop before this returns. A response the old fetcher still has in flight
     * for a moved partition is dropped, and should the new one fetch and append first, a follower appends only at
     * its log end ({@link Partition#appendRecordsAsFollower}). A leader change meanwhile (the metadata thread's
     * {@link #addPartition}) comes before or after the move, and either way ends on the new leader's fetcher of the
     * new count. The caller checks Kafka's rule for the new count (at most double, at least half).
     *
     * @throws IllegalArgumentException for less than one fetcher per leader
     */
    public void resize(int newFetchersPerLeader) {
        checkFetchersPerLeader(newFetchersPerLeader);
        List<Retired> retired = new ArrayList<>();
        int before;
        int moved = 0;
        synchronized (this) {
            before = fetchersPerLeader;
            if (newFetchersPerLeader == before) {
                return;
            }
            fetchersPerLeader = newFetchersPerLeader;
            for (Map.Entry<TopicPartition, FetcherKey> e : new ArrayList<>(fetcherOf.entrySet())) {
                TopicPartition tp = e.getKey();
                FetcherKey from = e.getValue();
                FetcherKey to = new FetcherKey(from.leaderId(), fetcherId(tp));
                if (to.equals(from)) {
                    continue;
                }
                // off the old fetcher before the new one has it: never two fetchers appending the same partition
                Optional<ReplicaFetcherThread.Followed> followed = fetchers.get(from).removePartition(tp);
                fetcherOf.remove(tp);
                if (followed.isPresent()) {
                    attach(tp, to, followed.get().topicId(), followed.get().leaderEpoch());
                    moved++;
                }
            }
            for (Map.Entry<FetcherKey, ReplicaFetcherThread> e : new ArrayList<>(fetchers.entrySet())) {
                if (e.getValue().isEmpty()) {
                    retire(e.getKey(), e.getValue(), retired);
                }
            }
        }
        log.info("Replica fetchers per leader of broker {}: {} -> {} ({} partitions moved to another fetcher, {} "
                + "fetchers stopping)", localBrokerId, before, newFetchersPerLeader, moved, retired.size());
        stop(retired, "num.replica.fetchers is now " + newFetchersPerLeader);
    }

    /** Kafka's {@code MaxLag}: the largest lag in records of any partition this broker follows. */
    public long maxLag() {
        long max = 0;
        for (ReplicaFetcherThread f : fetchers.values()) {
            max = Math.max(max, f.maxLag());
        }
        return max;
    }

    /** Where {@code tp} is fetched now, if it is. */
    synchronized Optional<Assignment> assignment(TopicPartition tp) {
        FetcherKey key = fetcherOf.get(tp);
        if (key == null) {
            return Optional.empty();
        }
        return fetchers.get(key).leaderEpoch(tp).map(epoch -> new Assignment(key.leaderId(), key.fetcherId(), epoch));
    }

    /** How many fetcher threads run. */
    int fetcherCount() {
        return fetchers.size();
    }

    /** Which of a leader's fetchers copies {@code tp}: the same one for as long as the setting stays. */
    int fetcherId(TopicPartition tp) {
        return Math.floorMod(31 * tp.topic().hashCode() + tp.partition(), fetchersPerLeader);
    }

    /** Puts {@code tp} on the fetcher {@code key}, started if there is none yet. Under the monitor. */
    private void attach(TopicPartition tp, FetcherKey key, Uuid topicId, int leaderEpoch) {
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

    /** Takes {@code tp} off its fetcher, which is retired if that was its last partition. Under the monitor. */
    private void detach(TopicPartition tp, List<Retired> retired) {
        FetcherKey key = fetcherOf.remove(tp);
        if (key == null) {
            return;
        }
        ReplicaFetcherThread t = fetchers.get(key);
        if (t != null) {
            t.removePartition(tp);
            if (t.isEmpty()) {
                retire(key, t, retired);
            }
        }
    }

    /** Out of the fetchers (a new one may start under the same key at once) and of the health report. */
    private void retire(FetcherKey key, ReplicaFetcherThread t, List<Retired> retired) {
        fetchers.remove(key, t);
        health.ifPresent(h -> h.remove(t.liveness()));
        retired.add(new Retired(key, t));
    }

    /**
     * Stops retired fetchers, outside the monitor: all are told first, then each is waited for (its fetch in flight,
     * up to 5 s), as Kafka's fetcher manager does.
     */
    private void stop(List<Retired> retired, String why) {
        retired.forEach(r -> r.thread().initiateShutdown());
        for (Retired r : retired) {
            r.thread().shutdown();
            log.info("Stopped replica fetcher {} of broker {} from leader {}: {}", r.key().fetcherId(), localBrokerId,
                    r.key().leaderId(), why);
        }
    }

    @Override
    public void close() {
        List<Retired> retired = new ArrayList<>();
        synchronized (this) {
            new ArrayList<>(fetchers.entrySet()).forEach(e -> retire(e.getKey(), e.getValue(), retired));
            fetcherOf.clear();
        }
        retired.forEach(r -> r.thread().initiateShutdown());
        retired.forEach(r -> r.thread().shutdown());
    }
}
