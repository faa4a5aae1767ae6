package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The failover benchmark's view of the metadata: polls a one-partition topic's leader with Admin.describeTopics
 * every {@value FailoverBenchmark#POLL_INTERVAL_MS} ms from its own thread and notes when a poll after the stop first
 * names another leader.
 */
final class LeaderPoller implements AutoCloseable {
    private final Admin admin;
    private final String topic;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long stopNanos = Long.MAX_VALUE;
    private volatile int oldLeader = -2;
    private volatile int lastLeader = -2;
    private volatile int newLeader = -1;
    private final AtomicLong newLeaderNanos = new AtomicLong();
    private final AtomicLong polls = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private volatile Exception lastError;

    LeaderPoller(String bootstrapServers, String topic) {
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 1000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 2000));
        this.topic = topic;
        this.thread = new Thread(this::pollLoop, "failover-leader-poller");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    private void pollLoop() {
        while (running) {
            long began = System.nanoTime();
            try {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
                        .get(2, TimeUnit.SECONDS).get(topic);
                Node leader = d.partitions().get(0).leader();
                int id = leader == null || leader.isEmpty() ? -1 : leader.id();
                long now = System.nanoTime();
                lastLeader = id;
                polls.incrementAndGet();
                if (now >= stopNanos && id >= 0 && id != oldLeader && newLeaderNanos.compareAndSet(0, now)) {
                    newLeader = id;
                }
            } catch (Exception e) {
                // broad: the cluster is failing over; each failed poll is counted and the last one reported
                errors.incrementAndGet();
                lastError = e;
            }
            long wait = began + FailoverBenchmark.POLL_INTERVAL_MS * 1_000_000L - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
        }
    }

    /** The admin client of the polls, for the benchmark's own calls once polling stopped. */
    Admin admin() {
        return admin;
    }

    void markStop(long nanos, int leader) {
        oldLeader = leader;
        stopNanos = nanos;
    }

    long polls() {
        return polls.get();
    }

    long errors() {
        return errors.get();
    }

    Exception lastError() {
        return lastError;
    }

    int lastLeader() {
        return lastLeader;
    }

    int newLeader() {
        return newLeader;
    }

    long newLeaderNanos() {
        return newLeaderNanos.get();
    }

    void stopPolling() throws InterruptedException {
        running = false;
        thread.join(5_000);
    }

    @Override
    public void close() throws InterruptedException {
        stopPolling();
        admin.close(Duration.ofSeconds(5));
    }
}
