package io.twinlog.mirror.runtime;

import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.TopicPartition;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes a mirror partition's durable state record, conditionally on the version its writer read, so two leaders
 * (an old one not yet fenced and a new one) cannot interleave writes. Returns the new version, or -1 when the
 * record changed meanwhile (the caller re-reads and decides again).
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

    /**
     * Writes many records, {@value #OPS_PER_TRANSACTION} per ZooKeeper transaction: one round trip and one log
     * sync per transaction instead of per record (a failover of 1,000 partitions writes each two or three times).
     * A transaction refused because one record changed meanwhile is written again record by record, so only that
     * one fails. Writes to the same record follow each other in order (the second expects the first's version).
     *
     * @return each write's new version, or -1 where the record changed meanwhile, in the order given
     */
    List<Integer> writeAll(List<StateWrite> writes) throws Exception {
        List<Integer> versions = new ArrayList<>(writes.size());
        for (int from = 0; from < writes.size(); from += OPS_PER_TRANSACTION) {
            List<StateWrite> chunk = writes.subList(from, Math.min(writes.size(), from + OPS_PER_TRANSACTION));
            if (chunk.size() == 1 || !writeTogether(chunk, versions)) {
                for (StateWrite w : chunk) {
                    versions.add(write(w.partition(), w.record(), w.expectedVersion()));
                }
            }
        }
        return versions;
    }

    /** One transaction; false (nothing written) if a record changed or is missing, or its parent is. */
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
        } catch (KeeperException e) {
            return false;
        }
        for (StateWrite w : chunk) {
            versions.add(w.expectedVersion() < 0 ? 0 : w.expectedVersion() + 1);
        }
        return true;
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
            return -1;
        }
    }
}
