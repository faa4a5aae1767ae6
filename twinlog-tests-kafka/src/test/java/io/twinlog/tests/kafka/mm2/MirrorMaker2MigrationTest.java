package io.twinlog.tests.kafka.mm2;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.kafka.ApacheKafka;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Migration from Apache Kafka to Twinlog with Apache Kafka's own tool, MirrorMaker 2 (issue 28, point 6): an
 * unmodified Kafka 4.4 broker is the source, a 3-broker Twinlog cluster the target, and MM2 4.3.1 runs in a JVM of its
 * own, as an operator runs it. The topic arrives under its own name (IdentityReplicationPolicy) with every record in
 * partition order, at the same offsets, and with its dynamic config; the consumer groups' positions arrive translated
 * by MM2's checkpoints, so that after MM2 is stopped each group's consumer continues on Twinlog without skipping a
 * record and re-reads no more than MM2's translation leaves behind: nothing for a group that had consumed everything
 * on Kafka (shipping, as a group stopped for the cutover), part of what it had consumed for a group stopped two
 * thirds into each partition (billing: MM2 4.3 translates such a position back to an earlier offset sync it kept).
 *
 * <p>Everything MM2 asks of the target goes to Twinlog: the Connect worker's compacted internal topics, topic creation
 * with configs, idempotent produce, the checkpoints topic, and the group offsets it writes through the Admin API.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class MirrorMaker2MigrationTest {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 3000;
    private static final int KEYS = 50;
    /** A group that stopped inside every partition on Kafka: MM2 translates its position conservatively. */
    private static final String BILLING = "billing";
    private static final int CONSUMED_BY_BILLING = 2000;
    /** A group that consumed everything on Kafka, as a group does that was stopped for the cutover. */
    private static final String SHIPPING = "shipping";
    /** Two days: a topic override that is no default anywhere, so only a copied config can match it. */
    private static final String RETENTION_MS = "172800000";
    private static final String SOURCE = "kafka";
    private static final String TARGET = "twinlog";
    /** MM2 names its checkpoints topic on the target after the source alias, whatever the replication policy. */
    private static final String CHECKPOINTS_TOPIC = SOURCE + ".checkpoints.internal";
    /** MM2's offset syncs, on the source by default, named after the target alias. */
    private static final String OFFSET_SYNCS_TOPIC = "mm2-offset-syncs." + TARGET + ".internal";
    /** The dedicated-mode Connect worker's own topics on the target, named after the source alias too. */
    private static final List<String> COMPACTED_MM2_TOPICS = List.of("mm2-configs." + SOURCE + ".internal",
            "mm2-offsets." + SOURCE + ".internal", "mm2-status." + SOURCE + ".internal", CHECKPOINTS_TOPIC);
    /** MM2's start on 2 busy cores (its worker, three connectors, their clients) and its first replication. */
    private static final Duration MM2_TIMEOUT = Duration.ofSeconds(90);
    private static final int AFTER_CUTOVER = 30;
    private static final Comparator<TopicPartition> PARTITION_ORDER =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    @Test
    void topicConfigsRecordsAndConsumerGroupsMoveFromKafkaToTwinlog() throws Exception {
        try (KafkaClusterTestKit kafka = ApacheKafka.startSingleBroker(Map.of());
             TestCluster twinlog = TestCluster.builder().brokers(3).build().start()) {
            String kafkaBootstrap = kafka.bootstrapServers();
            createOrders(kafkaBootstrap);
            Map<Integer, List<String>> onKafka = produce(kafkaBootstrap);
            Map<String, Map<TopicPartition, Long>> committedOnKafka = new TreeMap<>();
            committedOnKafka.put(BILLING, consumeAndCommit(kafkaBootstrap, BILLING, onKafka, CONSUMED_BY_BILLING));
            committedOnKafka.put(SHIPPING, consumeAndCommit(kafkaBootstrap, SHIPPING, onKafka, RECORDS));

            Path dir = Path.of(System.getProperty("basedir", "."), "target", "mirrormaker2",
                    "migration-" + System.currentTimeMillis());
            // --clusters twinlog: only the flows into Twinlog run here (no worker writes to Kafka)
            try (MirrorMaker2Process mm2 = MirrorMaker2Process.start(dir,
                    mm2Properties(kafkaBootstrap, twinlog.bootstrapServers()), "--clusters", TARGET)) {
                try {
                    migrate(mm2, kafkaBootstrap, twinlog, onKafka, committedOnKafka);
                } catch (AssertionError | Exception e) {
                    throw new AssertionError(e.getMessage() + "\n---- MirrorMaker 2 (" + mm2.logFile()
                            + "), last lines ----\n" + mm2.logTail(), e);
                }
            }
        }
    }

    private static void migrate(MirrorMaker2Process mm2, String kafka, TestCluster twinlog,
                                Map<Integer, List<String>> onKafka,
                                Map<String, Map<TopicPartition, Long>> committedOnKafka) throws Exception {
        Map<TopicPartition, Long> kafkaEnds = new TreeMap<>(PARTITION_ORDER);
        onKafka.forEach((p, records) -> kafkaEnds.put(new TopicPartition(TOPIC, p), (long) records.size()));
        try (Admin admin = twinlog.admin(); Checkpoints checkpoints = new Checkpoints(twinlog)) {
            Waits.waitFor("all " + RECORDS + " records of " + TOPIC + " on Twinlog", () -> {
                mm2.failIfExited();
                // (ListOffsets of a topic MM2 has not created yet has the Admin client log an error a poll)
                return admin.listTopics().names().get().contains(TOPIC) ? endOffsets(admin) : Map.of();
            }, kafkaEnds::equals, MM2_TIMEOUT);
            // MM2 writes a group's offsets after the checkpoint it translated them in; both settle once the offset
            // syncs of the last mirrored records are read. shipping, at the end of every partition, settles where
            // it is on Kafka.
            Waits.waitFor("the groups' offsets on Twinlog as MM2's latest checkpoints translate them", () -> {
                mm2.failIfExited();
                Map<String, Map<TopicPartition, Checkpoint>> latest = checkpoints.read();
                Map<String, GroupState> groups = new TreeMap<>();
                for (String group : committedOnKafka.keySet()) {
                    groups.put(group, new GroupState(groupOffsets(admin, group),
                            latest.getOrDefault(group, Map.of())));
                }
                return groups;
            }, groups -> groups.entrySet().stream().allMatch(g -> g.getValue().agree()
                            && g.getValue().offsets().keySet().equals(committedOnKafka.get(g.getKey()).keySet()))
                    && groups.get(SHIPPING).offsets().equals(committedOnKafka.get(SHIPPING)), MM2_TIMEOUT);

            boolean exited = mm2.stop();
            System.out.printf("MirrorMaker 2 stopped: %s%n", exited ? "exited on SIGTERM"
                    : "killed " + MirrorMaker2Process.STOP_TIMEOUT.toSeconds() + " s after SIGTERM");

            TopicDescription orders = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
            assertEquals(PARTITIONS, orders.partitions().size(), orders.toString());
            for (TopicPartitionInfo partition : orders.partitions()) {
                assertEquals(3, partition.replicas().size(), "replication.factor=3 of MM2's config: " + partition);
            }
            assertEquals(RETENTION_MS, topicConfig(admin, TOPIC).get("retention.ms"), "retention.ms copied from Kafka");
            for (String topic : COMPACTED_MM2_TOPICS) {
                assertEquals("compact", topicConfig(admin, topic).get("cleanup.policy"), topic);
            }
            assertEquals(onKafka, readAll(twinlog), "offsets, keys and values of every partition, in order");
            assertOffsetSyncsIdentical(kafka);

            Map<String, Map<TopicPartition, Checkpoint>> latest = checkpoints.readToEnd();
            Map<String, Map<TopicPartition, Long>> translated = new TreeMap<>();
            for (String group : committedOnKafka.keySet()) {
                translated.put(group, assertTranslated(group, committedOnKafka.get(group), groupOffsets(admin, group),
                        latest.get(group)));
            }
            continueOnTwinlog(twinlog, admin, onKafka, translated);
        }
    }

    /**
     * The position MM2 gave {@code group} on Twinlog is the one its latest checkpoints name, and never lies ahead
     * of the group's position on Kafka (the offsets are the same on both clusters, as {@link #readAll} showed): the
     * group skips nothing, and re-reads what the translation leaves behind. Returns that position.
     */
    private static Map<TopicPartition, Long> assertTranslated(String group, Map<TopicPartition, Long> onKafka,
                                                              Map<TopicPartition, Long> onTwinlog,
                                                              Map<TopicPartition, Checkpoint> checkpoints) {
        long reReads = 0;
        for (Map.Entry<TopicPartition, Long> kafkaPosition : onKafka.entrySet()) {
            TopicPartition tp = kafkaPosition.getKey();
            Checkpoint checkpoint = checkpoints.get(tp);
            assertEquals(kafkaPosition.getValue(), checkpoint.upstreamOffset(), group + "'s checkpoint of " + tp);
            long translated = onTwinlog.get(tp);
            assertEquals(checkpoint.downstreamOffset(), translated, group + "'s offset of " + tp);
            assertTrue(translated <= kafkaPosition.getValue(), group + "'s " + tp + " translated ahead of its "
                    + "position on Kafka: " + translated + " > " + kafkaPosition.getValue());
            reReads += kafkaPosition.getValue() - translated;
        }
        System.out.printf("%s on Kafka at %s (%d consumed); on Twinlog at %s: %d records to re-read%n", group,
                onKafka, onKafka.values().stream().mapToLong(Long::longValue).sum(), onTwinlog, reReads);
        return onTwinlog;
    }

    /**
     * The cutover: each group's consumer starts on Twinlog (MM2 gone) and reads from the translated position to
     * the end, exactly the records from there on; then a producer moved to Twinlog writes, and the consumers go on.
     */
    private static void continueOnTwinlog(TestCluster twinlog, Admin admin, Map<Integer, List<String>> onKafka,
                                          Map<String, Map<TopicPartition, Long>> translated) throws Exception {
        Map<String, KafkaConsumer<byte[], byte[]>> consumers = new TreeMap<>();
        try {
            for (String group : translated.keySet()) {
                KafkaConsumer<byte[], byte[]> consumer = twinlog.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG,
                        group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"));
                consumers.put(group, consumer);
                consumer.subscribe(List.of(TOPIC));
            }
            Map<TopicPartition, Long> ends = endOffsets(admin);
            for (Map.Entry<String, KafkaConsumer<byte[], byte[]>> consumer : consumers.entrySet()) {
                Map<Integer, List<String>> read = new TreeMap<>();
                pollUntil(consumer.getValue(), read, ends);
                for (Map.Entry<Integer, List<String>> partition : onKafka.entrySet()) {
                    int from = translated.get(consumer.getKey()).get(new TopicPartition(TOPIC, partition.getKey()))
                            .intValue();
                    List<String> all = partition.getValue();
                    assertEquals(all.subList(from, all.size()), read.getOrDefault(partition.getKey(), List.of()),
                            "what " + consumer.getKey() + " reads of partition " + partition.getKey() + " on Twinlog");
                }
            }

            try (KafkaProducer<byte[], byte[]> producer = twinlog.producer(Map.of())) {
                List<Future<RecordMetadata>> sends = new ArrayList<>();
                for (int i = 0; i < AFTER_CUTOVER; i++) {
                    sends.add(producer.send(record("customer-" + (i % KEYS), "after-cutover-" + i)));
                }
                for (Future<RecordMetadata> send : sends) {
                    send.get();
                }
            }
            Map<TopicPartition, Long> newEnds = endOffsets(admin);
            for (Map.Entry<String, KafkaConsumer<byte[], byte[]>> consumer : consumers.entrySet()) {
                Map<Integer, List<String>> read = new TreeMap<>();
                pollUntil(consumer.getValue(), read, newEnds);
                List<String> values = read.values().stream().flatMap(List::stream).toList();
                assertEquals(AFTER_CUTOVER, values.size(), consumer.getKey() + " read " + values);
                assertTrue(values.stream().allMatch(r -> r.contains("=after-cutover-")),
                        consumer.getKey() + " read " + values);
                consumer.getValue().commitSync();
                assertEquals(newEnds, groupOffsets(admin, consumer.getKey()),
                        consumer.getKey() + "'s offsets on Twinlog after the cutover");
            }
        } finally {
            consumers.values().forEach(KafkaConsumer::close);
        }
    }

    /** Polls {@code consumer} until its position reaches {@code ends} on every partition, collecting records. */
    private static void pollUntil(KafkaConsumer<byte[], byte[]> consumer, Map<Integer, List<String>> read,
                                  Map<TopicPartition, Long> ends) {
        Waits.waitUntil("a consumer at " + ends, () -> {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                read.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(line(r));
            }
            return consumer.assignment().containsAll(ends.keySet())
                    && ends.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
        }, MM2_TIMEOUT);
    }

    /**
     * MM2's configuration for a one-way migration into Twinlog: topic names kept, the groups' offsets translated and
     * written to Twinlog every second, an offset sync queued for every mirrored record (offset.lag.max=0: the finest
     * translation; MM2 sends as many as its limit of syncs in flight lets through), topics and groups looked up
     * every 5 s instead of every 10 min.
     */
    private static Map<String, String> mm2Properties(String kafka, String twinlog) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("clusters", SOURCE + "," + TARGET);
        p.put(SOURCE + ".bootstrap.servers", kafka);
        p.put(TARGET + ".bootstrap.servers", twinlog);
        p.put(SOURCE + "->" + TARGET + ".enabled", "true");
        p.put(SOURCE + "->" + TARGET + ".topics", TOPIC);
        p.put(TARGET + "->" + SOURCE + ".enabled", "false");
        p.put("replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy");
        p.put("groups", BILLING + "," + SHIPPING);
        p.put("sync.group.offsets.enabled", "true");
        p.put("sync.group.offsets.interval.seconds", "1");
        p.put("emit.checkpoints.interval.seconds", "1");
        p.put("refresh.topics.interval.seconds", "5");
        p.put("refresh.groups.interval.seconds", "5");
        p.put("offset.lag.max", "0");
        // the worker behind the flows into Twinlog commits its source offsets every second rather than every
        // minute, and with them sends the offset syncs it held back: the sync of the last record mirrored, which a
        // group at the end of a partition is translated with (a worker setting: only the target-prefixed form
        // reaches the worker in dedicated mode)
        p.put(TARGET + ".offset.flush.interval.ms", "1000");
        // Twinlog's ACLs are not what this test is about; MM2 would otherwise copy them every 10 minutes
        p.put("sync.topic.acls.enabled", "false");
        // everything MM2 creates on Twinlog (3 brokers) is replicated 3 times; its offset syncs live on the source,
        // a single Kafka broker
        for (String key : List.of("replication.factor", "checkpoints.topic.replication.factor",
                "heartbeats.topic.replication.factor", "config.storage.replication.factor",
                "offset.storage.replication.factor", "status.storage.replication.factor")) {
            p.put(key, "3");
        }
        p.put("offset-syncs.topic.replication.factor", "1");
        return p;
    }

    private static void createOrders(String kafka) throws Exception {
        try (Admin admin = kafkaAdmin(kafka)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)
                    .configs(Map.of("retention.ms", RETENTION_MS)))).all().get();
            // Kafka answers CreateTopics once its controller committed the topic, maybe before its broker knows it
            Waits.waitUntil(TOPIC + " known to Kafka's broker", () -> admin.describeTopics(List.of(TOPIC))
                    .allTopicNames().get().get(TOPIC).partitions().size() == PARTITIONS);
        }
    }

    /** Writes the keyed records to Kafka; returns each partition's records as {@link #line} renders them. */
    private static Map<Integer, List<String>> produce(String kafka) throws Exception {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        Map<Integer, List<String>> written = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                ProducerRecord<byte[], byte[]> record = record("customer-" + (i % KEYS), "order-" + i);
                records.add(record);
                sends.add(producer.send(record));
            }
            for (int i = 0; i < RECORDS; i++) {
                RecordMetadata metadata = sends.get(i).get();
                written.computeIfAbsent(metadata.partition(), p -> new ArrayList<>())
                        .add(line(metadata.offset(), records.get(i).key(), records.get(i).value()));
            }
        }
        assertEquals(PARTITIONS, written.size(), "keys spread over every partition");
        return written;
    }

    /**
     * {@code group} consumes {@code records} on Kafka, the same share of each partition (short of all: a position
     * inside every partition for MM2 to translate), commits and closes. Returns the committed offsets.
     */
    private static Map<TopicPartition, Long> consumeAndCommit(String kafka, String group,
                                                              Map<Integer, List<String>> onKafka, int records) {
        Map<TopicPartition, Long> quota = new TreeMap<>(PARTITION_ORDER);
        onKafka.forEach((p, written) -> quota.put(new TopicPartition(TOPIC, p),
                (long) written.size() * records / RECORDS));
        long rounding = records - quota.values().stream().mapToLong(Long::longValue).sum();
        quota.merge(new TopicPartition(TOPIC, 0), rounding, Long::sum);

        Map<Integer, List<String>> consumed = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = kafkaConsumer(kafka, group)) {
            consumer.subscribe(List.of(TOPIC));
            Waits.waitUntil(group + " consumed " + quota + " on Kafka", () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    List<String> of = consumed.computeIfAbsent(r.partition(), p -> new ArrayList<>());
                    if (of.size() < quota.get(new TopicPartition(TOPIC, r.partition()))) {
                        of.add(line(r));
                    }
                }
                return quota.entrySet().stream().allMatch(q ->
                        consumed.getOrDefault(q.getKey().partition(), List.of()).size() == q.getValue());
            });
            consumer.commitSync(quota.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                    q -> new OffsetAndMetadata(q.getValue()))));
        }
        consumed.forEach((p, read) -> assertEquals(onKafka.get(p).subList(0, read.size()), read));
        return quota;
    }

    /**
     * Every offset sync MM2 wrote for {@link #TOPIC} pairs a Kafka offset with the offset Twinlog's produce response
     * gave the mirrored record: the same offset, the topic being mirrored into an empty one without a gap or a
     * duplicate. The syncs are in {@link #OFFSET_SYNCS_TOPIC} on Kafka, in connect-mirror's {@code OffsetSync}
     * format: key = topic (an int16-length string) and partition (int32); value = upstream and downstream offsets
     * (int64).
     */
    private static void assertOffsetSyncsIdentical(String kafka) {
        TopicPartition syncs = new TopicPartition(OFFSET_SYNCS_TOPIC, 0);
        Map<Integer, Integer> perPartition = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = kafkaConsumer(kafka, null)) {
            consumer.assign(List.of(syncs));
            long end = consumer.endOffsets(List.of(syncs)).get(syncs);
            Waits.waitUntil(OFFSET_SYNCS_TOPIC + " read to " + end, () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    ByteBuffer key = ByteBuffer.wrap(r.key());
                    String topic = string(key);
                    int partition = key.getInt();
                    ByteBuffer value = ByteBuffer.wrap(r.value());
                    long upstream = value.getLong();
                    long downstream = value.getLong();
                    if (topic.equals(TOPIC)) {
                        assertEquals(upstream, downstream, "offset sync of " + topic + "-" + partition);
                        perPartition.merge(partition, 1, Integer::sum);
                    }
                }
                return consumer.position(syncs) >= end;
            });
        }
        assertEquals(PARTITIONS, perPartition.size(), "offset syncs of every partition: " + perPartition);
        System.out.printf("offset syncs of %s (partition: count), each at the same offset on both sides: %s%n",
                TOPIC, perPartition);
    }

    private static Map<Integer, List<String>> readAll(TestCluster twinlog) {
        Map<Integer, List<String>> read = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = twinlog.consumer(Map.of())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(TOPIC, p));
            }
            consumer.assign(partitions);
            pollUntil(consumer, read, consumer.endOffsets(partitions));
        }
        return read;
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new TreeMap<>(PARTITION_ORDER);
        admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        return ends;
    }

    /** {@code group}'s committed offsets of {@link #TOPIC} on Twinlog. */
    private static Map<TopicPartition, Long> groupOffsets(Admin admin, String group) throws Exception {
        Map<TopicPartition, Long> offsets = new TreeMap<>(PARTITION_ORDER);
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, offset) -> {
            if (tp.topic().equals(TOPIC) && offset != null) {
                offsets.put(tp, offset.offset());
            }
        });
        return offsets;
    }

    private static Map<String, String> topicConfig(Admin admin, String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
        return config.entries().stream().filter(e -> e.value() != null)
                .collect(Collectors.toMap(ConfigEntry::name, ConfigEntry::value));
    }

    /** A consumer of Kafka reading from the earliest offset, in {@code group} (null: none, assign() only). */
    private static KafkaConsumer<byte[], byte[]> kafkaConsumer(String kafka, String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
        if (group != null) {
            config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return new KafkaConsumer<>(config);
    }

    private static Admin kafkaAdmin(String kafka) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka));
    }

    private static ProducerRecord<byte[], byte[]> record(String key, String value) {
        return new ProducerRecord<>(TOPIC, key.getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
    }

    private static String line(ConsumerRecord<byte[], byte[]> r) {
        return line(r.offset(), r.key(), r.value());
    }

    /** A record as the test compares it across clusters: its offset, key and value. */
    private static String line(long offset, byte[] key, byte[] value) {
        return offset + " " + new String(key, StandardCharsets.UTF_8) + "=" + new String(value, StandardCharsets.UTF_8);
    }

    /** A group's offsets on Twinlog and MM2's latest checkpoints of them, as one poll of a wait saw them. */
    private record GroupState(Map<TopicPartition, Long> offsets, Map<TopicPartition, Checkpoint> checkpoints) {
        boolean agree() {
            return offsets.entrySet().stream().allMatch(e -> checkpoints.containsKey(e.getKey())
                    && checkpoints.get(e.getKey()).downstreamOffset() == e.getValue());
        }
    }

    /**
     * A record of MM2's checkpoints topic for one group and partition: the group's offset on the source and MM2's
     * translation of it on the target. Read from the wire format MM2 writes (connect-mirror-client's
     * {@code Checkpoint}, version 0): key = group, topic (int16-length strings) and partition (int32); value = a
     * version (int16), the upstream and downstream offsets (int64) and the commit's metadata.
     */
    private record Checkpoint(String group, TopicPartition partition, long upstreamOffset, long downstreamOffset) {
        static Checkpoint decode(ConsumerRecord<byte[], byte[]> record) {
            ByteBuffer key = ByteBuffer.wrap(record.key());
            String group = string(key);
            String topic = string(key);
            int partition = key.getInt();
            ByteBuffer value = ByteBuffer.wrap(record.value());
            short version = value.getShort();
            assertEquals(0, version, "checkpoint format version");
            return new Checkpoint(group, new TopicPartition(topic, partition), value.getLong(), value.getLong());
        }
    }

    /** A string as MM2's internal records hold it: an int16 length, then UTF-8. */
    private static String string(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.getShort()];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** The latest checkpoint of each group and partition, read as MM2 writes them to Twinlog. */
    private static final class Checkpoints implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final TopicPartition checkpointsPartition = new TopicPartition(CHECKPOINTS_TOPIC, 0);
        private final Map<String, Map<TopicPartition, Checkpoint>> latest = new TreeMap<>();

        Checkpoints(TestCluster twinlog) {
            consumer = twinlog.consumer(Map.of());
            consumer.assign(List.of(checkpointsPartition));
        }

        /** What one poll adds (nothing while MM2 has not created the topic). */
        Map<String, Map<TopicPartition, Checkpoint>> read() {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                Checkpoint checkpoint = Checkpoint.decode(r);
                latest.computeIfAbsent(checkpoint.group(), g -> new TreeMap<>(PARTITION_ORDER))
                        .put(checkpoint.partition(), checkpoint);
            }
            Map<String, Map<TopicPartition, Checkpoint>> copy = new TreeMap<>();
            latest.forEach((group, checkpoints) -> {
                Map<TopicPartition, Checkpoint> ofGroup = new TreeMap<>(PARTITION_ORDER);
                ofGroup.putAll(checkpoints);
                copy.put(group, ofGroup);
            });
            return copy;
        }

        /** Everything written so far (MM2 stopped: its last checkpoints). */
        Map<String, Map<TopicPartition, Checkpoint>> readToEnd() {
            long end = consumer.endOffsets(List.of(checkpointsPartition)).get(checkpointsPartition);
            return Waits.waitFor(CHECKPOINTS_TOPIC + " read to " + end, this::read,
                    ignored -> consumer.position(checkpointsPartition) >= end);
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
