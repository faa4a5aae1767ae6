package io.twinlog.controller.zk;

import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.TopicAssignment;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * Every write Twinlog makes to ZooKeeper, with the version checks that keep concurrent writers from overwriting
 * each other. Multi-node changes (a topic with its partition states and configs) are one ZooKeeper transaction, so
 * readers never see half a topic.
 *
 * <p>Stateless apart from the client; safe to call from any thread. Operating errors are Kafka exceptions
 * ({@link TopicExistsException}, {@link UnknownTopicOrPartitionException}, ...) that handlers map to error codes.
 */
public final class MetadataStore {
    private static final Logger log = LoggerFactory.getLogger(MetadataStore.class);
    private static final int MAX_CAS_ATTEMPTS = 50;

    private final CuratorFramework zk;

    public MetadataStore(CuratorFramework zk) {
        this.zk = zk;
    }

    public CuratorFramework client() {
        return zk;
    }

    /** Creates the base paths if missing. Idempotent. */
    public void ensureLayout() throws Exception {
        ZkBatch.createIfAbsent(zk, List.of(ZkPaths.BROKER_IDS, ZkPaths.TOPICS, ZkPaths.TOPIC_CONFIGS, "/cluster"));
    }

    /**
     * The cluster ID if this ZooKeeper (and chroot) holds one; creates nothing, so a broker whose log dirs belong to
     * another cluster can refuse to start without leaving a cluster behind in an ensemble it was wrongly pointed at.
     */
    public Optional<String> clusterId() throws Exception {
        try {
            return Optional.of((String) Json.decode(zk.getData().forPath(ZkPaths.CLUSTER_ID), ZkPaths.CLUSTER_ID)
                    .get("id"));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /** The cluster ID, created on first start of the first broker and the same forever after. */
    public String getOrCreateClusterId() throws Exception {
        try {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("version", 1);
            m.put("id", Uuid.randomUuid().toString());
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.CLUSTER_ID, Json.encode(m));
        } catch (KeeperException.NodeExistsException ignored) {
            // the normal case after the first start
        }
        return clusterId().orElseThrow(() -> new IllegalStateException(ZkPaths.CLUSTER_ID + " vanished after it was "
                + "created"));
    }

    /**
     * Registers a live broker; the node disappears with the session. A node left by this broker id's previous
     * session (a kill -9 a moment ago) is waited out until ZooKeeper expires that session, up to
     * {@code waitForStaleMs}; a node held by a live broker after that is a duplicate broker.id.
     */
    public void registerBroker(BrokerRegistration registration, long waitForStaleMs) throws Exception {
        String path = ZkPaths.broker(registration.id());
        long deadline = System.currentTimeMillis() + waitForStaleMs;
        boolean logged = false;
        while (true) {
            try {
                zk.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                        .forPath(path, Json.encode(registration.toJson()));
                return;
            } catch (KeeperException.NodeExistsException e) {
                Stat stat = zk.checkExists().forPath(path);
                long mySession = zk.getZookeeperClient().getZooKeeper().getSessionId();
                if (stat != null && stat.getEphemeralOwner() == mySession) {
                    return; // our own node (a retried create after a connection blip)
                }
                if (System.currentTimeMillis() >= deadline) {
                    throw new IllegalStateException("broker.id " + registration.id()
                            + " is already registered in ZooKeeper by a live broker (" + path + ")", e);
                }
                if (!logged) {
                    log.info("{} is held by an earlier session of broker {}; waiting up to {} ms for ZooKeeper to "
                            + "expire it", path, registration.id(), waitForStaleMs);
                    logged = true;
                }
                org.apache.kafka.common.utils.Utils.sleep(200); // polling ZooKeeper for a session expiry
            }
        }
    }

    /** What {@link #syncRegistration} found and did. */
    public enum RegistrationSync {
        /** No node: created in this session. */
        CREATED,
        /** A node of an earlier, expired session of this broker (same endpoints): replaced in one transaction. */
        REPLACED_STALE,
        /** This session's node, with other data: overwritten at its version. */
        UPDATED,
        /** This session's node with this data already. */
        UNCHANGED,
        /** A node of another session with other endpoints: another broker with this id? Nothing written. */
        HELD_BY_ANOTHER
    }

    /**
     * Makes {@code /brokers/ids/<id>} this session's node with this data, whatever happened to the session. After a
     * session expiry ZooKeeper may still hold the old session's node for a session timeout (a ZooKeeper restarted on
     * its data restores every session); waiting for it to go would leave the broker unregistered meanwhile, and a
     * check made before it went away would leave it unregistered for good. So a node of another session that names
     * the same endpoints is this broker's own leftover and is replaced at once: delete at its version and create in
     * one transaction, so readers see one change (a new broker epoch), never the broker missing.
     */
    public RegistrationSync syncRegistration(BrokerRegistration registration) throws Exception {
        String path = ZkPaths.broker(registration.id());
        byte[] data = Json.encode(registration.toJson());
        long session = zk.getZookeeperClient().getZooKeeper().getSessionId();
        Stat stat = new Stat();
        byte[] current;
        try {
            current = zk.getData().storingStatIn(stat).forPath(path);
        } catch (KeeperException.NoNodeException e) {
            zk.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path, data);
            return RegistrationSync.CREATED;
        }
        if (stat.getEphemeralOwner() == session) {
            if (Arrays.equals(current, data)) {
                return RegistrationSync.UNCHANGED;
            }
            zk.setData().withVersion(stat.getVersion()).forPath(path, data);
            return RegistrationSync.UPDATED;
        }
        BrokerRegistration held = BrokerRegistration.fromJson(registration.id(), stat.getCzxid(), current, path);
        if (!held.endpoints().equals(registration.endpoints())) {
            return RegistrationSync.HELD_BY_ANOTHER;
        }
        zk.transaction().forOperations(
                zk.transactionOp().delete().withVersion(stat.getVersion()).forPath(path),
                zk.transactionOp().create().withMode(CreateMode.EPHEMERAL).forPath(path, data));
        return RegistrationSync.REPLACED_STALE;
    }

