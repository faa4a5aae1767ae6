package io.twinlog.campaign;

/** What one round of the campaign does to the clusters (docs/reliability.md describes each). */
enum FaultKind {
    /** kill -9 of one broker of either cluster under load, restarted after a drawn time. */
    BROKER_KILL,
    /** kill -9 of a ZooKeeper follower, restarted after a drawn time. */
    ZOOKEEPER_FOLLOWER_KILL,
    /** kill -9 of the ZooKeeper leader (the ensemble elects another), restarted after a drawn time. */
    ZOOKEEPER_LEADER_KILL,
    /** Two brokers of one cluster cannot reach each other, both ways, for a drawn time. */
    BROKER_PARTITION,
    /** One broker cannot reach any ZooKeeper node for a drawn time (longer than its session timeout, or not). */
    ZOOKEEPER_PARTITION,
    /** The destination's mirror cannot reach the source (refused, or blackholed: a timeout) for a drawn time. */
    CLUSTER_PARTITION,
    /** Failover to the destination under load, writes there, then failback of the old source: the roles swap. */
    FAILOVER_FAILBACK,
    /** Seed 000, clean election: the mirror behind, a clean leader change on the source, source down, failover, failback. */
    SEED_000_CLEAN,
    /** Seed 000, unclean election: the source's new leader lost its disk and takes writes; failover, failback. */
    SEED_000_UNCLEAN,
    /**
     * Seed 003: with {@code mirror.support.unclean.leader.election}, a failback while a replica of the old source is
     * away; it returns, and is then elected uncleanly.
     */
    SEED_003
}
