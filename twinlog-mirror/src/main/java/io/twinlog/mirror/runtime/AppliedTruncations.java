package io.twinlog.mirror.runtime;

import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Tells the cluster which mirror truncation points this broker's replicas applied (decision 38): one node per
 * broker, {@code /mirror_truncations/<broker>}, rewritten with the whole set after each batch of changes, on a thread
 * of its own (never the metadata thread, which reports the changes, nor a request thread). A failed write is logged
 * and tried again after a backoff: a leader waiting in LOG_TRUNCATION sees the replica once it lands.
 */
public final class AppliedTruncations implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AppliedTruncations.class);

    private final int brokerId;
    private final CuratorFramework zk;
    private final ScheduledExecutorService executor;
    private final ExponentialBackoff backoff = new ExponentialBackoff(100, 2, 5_000, 0.2);
    /** What the node should say; guarded by {@code this}. */
    private final Map<TopicPartition, Long> applied = new HashMap<>();
    private boolean writeScheduled;
    private int failures;

    public AppliedTruncations(int brokerId, CuratorFramework zk) {
        this.brokerId = brokerId;
        this.zk = zk;
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-truncation-confirmations-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The metadata image's view of this broker's node, taken once at start so a restarted broker keeps what it
     * said before (its replicas' truncation files say the same). Entries of partitions it does not host any more (a
     * topic deleted or a replica moved while it was down, which no removal of a hosted partition forgets) are
     * dropped and the node rewritten without them; should such a partition come back here, the applier confirms its
     * truncation point again once its replica has applied it.
     */
    public synchronized void loadFrom(Map<TopicPartition, Long> published, Set<TopicPartition> hosted) {
        List<TopicPartition> dropped = new ArrayList<>();
        published.forEach((tp, id) -> {
            if (hosted.contains(tp)) {
                applied.putIfAbsent(tp, id);
            } else {
                dropped.add(tp);
            }
        });
        if (!dropped.isEmpty()) {
            log.info("Broker {} no longer hosts {}: their mirror truncation points go from {}", brokerId, dropped,
                    ZkPaths.mirrorTruncations(brokerId));
            scheduleWrite(0);
        }
    }

    /** Records that this broker's replica of {@code tp} applied the truncation point {@code id}. */
    public synchronized void confirm(TopicPartition tp, long id) {
        Long before = applied.put(tp, id);
        if (before == null || before != id) {
            scheduleWrite(0);
        }
    }

    /** This broker no longer hosts {@code tp}. */
    public synchronized void forget(TopicPartition tp) {
        if (applied.remove(tp) != null) {
            scheduleWrite(0);
        }
    }

    private synchronized void scheduleWrite(long delayMs) {
        if (writeScheduled) {
            return;
        }
        writeScheduled = true;
        try {
            executor.schedule(this::write, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            writeScheduled = false; // closing
        }
    }

    private void write() {
        Map<String, Map<String, Long>> byTopic = new TreeMap<>();
        synchronized (this) {
            writeScheduled = false;
            applied.forEach((tp, id) -> byTopic.computeIfAbsent(tp.topic(), t -> new TreeMap<>())
                    .put(Integer.toString(tp.partition()), id));
        }
        byte[] data = Json.encode(Map.of("version", 1, "applied", byTopic));
        String path = ZkPaths.mirrorTruncations(brokerId);
        try {
            try {
                zk.setData().forPath(path, data);
            } catch (KeeperException.NoNodeException e) {
                zk.create().creatingParentsIfNeeded().forPath(path, data);
            }
            synchronized (this) {
                failures = 0;
            }
            log.debug("Broker {} published the mirror truncation points its replicas applied: {}", brokerId, byTopic);
        } catch (Exception e) { // broad: any ZooKeeper failure is retried with backoff; logged with its trace
            long retryMs;
            synchronized (this) {
                retryMs = backoff.backoff(failures++);
            }
            log.warn("Broker {} could not publish the mirror truncation points its replicas applied; retrying in {} "
                    + "ms (a mirror leader waiting for them stays in LOG_TRUNCATION meanwhile)", brokerId, retryMs, e);
            scheduleWrite(retryMs);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
