package io.twinlog.server;

import io.twinlog.controller.zk.MetadataStore;

/**
 * Hands out producer ids for idempotent producers, unique across the cluster: each broker claims blocks of
 * {@value #BLOCK_SIZE} ids from ZooKeeper with a compare-and-set and serves them locally.
 */
public final class ProducerIdManager {
    static final int BLOCK_SIZE = 1000;

    private final int brokerId;
    private final MetadataStore store;
    private long next;
    private long blockEnd = -1;

    public ProducerIdManager(int brokerId, MetadataStore store) {
        this.brokerId = brokerId;
        this.store = store;
    }

    public synchronized long generateProducerId() throws Exception {
        if (next > blockEnd) {
            next = store.allocateProducerIdBlock(brokerId, BLOCK_SIZE);
            blockEnd = next + BLOCK_SIZE - 1;
        }
        return next++;
    }
}
