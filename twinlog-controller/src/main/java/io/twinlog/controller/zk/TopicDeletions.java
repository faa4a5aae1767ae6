package io.twinlog.controller.zk;

import io.twinlog.controller.metadata.TopicAssignment;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Topic deletion in ZooKeeper, with its marks in {@code /admin/delete_topics/<topic>} (decisions 72, 74): the
 * deletion is marked with the topic's ID and the brokers that held it before anything goes, completed in
 * writes that may each be done already, and the mark set completed last; the controller completes a deletion cut
 * short and removes the completed marks every broker of the topic has read. Also removes a topic name's mirror
 * records, for a creation as for a deletion. Split from {@link MetadataStore}, which hands deletions here.
 *
 * <p>Stateless apart from the client; safe to call from any thread.
 */
public final class TopicDeletions {
    private static final Logger log = LoggerFactory.getLogger(TopicDeletions.class);

    /**
     * How long a completed deletion's mark stays in {@code /admin/delete_topics} at least: every running broker applies
     * the deletion within it (a broker that had not is a broker whose metadata was minutes behind; it keeps the logs).
     * It stays longer while a broker that held a replica of the topic is not registered, or registered less than
     * {@link #REGISTERED_BEFORE_EXPIRY_MS} ago: the mark is what tells that broker's start to delete the logs.
     */
    public static final long COMPLETED_MARK_RETENTION_MS = 10 * 60_000;
    /** How long a broker of a deleted topic must have been registered before the mark can go: its start has read it. */
    public static final long REGISTERED_BEFORE_EXPIRY_MS = 60_000;

    private final CuratorFramework zk;

    TopicDeletions(CuratorFramework zk) {
        this.zk = zk;
    }

