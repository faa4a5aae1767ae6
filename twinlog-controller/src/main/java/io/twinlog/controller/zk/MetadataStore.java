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
import org.apache.kafka.common.utils.Utils;
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
import java.util.TreeMap;
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
    static final int MAX_CAS_ATTEMPTS = 50;

    private final CuratorFramework zk;
    private final TopicDeletions deletions;

    public MetadataStore(CuratorFramework zk) {
        this.zk = zk;
        this.deletions = new TopicDeletions(zk);
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
                Utils.sleep(200); // polling ZooKeeper for a session expiry
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
            markedId = Optional.of(TopicDeletions.markedTopicId(markData.getData(), ZkPaths.topicDeletion(topic)));
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
        deletions.deleteMirrorRecords(topic);
        log.info("Created topic {} with topic ID {}, {} partitions, assignment {}, configs {}", topic, topicId,
                assignment.size(), assignment, configs);
    }

    /**
     * Deletes a topic, its configs and, for a mirror topic, its partitions' mirror state and progress records,
     * marking the deletion first so that a crash midway is completed by the controller ({@link TopicDeletions}).
     */
    public void deleteTopic(String topic) throws Exception {
        deletions.delete(topic);
    }

    /**
     * Completes every topic deletion marked and not finished, and removes the completed marks every broker has
     * read ({@link TopicDeletions#resume}); run by the controller when it takes over and periodically.
     *
     * @return the deletions completed
     */
    public int resumeTopicDeletions() throws Exception {
        return deletions.resume(System.currentTimeMillis());
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
        Map<Integer, List<Integer>> assignment = new TreeMap<>(current.replicas());
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
        m.put("config", new TreeMap<>(configs));
        return Json.encode(m);
    }
}
