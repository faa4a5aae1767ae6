package io.twinlog.server;

import io.twinlog.replication.LogDirFailure;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.storage.LogStore;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The broker's log dir failure handler (Kafka's {@code ReplicaManager.LogDirFailureHandler}): one thread,
 * {@code twinlog-log-dir-failure-<id>}, takes each failed log dir from the log store's failure channel, takes the
 * dir's partitions offline ({@link ReplicaManager#handleLogDirFailure}), and tells the controller by publishing the
 * failed dirs and the offline replicas in this broker's registration, retried with backoff until ZooKeeper takes
 * it. The controller then moves leadership away and shrinks the ISRs. When every log dir has failed the broker
 * can serve nothing: it logs why at ERROR and shuts down, as Kafka does.
 *
 * <p>May block on ZooKeeper; no request thread waits for it.
 */
final class LogDirFailureHandler implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LogDirFailureHandler.class);
    private static final ExponentialBackoff PUBLISH_BACKOFF = new ExponentialBackoff(100, 2, 5_000, 0.2);

    /** Writes the offline dirs and replicas into this broker's registration. */
    interface OfflinePublisher {
        void publish(List<String> offlineLogDirs, Set<TopicIdPartition> offlineReplicas) throws Exception;
    }

    private final int brokerId;
    private final LogStore logStore;
    private final ReplicaManager replicaManager;
    private final OfflinePublisher publisher;
    private final Runnable shutdownBroker;
    private final List<String> offlineLogDirs = new ArrayList<>(); // only touched by the handler thread
    private final Thread thread;
    private volatile boolean closed;

    /**
     * @param shutdownBroker stops the broker when every log dir has failed; called on the handler thread and must
     *                       not wait for it to end
     */
    LogDirFailureHandler(int brokerId, LogStore logStore, ReplicaManager replicaManager, OfflinePublisher publisher,
                         Runnable shutdownBroker) {
        this.brokerId = brokerId;
        this.logStore = logStore;
        this.replicaManager = replicaManager;
        this.publisher = publisher;
        this.shutdownBroker = shutdownBroker;
        this.thread = new Thread(this::run, "twinlog-log-dir-failure-" + brokerId);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    private void run() {
        while (!closed) {
            String dir;
            try {
                dir = logStore.takeNextOfflineLogDir();
            } catch (InterruptedException e) {
                return;
            }
            try {
                handle(dir);
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) { // an Error too: escaping, it would end this thread and no later failure is handled
                log.error("Broker {} could not take the failed log dir {} offline", brokerId, dir, e);
            }
        }
    }

    private void handle(String dir) throws InterruptedException {
        LogDirFailure failure = replicaManager.handleLogDirFailure(dir).orElse(null);
        if (failure == null) {
            log.info("Broker {}: log dir {} was already offline", brokerId, dir);
            return;
        }
        offlineLogDirs.add(dir);
        publish();
        if (failure.everyDirFailed()) {
            log.error("Shutting down broker {}: every log dir has failed ({}), so it cannot serve any partition",
                    brokerId, offlineLogDirs);
            shutdownBroker.run();
            return;
        }
        log.warn("Broker {} stopped serving the failed log dir {}: {} partitions offline; still serving log dirs {}",
                brokerId, dir, failure.partitions().size(), logStore.liveLogDirs());
    }

    /** Publishes every offline replica so far; retries until it succeeds or the broker closes. */
    private void publish() throws InterruptedException {
        Set<TopicIdPartition> replicas = new HashSet<>();
        replicaManager.offlinePartitions().forEach((tp, topicId) -> replicas.add(new TopicIdPartition(topicId, tp)));
        for (int attempt = 0; !closed; attempt++) {
            try {
                publisher.publish(List.copyOf(offlineLogDirs), replicas);
                log.info("Broker {} registration now lists the failed log dirs {} and {} offline replicas", brokerId,
                        offlineLogDirs, replicas.size());
                return;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) { // broad: any failure to publish is retried with backoff, logged with trace
                long backoffMs = PUBLISH_BACKOFF.backoff(attempt);
                log.warn("Broker {} could not publish its offline replicas (attempt {}); retrying in {} ms",
                        brokerId, attempt + 1, backoffMs, e);
                Thread.sleep(backoffMs); // bounded backoff between ZooKeeper attempts; close() interrupts it
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        thread.interrupt();
        if (Thread.currentThread() != thread) {
            thread.join(10_000);
        }
    }
}
