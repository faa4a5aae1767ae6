package io.twinlog.mirror.runtime;

import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicPartition;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Writes a mirror partition's durable state record, conditionally on the version its writer read, so two leaders
 * (an old one not yet fenced and a new one) cannot interleave writes. Returns the new version, or -1 when the
 * record changed meanwhile (the caller re-reads and decides again).
 */
final class MirrorStateWriter {
    private final CuratorFramework zk;

    MirrorStateWriter(CuratorFramework zk) {
        this.zk = zk;
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
