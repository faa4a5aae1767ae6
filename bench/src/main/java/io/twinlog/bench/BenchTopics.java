package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Creates benchmark topics through the Admin API and waits until the brokers serve every partition, so no
 * measurement includes the producer's retries on {@code NOT_LEADER_OR_FOLLOWER}: both Kafka and Twinlog report a
 * leader in metadata a moment before the leader's log exists. Replicated topics are also awaited until every
 * replica is in the ISR.
 */
final class BenchTopics {
    private static final long TIMEOUT_MS = 30_000;
    /**
     * The throughput workloads write for their whole window, several GiB at a time; with these limits the logs of a
     * workload stay in the page cache (about 1.5 GiB per replica at most) and deleted segments are dropped before
     * they are written back, so neither system is measured against this machine's disk. Both systems' brokers check
     * retention every 2 s for it (Kafka's default is 5 minutes).
     */
    static final String RETENTION_CHECK_INTERVAL_CONFIG = "log.retention.check.interval.ms";
    static final String RETENTION_CHECK_INTERVAL_MS = "2000";
    private static final long SEGMENT_BYTES = 64L << 20;
    private static final long RETENTION_BYTES_PER_TOPIC = 512L << 20;
    private static final long MIN_RETENTION_BYTES_PER_PARTITION = 128L << 20;
    private static final long FILE_DELETE_DELAY_MS = 1000;
    private static final long POLL_INTERVAL_MS = 50;

    private final Admin admin;

    BenchTopics(Admin admin) {
        this.admin = admin;
    }

    /** A topic with replication factor 1 (single-node benchmark). */
    void create(String topic, int partitions) throws Exception {
        createAndAwait(new NewTopic(topic, partitions, (short) 1), partitions, 1);
    }

    /** A topic with replication factor 1 for a throughput workload: its size bounded ({@link #boundedSize}). */
    void createBounded(String topic, int partitions) throws Exception {
        createAndAwait(new NewTopic(topic, partitions, (short) 1).configs(boundedSize(partitions)), partitions, 1);
    }

    /** A replicated topic for a throughput workload: its size bounded ({@link #boundedSize}). */
    void createReplicatedBounded(String topic, int partitions, int replicationFactor, int minInSyncReplicas)
            throws Exception {
        createReplicatedBounded(topic, partitions, replicationFactor, minInSyncReplicas, Map.of());
    }

    /** As {@link #createReplicatedBounded(String, int, int, int)}, with more topic configs. */
    void createReplicatedBounded(String topic, int partitions, int replicationFactor, int minInSyncReplicas,
                                 Map<String, String> more) throws Exception {
        Map<String, String> configs = new HashMap<>(boundedSize(partitions));
        configs.putAll(more);
        configs.put("min.insync.replicas", Integer.toString(minInSyncReplicas));
        createAndAwait(new NewTopic(topic, partitions, (short) replicationFactor).configs(configs), partitions,
                replicationFactor);
    }

    /**
     * Segments of 64 MiB, 512 MiB of retained data per topic (at least 128 MiB per partition), and a segment that
     * retention removed deleted from disk after 1 s instead of Kafka's default 60 s: the memory of its pages is then
     * freed while the producer still writes and is reused at once; freed later, it would be handed back to this VM's
     * host and cost a fault again ({@link PageCacheBallast}).
     */
    static Map<String, String> boundedSize(int partitions) {
        long retention = Math.max(MIN_RETENTION_BYTES_PER_PARTITION, RETENTION_BYTES_PER_TOPIC / partitions);
        return Map.of("segment.bytes", Long.toString(SEGMENT_BYTES), "retention.bytes", Long.toString(retention),
                "file.delete.delay.ms", Long.toString(FILE_DELETE_DELAY_MS));
    }

    /** A topic with the given replication factor and {@code min.insync.replicas}. */
    void createReplicated(String topic, int partitions, int replicationFactor, int minInSyncReplicas)
            throws Exception {
        NewTopic newTopic = new NewTopic(topic, partitions, (short) replicationFactor)
                .configs(Map.of("min.insync.replicas", Integer.toString(minInSyncReplicas)));
        createAndAwait(newTopic, partitions, replicationFactor);
    }

    /**
     * A one-partition topic on exactly these replicas, the first being the preferred (so initial) leader; returns
     * once that replica leads and all replicas are in the ISR.
     */
    void createOnReplicas(String topic, List<Integer> replicas, int minInSyncReplicas) throws Exception {
        NewTopic newTopic = new NewTopic(topic, Map.of(0, replicas))
                .configs(Map.of("min.insync.replicas", Integer.toString(minInSyncReplicas)));
        TopicDescription description = createAndAwait(newTopic, 1, replicas.size());
        int leader = description.partitions().get(0).leader().id();
        if (leader != replicas.get(0)) {
            throw new IllegalStateException("Topic " + topic + " was created on replicas " + replicas
                    + " but broker " + leader + " leads it");
        }
    }

    private TopicDescription createAndAwait(NewTopic newTopic, int partitions, int inSyncReplicas) throws Exception {
        String topic = newTopic.name();
        admin.createTopics(List.of(newTopic)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        Optional<TopicDescription> last = Optional.empty();
        Exception lastError = null;
        while (System.currentTimeMillis() < deadline) {
            try {
                Map<String, TopicDescription> described = admin.describeTopics(List.of(topic))
                        .allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                last = Optional.ofNullable(described.get(topic));
                if (last.isPresent() && allLed(last.get(), partitions, inSyncReplicas)) {
                    // ListOffsets is answered only by a broker that hosts the partition's log.
                    admin.listOffsets(latestOffsetsOf(topic, partitions)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    return last.get();
                }
            } catch (Exception e) {
                lastError = e;     // e.g. UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER while the partitions are set up
            }
            Thread.sleep(POLL_INTERVAL_MS);
        }
        throw new IllegalStateException("Topic " + topic + " did not get leaders and " + inSyncReplicas
                + " in-sync replicas for all " + partitions + " partitions within " + TIMEOUT_MS + " ms; last seen "
                + last.map(Object::toString).orElse("nothing")
                + (lastError == null ? "" : ", last error " + lastError));
    }

    private static Map<TopicPartition, OffsetSpec> latestOffsetsOf(String topic, int partitions) {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            specs.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        return specs;
    }

    private static boolean allLed(TopicDescription description, int partitions, int inSyncReplicas) {
        List<TopicPartitionInfo> infos = description.partitions();
        return infos.size() == partitions && infos.stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty()
                && p.isr().size() >= inSyncReplicas);
    }
}