    /**
     * Creates a topic atomically: assignment and config overrides. Leadership (the partition state nodes) is
     * written by the controller when it sees the new topic.
     */
    public void createTopic(String topic, Uuid topicId, Map<Integer, List<Integer>> assignment,
                            Map<String, String> configs) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(zk.transactionOp().create().forPath(ZkPaths.topic(topic),
                Json.encode(TopicAssignment.of(topicId, assignment).toJson())));
        ops.add(zk.transactionOp().create().forPath(ZkPaths.partitions(topic)));
        for (Integer p : assignment.keySet()) {
            ops.add(zk.transactionOp().create().forPath(ZkPaths.partition(topic, p)));
        }
        // a leftover config and a deletion mark of this name, read together (one round trip: a start of 100 mirror
        // topics creates them at once, each round trip queued behind the broker's metadata reads, decision 94)
        List<OpResult> found = ZkBatch.multiRead(zk, List.of(Op.getData(ZkPaths.topicConfig(topic)),
                Op.getData(ZkPaths.topicDeletion(topic))));
        if (found.get(0) instanceof OpResult.GetDataResult) {
            // a leftover from a topic deleted while this path was being written; the new topic's configs win
            ops.add(zk.transactionOp().setData().forPath(ZkPaths.topicConfig(topic), configJson(configs)));
        } else {
            ops.add(zk.transactionOp().create().forPath(ZkPaths.topicConfig(topic), configJson(configs)));
        }
        Stat mark = new Stat();
        Optional<Uuid> markedId = Optional.empty();
        if (found.get(1) instanceof OpResult.GetDataResult markData) {
            mark = markData.getStat();
            markedId = Optional.of(markedTopicId(markData.getData(), ZkPaths.topicDeletion(topic)));
        }
        if (markedId.isPresent() && markedId.get().equals(topicId)) {
            // a mirror topic created again has the source's topic ID, the very ID the mark names: brokers would take
            // the new topic for the deleted one, so the mark goes with this creation. A mark of another topic ID stays
            // until it expires: a broker that was down through the deletion and this creation deletes that ID's logs
            // by it at its start
            ops.add(zk.transactionOp().delete().withVersion(mark.getVersion()).forPath(ZkPaths.topicDeletion(topic)));
        }
        try {
            zk.transaction().forOperations(ops);
        } catch (KeeperException.NodeExistsException e) {
            throw new TopicExistsException("Topic '" + topic + "' already exists.");
        }
        // a mirror record left by a deleted topic of this name (written late by its last leader) must not be
        // taken for the new topic's: it would carry the old failover state and leader epochs
        deleteMirrorRecords(topic);
        log.info("Created topic {} with topic ID {}, {} partitions, assignment {}, configs {}", topic, topicId,
                assignment.size(), assignment, configs);
    }

    /**
     * How long a completed deletion's mark stays in {@code /admin/delete_topics} at least: every running broker applies
     * the deletion within it (a broker that had not is a broker whose metadata was minutes behind; it keeps the logs).
     * It stays longer while a broker that held a replica of the topic is not registered, or registered less than
     * {@link #REGISTERED_BEFORE_EXPIRY_MS} ago: the mark is what tells that broker's start to delete the logs.
     */
    public static final long COMPLETED_MARK_RETENTION_MS = 10 * 60_000;
    /** How long a broker of a deleted topic must have been registered before the mark can go: its start has read it. */
    public static final long REGISTERED_BEFORE_EXPIRY_MS = 60_000;

    /**
     * Deletes a topic, its configs and, for a mirror topic, its partitions' mirror state and progress records:
     * a topic created later under this name (mirrored again, say) starts without them. The deletion takes several
     * ZooKeeper writes (a recursive delete is one per node), so it is marked first in
     * {@code /admin/delete_topics/<topic>} with the topic's ID, and the mark is set completed last: a deletion cut
     * short by a crash is completed by the controller ({@link #resumeTopicDeletions}), as Kafka's controller resumes
     * {@code /admin/delete_topics}. The completed mark stays {@link #COMPLETED_MARK_RETENTION_MS}: brokers delete a
     * gone topic's logs only when its mark says it was deleted (decision 72).
     */
    public void deleteTopic(String topic) throws Exception {
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
    public int resumeTopicDeletions() throws Exception {
        return resumeTopicDeletions(System.currentTimeMillis());
    }

    int resumeTopicDeletions(long nowMs) throws Exception {
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
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
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
                + MAX_CAS_ATTEMPTS + " attempts");
    }

    /** The topic ID the name's deletion mark names, if there is a mark (its version in {@code stat}). */
    private Optional<Uuid> deletionMarkOf(String topic, Stat stat) throws Exception {
        String path = ZkPaths.topicDeletion(topic);
        try {
            return Optional.of(markedTopicId(zk.getData().storingStatIn(stat).forPath(path), path));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    private static Uuid markedTopicId(byte[] mark, String path) {
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
    private void deleteMirrorRecords(String topic) throws Exception {
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

    /** Adds partitions to a topic, checking the assignment was not changed concurrently. */
    public void addPartitions(String topic, Map<Integer, List<Integer>> newPartitions) throws Exception {
        String path = ZkPaths.topic(topic);
        Stat stat = new Stat();
        byte[] data;
        try {
            data = zk.getData().storingStatIn(stat).forPath(path);
        } catch (KeeperException.NoNodeException e) {
            throw new UnknownTopicOrPartitionException("Topic '" + topic + "' does not exist.");
        }
        TopicAssignment current = TopicAssignment.fromJson(data, path);
        Map<Integer, List<Integer>> assignment = new java.util.TreeMap<>(current.replicas());
        for (Integer p : newPartitions.keySet()) {
            if (assignment.containsKey(p)) {
                throw new InvalidPartitionsException("Partition " + p + " of topic '" + topic + "' already exists.");
            }
        }
        assignment.putAll(newPartitions);
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(zk.transactionOp().setData().withVersion(stat.getVersion())
                .forPath(path, Json.encode(current.withReplicas(assignment).toJson())));
        for (Integer p : newPartitions.keySet()) {
            ops.add(zk.transactionOp().create().forPath(ZkPaths.partition(topic, p)));
        }
        try {
            zk.transaction().forOperations(ops);
        } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
            throw new InvalidPartitionsException("Topic '" + topic
                    + "' was changed concurrently; retry the partition increase.");
        }
        log.info("Added partitions {} to topic {}", newPartitions, topic);
    }

    /** A topic's config overrides as written, and the write's zxid (to wait for the metadata image to show it). */
    public record ConfigUpdate(Map<String, String> configs, long zxid) {
    }

    /**
     * Changes a topic's config overrides read-modify-write on the node's version: {@code change} gets the current
     * overrides and returns the new ones (it may throw to refuse them). A concurrent writer's change makes the
     * write fail on the version; it is then read, changed and written again, so two alters of different keys both
     * survive. Up to {@value #MAX_CAS_ATTEMPTS} attempts.
     */
    public ConfigUpdate updateTopicConfig(String topic, UnaryOperator<Map<String, String>> change) throws Exception {
        String path = ZkPaths.topicConfig(topic);
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            Stat read = new Stat();
            Optional<Map<String, String>> current = readTopicConfig(path, read);
            Map<String, String> next = change.apply(new LinkedHashMap<>(current.orElse(Map.of())));
            try {
                Stat written;
                if (current.isPresent()) {
                    written = zk.setData().withVersion(read.getVersion()).forPath(path, configJson(next));
                } else {
                    zk.create().creatingParentsIfNeeded().forPath(path, configJson(next));
                    written = zk.checkExists().forPath(path); // a later change has a later zxid: waiting still ends
                }
                log.info("Topic {} config overrides are now {}", topic, next);
                return new ConfigUpdate(next, written == null ? 0 : written.getMzxid());
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException
                     | KeeperException.NoNodeException raced) {
                log.debug("Topic {} configs changed concurrently (attempt {}); reading them again", topic, attempt + 1);
            }
        }
        throw new InvalidUpdateVersionException("The configs of topic " + topic + " changed concurrently "
                + MAX_CAS_ATTEMPTS + " times in a row; try again");
    }

    /** A topic's config overrides straight from ZooKeeper (empty map when it has none). */
    public Map<String, String> readTopicConfig(String topic) throws Exception {
        return readTopicConfig(ZkPaths.topicConfig(topic), new Stat()).orElseGet(LinkedHashMap::new);
    }

    @SuppressWarnings("unchecked")
    private Optional<Map<String, String>> readTopicConfig(String path, Stat stat) throws Exception {
        try {
            Map<String, Object> json = Json.decode(zk.getData().storingStatIn(stat).forPath(path), path);
            Map<String, String> out = new LinkedHashMap<>();
            ((Map<String, Object>) json.getOrDefault("config", Map.of())).forEach((k, v) -> out.put(k, String.valueOf(v)));
            return Optional.of(out);
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /**
     * Claims the next block of producer ids for this broker with a compare-and-set on the block record.
     *
     * @return the first id of the claimed block; the block is [start, start + blockSize)
     */
    public long allocateProducerIdBlock(int brokerId, int blockSize) throws Exception {
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            Stat stat = new Stat();
            long nextStart;
            try {
                Map<String, Object> json = Json.decode(zk.getData().storingStatIn(stat)
                        .forPath(ZkPaths.PRODUCER_ID_BLOCK), ZkPaths.PRODUCER_ID_BLOCK);
                nextStart = ((Number) json.get("blockEnd")).longValue() + 1;
            } catch (KeeperException.NoNodeException e) {
                stat = null;
                nextStart = 0;
            }
            Map<String, Object> block = new LinkedHashMap<>();
            block.put("version", 1);
            block.put("broker", brokerId);
            block.put("blockStart", nextStart);
            block.put("blockEnd", nextStart + blockSize - 1);
            try {
                if (stat == null) {
                    zk.create().forPath(ZkPaths.PRODUCER_ID_BLOCK, Json.encode(block));
                } else {
                    zk.setData().withVersion(stat.getVersion()).forPath(ZkPaths.PRODUCER_ID_BLOCK, Json.encode(block));
                }
                log.info("Broker {} claimed producer id block [{}, {}]", brokerId, nextStart, nextStart + blockSize - 1);
                return nextStart;
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
                // another broker claimed a block at the same time; read again
            }
        }
        throw new IllegalStateException("Could not claim a producer id block after " + MAX_CAS_ATTEMPTS + " attempts");
    }

    public Optional<Stat> exists(String path) throws Exception {
        return Optional.ofNullable(zk.checkExists().forPath(path));
    }

    private static byte[] configJson(Map<String, String> configs) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("config", new java.util.TreeMap<>(configs));
        return Json.encode(m);
    }
}
