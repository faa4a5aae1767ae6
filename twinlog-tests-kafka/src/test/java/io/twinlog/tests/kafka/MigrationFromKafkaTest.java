package io.twinlog.tests.kafka;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Migration: an unmodified Apache Kafka 4.4 cluster as the source of a Twinlog mirror. Idempotent and
 * transactional (committed, aborted, and one left open) records are mirrored batch for batch with the same offsets,
 * epochs and CRCs; read_committed consumers on Twinlog see what they would on Kafka; failover with the source down
 * aborts the open transaction so read_committed readers move past it.
 */
@Timeout(300)
class MigrationFromKafkaTest {
    private static final TopicPartition TP = new TopicPartition("payments", 0);

    @Test
    void kafkaTopicMigratesWithOffsetsEpochsAndTransactions() throws Exception {
        KafkaClusterTestKit kafka = ApacheKafka.startSingleBroker();
        boolean kafkaClosed = false;
        try {
            String kafkaBootstrap = kafka.bootstrapServers();
            Uuid topicId;
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafkaBootstrap))) {
                admin.createTopics(List.of(new NewTopic("payments", 1, (short) 1))).all().get();
                // Kafka answers CreateTopics once its controller committed the topic; its broker may not know it
                // yet (UNKNOWN_TOPIC_OR_PARTITION for a moment: a CI run of 2026-12-06)
                topicId = Waits.waitFor("payments known to Kafka's broker", () -> admin.describeTopics(
                        List.of("payments")).allTopicNames().get().get("payments").topicId(), id -> id != null);
            }
            produceOnKafka(kafkaBootstrap);
            KafkaProducer<byte[], byte[]> open = transactional(kafkaBootstrap, "left-open");
            open.initTransactions();
            open.beginTransaction();
            open.send(new ProducerRecord<>("payments", 0, null, bytes("never-committed"))).get();
            open.flush();

            try (TestCluster twinlog = TestCluster.builder().brokers(1).build().start();
                 MirrorAdmin mirrors = MirrorAdmin.create(twinlog.bootstrapServers(), Duration.ofSeconds(60))) {
                mirrors.createClusterMirror("migration", Map.of("bootstrap.servers", kafkaBootstrap));
                assertEquals(Map.of(), mirrors.startMirrorTopics("migration", List.of("payments"), List.of(), List.of()));
                long kafkaHw = kafkaHighWatermark(kafkaBootstrap);
                Waits.waitUntil("everything below Kafka's high watermark mirrored", () -> twinlog.broker(0).logStore()
                        .log(TP).map(l -> l.logEndOffset() == kafkaHw).orElse(false));
                try (Admin admin = twinlog.admin()) {
                    assertEquals(topicId, admin.describeTopics(List.of("payments")).allTopicNames().get()
                            .get("payments").topicId());
                }
                // --verify against Apache Kafka: ordinary Fetch requests of single batches on both sides
                StringWriter verifyOut = new StringWriter();
                int status = MirrorsCommand.newCommandLine().setOut(new PrintWriter(verifyOut, true))
                        .execute("--bootstrap-server", twinlog.bootstrapServers(), "--verify", "--mirror", "migration");
                assertEquals(0, status, verifyOut.toString());
                assertEquals("payments 0 identical up to " + kafkaHw, verifyOut.toString().trim());
                List<ReplicaLogs.Batch> mirrored = ReplicaLogs.read(twinlog.broker(0), TP);
                assertTrue(mirrored.stream().anyMatch(ReplicaLogs.Batch::transactional), "transactional batches");
                assertTrue(mirrored.stream().anyMatch(ReplicaLogs.Batch::control), "commit/abort markers");
                assertTrue(mirrored.stream().allMatch(b -> b.producerId() >= 0 || b.producerId() == RecordBatch.NO_PRODUCER_ID));
                List<String> kafkaSide = readCommitted(kafkaBootstrap);
                assertEquals(kafkaSide, readCommitted(twinlog.bootstrapServers()),
                        "read_committed on Twinlog sees exactly what it sees on Kafka");
                assertTrue(kafkaSide.contains("committed-1") && !kafkaSide.contains("aborted-1")
                        && !kafkaSide.contains("never-committed"));
                // kafka-transactions.sh describe-producers: the mirror knows the producers, and the open
                // transaction, as the source does (the same state, rebuilt from the same batches)
                List<ProducerState> kafkaProducers = activeProducers(kafkaBootstrap);
                assertEquals(Set.copyOf(kafkaProducers), Set.copyOf(activeProducers(twinlog.bootstrapServers())));
                assertEquals(1, kafkaProducers.stream().filter(p -> p.currentTransactionStartOffset().isPresent())
                        .count(), "the transaction left open: " + kafkaProducers);
                // its markers are the source's to write: an abort sent to the mirror is refused and changes nothing
                ProducerState openOne = kafkaProducers.stream().filter(p -> p.currentTransactionStartOffset()
                        .isPresent()).findFirst().orElseThrow();
                assertEquals(Errors.POLICY_VIOLATION, abortOn(twinlog.bootstrapServers(), openOne));
                assertEquals(Set.copyOf(kafkaProducers), Set.copyOf(activeProducers(twinlog.bootstrapServers())));

                // the disaster: Kafka is gone with a transaction open; fail over
                open.close(Duration.ZERO);
                kafka.close();
                kafkaClosed = true;
                assertEquals(Map.of(), mirrors.stopMirrorTopics("migration", List.of("payments"), List.of()));
                var log = twinlog.broker(0).logStore().log(TP).orElseThrow();
                Waits.waitUntil("the open transaction aborted: the last stable offset reaches the log end",
                        () -> log.lastStableOffset() == log.logEndOffset());
                try (KafkaProducer<byte[], byte[]> p = twinlog.producer(Map.of())) {
                    long offset = p.send(new ProducerRecord<>("payments", 0, null, bytes("after-failover"))).get().offset();
                    assertEquals(log.logEndOffset() - 1, offset);
                }
                List<String> after = readCommitted(twinlog.bootstrapServers());
                assertTrue(after.contains("after-failover") && !after.contains("never-committed"), after.toString());
                assertTrue(activeProducers(twinlog.bootstrapServers()).stream()
                        .noneMatch(p -> p.currentTransactionStartOffset().isPresent()), "no transaction left open");
            }
        } finally {
            if (!kafkaClosed) {
                kafka.close();
            }
        }
    }

    /** What {@code kafka-transactions.sh abort} sends the partition's leader for {@code producer}'s transaction. */
    private static Errors abortOn(String bootstrap, ProducerState producer) throws Exception {
        WriteTxnMarkersRequestData data = new WriteTxnMarkersRequestData();
        data.markers().add(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(producer.producerId())
                .setProducerEpoch((short) producer.producerEpoch()).setTransactionResult(false)
                .setCoordinatorEpoch(producer.coordinatorEpoch().orElse(-1))
                .setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(TP.topic())
                        .setPartitionIndexes(List.of(TP.partition())))));
        try (RawKafkaConnection connection = RawKafkaConnection.to(bootstrap)) {
            WriteTxnMarkersResponse response = connection.send(new WriteTxnMarkersRequest.Builder(data).build());
            return Errors.forCode(response.data().markers().get(0).topics().get(0).partitions().get(0).errorCode());
        }
    }

    private static List<ProducerState> activeProducers(String bootstrap) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            return admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers();
        }
    }

    private static void produceOnKafka(String bootstrap) throws Exception {
        Map<String, Object> idempotent = new HashMap<>();
        idempotent.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        try (KafkaProducer<byte[], byte[]> p = producer(bootstrap, idempotent)) {
            for (int i = 0; i < 100; i++) {
                p.send(new ProducerRecord<>("payments", 0, null, bytes("idempotent-" + i)));
            }
            p.flush();
        }
        try (KafkaProducer<byte[], byte[]> t = transactional(bootstrap, "tx-1")) {
            t.initTransactions();
            t.beginTransaction();
            for (int i = 0; i < 5; i++) {
                t.send(new ProducerRecord<>("payments", 0, null, bytes("committed-" + i)));
            }
            t.commitTransaction();
            t.beginTransaction();
            for (int i = 0; i < 5; i++) {
                t.send(new ProducerRecord<>("payments", 0, null, bytes("aborted-" + i)));
            }
            t.flush();
            t.abortTransaction();
        }
    }

    private static KafkaProducer<byte[], byte[]> transactional(String bootstrap, String id) {
        Map<String, Object> cfg = new HashMap<>();
        cfg.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        return producer(bootstrap, cfg);
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, Map<String, Object> extra) {
        Map<String, Object> cfg = new HashMap<>(extra);
        cfg.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cfg.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        cfg.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaProducer<>(cfg);
    }

    private static long kafkaHighWatermark(String bootstrap) {
        try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, "read_uncommitted")) {
            return c.endOffsets(List.of(TP)).get(TP);
        }
    }

    private static List<String> readCommitted(String bootstrap) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, "read_committed")) {
            c.assign(List.of(TP));
            c.seekToBeginning(List.of(TP));
            long end = c.endOffsets(List.of(TP)).get(TP);
            long deadline = System.currentTimeMillis() + 30_000;
            while (c.position(TP) < end && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String isolation) {
        Map<String, Object> cfg = new HashMap<>();
        cfg.put("bootstrap.servers", bootstrap);
        cfg.put("isolation.level", isolation);
        cfg.put("key.deserializer", ByteArrayDeserializer.class);
        cfg.put("value.deserializer", ByteArrayDeserializer.class);
        cfg.put("enable.auto.commit", false);
        return new KafkaConsumer<>(cfg);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

}