    /**
     * Deletes a topic, its configs and, for a mirror topic, its partitions' mirror state and progress records:
     * a topic created later under this name (mirrored again, say) starts without them. The deletion takes several
     * ZooKeeper writes (a recursive delete is one per node), so it is marked first in
     * {@code /admin/delete_topics/<topic>} with the topic's ID, and the mark is set completed last: a deletion cut
     * short by a crash is completed by the controller ({@link #resume}), as Kafka's controller resumes
     * {@code /admin/delete_topics}. The completed mark stays {@link #COMPLETED_MARK_RETENTION_MS}: brokers delete a
     * gone topic's logs only when its mark says it was deleted (decision 72).
     */
    void delete(String topic) throws Exception {
        TopicAssignment assignment;
        try {
            String path = ZkPaths.topic(topic);
            assignment = TopicAssignment.fromJson(zk.getData().forPath(path), path);
        } catch (KeeperException.NoNodeException e) {
            throw new UnknownTopicOrPartitionException("Topic '" + topic + "' does not exist.");
        }
        Uuid topicId = assignment.topicId();
        SortedSet<Integer> brokers = new TreeSet<>();
        assignment.replicas().values().forEach(brokers::addAll);
        assignment.reassigning().values().forEach(r -> {
            brokers.addAll(r.target());
            brokers.addAll(r.original());
        });
        byte[] mark = Json.encode(Map.of("version", 1, "topicId", topicId.toString(), "brokers", List.copyOf(brokers)));
        try {
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.topicDeletion(topic), mark);
        } catch (KeeperException.NodeExistsException e) {
            zk.setData().forPath(ZkPaths.topicDeletion(topic), mark); // an earlier deletion's, of this name
        }
        completeDeletion(topic, topicId, List.copyOf(brokers));
        log.info("Deleted topic {} (topic ID {})", topic, topicId);
    }

    /**
     * Completes every topic deletion that was marked and not finished (its deleter crashed between the writes), and
     * removes completed marks older than {@link #COMPLETED_MARK_RETENTION_MS} once every broker that held a replica
     * of the topic has been registered for {@link #REGISTERED_BEFORE_EXPIRY_MS}; run by the controller when it takes
     * over and periodically. A mark whose topic now has another ID (created again
     * since) only goes; that topic is not touched.
     *
     * @return the deletions completed
     */
    int resume(long nowMs) throws Exception {
        List<String> marked;
        try {
            marked = zk.getChildren().forPath(ZkPaths.DELETE_TOPICS);
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
        int completed = 0;
        for (String topic : marked) {
            String path = ZkPaths.topicDeletion(topic);
            Uuid topicId;
            Stat stat = new Stat();
            Map<String, Object> mark;
            try {
                mark = Json.decode(zk.getData().storingStatIn(stat).forPath(path), path);
                topicId = Uuid.fromString((String) mark.get("topicId"));
            } catch (KeeperException.NoNodeException finished) {
                continue; // expired meanwhile
            }
            List<Integer> brokers = markBrokers(mark);
            if (Boolean.TRUE.equals(mark.get("completed"))) {
                if (completedMarkExpired(nowMs, stat.getMtime(), registeredAt(brokers))) {
                    try {
                        zk.delete().withVersion(stat.getVersion()).forPath(path);
                    } catch (KeeperException.NoNodeException | KeeperException.BadVersionException changed) {
                        // deleted again since, or expired by another controller: its next round decides
                    }
                }
                continue;
            }
            log.info("Completing the deletion of topic {} (topic ID {}), begun and not finished", topic, topicId);
            completeDeletion(topic, topicId, brokers);
            completed++;
        }
        return completed;
    }

    /**
     * The deletion's writes after the mark, each of which may already be done: the topic's tree (only if it is still
     * the topic with {@code topicId}), its configs and mirror records (also only then), and the mark last.
     */
    private void completeDeletion(String topic, Uuid topicId, List<Integer> brokers) throws Exception {
        String topicPath = ZkPaths.topic(topic);
        Optional<Uuid> current;
        try {
            current = Optional.of(TopicAssignment.fromJson(zk.getData().forPath(topicPath), topicPath).topicId());
        } catch (KeeperException.NoNodeException gone) {
            current = Optional.empty();
        }
        if (current.isPresent() && !current.get().equals(topicId)) {
            log.info("Topic {} was created again (topic ID {}) after the deletion of topic ID {} began; only the "
                    + "deletion's mark goes", topic, current.get(), topicId);
        } else {
            try {
                zk.delete().deletingChildrenIfNeeded().forPath(topicPath);
            } catch (KeeperException.NoNodeException ignored) {
                // deleted before an interruption
            }
            try {
                // the create fails, and nothing is deleted, if a topic of this name was created meanwhile: the
                // configs are then that topic's
                zk.transaction().forOperations(zk.transactionOp().create().forPath(topicPath),
                        zk.transactionOp().delete().forPath(ZkPaths.topicConfig(topic)),
                        zk.transactionOp().delete().forPath(topicPath));
            } catch (KeeperException.NoNodeException | KeeperException.NodeExistsException ignored) {
                // configs never written or already removed, or a new topic's
            }
            deleteMirrorRecords(topic);
        }
        markCompleted(topic, topicId, brokers);
    }

    /**
     * Sets the deletion's mark completed. It is kept so, for COMPLETED_MARK_RETENTION_MS: it is what tells a broker
     * that the topic's logs may go (a topic gone without a mark was not deleted: decision 72). Written at the
     * version read, keeping the brokers the mark names now: a broker unregistered meanwhile
     * ({@link BrokerUnregistration}) stays out of it.
     */
    private void markCompleted(String topic, Uuid topicId, List<Integer> brokers) throws Exception {
        String path = ZkPaths.topicDeletion(topic);
        for (int attempt = 0; attempt < MetadataStore.MAX_CAS_ATTEMPTS; attempt++) {
            Stat stat = new Stat();
            List<Integer> named;
            try {
                Map<String, Object> mark = Json.decode(zk.getData().storingStatIn(stat).forPath(path), path);
                named = topicId.toString().equals(mark.get("topicId")) ? markBrokers(mark) : brokers;
            } catch (KeeperException.NoNodeException gone) {
                return; // expired concurrently by the controller, having been completed by another deleter
            }
            try {
                zk.setData().withVersion(stat.getVersion()).forPath(path, Json.encode(Map.of("version", 1,
                        "topicId", topicId.toString(), "brokers", named, "completed", true)));
                return;
            } catch (KeeperException.NoNodeException gone) {
                return;
            } catch (KeeperException.BadVersionException changed) {
                // rewritten meanwhile (a broker unregistered, another deleter): read it again
            }
        }
        throw new IllegalStateException("Could not mark the deletion of " + topic + " completed after "
                + MetadataStore.MAX_CAS_ATTEMPTS + " attempts");
    }

    static Uuid markedTopicId(byte[] mark, String path) {
        return Uuid.fromString(String.valueOf(Json.decode(mark, path).get("topicId")));
    }

    /** The brokers that held a replica of the marked topic; empty in a mark written before they were recorded. */
    static List<Integer> markBrokers(Map<String, Object> mark) {
        List<Integer> out = new ArrayList<>();
        if (mark.get("brokers") instanceof List<?> list) {
            list.forEach(b -> out.add(((Number) b).intValue()));
        }
        return out;
    }

    /** When each broker registered (its node's creation time), or null for one not registered. */
    private List<Long> registeredAt(List<Integer> brokers) throws Exception {
        List<Long> out = new ArrayList<>();
        for (int broker : brokers) {
            Stat registration = zk.checkExists().forPath(ZkPaths.broker(broker));
            out.add(registration == null ? null : registration.getCtime());
        }
        return out;
    }

    /**
     * Whether a completed deletion's mark, last written at {@code markWrittenMs}, can go: it is
     * {@link #COMPLETED_MARK_RETENTION_MS} old, and every broker that held a replica of the topic (when each
     * registered; null: not registered) has been registered for {@link #REGISTERED_BEFORE_EXPIRY_MS}, so its start
     * read the mark. A broker gone for good keeps its topics' marks: one small node per deleted topic name.
     */
    static boolean completedMarkExpired(long nowMs, long markWrittenMs, List<Long> registeredAtMs) {
        if (nowMs - markWrittenMs <= COMPLETED_MARK_RETENTION_MS) {
            return false;
        }
        return registeredAtMs.stream().allMatch(at -> at != null && at <= nowMs - REGISTERED_BEFORE_EXPIRY_MS);
    }

    /**
     * Removes {@code /mirror_states/<topic>} and {@code /mirror_progress/<topic>}. Their writers cannot bring a
     * state record back with stale content: a conditional write to a deleted record fails (the leader re-reads
     * and starts from the initial record).
     */
    void deleteMirrorRecords(String topic) throws Exception {
        List<String> paths = List.of(ZkPaths.mirrorStates(topic), ZkPaths.mirrorProgress(topic));
        // usually neither exists: one round trip to know, instead of a refused delete each
        List<OpResult> found = ZkBatch.multiRead(zk, paths.stream().map(Op::getChildren).toList());
        for (int i = 0; i < paths.size(); i++) {
            String path = paths.get(i);
            if (!(found.get(i) instanceof OpResult.GetChildrenResult)) {
                continue;
            }
            try {
                zk.delete().deletingChildrenIfNeeded().forPath(path);
                log.info("Deleted the mirror records {} of topic {}", path, topic);
            } catch (KeeperException.NoNodeException ignored) {
                // not a mirror topic, or never written
            }
        }
    }
}
