package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import io.twinlog.replication.ReplicaFetcherManager;

/**
 * {@code num.replica.fetchers} live: fetcher threads per leader broker; followed partitions move to the fetcher the
 * new count picks, with their leader epoch, and emptied threads stop.
 */
public final class ReplicaFetchers implements BrokerReconfigurable {
    private final ReplicaFetcherManager fetchers;

    public ReplicaFetchers(ReplicaFetcherManager fetchers) {
        this.fetchers = fetchers;
    }

    @Override
    public String name() {
        return "replica fetchers";
    }

    @Override
    public boolean reconfigures(String key) {
        return key.equals(BrokerConfig.NUM_REPLICA_FETCHERS);
    }

    @Override
    public void validateReconfiguration(BrokerConfig current, BrokerConfig next) {
        ThreadCountRule.validate(BrokerConfig.NUM_REPLICA_FETCHERS, fetchers.fetchersPerLeader(),
                next.numReplicaFetchers());
    }

    @Override
    public void reconfigure(BrokerConfig previous, BrokerConfig next) {
        fetchers.resize(next.numReplicaFetchers());
    }
}
