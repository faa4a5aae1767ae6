package io.twinlog.tests.share;

import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Unmodified kafka-clients 4.4 {@code KafkaShareConsumer}s (explicit acknowledgement) on 3 brokers: several consumers
 * share a topic's records exactly once; a released record comes back with delivery count 2; a record not
 * acknowledged within the acquisition lock goes to another consumer; a consumer that closes without acknowledging,
 * or whose connection drops, hands its records on at once (well before their locks would expire); a record released
 * up to the delivery limit is archived; consumers go on through a leader's shutdown (at least once).
 *
 * <p>The brokers' acquisition lock is 10 s and the delivery limit 3 (group-level settings are not used); heartbeats
 * and session timeouts are lowered so members join quickly. Each scenario has its own topic and group.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShareConsumerTest {
    private static final Logger log = LoggerFactory.getLogger(ShareConsumerTest.class);
    private static final long LOCK_MS = 10_000;
    private static final int DELIVERY_LIMIT = 3;

    private TestCluster cluster;
    private CuratorFramework zk;

    @BeforeAll
    void start() throws Exception {
        cluster = TestCluster.builder().brokers(3)
                .brokerProperty("offsets.topic.replication.factor", "3")
                .brokerProperty("share.coordinator.state.topic.replication.factor", "3")
                .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3")
                .brokerProperty("group.share.min.record.lock.duration.ms", "1000")
                .brokerProperty("group.share.record.lock.duration.ms", Long.toString(LOCK_MS))
                .brokerProperty("group.share.delivery.count.limit", Integer.toString(DELIVERY_LIMIT))
                .brokerProperty("group.share.min.heartbeat.interval.ms", "500")
                .brokerProperty("group.share.heartbeat.interval.ms", "500")
                .brokerProperty("group.share.min.session.timeout.ms", "6000")
                .brokerProperty("group.share.session.timeout.ms", "6000")
                .build().start();
        zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(), new RetryOneTime(100));
        zk.start();
        zk.create().orSetData().forPath(ZkPaths.FEATURE, "{\"version\":1,\"features\":{\"share.version\":1}}"
                .getBytes(StandardCharsets.UTF_8));
    }

    @AfterAll
    void stop() {
        if (zk != null) {
            zk.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void threeConsumersShareTenThousandRecordsExactlyOnce() throws Exception {
        String topic = "orders";
        String group = "billing";
        createTopic(topic, 6, 3);
        startAtEarliest(group, topic, 6);
        Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
        List<Reader> readers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            readers.add(Reader.start(cluster, group, topic, "reader-" + i, deliveries, r -> AcknowledgeType.ACCEPT));
        }
        long startNs;
        try {
            // every member holds partitions before the records come, so that each gets a share of them
            try (Admin admin = cluster.admin()) {
                Waits.waitUntil("3 members with partitions", () -> {
                    var members = admin.describeShareGroups(List.of(group)).describedGroups().get(group)
                            .get(30, TimeUnit.SECONDS).members();
                    return members.size() == 3 && members.stream()
                            .allMatch(m -> !m.assignment().topicPartitions().isEmpty());
                });
            }
            startNs = System.nanoTime();
            produce(topic, 6, 10_000);
            Waits.waitFor("10,000 records consumed", deliveries::size, n -> n == 10_000, Duration.ofSeconds(60));
        } finally {
            readers.forEach(Reader::close);
        }
        double seconds = (System.nanoTime() - startNs) / 1e9;
        log.info("3 share consumers read 10,000 records of 6 partitions in {} s ({} records/s)",
                String.format("%.1f", seconds), Math.round(10_000 / seconds));
        readers.forEach(Reader::assertNoError);
        Map<String, Integer> repeated = deliveries.entrySet().stream().filter(e -> e.getValue().get() != 1)
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()));
        assertEquals(Map.of(), repeated, "every record delivered exactly once");
        readers.forEach(r -> assertTrue(r.received.get() > 0, r.name + " got a share of the records"));
    }

    @Test
    @Order(2)
    void aReleasedRecordIsDeliveredAgainWithDeliveryCountTwo() throws Exception {
        String topic = "released";
        String group = "releasing";
        prepare(topic, group, 1, 1);
        try (KafkaShareConsumer<byte[], byte[]> consumer = consumer(cluster, group, "releaser")) {
            consumer.subscribe(List.of(topic));
            ConsumerRecord<byte[], byte[]> first = pollOne(consumer);
            assertEquals((short) 1, first.deliveryCount().orElseThrow());
            consumer.acknowledge(first, AcknowledgeType.RELEASE);
            consumer.commitSync();
            ConsumerRecord<byte[], byte[]> again = pollOne(consumer);
            assertEquals(first.offset(), again.offset());
            assertEquals((short) 2, again.deliveryCount().orElseThrow(), "released once, delivered twice");
            consumer.acknowledge(again, AcknowledgeType.ACCEPT);
            consumer.commitSync();
        }
    }

    @Test
    @Order(3)
    void aRecordNotAcknowledgedWithinItsLockGoesToAnotherConsumer() throws Exception {
        String topic = "locked";
        String group = "locking";
        prepare(topic, group, 1, 1);
        try (KafkaShareConsumer<byte[], byte[]> holder = consumer(cluster, group, "holder");
             KafkaShareConsumer<byte[], byte[]> other = consumer(cluster, group, "other")) {
            holder.subscribe(List.of(topic));
            other.subscribe(List.of(topic));
            ConsumerRecord<byte[], byte[]> held = pollOne(holder);
            long acquiredNs = System.nanoTime();
            // the holder neither acknowledges nor polls again: its lock runs out
            ConsumerRecord<byte[], byte[]> redelivered = pollOne(other);
            long afterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acquiredNs);
            assertEquals(held.offset(), redelivered.offset());
            assertEquals((short) 2, redelivered.deliveryCount().orElseThrow());
            assertTrue(afterMs >= LOCK_MS - 2_000, "redelivered after " + afterMs + " ms, before the lock expired");
            other.acknowledge(redelivered, AcknowledgeType.ACCEPT);
            other.commitSync();
        }
    }

    @Test
    @Order(4)
    void aConsumerClosedWithoutAcknowledgingHandsItsRecordsOnAtOnce() throws Exception {
        String topic = "abandoned";
        String group = "abandoning";
        prepare(topic, group, 1, 10);
        long acquiredNs;
        try (KafkaShareConsumer<byte[], byte[]> quitter = consumer(cluster, group, "quitter")) {
            quitter.subscribe(List.of(topic));
            Waits.waitFor("the quitter's 10 records", () -> quitter.poll(Duration.ofMillis(200)).count(),
                    n -> n == 10);
            acquiredNs = System.nanoTime();
        }
        assertTakenOverBeforeTheLock(group, topic, 10, acquiredNs);
    }

    @Test
    @Order(5)
    void aConsumerWhoseConnectionDropsHandsItsRecordsOnAtOnce() throws Exception {
        String topic = "dropped";
        String group = "dropping";
        prepare(topic, group, 1, 10);
        Uuid topicId;
        int leader;
        try (Admin admin = cluster.admin()) {
            var description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            topicId = description.topicId();
            leader = description.partitions().get(0).leader().id();
        }
        long acquiredNs;
        // a member that opened a share session on the leader and acquired everything, then vanished
        RawKafkaConnection connection = RawKafkaConnection.to(cluster.broker(leader).bootstrapServers());
        ShareFetchResponseData.PartitionData acquired = Waits.waitFor("the vanishing member's records", () -> {
            ShareFetchResponse response = connection.send(new ShareFetchRequest.Builder(new ShareFetchRequestData().setGroupId(group).setMemberId(Uuid.randomUuid().toString())
                    .setShareSessionEpoch(0).setMaxWaitMs(500).setMinBytes(1).setMaxBytes(1 << 20)
                    .setMaxRecords(500).setBatchSize(500).setTopics(fetchTopic(topicId))).build((short) 1));
            return response.data().responses().iterator().next().partitions().get(0);
        }, p -> p.errorCode() == Errors.NONE.code() && !p.acquiredRecords().isEmpty());
        acquiredNs = System.nanoTime();
        assertEquals(9, acquired.acquiredRecords().get(acquired.acquiredRecords().size() - 1).lastOffset());
        connection.close();
        assertTakenOverBeforeTheLock(group, topic, 10, acquiredNs);
    }

    private static ShareFetchRequestData.FetchTopicCollection fetchTopic(Uuid topicId) {
        var topics = new ShareFetchRequestData.FetchTopicCollection();
        topics.add(new ShareFetchRequestData.FetchTopic().setTopicId(topicId)
                .setPartitions(new ShareFetchRequestData.FetchPartitionCollection(
                        List.of(new ShareFetchRequestData.FetchPartition()
                                .setPartitionIndex(0)).iterator())));
        return topics;
    }

    /** Another consumer gets all {@code count} records well before the first holder's locks would have expired. */
    private void assertTakenOverBeforeTheLock(String group, String topic, int count, long acquiredNs)
            throws Exception {
        Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
        Reader successor = Reader.start(cluster, group, topic, "successor", deliveries, r -> AcknowledgeType.ACCEPT);
        try {
            Waits.waitFor("the successor's " + count + " records", deliveries::size, n -> n == count);
        } finally {
            successor.close();
        }
        long afterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acquiredNs);
        log.info("Records of a departed member delivered to another {} ms after they were acquired", afterMs);
        assertTrue(afterMs < LOCK_MS - 2_000, "taken over after " + afterMs + " ms: the lock expired, no release");
        successor.assertNoError();
    }

    @Test
    @Order(6)
    void aRecordReleasedUpToTheDeliveryLimitIsArchived() throws Exception {
        String topic = "poison";
        String group = "poisoned";
        prepare(topic, group, 1, 1);
        try (KafkaShareConsumer<byte[], byte[]> consumer = consumer(cluster, group, "releaser")) {
            consumer.subscribe(List.of(topic));
            for (int delivery = 1; delivery <= DELIVERY_LIMIT; delivery++) {
                ConsumerRecord<byte[], byte[]> record = pollOne(consumer);
                assertEquals(0, record.offset());
                assertEquals((short) delivery, record.deliveryCount().orElseThrow());
                consumer.acknowledge(record, AcknowledgeType.RELEASE);
                consumer.commitSync();
            }
            produce(topic, 1, 1);
            ConsumerRecord<byte[], byte[]> next = pollOne(consumer);
            assertEquals(1, next.offset(), "offset 0 was archived at the delivery limit");
            consumer.acknowledge(next, AcknowledgeType.ACCEPT);
            consumer.commitSync();
        }
    }

    @Test
    @Order(7)
    void consumersGoOnWhenALeaderStops() throws Exception {
        String topic = "failover";
        String group = "surviving";
        prepare(topic, group, 6, 3_000);
        Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
        List<Reader> readers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            readers.add(Reader.start(cluster, group, topic, "survivor-" + i, deliveries,
                    r -> AcknowledgeType.ACCEPT));
        }
        try {
            Waits.waitFor("2,000 records consumed", deliveries::size, n -> n >= 2_000);
            int leader;
            try (Admin admin = cluster.admin()) {
                leader = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().get(0)
                        .leader().id();
            }
            log.info("Stopping broker {}, leader of {}-0, with {} records consumed", leader, topic,
                    deliveries.size());
            cluster.stopBroker(leader);
            // the second half goes to the partitions' new leaders, read by the same consumers
            produce(topic, 6, 3_000, 3_000);
            Waits.waitFor("every record consumed", deliveries::size, n -> n == 6_000, Duration.ofSeconds(90));
        } finally {
            readers.forEach(Reader::close);
        }
        readers.forEach(Reader::assertNoError);
        Map<Integer, Long> redelivered = deliveries.entrySet().stream().filter(e -> e.getValue().get() > 1)
                .collect(Collectors.groupingBy(e -> Integer.parseInt(e.getKey().split("-")[0]),
                        Collectors.counting()));
        log.info("After the leader stopped: 6,000 records consumed, delivered more than once by partition: {}",
                redelivered);
    }

    /** A topic of {@code partitions} (3 replicas) holding {@code records}, read by {@code group} from offset 0. */
    private void prepare(String topic, String group, int partitions, int records) throws Exception {
        createTopic(topic, partitions, 3);
        produce(topic, partitions, records);
        startAtEarliest(group, topic, partitions);
    }

    private void createTopic(String topic, int partitions, int replicationFactor) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) replicationFactor))).all().get();
        }
    }

    private void produce(String topic, int partitions, int count) {
        produce(topic, partitions, 0, count);
    }

    /** Records {@code first} to {@code first + count - 1}, record i to partition i modulo {@code partitions}. */
    private void produce(String topic, int partitions, int first, int count) {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
            for (int i = first; i < first + count; i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, null,
                        Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    /** The group's start offsets at 0 (a new share group starts at the latest offset). */
    private void startAtEarliest(String group, String topic, int partitions) throws Exception {
        Map<TopicPartition, Long> start = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            start.put(new TopicPartition(topic, p), 0L);
        }
        try (Admin admin = cluster.admin()) {
            Waits.waitFor("the share group's start offsets set", () -> {
                admin.alterShareGroupOffsets(group, start).all().get(30, TimeUnit.SECONDS);
                return true;
            }, ok -> ok);
        }
    }

    private static ConsumerRecord<byte[], byte[]> pollOne(KafkaShareConsumer<byte[], byte[]> consumer) {
        AtomicReference<ConsumerRecord<byte[], byte[]>> got = new AtomicReference<>();
        Waits.waitUntil("a record", () -> {
            var records = consumer.poll(Duration.ofMillis(200));
            assertTrue(records.count() <= 1, "one record expected, got " + records.count());
            records.forEach(got::set);
            return got.get() != null;
        });
        return got.get();
    }

    static KafkaShareConsumer<byte[], byte[]> consumer(TestCluster cluster, String group, String clientId) {
        Map<String, Object> props = new HashMap<>(cluster.clientProperties());
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        return new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /**
     * A share consumer on its own thread (the client is single-threaded): polls, counts each delivery of each
     * record ({@code partition-offset}) and acknowledges as {@code decision} says, committing after every poll.
     */
    static final class Reader implements AutoCloseable {
        final String name;
        final AtomicInteger received = new AtomicInteger();
        private final AtomicReference<Throwable> error = new AtomicReference<>();
        private final Thread thread;
        private volatile boolean running = true;

        private Reader(TestCluster cluster, String group, String topic, String name,
                       Map<String, AtomicInteger> deliveries,
                       Function<ConsumerRecord<byte[], byte[]>, AcknowledgeType> decision) {
            this.name = name;
            this.thread = new Thread(() -> {
                try (KafkaShareConsumer<byte[], byte[]> consumer = consumer(cluster, group, name)) {
                    consumer.subscribe(Set.of(topic));
                    while (running) {
                        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                            deliveries.computeIfAbsent(r.partition() + "-" + r.offset(), k -> new AtomicInteger())
                                    .incrementAndGet();
                            received.incrementAndGet();
                            consumer.acknowledge(r, decision.apply(r));
                        }
                        consumer.commitSync(Duration.ofSeconds(10));
                    }
                } catch (Throwable t) {
                    log.error("Share consumer {} failed", name, t);
                    error.set(t);
                }
            }, "share-reader-" + name);
        }

        static Reader start(TestCluster cluster, String group, String topic, String name,
                            Map<String, AtomicInteger> deliveries,
                            Function<ConsumerRecord<byte[], byte[]>, AcknowledgeType> decision) {
            Reader reader = new Reader(cluster, group, topic, name, deliveries, decision);
            reader.thread.start();
            return reader;
        }

        void assertNoError() {
            assertNull(error.get(), name + " failed: " + error.get());
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
