package io.twinlog.mirror.runtime;

import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkBatch;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.TopicPartition;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Writes a mirror partition's durable state record, conditionally on the version its writer read, so two leaders
 * (an old one not yet fenced and a new one) cannot interleave writes. Returns the new version, or {@link #CHANGED}
 * when the record changed meanwhile (the caller re-reads and decides again).
 */
final class MirrorStateWriter {
    /** Records per transaction: well inside ZooKeeper's 1 MiB request limit (a record is a few hundred bytes). */
    static final int OPS_PER_TRANSACTION = 500;
    private final CuratorFramework zk;

    MirrorStateWriter(CuratorFramework zk) {
        this.zk = zk;
    }

    /** One record to write, conditionally on {@code expectedVersion} (-1: the record must not exist yet). */
    record StateWrite(TopicPartition partition, MirrorPartitionRecord record, int expectedVersion) {
    }

    /** A write's outcome in {@link Outcome#versions}: the record had changed meanwhile, nothing was written. */
    static final int CHANGED = -1;
    /** A write's outcome in {@link Outcome#versions}: not known to be written, because ZooKeeper failed first. */
    static final int NOT_WRITTEN = -2;

    /**
     * What {@link #writeAll} did, write by write: the new version, {@link #CHANGED} or {@link #NOT_WRITTEN}; and
     * the failure that stopped it, if one did (the writes before it are committed and say so).
     */
    record Outcome(List<Integer> versions, Optional<Exception> failure) {
    }

    /**
     * Writes many records, {@value #OPS_PER_TRANSACTION} per ZooKeeper transaction: one round trip and one log
     * sync per transaction instead of per record (a failover of 1,000 partitions writes each two or three times).
     * A transaction refused because one record changed meanwhile is written again record by record, so only that
     * one fails. Writes to the same record follow each other in order (the second expects the first's version).
     * Each transaction is all or nothing, not the call: a failure (ZooKeeper lost, say) stops it, and the outcome
     * still reports every write committed before it, so no caller takes a committed record for a failed one.
     *
     * @return each write's outcome, in the order given
     */
    Outcome writeAll(List<StateWrite> writes) {
        List<Integer> versions = new ArrayList<>(writes.size());
        try {
            for (int from = 0; from < writes.size(); from += OPS_PER_TRANSACTION) {
                List<StateWrite> chunk = writes.subList(from, Math.min(writes.size(), from + OPS_PER_TRANSACTION));
                if (chunk.size() == 1 || !writeTogether(chunk, versions)) {
                    for (StateWrite w : chunk) {
                        versions.add(write(w.partition(), w.record(), w.expectedVersion()));
                    }
                }
            }
            return new Outcome(versions, Optional.empty());
        } catch (Exception e) { // broad: the failure is the outcome's, which the caller logs with its trace
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt(); // closing: the caller's thread must still see it
            }
            while (versions.size() < writes.size()) {
                versions.add(NOT_WRITTEN);
            }
            return new Outcome(versions, Optional.of(e));
        }
    }

    /**
     * One transaction; false (nothing written) if a record changed or is missing. A first record of a topic needs
     * the topic's parent node: a transaction refused for a missing node makes the parents of the records it creates
     * (one round trip per topic) and is tried once more, rather than falling back to one round trip per record (a
     * start of 1,000 partitions spent most of its ZooKeeper time so, decision 94).
     */
    private boolean writeTogether(List<StateWrite> chunk, List<Integer> versions) throws Exception {
        List<CuratorOp> ops = new ArrayList<>(chunk.size());
        for (StateWrite w : chunk) {
            String path = ZkPaths.mirrorState(w.partition().topic(), w.partition().partition());
            byte[] data = Json.encode(w.record().toJson());
            ops.add(w.expectedVersion() < 0 ? zk.transactionOp().create().forPath(path, data)
                    : zk.transactionOp().setData().withVersion(w.expectedVersion()).forPath(path, data));
        }
        try {
            zk.transaction().forOperations(ops);
        } catch (KeeperException.NoNodeException e) {
            if (!createParents(chunk)) {
                return false;
            }
            try {
                zk.transaction().forOperations(ops);
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException
                     | KeeperException.NoNodeException again) {
                return false;
            }
        } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
            return false;
        }
        for (StateWrite w : chunk) {
            versions.add(w.expectedVersion() < 0 ? 0 : w.expectedVersion() + 1);
        }
        return true;
    }

    /** Makes the topic nodes the chunk's first records go under; false if it creates no record (nothing to make). */
    private boolean createParents(List<StateWrite> chunk) throws Exception {
        Set<String> parents = new LinkedHashSet<>();
        chunk.stream().filter(w -> w.expectedVersion() < 0)
                .forEach(w -> parents.add(ZkPaths.mirrorStates(w.partition().topic())));
        ZkBatch.createIfAbsent(zk, parents);
        return !parents.isEmpty();
    }

    int write(TopicPartition tp, MirrorPartitionRecord record, int expectedVersion) throws Exception {
        String path = ZkPaths.mirrorState(tp.topic(), tp.partition());
        byte[] data = Json.encode(record.toJson());
        try {
            if (expectedVersion < 0) {
                zk.create().creatingParentsIfNeeded().forPath(path, data);
                return 0;
            }
            Stat stat = zk.setData().withVersion(expectedVersion).forPath(path, data);
            return stat.getVersion();
        } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                 | KeeperException.NoNodeException e) {
            return CHANGED;
        }
    }
}
