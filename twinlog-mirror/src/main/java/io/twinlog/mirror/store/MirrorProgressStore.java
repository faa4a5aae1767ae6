package io.twinlog.mirror.store;

import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkBatch;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.TopicPartition;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How far each mirror partition has got, {@code /mirror_progress/<topic>/<partition>}: written by the partition's
 * destination leader, read by describe, watched by no broker (progress must not rebuild every broker's metadata
 * image). Writes and reads go in batches (transactions and multi-reads of up to {@value ZkBatch#CHUNK}) so that a
 * mirror of thousands of partitions costs a few round trips. Thread-safe (Curator's client is). Split from
 * {@link MirrorStore}, which hands its calls here.
 */
final class MirrorProgressStore {
    private final CuratorFramework zk;

    MirrorProgressStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /**
     * Records how far a mirror partition has got (by its destination leader, at most every few seconds and at each
     * state change) under {@code /mirror_progress}, which no broker watches: progress must not rebuild every
     * broker's metadata image.
     */
    void write(TopicPartition tp, MirrorProgress progress) throws Exception {
        NodeWrites.put(zk, ZkPaths.mirrorProgress(tp.topic(), tp.partition()), Json.encode(progress.toJson()));
    }

    /**
     * Records the progress of many mirror partitions, in ZooKeeper transactions of up to {@value ZkBatch#CHUNK} (one
     * log sync each);
     * a transaction refused because a node does not exist yet is written node by node (creating it).
     */
    void writeAll(Map<TopicPartition, MirrorProgress> progress) throws Exception {
        List<Map.Entry<TopicPartition, MirrorProgress>> all = new ArrayList<>(progress.entrySet());
        for (int from = 0; from < all.size(); from += ZkBatch.CHUNK) {
            List<Map.Entry<TopicPartition, MirrorProgress>> chunk = all.subList(from,
                    Math.min(all.size(), from + ZkBatch.CHUNK));
            List<CuratorOp> ops = new ArrayList<>(chunk.size());
            for (Map.Entry<TopicPartition, MirrorProgress> e : chunk) {
                ops.add(zk.transactionOp().setData().forPath(ZkPaths.mirrorProgress(e.getKey().topic(),
                        e.getKey().partition()), Json.encode(e.getValue().toJson())));
            }
            try {
                zk.transaction().forOperations(ops);
            } catch (KeeperException.NoNodeException e) {
                if (!writeCreating(chunk)) {
                    for (Map.Entry<TopicPartition, MirrorProgress> one : chunk) {
                        write(one.getKey(), one.getValue());
                    }
                }
            }
        }
    }

    /**
     * The first progress of new mirror partitions, together: their topics' parent nodes made (two round trips for
     * all of them, {@link ZkBatch#createIfAbsent}), which nodes exist read in one multi-read (of their data:
     * ZooKeeper's multi-read has no exists), then one transaction creating the others; node by node
     * (one round trip each, as a start of 1,000 partitions did, decision 94) only if that is refused too.
     *
     * @return false if the transaction was refused (a node created or deleted meanwhile): nothing was written
     */
    private boolean writeCreating(List<Map.Entry<TopicPartition, MirrorProgress>> chunk) throws Exception {
        Set<String> parents = new LinkedHashSet<>();
        chunk.forEach(e -> parents.add(ZkPaths.mirrorProgress(e.getKey().topic())));
        ZkBatch.createIfAbsent(zk, parents);
        List<Op> reads = chunk.stream().map(e -> Op.getData(ZkPaths.mirrorProgress(e.getKey().topic(),
                e.getKey().partition()))).toList();
        List<OpResult> found = ZkBatch.multiRead(zk, reads);
        List<CuratorOp> ops = new ArrayList<>(chunk.size());
        for (int i = 0; i < chunk.size(); i++) {
            Map.Entry<TopicPartition, MirrorProgress> e = chunk.get(i);
            String path = ZkPaths.mirrorProgress(e.getKey().topic(), e.getKey().partition());
            byte[] data = Json.encode(e.getValue().toJson());
            boolean exists = found.get(i) instanceof OpResult.GetDataResult;
            ops.add(exists ? zk.transactionOp().setData().forPath(path, data)
                    : zk.transactionOp().create().forPath(path, data));
        }
        try {
            zk.transaction().forOperations(ops);
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.NodeExistsException e) {
            return false;
        }
    }

    /**
     * The last recorded progress of many mirror partitions, read with ZooKeeper multi-reads of up to 500 nodes (one
     * round trip each instead of one per partition: describe of thousands of partitions). Partitions whose leader
     * has recorded nothing yet are left out.
     */
    Map<TopicPartition, MirrorProgress> readAll(Collection<TopicPartition> partitions) throws Exception {
        Map<TopicPartition, MirrorProgress> out = new HashMap<>();
        List<TopicPartition> all = new ArrayList<>(partitions);
        List<Op> reads = all.stream()
                .map(tp -> Op.getData(ZkPaths.mirrorProgress(tp.topic(), tp.partition()))).toList();
        List<OpResult> results = ZkBatch.multiReadAll(zk, reads);
        for (int i = 0; i < all.size(); i++) {
            if (results.get(i) instanceof OpResult.GetDataResult data) {
                out.put(all.get(i), MirrorProgress.fromJson(data.getData(), reads.get(i).getPath()));
            }
        }
        return out;
    }
}
