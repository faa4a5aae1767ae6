package io.twinlog.tests.replication;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scenario verbs and protocol assertions shared by the replication tests: describe a partition through the Admin
 * client, wait for leadership and ISR states, ask each broker what it believes about a partition, and read a
 * partition back to check acknowledged records.
 */
final class Replication {
    private Replication() {
    }

    static void createTopic(Admin admin, String topic, Map<Integer, List<Integer>> assignment,
                            Map<String, String> configs) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, assignment).configs(configs))).all().get();
    }

    static TopicPartitionInfo describe(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic());
        return d.partitions().get(tp.partition());
    }

    static int leaderId(TopicPartitionInfo info) {
        Node leader = info.leader();
        return leader == null || leader.isEmpty() ? -1 : leader.id();
    }

    static Set<Integer> ids(Collection<Node> nodes) {
        return nodes.stream().map(Node::id).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Waits until the metadata shows a leader among {@code candidates}; returns it. */
    static int awaitLeaderIn(Admin admin, TopicPartition tp, Set<Integer> candidates, Duration timeout) {
        TopicPartitionInfo info = Waits.waitFor("a leader of " + tp + " among " + candidates,
                () -> describe(admin, tp), i -> candidates.contains(leaderId(i)), timeout);
        return leaderId(info);
    }

    static void awaitIsr(Admin admin, TopicPartition tp, Set<Integer> isr, Duration timeout) {
        Waits.waitFor("ISR of " + tp + " = " + isr, () -> describe(admin, tp), i -> ids(i.isr()).equals(isr), timeout);
    }

    /** The running brokers that host {@code tp}, with what each believes: leader epoch and whether it leads. */
    static Map<Integer, String> localViews(TestCluster cluster, TopicPartition tp) {
        Map<Integer, String> out = new TreeMap<>();
        for (Integer id : cluster.runningBrokerIds()) {
            cluster.broker(id).replicaManager().partition(tp).ifPresent(p -> out.put(id,
                    (p.isLeader() ? "LEADER" : "follower of " + p.leaderId()) + " epoch " + p.leaderEpoch()
                            + " isr " + p.isr()));
        }
        return out;
    }

    /** Running brokers that believe they lead {@code tp}. */
    static Set<Integer> localLeaders(TestCluster cluster, TopicPartition tp) {
        Set<Integer> out = new TreeSet<>();
        for (Integer id : cluster.runningBrokerIds()) {
            Optional<Partition> p = cluster.broker(id).replicaManager().partition(tp);
            if (p.map(Partition::isLeader).orElse(false)) {
                out.add(id);
            }
        }
        return out;
    }

    /**
     * Waits until exactly one running broker believes it leads {@code tp}, in the leader epoch that every other
     * hosting broker also follows, and that leader is the one the metadata names; returns it.
     */
    static int awaitSingleLeader(TestCluster cluster, Admin admin, TopicPartition tp, Duration timeout) {
        Waits.waitUntil("exactly one broker leading " + tp + " in an epoch all replicas agree on; views "
                + localViews(cluster, tp), () -> {
                    Set<Integer> leaders = localLeaders(cluster, tp);
                    if (leaders.size() != 1) {
                        return false;
                    }
                    int leader = leaders.iterator().next();
                    int epoch = cluster.broker(leader).replicaManager().partition(tp).orElseThrow().leaderEpoch();
                    for (Integer id : cluster.runningBrokerIds()) {
                        Optional<Partition> p = cluster.broker(id).replicaManager().partition(tp);
                        if (p.isPresent() && (p.get().leaderEpoch() != epoch || p.get().leaderId() != leader)) {
                            return false;
                        }
                    }
                    return leaderId(describe(admin, tp)) == leader;
                }, timeout);
        return localLeaders(cluster, tp).iterator().next();
    }

    /** Producer settings without retries, so a refusal reaches the test as the broker's error. */
    static Map<String, Object> noRetries(String acks) {
        return Map.of(ProducerConfig.ACKS_CONFIG, acks, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.RETRIES_CONFIG, 0, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    }

    static RecordMetadata send(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, String value)
            throws Exception {
        return producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null,
                value.getBytes(StandardCharsets.UTF_8))).get();
    }

    /**
     * Produces (acks as the producer says) until the ISR of {@code tp} is {@code isr}: a follower only lags, and
     * leaves the ISR, once the leader's log end moves past it.
     */
    static void awaitShrinkWhileProducing(Admin admin, KafkaProducer<byte[], byte[]> producer, TopicPartition tp,
                                          Set<Integer> isr, Duration timeout) {
        int[] n = {0};
        Waits.waitFor("ISR of " + tp + " to shrink to " + isr, () -> {
            send(producer, tp, "lagging-" + n[0]++);
            return ids(describe(admin, tp).isr());
        }, isr::equals, timeout);
    }

    /** Reads {@code tp} from its log start up to {@code endOffset} (exclusive) as a consumer would. */
    static NavigableMap<Long, String> readAll(TestCluster cluster, TopicPartition tp, long endOffset) {
        NavigableMap<Long, String> out = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 30_000;
            while (c.position(tp) < endOffset && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.put(r.offset(), new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    /** Every acknowledged record is readable at the offset it was acknowledged with, and no offset holds two. */
    static void assertAckedRecordsReadable(TestCluster cluster, TopicPartition tp, NavigableMap<Long, String> acked) {
        assertTrue(!acked.isEmpty(), "nothing was acknowledged");
        NavigableMap<Long, String> read = readAll(cluster, tp, acked.lastKey() + 1);
        List<String> lost = new ArrayList<>();
        acked.forEach((offset, value) -> {
            if (!value.equals(read.get(offset))) {
                lost.add(value + "@" + offset + " (read " + read.get(offset) + ")");
            }
        });
        assertEquals(List.of(), lost.subList(0, Math.min(20, lost.size())),
                lost.size() + " of " + acked.size() + " acknowledged records are not at their offsets");
        Set<String> values = new HashSet<>(read.values());
        assertEquals(read.size(), values.size(), "a record was written twice at different offsets");
    }
}
