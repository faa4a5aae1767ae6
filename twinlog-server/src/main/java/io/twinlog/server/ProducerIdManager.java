package io.twinlog.server;

import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.transaction.ProducerIdSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * Hands out producer ids for idempotent producers and the transaction coordinator, unique across the cluster: each broker claims blocks of
 * {@value #BLOCK_SIZE} ids from ZooKeeper with a compare-and-set and serves them locally.
 *
 * <p>Claims run on their own thread, never on a request thread: the first block is claimed at start-up and the
 * next one when a tenth of the current block is left, as Kafka's brokers prefetch theirs. If no id is ready (a
 * claim still under way, ZooKeeper unreachable), {@link #generateProducerId} says so at once and the request is
 * answered COORDINATOR_LOAD_IN_PROGRESS, which clients retry — as Kafka answers in the same case.
 */
public final class ProducerIdManager implements ProducerIdSource, AutoCloseable {
    static final int BLOCK_SIZE = 1000;
    private static final Logger log = LoggerFactory.getLogger(ProducerIdManager.class);

    private final int brokerId;
    private final MetadataStore store;
    private final ExecutorService claimer;
    private long next;
    private long blockEnd = -1;
    /** Start of a claimed block not in use yet, or -1. */
    private long prefetched = -1;
    private boolean claiming;

    public ProducerIdManager(int brokerId, MetadataStore store) {
        this.brokerId = brokerId;
        this.store = store;
        this.claimer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "twinlog-producer-ids-" + brokerId);
            t.setDaemon(true);
            return t;
        });
        synchronized (this) {
            claimAsync();
        }
    }

    /** The next producer id, or empty if none is ready yet (a block is being claimed). Never blocks. */
    @Override
    public synchronized OptionalLong generateProducerId() {
        if (next > blockEnd && prefetched >= 0) {
            next = prefetched;
            blockEnd = prefetched + BLOCK_SIZE - 1;
            prefetched = -1;
        }
        if (next > blockEnd) {
            claimAsync();
            return OptionalLong.empty();
        }
        long id = next++;
        if (blockEnd - next < BLOCK_SIZE / 10) {
            claimAsync();
        }
        return OptionalLong.of(id);
    }

    /** Starts claiming the next block unless one is being claimed or is ready. Called holding the lock. */
    private void claimAsync() {
        if (claiming || prefetched >= 0) {
            return;
        }
        claiming = true;
        try {
            claimer.execute(this::claim);
        } catch (RejectedExecutionException e) {
            claiming = false; // closing
        }
    }

    private void claim() {
        long start = -1;
        try {
            start = store.allocateProducerIdBlock(brokerId, BLOCK_SIZE);
            log.info("Claimed producer ids {} to {}", start, start + BLOCK_SIZE - 1);
        } catch (Exception e) { // broad: any failure to claim a block is retried by the next request, logged
            log.warn("Could not claim a block of producer ids from ZooKeeper; the next request tries again", e);
        }
        synchronized (this) {
            claiming = false;
            if (start >= 0) {
                prefetched = start;
            }
        }
    }

    @Override
    public void close() {
        claimer.shutdownNow();
    }
}
