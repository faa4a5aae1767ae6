package io.twinlog.campaign;

import java.util.List;

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
    SEED_003,
    /**
     * One broker's second log dir (on a small filesystem of its own) fills up: the dir goes offline, its partitions'
     * leadership moves; then the disk is freed and the broker restarted, as an operator would.
     */
    DISK_FULL,
    /** One broker's wall clock steps back or forward by minutes to hours while it runs, and back after a while. */
    CLOCK_STEP,
    /** Two faults at once: a network partition and a process fault of {@link #PAIRED_WITH_PARTITIONS}. */
    TWO_AT_ONCE;

    /** The network faults: each heals only the proxies it cut, so one can run beside a process fault. */
    static final List<FaultKind> PARTITIONS = List.of(BROKER_PARTITION, ZOOKEEPER_PARTITION, CLUSTER_PARTITION);
    /**
     * The process faults that may run beside a partition: none changes which cluster is the source, and none waits
     * for a state a partition could hold back (DISK_FULL waits for leadership to move, which needs the broker's
     * registration, so it is not paired).
     */
    static final List<FaultKind> PAIRED_WITH_PARTITIONS = List.of(BROKER_KILL, ZOOKEEPER_FOLLOWER_KILL,
            ZOOKEEPER_LEADER_KILL, CLOCK_STEP);
}
