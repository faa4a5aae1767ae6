package io.twinlog.mirror.store;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkBatch;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.TopicPartition;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cluster mirror definitions in ZooKeeper, on the destination cluster:
 * <pre>
 * /mirrors/&lt;name&gt;                       {"version":1,"configs":{..},"sourceClusterId":..,"state":"ACTIVE"}
 * /mirrors/&lt;name&gt;/topics/&lt;topic&gt;       {"version":1,"desiredState":"MIRRORING","sourceTopic":..}   (mirror
 *                                    topics, by their name on this cluster; sourceTopic only when the source's name
 *                                    differs: a prefixed mirror, or a failback into the original topic)
 * /mirror_groups/&lt;name&gt;/&lt;group&gt;      {"version":1,"groupId":..,"lastSyncMs":..,"offsetsSynced":..,"offsetsClamped":..}
 *                                    (share groups add "type":"SHARE")
 * </pre>
 * Definitions survive restarts of every broker; writes that replace a definition check its version.
 *
 * <p>Group sync records live outside {@code /mirrors} on purpose: every broker caches and watches {@code /mirrors}
 * to build its metadata image, and a record rewritten for every group at every sync would rebuild that image on
 * every broker. They are read only by {@code describe}, and written only by the controller broker's group offset
 * sync. A group ID may hold any character, so its node name is the ID percent-encoded ({@link MirrorGroupSyncStore#groupNode}).
 */
public final class MirrorStore {
    public static final String MIRRORS = "/mirrors";
    public static final String MIRROR_GROUPS = "/mirror_groups";
    /** The field of a mirror topic's node naming its source topic, when that is another name than the node's. */
    public static final String SOURCE_TOPIC = "sourceTopic";
    private static final Logger log = LoggerFactory.getLogger(MirrorStore.class);

    private final CuratorFramework zk;
    private final Optional<SecretCodec> secrets;
    private final Set<String> reportedUnreadable = ConcurrentHashMap.newKeySet();
    private final MirrorGroupSyncStore groupSyncs;
    private final MirrorProgressStore progress;
    private final MirrorSkippedStore skipped;

    public MirrorStore(CuratorFramework zk) {
        this(zk, Optional.empty());
    }

    /** @param secrets encrypts the mirrors' secret configs in ZooKeeper ({@code password.encoder.secret}) */
    public MirrorStore(CuratorFramework zk, Optional<SecretCodec> secrets) {
        this.zk = zk;
        this.secrets = secrets;
        this.groupSyncs = new MirrorGroupSyncStore(zk);
        this.progress = new MirrorProgressStore(zk);
        this.skipped = new MirrorSkippedStore(zk);
    }

    public static String mirrorPath(String name) {
        return MIRRORS + "/" + name;
    }

    public static String topicsPath(String name) {
        return mirrorPath(name) + "/topics";
    }

    public static String groupsPath(String name) {
        return MIRROR_GROUPS + "/" + name;
    }

    /**
     * A mirror this broker cannot read: its secrets were encrypted with a {@code password.encoder.secret} this broker
     * does not have. Reported once per mirror (ERROR); the other mirrors are not held up by it.
     */
    public static final class UnreadableMirrorException extends IllegalStateException {
        UnreadableMirrorException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Thrown when a definition with this name exists already. */
    public static final class MirrorExistsException extends Exception {
        public MirrorExistsException(String name) {
            super("Cluster mirror '" + name + "' already exists");
        }
    }

    public void create(MirrorDefinition definition) throws Exception {
        try {
            zk.create().creatingParentsIfNeeded().forPath(mirrorPath(definition.name()),
                    Json.encode(definition.toJson(secrets)));
            zk.create().forPath(topicsPath(definition.name()));
        } catch (KeeperException.NodeExistsException e) {
            throw new MirrorExistsException(definition.name());
        }
        groupSyncs.deleteAll(definition.name()); // left by a deleted mirror of the same name whose last sync raced the delete
        log.info("Created cluster mirror {} to source {} (source cluster ID {})", definition.name(),
                definition.sourceBootstrap(), definition.sourceClusterId().orElse("not yet known"));
    }

    public Optional<MirrorDefinition> get(String name) throws Exception {
        try {
            String path = mirrorPath(name);
            return Optional.of(decode(name, zk.getData().forPath(path), path));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /** Replaces a definition only if it did not change since {@code expected} was read. */
    public boolean update(MirrorDefinition expected, MirrorDefinition next) throws Exception {
        Stat stat = new Stat();
        byte[] data;
        try {
            data = zk.getData().storingStatIn(stat).forPath(mirrorPath(expected.name()));
        } catch (KeeperException.NoNodeException e) {
            return false;
        }
        if (!decode(expected.name(), data, mirrorPath(expected.name())).equals(expected)) {
            return false;
        }
        try {
            zk.setData().withVersion(stat.getVersion()).forPath(mirrorPath(expected.name()),
                    Json.encode(next.toJson(secrets)));
            return true;
        } catch (KeeperException.BadVersionException e) {
            return false;
        }
    }

    public List<MirrorDefinition> list() throws Exception {
        List<MirrorDefinition> out = new ArrayList<>();
        List<String> names;
        try {
            names = zk.getChildren().forPath(MIRRORS);
        } catch (KeeperException.NoNodeException e) {
            return out;
        }
        for (String n : new TreeMap<>(toMap(names)).keySet()) {
            try {
                get(n).ifPresent(out::add);
            } catch (UnreadableMirrorException e) {
                // reported by decode; the mirrors this broker can read go on
            }
        }
        return out;
    }

    /** Whether a mirror of this name exists (readable or not). */
    public boolean exists(String name) throws Exception {
        return zk.checkExists().forPath(mirrorPath(name)) != null;
    }

    private MirrorDefinition decode(String name, byte[] data, String path) {
        try {
            MirrorDefinition definition = MirrorDefinition.fromJson(name, data, path, secrets);
            reportedUnreadable.remove(name);
            return definition;
        } catch (IllegalStateException e) {
            if (reportedUnreadable.add(name)) {
                log.error("Cluster mirror {} cannot be used on this broker: {}", name, e.getMessage());
            }
            throw new UnreadableMirrorException(e.getMessage(), e);
        }
    }

    /** Mirror topics of a mirror and their desired states (MIRRORING, PAUSED, STOPPED). */
    public Map<String, DesiredMirrorState> topics(String name) throws Exception {
        Map<String, DesiredMirrorState> out = new TreeMap<>();
        topicNodes(name).forEach((topic, json) -> out.put(topic, DesiredMirrorState.valueOf((String) json
                .getOrDefault("desiredState", "MIRRORING"))));
        return out;
    }

    /** The failover to a point in time each of a mirror's topics was stopped with (a topic absent: none). */
    public Map<String, PointInTimeStop> stops(String name) throws Exception {
        Map<String, PointInTimeStop> out = new TreeMap<>();
        topicNodes(name).forEach((topic, json) -> PointInTimeStop.fromJson(json).ifPresent(s -> out.put(topic, s)));
        return out;
    }

    /**
     * The source topic of each of a mirror's topics that has another name on the source (a prefixed mirror's
     * {@code west.orders} mirrors {@code orders}); a topic absent here has its own name on the source.
     */
    public Map<String, String> sourceTopics(String name) throws Exception {
        Map<String, String> out = new TreeMap<>();
        topicNodes(name).forEach((t, json) -> Optional.ofNullable(json.get(SOURCE_TOPIC))
                .filter(String.class::isInstance).ifPresent(source -> out.put(t, (String) source)));
        return out;
    }

    /** The nodes of a mirror's topics, decoded, by topic. */
    private Map<String, Map<String, Object>> topicNodes(String name) throws Exception {
        Map<String, Map<String, Object>> out = new TreeMap<>();
        List<String> topics;
        try {
            topics = zk.getChildren().forPath(topicsPath(name));
        } catch (KeeperException.NoNodeException e) {
            return out;
        }
        // one multi-read per 500 topics, not a round trip per topic: a describe of a mirror of 100 topics waited
        // here longer than for its 10,000 progress records
        List<OpResult> results = ZkBatch.multiReadAll(zk, topics.stream()
                .map(t -> Op.getData(topicsPath(name) + "/" + t)).toList());
        for (int i = 0; i < topics.size(); i++) {
            if (results.get(i) instanceof OpResult.GetDataResult data) { // an error result: removed concurrently
                out.put(topics.get(i), Json.decode(data.getData(), topics.get(i)));
            }
        }
        return out;
    }

    /** Records per transaction of {@link #setTopics}: well inside ZooKeeper's 1 MiB request limit. */
    static final int TOPICS_PER_TRANSACTION = 500;

    /**
     * What {@link #setTopics} committed: the topics written, those not (a transaction failed, and every later one
     * was not tried), and that failure.
     */
    public record TopicsWritten(List<String> written, List<String> notWritten, Optional<Exception> failure) {
    }

    /**
     * Sets the desired state of many mirror topics of one mirror, in ZooKeeper transactions of up to
     * {@value #TOPICS_PER_TRANSACTION} (a failover of every topic is one write, not one per topic); a transaction
     * refused because a topic's node is missing is written topic by topic. Each transaction is all or nothing, not
     * the call: a failure (ZooKeeper lost) stops it, and the result names the topics written before it, so the
     * caller answers each topic for what happened to it. The desired state is absolute, not a change, so calling
     * again with the same arguments is safe and completes the rest.
     */
    public TopicsWritten setTopics(String name, List<String> topics, DesiredMirrorState desiredState) {
        return setTopics(name, topics, desiredState, Optional.empty());
    }

    /**
     * {@link #setTopics(String, List, DesiredMirrorState)}, a failover to a point in time: the time and the deadline
     * are written with the desired state STOPPED, in the same node, so every leader (a new one too) cuts at it.
     */
    public TopicsWritten setTopics(String name, List<String> topics, DesiredMirrorState desiredState,
                                   Optional<PointInTimeStop> stopAt) {
        List<String> written = new ArrayList<>();
        try {
            for (int from = 0; from < topics.size(); from += TOPICS_PER_TRANSACTION) {
                List<String> chunk = topics.subList(from, Math.min(topics.size(), from + TOPICS_PER_TRANSACTION));
                // a topic's source name stays as its start wrote it: read with the chunk, written back unchanged
                List<OpResult> current = ZkBatch.multiReadAll(zk, chunk.stream()
                        .map(t -> Op.getData(topicsPath(name) + "/" + t)).toList());
                List<CuratorOp> ops = new ArrayList<>(chunk.size());
                for (int i = 0; i < chunk.size(); i++) {
                    ops.add(zk.transactionOp().setData().forPath(topicsPath(name) + "/" + chunk.get(i),
                            desiredStateJson(desiredState, stopAt, sourceTopicIn(current.get(i), chunk.get(i)))));
                }
                try {
                    zk.transaction().forOperations(ops);
                    written.addAll(chunk);
                    log.info("Cluster mirror {}: topics {} desired state is now {}", name, chunk, desiredState);
                } catch (KeeperException.NoNodeException e) {
                    for (String topic : chunk) {
                        setTopic(name, topic, desiredState, stopAt);
                        written.add(topic);
                    }
                }
            }
            return new TopicsWritten(written, List.of(), Optional.empty());
        } catch (Exception e) {
            // broad: any failure ends the batch; logged with its stack trace and returned to the caller, who answers
            // each topic not written with it
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt(); // closing: the caller's thread must still see it
            }
            List<String> notWritten = topics.subList(written.size(), topics.size());
            log.warn("Cluster mirror {}: could not set the desired state of {} topics to {} ({} were set)", name,
                    notWritten.size(), desiredState, written.size(), e);
            return new TopicsWritten(written, List.copyOf(notWritten), Optional.of(e));
        }
    }

    private static byte[] desiredStateJson(DesiredMirrorState desiredState, Optional<PointInTimeStop> stopAt,
                                           Optional<String> sourceTopic) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("version", 1);
        json.put("desiredState", desiredState.name());
        stopAt.ifPresent(s -> s.addTo(json));
        sourceTopic.ifPresent(source -> json.put(SOURCE_TOPIC, source));
        return Json.encode(json);
    }

    private static Optional<String> sourceTopicIn(OpResult read, String path) {
        return read instanceof OpResult.GetDataResult data
                && Json.decode(data.getData(), path).get(SOURCE_TOPIC) instanceof String source
                ? Optional.of(source) : Optional.empty();
    }

    /**
     * Replaces a mirror partition's state record if it is still at {@code expectedVersion} (its leader may be
     * writing it): false if it changed meanwhile.
     */
    public boolean replacePartitionRecord(TopicPartition tp, MirrorPartitionRecord next, int expectedVersion)
            throws Exception {
        try {
            zk.setData().withVersion(expectedVersion).forPath(ZkPaths.mirrorState(tp.topic(), tp.partition()),
                    Json.encode(next.toJson()));
            return true;
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            return false;
        }
    }

    /**
     * The version of a mirror topic's desired-state node, -1 when it has none yet: what a start, which reads the
     * source before it writes, compares against ({@link #claimTopicAt}).
     */
    public int topicVersion(String name, String topic) throws Exception {
        Stat stat = zk.checkExists().forPath(topicsPath(name) + "/" + topic);
        return stat == null ? -1 : stat.getVersion();
    }

    /** What {@link #claimTopicAt} did. */
    public enum TopicClaim {
        /** The topic's desired state is written under this mirror. */
        WRITTEN,
        /** This mirror's node of the topic changed since it was read (a stop, pause, resume or another start). */
        CHANGED,
        /** Another mirror mirrors the topic (its desired state there is not STOPPED), or claimed it meanwhile. */
        HELD_BY_ANOTHER_MIRROR
    }

    /**
     * Sets a mirror topic's desired state only if its node is still at {@code expectedVersion} (-1: it has none
     * yet), so a start that waited on its source never undoes a later failover, and only if no other mirror mirrors
     * the topic: one ZooKeeper transaction that also checks every other mirror's node of the topic at the version
     * read (STOPPED), or its absence (created and deleted in the transaction: the create fails if it exists). Two
     * mirrors starting one topic at once, on one broker or two, cannot both claim it.
     */
    public TopicClaim claimTopicAt(String name, String topic, DesiredMirrorState desiredState, int expectedVersion)
            throws Exception {
        return claimTopicAt(name, topic, topic, desiredState, expectedVersion);
    }

    /**
     * {@link #claimTopicAt(String, String, DesiredMirrorState, int)} for a topic that mirrors {@code sourceTopic}
     * (recorded in its node when it is another name).
     */
    public TopicClaim claimTopicAt(String name, String topic, String sourceTopic, DesiredMirrorState desiredState,
                                   int expectedVersion) throws Exception {
        Optional<String> renamedFrom = sourceTopic.equals(topic) ? Optional.empty() : Optional.of(sourceTopic);
        // this mirror's topics node before the others are read: two mirrors' first claims at once must not each
        // find the other's absent and guard it, which would fail both
        String path = topicsPath(name) + "/" + topic;
        if (zk.checkExists().forPath(topicsPath(name)) == null) {
            try {
                zk.create().forPath(topicsPath(name)); // under the mirror's node only: never bring a deleted one back
            } catch (KeeperException.NodeExistsException ignored) {
                // made meanwhile
            } catch (KeeperException.NoNodeException deleted) {
                return TopicClaim.CHANGED; // the mirror was deleted while this start read the source
            }
        }
        List<CuratorOp> ops = new ArrayList<>();
        List<String> mirrors;
        try {
            mirrors = zk.getChildren().forPath(MIRRORS);
        } catch (KeeperException.NoNodeException e) {
            mirrors = List.of();
        }
        for (String other : mirrors) {
            if (other.equals(name)) {
                continue;
            }
            String otherPath = topicsPath(other) + "/" + topic;
            Stat stat = new Stat();
            try {
                Map<String, Object> json = Json.decode(zk.getData().storingStatIn(stat).forPath(otherPath), otherPath);
                if (!DesiredMirrorState.STOPPED.name().equals(json.getOrDefault("desiredState", "MIRRORING"))) {
                    return TopicClaim.HELD_BY_ANOTHER_MIRROR;
                }
                ops.add(zk.transactionOp().check().withVersion(stat.getVersion()).forPath(otherPath));
            } catch (KeeperException.NoNodeException absent) {
                if (zk.checkExists().forPath(topicsPath(other)) != null) {
                    ops.add(zk.transactionOp().create().forPath(otherPath));
                    ops.add(zk.transactionOp().delete().forPath(otherPath));
                } else {
                    // a mirror with no topic yet: its topics node must stay absent, or hold none of this topic
                    ops.add(zk.transactionOp().create().forPath(topicsPath(other)));
                    ops.add(zk.transactionOp().delete().forPath(topicsPath(other)));
                }
            }
        }
        ops.add(expectedVersion < 0 ? zk.transactionOp().create().forPath(path, desiredStateJson(desiredState,
                Optional.empty(), renamedFrom)) : zk.transactionOp().setData().withVersion(expectedVersion).forPath(
                path, desiredStateJson(desiredState, Optional.empty(), renamedFrom)));
        try {
            zk.transaction().forOperations(ops);
        } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                 | KeeperException.NoNodeException | KeeperException.NotEmptyException e) {
            // ours changed, or another mirror's did: which one decides the answer
            return topicVersion(name, topic) != expectedVersion ? TopicClaim.CHANGED
                    : TopicClaim.HELD_BY_ANOTHER_MIRROR;
        }
        log.info("Cluster mirror {}: topic {} desired state is now {}", name, topic, desiredState);
        return TopicClaim.WRITTEN;
    }

    public void setTopic(String name, String topic, DesiredMirrorState desiredState) throws Exception {
        setTopic(name, topic, desiredState, Optional.empty());
    }

    private void setTopic(String name, String topic, DesiredMirrorState desiredState,
                          Optional<PointInTimeStop> stopAt) throws Exception {
        String path = topicsPath(name) + "/" + topic;
        try {
            Optional<String> sourceTopic = Json.decode(zk.getData().forPath(path), path).get(SOURCE_TOPIC)
                    instanceof String source ? Optional.of(source) : Optional.empty();
            zk.setData().forPath(path, desiredStateJson(desiredState, stopAt, sourceTopic));
        } catch (KeeperException.NoNodeException e) {
            zk.create().creatingParentsIfNeeded().forPath(path, desiredStateJson(desiredState, stopAt,
                    Optional.empty()));
        }
        log.info("Cluster mirror {}: topic {} desired state is now {}", name, topic, desiredState);
    }

    public void delete(String name) throws Exception {
        zk.delete().deletingChildrenIfNeeded().forPath(mirrorPath(name));
        groupSyncs.deleteAll(name);
        skipped.delete(name);
        log.info("Deleted cluster mirror {}", name);
    }

    /** Records a group's last sync (replacing the previous record; {@link MirrorGroupSyncStore}). */
    public void recordGroupSync(String name, GroupSyncRecord record) throws Exception {
        groupSyncs.record(name, record);
    }

    /** The group sync records of a mirror, by group ID (empty before the first sync). */
    public Map<String, GroupSyncRecord> groupSyncs(String name) throws Exception {
        return groupSyncs.records(name);
    }

    /** The IDs of the groups that have a sync record (from the node names only: one ZooKeeper read). */
    public Set<String> groupSyncIds(String name) throws Exception {
        return groupSyncs.ids(name);
    }

    /** Removes the records of groups the mirror no longer syncs (no longer on the source, or now excluded). */
    public void removeGroupSyncs(String name, Collection<String> groupIds) throws Exception {
        groupSyncs.remove(name, groupIds);
    }

    /**
     * Records the source topics a start or discovery pass skipped, with why, and forgets the others it considered
     * ({@link MirrorSkippedStore}); logs at INFO the topics skipped that were not before.
     */
    public void recordSkippedTopics(String name, Map<String, String> skippedTopics, Collection<String> considered)
            throws Exception {
        skipped.record(name, skippedTopics, considered).forEach((topic, why) ->
                log.info("Cluster mirror {}: source topic {} not started: {}", name, topic, why));
    }

    /** The source topics of a mirror last skipped, with why. */
    public Map<String, String> skippedTopics(String name) throws Exception {
        return skipped.read(name);
    }

    /** Records how far a mirror partition has got ({@link MirrorProgressStore#write}). */
    public void writeProgress(TopicPartition tp, MirrorProgress progress) throws Exception {
        this.progress.write(tp, progress);
    }

    /** Records the progress of many mirror partitions ({@link MirrorProgressStore#writeAll}). */
    public void writeProgressAll(Map<TopicPartition, MirrorProgress> progress) throws Exception {
        this.progress.writeAll(progress);
    }

    /** The last recorded progress of many mirror partitions ({@link MirrorProgressStore#readAll}). */
    public Map<TopicPartition, MirrorProgress> progressAll(Collection<TopicPartition> partitions) throws Exception {
        return progress.readAll(partitions);
    }

    private static Map<String, Boolean> toMap(List<String> names) {
        Map<String, Boolean> m = new TreeMap<>();
        names.forEach(n -> m.put(n, true));
        return m;
    }
}
