package io.twinlog.controller.zk;

import org.apache.curator.RetryLoop;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;

/** ZooKeeper operations on many nodes in few round trips, for the stores that write batches of records. */
public final class ZkBatch {
    private ZkBatch() {
    }

    /**
     * ZooKeeper's multi-read (getData and getChildren only; Curator has none) under Curator's retry policy: one
     * round trip, a missing node an error result in its place rather than an exception.
     */
    public static List<OpResult> multiRead(CuratorFramework zk, List<Op> reads) throws Exception {
        return RetryLoop.callWithRetry(zk.getZookeeperClient(), () -> zk.getZookeeperClient().getZooKeeper()
                .multi(reads));
    }

    /**
     * Nodes read, or checked and created, per round trip: well under ZooKeeper's request size limit for these short
     * paths.
     */
    public static final int CHUNK = 500;

    /**
     * Reads of any number of nodes, {@value #CHUNK} per multi-read ({@link #multiRead}), one after another; the
     * results in the order of {@code reads}, a missing node an error result in its place. (Sending them all at once was
     * tried and left out: on the broker's one ZooKeeper session they queue ahead of its own writes, and the one
     * 10,000-partition run with it had a failover, polled with describes, run past its 30 s bound; not proven to be
     * the cause, the runs before came within 0.3 to 6 s of that bound.)
     */
    public static List<OpResult> multiReadAll(CuratorFramework zk, List<Op> reads) throws Exception {
        List<OpResult> out = new ArrayList<>(reads.size());
        for (int from = 0; from < reads.size(); from += CHUNK) {
            out.addAll(multiRead(zk, reads.subList(from, Math.min(reads.size(), from + CHUNK))));
        }
        return out;
    }

    /**
     * Creates each of {@code paths} that does not exist yet, in two round trips per {@value #CHUNK} paths: a
     * multi-read of them finds the missing ones, and one transaction creates those. If that transaction is refused
     * (another writer made one meanwhile, or a parent of a path is missing too) each missing path is created on its
     * own with its parents, one round trip each, as always before: the parents of the mirror partitions' first
     * records were 100 such round trips per broker, one after another, in a start of 100 topics.
     */
    public static void createIfAbsent(CuratorFramework zk, Collection<String> paths) throws Exception {
        List<String> all = List.copyOf(new LinkedHashSet<>(paths));
        for (int from = 0; from < all.size(); from += CHUNK) {
            createChunkIfAbsent(zk, all.subList(from, Math.min(all.size(), from + CHUNK)));
        }
    }

    private static void createChunkIfAbsent(CuratorFramework zk, List<String> paths) throws Exception {
        if (paths.size() == 1) {
            createOneIfAbsent(zk, paths.get(0));
            return;
        }
        List<OpResult> found = multiRead(zk, paths.stream().map(Op::getData).toList());
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            if (!(found.get(i) instanceof OpResult.GetDataResult)) {
                missing.add(paths.get(i));
            }
        }
        if (missing.isEmpty()) {
            return;
        }
        List<CuratorOp> creates = new ArrayList<>(missing.size());
        for (String path : missing) {
            creates.add(zk.transactionOp().create().forPath(path));
        }
        try {
            zk.transaction().forOperations(creates);
        } catch (KeeperException.NodeExistsException | KeeperException.NoNodeException e) {
            for (String path : missing) {
                createOneIfAbsent(zk, path);
            }
        }
    }

    private static void createOneIfAbsent(CuratorFramework zk, String path) throws Exception {
        try {
            zk.create().creatingParentsIfNeeded().forPath(path);
        } catch (KeeperException.NodeExistsException exists) {
            // the usual case: another writer, or an earlier batch, made it
        }
    }
}
