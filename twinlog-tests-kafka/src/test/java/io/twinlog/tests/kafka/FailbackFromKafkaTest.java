package io.twinlog.tests.kafka;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failback onto an Apache Kafka 4.4 peer (issue 12, point 7): a Twinlog cluster mirrored a topic from Kafka, failed
 * over and took writes of its own while Kafka took more too; started again, it follows Kafka. Kafka does not serve
 * LastMirroredEpochs, so the truncation point is 0: every replica's log is cut to 0 (everything kept in the
 * quarantine first), re-mirrored, and ends identical to Kafka's batch for batch, which {@code --verify} confirms.
 */
@Timeout(300)
class FailbackFromKafkaTest {
    private static final String TOPIC = "orders";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aFailedOverTopicStartedAgainFromKafkaIsCutToZeroAndMirroredIdentical() throws Exception {
        try (KafkaClusterTestKit kafka = ApacheKafka.startSingleBroker();
             TestCluster twinlog = TestCluster.builder().brokers(3)
                     .brokerProperty("default.replication.factor", "3").build().start();
             MirrorAdmin mirrors = MirrorAdmin.create(twinlog.bootstrapServers(), Duration.ofSeconds(60))) {
            String kafkaBootstrap = kafka.bootstrapServers();
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafkaBootstrap))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            }
            produce(kafkaBootstrap, "k", 50);
            mirrors.createClusterMirror("from-kafka", Map.of("bootstrap.servers", kafkaBootstrap));
            assertEquals(Map.of(), mirrors.startMirrorTopics("from-kafka", List.of(TOPIC), List.of(), List.of()));
            Waits.waitUntil("every Twinlog replica holds Kafka's 50 records", () -> allAt(twinlog, 50));

            MirrorSteps.failOver(mirrors, "from-kafka", TOPIC);
            produce(twinlog.bootstrapServers(), "t", 10); // offsets 51..60: 50 is the producer-state barrier
            produce(kafkaBootstrap, "k2", 10); // Kafka goes on too: offsets 50..59

            assertEquals(Map.of(), mirrors.startMirrorTopics("from-kafka", List.of(TOPIC), List.of(), List.of()),
                    "the operator follows Kafka again");
            Waits.waitUntil("every Twinlog replica holds Kafka's 60 offsets, mirroring", () -> allAt(twinlog, 60)
                    && partition(mirrors).state().equals("MIRRORING"), Duration.ofSeconds(90));
            List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(twinlog, TP, List.of(0, 1, 2));
            assertTrue(log.stream().flatMap(b -> b.values().stream()).noneMatch(v -> v != null && v.startsWith("t-")),
                    "none of Twinlog's own records is left: " + log);
            assertEquals(61, partition(mirrors).truncatedOffsets(), "cut to 0: 50 mirrored, the barrier, 10 own");

            StringWriter out = new StringWriter();
            int status = MirrorsCommand.newCommandLine().setOut(new PrintWriter(out, true)).execute(
                    "--bootstrap-server", twinlog.bootstrapServers(), "--verify", "--mirror", "from-kafka", "--full");
            assertEquals(0, status, out.toString());
            assertTrue(out.toString().contains(TOPIC + " 0 identical up to 60"), out.toString());

            List<Quarantined> kept = Quarantined.read(twinlog, 60);
            assertEquals(60, kept.stream().filter(q -> "from-kafka".equals(q.headers().get("twinlog.quarantine.mirror")))
                    .count(), "every data record cut was kept first");
            assertEquals(10, kept.stream().filter(q -> q.value().startsWith("t-")).count());
        }
    }

    private static boolean allAt(TestCluster twinlog, long end) {
        Map<Integer, Long> ends = ReplicaLogs.logEndOffsets(twinlog, TP);
        return ends.size() == 3 && ends.values().stream().allMatch(e -> e == end);
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin mirrors) throws Exception {
        return mirrors.describeClusterMirrors(List.of("from-kafka")).get("from-kafka").topics().get(TOPIC)
                .partitions().get(0);
    }

    private static void produce(String bootstrap, String prefix, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }
}
