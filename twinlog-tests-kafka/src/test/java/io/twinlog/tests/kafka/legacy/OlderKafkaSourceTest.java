package io.twinlog.tests.kafka.legacy;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.protocol.client.ClusterBatches;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirroring from real Apache Kafka 3.9 (ZooKeeper mode) and 2.8 brokers (issue 28, point 7;
 * docs/design-connect-old-sources-grafana.md, 7.4), through a failover and a start again from the old source, with
 * offsets, leader epochs and topic IDs kept:
 * <ol>
 *   <li>a 2-broker old cluster whose brokers are restarted one after the other between rounds of records, so that
 *       every partition's log holds batches of several leader epochs; idempotent and transactional (committed and
 *       aborted) records from kafka-clients 4.4; group {@code billing} with committed offsets;</li>
 *   <li>a 3-broker Twinlog cluster mirrors both topics: every batch (base and last offset, partition leader epoch,
 *       CRC) of every partition is the same on every Twinlog replica as on the old leader; the topic ID and
 *       {@code retention.ms} are copied, {@code message.format.version} (removed in Kafka 4) is not;</li>
 *   <li>the group's offsets are synced;</li>
 *   <li>the old leader of {@code audit-0} is killed (SIGKILL) and more records are mirrored from its successor;</li>
 *   <li>failover: {@code billing} resumes on Twinlog at the synced offsets, records written on Twinlog land after
 *       the last mirrored offset in a higher epoch, read_committed sees the committed transaction only;</li>
 *   <li>the old source takes more records and the topics are started again from it: an old Kafka does not serve
 *       LastMirroredEpochs, so, as for Apache Kafka 4.4 ({@code FailbackFromKafkaTest}), every Twinlog replica is
 *       cut to 0 with every data record quarantined first, copied again and identical batch for batch, which
 *       {@code --verify --full} confirms.</li>
 * </ol>
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class OlderKafkaSourceTest {
    private static final String MIRROR = "from-legacy";
    private static final String ORDERS = "orders";
    private static final String AUDIT = "audit";
    private static final String GROUP = "billing";
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition(ORDERS, 0),
            new TopicPartition(ORDERS, 1), new TopicPartition(ORDERS, 2), new TopicPartition(AUDIT, 0));
    private static final List<TopicPartition> ORDERS_PARTITIONS = PARTITIONS.subList(0, 3);
    /** Records per partition in each round written on the old cluster. */
    private static final int ROUND = 40;
    /** {@code billing}'s committed offset on every partition of orders: inside the first round's records. */
    private static final long COMMITTED = 17;
    /** Records per partition written on Twinlog after the failover, and on the old cluster after it. */
    private static final int AFTER_FAILOVER = 10;
    private static final int TRANSACTION_RECORDS = 10;
    private static final List<Integer> TWINLOG_BROKERS = List.of(0, 1, 2);
    private static final Duration MIRROR_TIMEOUT = Duration.ofSeconds(90);

    @RegisterExtension
    static final ClassZooKeeper ZOOKEEPER = new ClassZooKeeper("older-kafka-source");

    @ParameterizedTest(name = "Kafka {0}")
    @ValueSource(strings = {"3.9", "2.8"})
    void mirroredFailedOverAndStartedAgainWithOffsetsAndEpochsKept(String version) throws Exception {
        try (LegacyKafkaCluster kafka = new LegacyKafkaCluster(version, ZOOKEEPER.connectString(), 2).start();
             Admin kafkaAdmin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                     kafka.bootstrapServers()));
             ClusterBatches kafkaBatches = new ClusterBatches("Kafka " + version,
                     Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            // 1. the old cluster: two brokers restarted one after the other between rounds, so each partition's log
            // holds batches of more than one leader epoch
            kafkaAdmin.createTopics(List.of(new NewTopic(ORDERS, 3, (short) 2).configs(Map.of(
                            "retention.ms", "100002", "message.format.version", "2.8")),
                    new NewTopic(AUDIT, 1, (short) 2))).all().get(30, TimeUnit.SECONDS);
            awaitInSync(kafkaAdmin, Set.of(0, 1));
            produce(kafka.bootstrapServers(), "round0", ROUND);
            for (int id = 0; id < kafka.size(); id++) {
                kafka.terminate(id);
                kafka.start(id);
                kafka.waitUntilReady();
                awaitInSync(kafkaAdmin, Set.of(0, 1));
                produce(kafka.bootstrapServers(), "round" + (id + 1), ROUND);
            }
            transactions(kafka.bootstrapServers());
            Map<TopicPartition, Long> committed = commitBilling(kafka.bootstrapServers());
            assertEquals("2.8", topicConfigs(kafkaAdmin).get("message.format.version").value(),
                    "the old cluster keeps the config Kafka 4 removed");

            try (TestCluster twinlog = TestCluster.builder().brokers(3)
                    .brokerProperty("default.replication.factor", "3").build().start();
                 Admin twinlogAdmin = twinlog.admin();
                 MirrorAdmin mirrors = MirrorAdmin.create(twinlog.bootstrapServers(), Duration.ofSeconds(60))) {
                // 2. mirrored batch for batch: offsets, leader epochs and CRCs as the old leader holds them
                mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", kafka.bootstrapServers(),
                        "mirror.groups.sync.interval.ms", "500"));
                assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(ORDERS, AUDIT), List.of(),
                        List.of()));
                Map<TopicPartition, List<BatchIdentity>> mirrored = awaitMirroredIdentical(kafkaAdmin, kafkaBatches,
                        twinlog, mirrors);
                Map<TopicPartition, Set<Integer>> epochs = new LinkedHashMap<>();
                mirrored.forEach((tp, batches) -> epochs.put(tp, batches.stream().map(BatchIdentity::epoch)
                        .collect(Collectors.toCollection(TreeSet::new))));
                // which epochs the restarts gave, for a run that fails later on
                System.out.printf("Kafka %s: leader epochs of the mirrored batches %s%n", version, epochs);
                epochs.forEach((tp, e) -> assertTrue(e.size() > 1, tp + " holds batches of several leader epochs"));
                for (String topic : List.of(ORDERS, AUDIT)) {
                    Uuid id = describe(kafkaAdmin, topic).topicId();
                    assertNotEquals(Uuid.ZERO_UUID, id);
                    assertEquals(id, describe(twinlogAdmin, topic).topicId(), topic + "'s topic ID kept");
                }
                Config copied = topicConfigs(twinlogAdmin);
                assertEquals("100002", copied.get("retention.ms").value());
                assertNull(copied.get("message.format.version"), "not a topic config of Kafka 4: not copied");

                // 3. billing's offsets synced as committed on the old cluster
                Waits.waitFor(GROUP + "'s offsets synced to Twinlog", () -> groupOffsets(twinlogAdmin),
                        committed::equals, MIRROR_TIMEOUT);
                MirrorAdmin.GroupSyncDescription sync = Waits.waitFor("the sync of " + GROUP + " in describe",
                        () -> mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).groups().get(GROUP),
                        g -> g != null && g.offsetsSynced() == ORDERS_PARTITIONS.size());
                assertEquals(0, sync.offsetsClamped());

                // 4. the leader of audit-0 dies without a shutdown; the mirror follows its successor
                int auditLeader = leader(kafkaAdmin, PARTITIONS.get(3));
                kafka.kill(auditLeader);
                produce(kafka.bootstrapServers(), "after-kill", ROUND);
                mirrored = awaitMirroredIdentical(kafkaAdmin, kafkaBatches, twinlog, mirrors);
                assertNotEquals(auditLeader, leader(kafkaAdmin, PARTITIONS.get(3)));

                // 5. failover: Twinlog's own records follow the last mirrored offset in a higher epoch
                MirrorSteps.failOver(mirrors, MIRROR, ORDERS);
                MirrorSteps.failOver(mirrors, MIRROR, AUDIT);
                Map<TopicPartition, MirrorAdmin.PartitionDescription> failedOver = partitions(mirrors);
                Map<TopicPartition, Long> ownFirst = produce(twinlog.bootstrapServers(), "twinlog", AFTER_FAILOVER);
                for (TopicPartition tp : PARTITIONS) {
                    List<BatchIdentity> source = mirrored.get(tp);
                    MirrorAdmin.PartitionDescription p = failedOver.get(tp);
                    long lmo = source.get(source.size() - 1).lastOffset() + 1;
                    assertEquals(lmo, p.lastMirroredOffset(), tp + ": " + p);
                    assertEquals(source.get(source.size() - 1).epoch(), p.lastMirroredEpoch(), tp + ": " + p);
                    assertEquals(lmo + 1, ownFirst.get(tp), tp + ": the first own record follows the barrier at "
                            + lmo);
                    int sourceEpoch = source.stream().mapToInt(BatchIdentity::epoch).max().orElseThrow();
                    List<ReplicaLogs.Batch> own = ReplicaLogs.awaitIdentical(twinlog, tp, TWINLOG_BROKERS).stream()
                            .filter(b -> b.baseOffset() > lmo).toList();
                    assertTrue(!own.isEmpty() && own.stream().allMatch(b -> b.partitionLeaderEpoch() > sourceEpoch),
                            tp + ": written above the source's epochs (up to " + sourceEpoch + "): " + own);
                }
                assertEquals(committed, resumeBilling(twinlog), GROUP + " resumes at the synced offsets");
                List<String> readCommitted = readAll(twinlog.consumer(Map.of(
                        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")), ORDERS_PARTITIONS);
                assertTrue(readCommitted.containsAll(values("committed", TRANSACTION_RECORDS))
                        && readCommitted.stream().noneMatch(v -> v.startsWith("aborted-")), readCommitted.toString());

                // 6. started again from the old source, which cannot say what Twinlog last mirrored: cut to 0
                produce(kafka.bootstrapServers(), "after-failover", AFTER_FAILOVER);
                Map<TopicPartition, Long> cut = new HashMap<>();
                long dataRecords = 0;
                for (TopicPartition tp : PARTITIONS) {
                    List<ReplicaLogs.Batch> log = ReplicaLogs.read(twinlog.broker(0), tp);
                    cut.put(tp, log.get(log.size() - 1).lastOffset() + 1);
                    dataRecords += log.stream().filter(b -> !b.control()).mapToLong(b -> b.values().size()).sum();
                }
                assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(ORDERS, AUDIT), List.of(),
                        List.of()), "the operator follows the old cluster again");
                mirrored = awaitMirroredIdentical(kafkaAdmin, kafkaBatches, twinlog, mirrors);
                Map<TopicPartition, MirrorAdmin.PartitionDescription> restarted = partitions(mirrors);
                for (TopicPartition tp : PARTITIONS) {
                    assertEquals((long) cut.get(tp), restarted.get(tp).truncatedOffsets(), tp + " cut to 0: "
                            + restarted.get(tp));
                    assertTrue(ReplicaLogs.read(twinlog.broker(0), tp).stream().flatMap(b -> b.values().stream())
                            .noneMatch(v -> v != null && v.startsWith("twinlog-")), tp + ": no own record left");
                }
                // all of the quarantine, counted by origin: a copy retried after a timeout copies its tail again
                // (the cut waits for an acknowledged copy, decision 40), so a record may be in it twice, never missing
                List<Quarantined> kept = Quarantined.read(twinlog, (int) Math.max(dataRecords, quarantineEnd(twinlog)));
                List<Quarantined> byOrigin = kept.stream()
                        .filter(q -> MIRROR.equals(q.headers().get("twinlog.quarantine.mirror")))
                        .collect(Collectors.toMap(q -> q.origin("topic", "partition", "offset"), q -> q,
                                (first, again) -> first, LinkedHashMap::new)).values().stream().toList();
                assertEquals(dataRecords, byOrigin.size(), "every data record cut was kept first");
                assertEquals(PARTITIONS.size() * AFTER_FAILOVER, byOrigin.stream()
                        .filter(q -> q.value().startsWith("twinlog-")).count());
                assertVerified(twinlog, mirrored);
            }
        }
    }

    /**
     * Waits until every partition is MIRRORING with no lag and every Twinlog replica holds the old cluster's log,
     * then until every replica's batches are the old leader's: the same base and last offsets, partition leader
     * epochs and CRCs. Returns the old cluster's batches by partition.
     */
    private static Map<TopicPartition, List<BatchIdentity>> awaitMirroredIdentical(
            Admin kafkaAdmin, ClusterBatches kafkaBatches, TestCluster twinlog, MirrorAdmin mirrors) {
        Map<TopicPartition, Long> ends = Waits.waitFor("the old cluster's end offsets", () -> endOffsets(kafkaAdmin),
                e -> e.size() == PARTITIONS.size());
        Waits.waitFor("every partition MIRRORING with lag 0 and every Twinlog replica at " + ends, () -> {
            Map<TopicPartition, String> states = new LinkedHashMap<>();
            partitions(mirrors).forEach((tp, p) -> states.put(tp, p.state() + " lag " + p.lag() + " replicas at "
                    + ReplicaLogs.logEndOffsets(twinlog, tp).values()));
            return states;
        }, states -> states.size() == PARTITIONS.size() && PARTITIONS.stream().allMatch(tp -> states.get(tp)
                .equals("MIRRORING lag 0 replicas at " + List.of(ends.get(tp), ends.get(tp), ends.get(tp)))),
                MIRROR_TIMEOUT);
        Map<TopicPartition, List<BatchIdentity>> out = new LinkedHashMap<>();
        for (TopicPartition tp : PARTITIONS) {
            List<BatchIdentity> source = Waits.waitFor("the old cluster's batches of " + tp,
                    () -> sourceBatches(kafkaBatches, tp), b -> true);
            Waits.waitFor("every Twinlog replica of " + tp + " to hold the old leader's batches " + source, () -> {
                Map<Integer, List<BatchIdentity>> replicas = new LinkedHashMap<>();
                for (int id : TWINLOG_BROKERS) {
                    replicas.put(id, ReplicaLogs.read(twinlog.broker(id), tp).stream().map(b -> new BatchIdentity(
                            b.baseOffset(), b.lastOffset(), b.partitionLeaderEpoch(), b.crc())).toList());
                }
                return replicas;
            }, replicas -> replicas.values().stream().allMatch(source::equals));
            out.put(tp, source);
        }
        return out;
    }

    /** The old cluster's log of {@code tp}, batch by batch, as single-batch Fetches from its leader read it. */
    private static List<BatchIdentity> sourceBatches(ClusterBatches kafkaBatches, TopicPartition tp)
            throws IOException {
        ClusterBatches.Range range = kafkaBatches.range(tp);
        List<BatchIdentity> out = new ArrayList<>();
        long offset = range.start();
        while (offset < range.end()) {
            long at = offset;
            BatchIdentity batch = kafkaBatches.batchAt(tp, offset).orElseThrow(() -> new IOException(
                    "no batch at " + at + " of " + tp + " below its high watermark " + range.end()));
            out.add(batch);
            offset = batch.lastOffset() + 1;
        }
        return out;
    }

    /** {@code twinlog-mirrors.sh --verify --full}: every batch compared with the old leader's, none differs. */
    private static void assertVerified(TestCluster twinlog, Map<TopicPartition, List<BatchIdentity>> mirrored) {
        StringWriter out = new StringWriter();
        int status = MirrorsCommand.newCommandLine().setOut(new PrintWriter(out, true)).execute(
                "--bootstrap-server", twinlog.bootstrapServers(), "--verify", "--mirror", MIRROR, "--full");
        assertEquals(0, status, out.toString());
        mirrored.forEach((tp, batches) -> assertTrue(out.toString().contains(tp.topic() + " " + tp.partition()
                + " identical up to " + (batches.get(batches.size() - 1).lastOffset() + 1)), out.toString()));
    }

    /** Until every partition of both topics has a leader and {@code replicas} as its ISR. */
    private static void awaitInSync(Admin admin, Set<Integer> replicas) {
        Waits.waitFor("every partition of " + ORDERS + " and " + AUDIT + " led, with ISR " + replicas, () -> {
            List<Set<Integer>> isrs = new ArrayList<>();
            for (String topic : List.of(ORDERS, AUDIT)) {
                for (TopicPartitionInfo p : describe(admin, topic).partitions()) {
                    isrs.add(p.leader() == null || p.leader().isEmpty() ? Set.of()
                            : p.isr().stream().map(Node::id).collect(Collectors.toSet()));
                }
            }
            return isrs;
        }, isrs -> isrs.size() == PARTITIONS.size() && isrs.stream().allMatch(replicas::equals),
                Duration.ofSeconds(60));
    }

    private static TopicDescription describe(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
    }

    private static int leader(Admin admin, TopicPartition tp) throws Exception {
        return describe(admin, tp.topic()).partitions().get(tp.partition()).leader().id();
    }

    private static Config topicConfigs(Admin admin) throws Exception {
        ConfigResource orders = new ConfigResource(ConfigResource.Type.TOPIC, ORDERS);
        return admin.describeConfigs(List.of(orders)).all().get(10, TimeUnit.SECONDS).get(orders);
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = PARTITIONS.stream()
                .collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()));
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    private static Map<TopicPartition, MirrorAdmin.PartitionDescription> partitions(MirrorAdmin mirrors)
            throws IOException {
        Map<TopicPartition, MirrorAdmin.PartitionDescription> out = new LinkedHashMap<>();
        mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).topics().forEach((topic, t) -> t.partitions()
                .forEach(p -> out.put(new TopicPartition(topic, p.partition()), p)));
        return out;
    }

    private static Map<TopicPartition, Long> groupOffsets(Admin admin) throws Exception {
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS)
                .forEach((tp, o) -> {
                    if (o != null) {
                        out.put(tp, o.offset());
                    }
                });
        return out;
    }

    /**
     * {@code count} idempotent records on every partition, values {@code prefix-topic-partition-i}; returns the
     * offset of each partition's first.
     */
    private static Map<TopicPartition, Long> produce(String bootstrap, String prefix, int count) throws Exception {
        Map<TopicPartition, List<Future<RecordMetadata>>> sends = new LinkedHashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.LINGER_MS_CONFIG, 5))) {
            for (int i = 0; i < count; i++) {
                for (TopicPartition tp : PARTITIONS) {
                    sends.computeIfAbsent(tp, t -> new ArrayList<>()).add(producer.send(new ProducerRecord<>(
                            tp.topic(), tp.partition(), null, bytes(prefix + "-" + tp + "-" + i))));
                }
            }
            producer.flush();
        }
        Map<TopicPartition, Long> first = new HashMap<>();
        for (Map.Entry<TopicPartition, List<Future<RecordMetadata>>> e : sends.entrySet()) {
            for (Future<RecordMetadata> send : e.getValue()) {
                long offset = send.get(30, TimeUnit.SECONDS).offset(); // acknowledged by every in-sync replica
                first.merge(e.getKey(), offset, Math::min);
            }
        }
        return first;
    }

    /** A committed and an aborted transaction over the partitions of orders. */
    private static void transactions(String bootstrap) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "ledger"))) {
            producer.initTransactions();
            for (String outcome : List.of("committed", "aborted")) {
                producer.beginTransaction();
                for (String value : values(outcome, TRANSACTION_RECORDS)) {
                    int partition = Integer.parseInt(value.substring(value.indexOf('-') + 1)) % 3;
                    producer.send(new ProducerRecord<>(ORDERS, partition, null, bytes(value)));
                }
                producer.flush();
                if (outcome.equals("committed")) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
        }
    }

    /**
     * Group {@code billing} joins on the old cluster as a subscribed consumer, commits {@link #COMMITTED} on every
     * partition of orders and leaves (an empty group, as the sync wants it). Returns what it committed.
     */
    private static Map<TopicPartition, Long> commitBilling(String bootstrap) {
        Map<TopicPartition, Long> offsets = ORDERS_PARTITIONS.stream()
                .collect(Collectors.toMap(tp -> tp, tp -> COMMITTED));
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap, Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, GROUP))) {
            consumer.subscribe(List.of(ORDERS));
            Waits.waitUntil(GROUP + " owns every partition of " + ORDERS, () -> {
                consumer.poll(Duration.ofMillis(100));
                return consumer.assignment().size() == ORDERS_PARTITIONS.size();
            }, Duration.ofSeconds(60));
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            offsets.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o)));
            consumer.commitSync(commit);
        }
        return offsets;
    }

    /**
     * Group {@code billing} on Twinlog after the failover, read to the end of orders: returns, per partition, where
     * it was placed when the partition was assigned, after checking that its first record was there (no skip).
     */
    private static Map<TopicPartition, Long> resumeBilling(TestCluster twinlog) {
        Map<TopicPartition, Long> resumedAt = new HashMap<>();
        Map<TopicPartition, Long> firstRead = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = twinlog.consumer(Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, GROUP))) {
            consumer.subscribe(List.of(ORDERS), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    // before any record is fetched: the position is the group's committed offset
                    partitions.forEach(tp -> resumedAt.putIfAbsent(tp, consumer.position(tp)));
                }
            });
            Waits.waitUntil(GROUP + " reads orders on Twinlog to its end", () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    firstRead.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
                }
                return consumer.assignment().size() == ORDERS_PARTITIONS.size() && consumer.assignment().stream()
                        .allMatch(tp -> consumer.position(tp) >= consumer.endOffsets(List.of(tp)).get(tp));
            }, Duration.ofSeconds(60));
        }
        assertEquals(resumedAt, firstRead, "the first record read on each partition is where the group resumed");
        return resumedAt;
    }

    /** Every record value of {@code partitions} up to their end offsets (the consumer's isolation applies). */
    private static List<String> readAll(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions) {
        List<String> out = new ArrayList<>();
        try (consumer) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            Waits.waitUntil("every record of " + partitions + " read", () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            });
        }
        return out;
    }

    private static List<String> values(String prefix, int count) {
        return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, Map<String, Object> extra) {
        Map<String, Object> configs = new HashMap<>(extra);
        configs.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        configs.put(ProducerConfig.ACKS_CONFIG, "all");
        configs.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        configs.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaProducer<>(configs);
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, Map<String, Object> extra) {
        Map<String, Object> configs = new HashMap<>(extra);
        configs.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        configs.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        configs.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        configs.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        return new KafkaConsumer<>(configs);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The quarantine's log end: how many records it holds (plain, non-transactional writes). */
    private static long quarantineEnd(TestCluster twinlog) {
        TopicPartition quarantine = new TopicPartition(Quarantined.TOPIC, 0);
        try (KafkaConsumer<byte[], byte[]> c = twinlog.consumer(Map.of())) {
            return c.endOffsets(List.of(quarantine)).get(quarantine);
        }
    }
}
