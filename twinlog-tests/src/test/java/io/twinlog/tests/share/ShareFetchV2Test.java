package io.twinlog.tests.share;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Unmodified kafka-clients 4.4 {@code KafkaShareConsumer}s on ShareFetch/ShareAcknowledge v2: with
 * {@code share.acquire.mode=record_limit} a poll gets at most {@code max.poll.records} and the broker acquires no
 * more, so another member gets the rest of the same log batch at once; {@code acknowledge(record, RENEW)} keeps a
 * record past its group's 1 s acquisition lock for as long as the holder renews it; a share consumer under a
 * {@code consumer_byte_rate} quota is throttled to about that rate and still gets every record once, with delivery
 * count 1 (a throttled answer's records are given back, not left to their lock). One broker; quota windows 3 x 1 s.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ShareFetchV2Test {
    private static final Logger log = LoggerFactory.getLogger(ShareFetchV2Test.class);
    private static final int KIB = 1024;

    private TestCluster cluster;

    @BeforeAll
    void start() throws Exception {
        cluster = TestCluster.builder().brokers(1)
                .brokerProperty("offsets.topic.replication.factor", "1")
                .brokerProperty("share.coordinator.state.topic.replication.factor", "1")
                .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                .brokerProperty("share.coordinator.state.topic.num.partitions", "1")
                .brokerProperty("group.share.min.record.lock.duration.ms", "1000")
                .brokerProperty("group.share.min.heartbeat.interval.ms", "500")
                .brokerProperty("group.share.heartbeat.interval.ms", "500")
                .brokerProperty("group.share.min.session.timeout.ms", "6000")
                .brokerProperty("group.share.session.timeout.ms", "6000")
                .brokerProperty("quota.window.num", "3")
                .brokerProperty("quota.window.size.seconds", "1")
                .build().start();
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aRecordLimitConsumerAcquiresNoMoreThanMaxPollRecords() throws Exception {
        String topic = "limited";
        String group = "limited-readers";
        createTopic(topic);
        configureGroup(group, Map.of("share.auto.offset.reset", "earliest"));
        produce(topic, 100, 100); // lingering: one log batch of 100 records

        try (KafkaShareConsumer<byte[], byte[]> holder = consumer(group, "holder",
                Map.of(ConsumerConfig.SHARE_ACQUIRE_MODE_CONFIG, "record_limit",
                        ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 7));
             KafkaShareConsumer<byte[], byte[]> other = consumer(group, "other", Map.of())) {
            holder.subscribe(Set.of(topic));
            List<ConsumerRecord<byte[], byte[]>> held = new ArrayList<>();
            Waits.waitUntil("the record-limit consumer's first records", () -> {
                ConsumerRecords<byte[], byte[]> records = holder.poll(Duration.ofMillis(200));
                assertTrue(records.count() <= 7, "a poll of " + records.count() + " records");
                records.forEach(held::add);
                return !held.isEmpty();
            });
            assertEquals(7, held.size(), "exactly max.poll.records of the 100-record batch");

            // the broker acquired only those 7: the rest of the batch goes to another member now, not after a lock
            other.subscribe(Set.of(topic));
            Set<Long> otherOffsets = new HashSet<>();
            Waits.waitFor("the other 93 records", () -> {
                for (ConsumerRecord<byte[], byte[]> r : other.poll(Duration.ofMillis(200))) {
                    assertTrue(otherOffsets.add(r.offset()), "offset " + r.offset() + " twice");
                    other.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                other.commitSync(Duration.ofSeconds(10));
                return otherOffsets.size();
            }, n -> n >= 93, Duration.ofSeconds(20));
            assertEquals(93, otherOffsets.size());
            held.forEach(r -> assertTrue(!otherOffsets.contains(r.offset()), "offset " + r.offset()
                    + " went to both"));
            held.forEach(r -> holder.acknowledge(r, AcknowledgeType.ACCEPT));
            holder.commitSync(Duration.ofSeconds(10));
        }
    }

    @Test
    void aRenewingConsumerKeepsARecordPastItsLock() throws Exception {
        String topic = "renewed";
        String group = "renewing-readers";
        createTopic(topic);
        configureGroup(group, Map.of("share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "1000"));
        produce(topic, 1, 0);

        try (KafkaShareConsumer<byte[], byte[]> holder = consumer(group, "renewer",
                Map.of(ConsumerConfig.SHARE_ACQUIRE_MODE_CONFIG, "record_limit",
                        ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1));
             KafkaShareConsumer<byte[], byte[]> other = consumer(group, "waiter", Map.of())) {
            holder.subscribe(Set.of(topic));
            List<ConsumerRecord<byte[], byte[]>> first = new ArrayList<>();
            Waits.waitUntil("the record", () -> {
                holder.poll(Duration.ofMillis(100)).forEach(first::add);
                return !first.isEmpty();
            });
            assertEquals(Optional.of(1000), holder.acquisitionLockTimeoutMs(), "the group's lock duration");
            other.subscribe(Set.of(topic));

            // three lock durations: renewed each time poll hands it back, the record stays with the holder
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            ConsumerRecord<byte[], byte[]> record = first.get(0);
            boolean inHand = true;
            int renewals = 0;
            while (System.nanoTime() < until || !inHand) {
                if (inHand && System.nanoTime() < until) {
                    holder.acknowledge(record, AcknowledgeType.RENEW);
                    inHand = false;
                    renewals++;
                }
                for (ConsumerRecord<byte[], byte[]> again : holder.poll(Duration.ofMillis(200))) {
                    assertEquals(record.offset(), again.offset());
                    record = again;
                    inHand = true;
                }
                assertEquals(0, other.poll(Duration.ofMillis(50)).count(), "the waiter got a renewed record");
            }
            log.info("A record kept 3 s under a 1 s lock by {} renewals", renewals);
            assertTrue(renewals > 3, "renewed " + renewals + " times");
            assertEquals(Optional.of((short) 1), record.deliveryCount(), "never delivered again");
            holder.acknowledge(record, AcknowledgeType.ACCEPT);
            holder.commitSync(Duration.ofSeconds(10));
            assertEquals(0, other.poll(Duration.ofMillis(1500)).count(), "accepted: nothing left for the waiter");
        }
    }

    @Test
    void aShareConsumerUnderAByteRateQuotaIsThrottledToIt() throws Exception {
        String topic = "quota";
        String group = "quota-readers";
        String clientId = "limited-share-consumer";
        int records = 800;
        int quotaBytesPerSecond = 100 * KIB;
        createTopic(topic);
        configureGroup(group, Map.of("share.auto.offset.reset", "earliest"));
        byte[] value = new byte[KIB];
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }
        try (Admin admin = cluster.admin()) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(new ClientQuotaEntity(Map.of(
                    ClientQuotaEntity.CLIENT_ID, clientId)), List.of(new ClientQuotaAlteration.Op(
                    "consumer_byte_rate", (double) quotaBytesPerSecond))))).all().get(30, TimeUnit.SECONDS);
        }

        try (KafkaShareConsumer<byte[], byte[]> consumer = consumer(group, clientId, Map.of())) {
            consumer.subscribe(Set.of(topic));
            Set<Long> offsets = new HashSet<>();
            long bytes = 0;
            long start = System.nanoTime();
            long measuredFrom = -1;
            long measuredBytes = 0;
            while (offsets.size() < records && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(40)) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    assertTrue(offsets.add(r.offset()), "offset " + r.offset() + " twice");
                    assertEquals(Optional.of((short) 1), r.deliveryCount(), "offset " + r.offset());
                    bytes += r.serializedValueSize();
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                consumer.commitSync(Duration.ofSeconds(10));
                // the first seconds are the burst a fresh quota sensor lets through
                if (measuredFrom < 0 && System.nanoTime() - start > TimeUnit.SECONDS.toNanos(2)) {
                    measuredFrom = System.nanoTime();
                    measuredBytes = bytes;
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            double rate = (bytes - measuredBytes) / ((System.nanoTime() - measuredFrom) / 1e9) / KIB;
            double throttleMaxMs = metric(consumer.metrics(), "fetch-throttle-time-max");
            log.info("Share consumer under a 100 KiB/s quota: {} records in {} s, {} KiB/s after the burst, "
                    + "throttle max {} ms", offsets.size(), String.format("%.1f", seconds),
                    String.format("%.0f", rate), throttleMaxMs);
            assertEquals(records, offsets.size(), "every record, once");
            assertTrue(throttleMaxMs > 0, "told to wait: fetch-throttle-time-max " + throttleMaxMs);
            // below the quota rather than at it: an answer over it goes out empty (Kafka's rule), its records
            // given back and fetched again after the throttle
            assertTrue(rate > 40 && rate < 130, "near 100 KiB/s after the burst, not above: " + rate + " KiB/s");
        }
    }

    private void createTopic(String topic) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Sets the group's configs and waits until the broker describes them (applied from ZooKeeper). */
    private void configureGroup(String group, Map<String, String> configs) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        List<AlterConfigOp> ops = new ArrayList<>();
        configs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        try (Admin admin = cluster.admin()) {
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(30, TimeUnit.SECONDS);
            Waits.waitUntil("group " + group + "'s configs applied", () -> {
                var described = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS)
                        .get(resource);
                return configs.entrySet().stream().allMatch(e -> e.getValue().equals(
                        described.get(e.getKey()).value()));
            });
        }
    }

    /** {@code count} records, sent together with {@code lingerMs} so that they make one batch. */
    private void produce(String topic, int count, int lingerMs) {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG,
                lingerMs, ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20))) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    private KafkaShareConsumer<byte[], byte[]> consumer(String group, String clientId, Map<String, Object> extra) {
        Map<String, Object> props = new HashMap<>(cluster.clientProperties());
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        props.putAll(extra);
        return new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static double metric(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                .filter(v -> !Double.isNaN(v)).max().orElse(0);
    }
}
