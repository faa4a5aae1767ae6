package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One StartMirrorTopics of many topics (decision 94: the source is read in two requests, the desired states are
 * written a few at a time and the mirror topics created and awaited together): every topic gets its own answer, the
 * refused ones with their own error, and every started topic mirrors with the source's topic ID and partitions.
 */
@Timeout(180)
class MirrorStartManyTopicsTest {
    private static final int TOPICS = 30;
    private static final int PARTITIONS = 2;
    private static final int RECORDS_PER_PARTITION = 5;

    @Test
    void oneStartOfManyTopicsAnswersEachAndMirrorsTheStartedOnes() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(3).brokerProperty("default.replication.factor", "3"))) {
            TestCluster source = clusters.source();
            Admin destAdmin = clusters.destinationAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            List<NewTopic> topics = new ArrayList<>();
            for (int i = 0; i < TOPICS; i++) {
                topics.add(new NewTopic(topic(i), PARTITIONS, (short) 1));
            }
            topics.add(new NewTopic("held", 1, (short) 1));
            topics.add(new NewTopic("clash", 1, (short) 1));
            clusters.createSourceTopics(topics.toArray(NewTopic[]::new));
            produce(source);
            // a destination topic of the same name but another topic ID, and a topic another mirror mirrors
            destAdmin.createTopics(List.of(new NewTopic("clash", 1, (short) 3))).all().get();
            clusters.createMirror("m", Map.of());
            clusters.createMirror("other", Map.of());
            assertEquals(Map.of(), mirrors.startMirrorTopics("other", List.of("held"), List.of(), List.of()));

            Map<String, MirrorException> refused = mirrors.startMirrorTopics("m",
                    List.of("__consumer_offsets", "no-such-topic", "held", "clash"), List.of("many-.*"), List.of());
            Map<String, Short> codes = new TreeMap<>();
            refused.forEach((topic, e) -> codes.put(topic, e.errorCode()));
            assertEquals(Map.of(
                    "__consumer_offsets", Errors.INVALID_TOPIC_EXCEPTION.code(),
                    "no-such-topic", Errors.UNKNOWN_TOPIC_OR_PARTITION.code(),
                    "held", MirrorErrors.TOPIC_ALREADY_IN_CLUSTER_MIRROR.code,
                    "clash", Errors.INCONSISTENT_TOPIC_ID.code()), codes,
                    "each refused topic has its own error, the others started: " + refused);

            List<String> started = new ArrayList<>();
            for (int i = 0; i < TOPICS; i++) {
                started.add(topic(i));
            }
            Map<String, TopicDescription> sourceTopics = clusters.sourceAdmin().describeTopics(started).allTopicNames()
                    .get();
            Map<String, TopicDescription> mirrorTopics = destAdmin.describeTopics(started).allTopicNames().get();
            for (String t : started) {
                assertEquals(sourceTopics.get(t).topicId(), mirrorTopics.get(t).topicId(), t + " keeps its topic ID");
                assertEquals(PARTITIONS, mirrorTopics.get(t).partitions().size(), t + " has the source's partitions");
                assertEquals(3, mirrorTopics.get(t).partitions().get(0).replicas().size(),
                        t + " has this cluster's replication factor");
            }
            Waits.waitUntil("every started partition MIRRORING", () -> mirroring(mirrors) == TOPICS * PARTITIONS);
            for (String t : started) {
                for (int p = 0; p < PARTITIONS; p++) {
                    clusters.awaitMirrored(new TopicPartition(t, p));
                }
            }

            // the same start again: the started topics are already mirrored, the refused ones refused again
            Map<String, MirrorException> again = mirrors.startMirrorTopics("m",
                    List.of("__consumer_offsets", "no-such-topic", "held", "clash"), List.of("many-.*"), List.of());
            assertEquals(codes.keySet(), new TreeMap<>(again).keySet());
            assertEquals(TOPICS * PARTITIONS, mirroring(mirrors));
        }
    }

    private static String topic(int i) {
        return String.format("many-%02d", i);
    }

    private static long mirroring(MirrorAdmin mirrors) throws Exception {
        return mirrors.describeClusterMirrors(List.of("m")).get("m").topics().values().stream()
                .flatMap(t -> t.partitions().stream()).filter(p -> p.state().equals("MIRRORING")).count();
    }

    private static void produce(TestCluster cluster) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < TOPICS; i++) {
                for (int partition = 0; partition < PARTITIONS; partition++) {
                    for (int r = 0; r < RECORDS_PER_PARTITION; r++) {
                        p.send(new ProducerRecord<>(topic(i), partition, null,
                                (topic(i) + "-" + partition + "-" + r).getBytes(StandardCharsets.UTF_8)));
                    }
                }
            }
            p.flush();
        }
    }
}
