package io.twinlog.tests.replication;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

@Timeout(300)
class ReplicationSmokeTest {

    @Test
    void recordsSurviveTheLeaderCrash() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("replica.lag.time.max.ms", "4000").build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("replicated", 1, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get();
            Waits.waitFor("ISR of 3", () -> describe(admin).partitions().get(0).isr().size(), n -> n == 3);
            try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("acks", "all"))) {
                for (int i = 0; i < 500; i++) {
                    p.send(new ProducerRecord<>("replicated", 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8))).get();
                }
            }
            int leader = describe(admin).partitions().get(0).leader().id();
            cluster.killBroker(leader);
            Waits.waitFor("a new leader", () -> describe(admin).partitions().get(0).leader(),
                    l -> l != null && l.id() != leader);
            try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("acks", "all"))) {
                for (int i = 500; i < 600; i++) {
                    p.send(new ProducerRecord<>("replicated", 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8))).get();
                }
            }
            List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
            TopicPartition tp = new TopicPartition("replicated", 0);
            try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long deadline = System.currentTimeMillis() + 30_000;
                while (read.size() < 600 && System.currentTimeMillis() < deadline) {
                    c.poll(Duration.ofMillis(200)).forEach(read::add);
                }
            }
            assertEquals(600, read.size());
            for (int i = 0; i < 600; i++) {
                assertEquals(i, read.get(i).offset());
                assertEquals("r" + i, new String(read.get(i).value(), StandardCharsets.UTF_8));
            }
            cluster.startBroker(leader);
            Waits.waitFor("the restarted broker back in the ISR", () -> describe(admin).partitions().get(0).isr().size(),
                    n -> n == 3);
        }
    }

    private static TopicDescription describe(Admin admin) throws Exception {
        return admin.describeTopics(List.of("replicated")).allTopicNames().get().get("replicated");
    }
}
