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
 * Creates benchmark topics through the Admin API and waits until the broker serves every partition, so no
 * measurement includes the producer's retries on {@code NOT_LEADER_OR_FOLLOWER}: both Kafka and Twinlog report a
 * leader in metadata a moment before the leader's log exists.
 */
final class BenchTopics {
    private static final long TIMEOUT_MS = 30_000;
    private static final long POLL_INTERVAL_MS = 50;

    private final Admin admin;

    BenchTopics(Admin admin) {
        this.admin = admin;
    }

    void create(String topic, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        Optional<TopicDescription> last = Optional.empty();
        Exception lastError = null;
        while (System.currentTimeMillis() < deadline) {
            try {
                Map<String, TopicDescription> described = admin.describeTopics(List.of(topic))
                        .allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                last = Optional.ofNullable(described.get(topic));
                if (last.isPresent() && allLed(last.get(), partitions)) {
                    // ListOffsets is answered only by a broker that hosts the partition's log.
                    admin.listOffsets(latestOffsetsOf(topic, partitions)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    return;
                }
            } catch (Exception e) {
                lastError = e;     // e.g. UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER while the partitions are set up
            }
            Thread.sleep(POLL_INTERVAL_MS);
        }
        throw new IllegalStateException("Topic " + topic + " did not get leaders for all " + partitions
                + " partitions within " + TIMEOUT_MS + " ms; last seen " + last.map(Object::toString).orElse("nothing")
                + (lastError == null ? "" : ", last error " + lastError));
    }

    private static Map<TopicPartition, OffsetSpec> latestOffsetsOf(String topic, int partitions) {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            specs.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        return specs;
    }

    private static boolean allLed(TopicDescription description, int partitions) {
        List<TopicPartitionInfo> infos = description.partitions();
        return infos.size() == partitions && infos.stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty());
    }
}
