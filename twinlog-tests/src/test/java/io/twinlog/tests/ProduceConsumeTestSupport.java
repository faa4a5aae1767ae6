package io.twinlog.tests;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** Small produce/consume helpers shared by tests that need data, not a produce test. */
final class ProduceConsumeTestSupport {
    private ProduceConsumeTestSupport() {
    }

    static void produce(TestCluster cluster, String topic, int count) throws Exception {
        produceTo(cluster, topic, 0, count);
    }

    static void produceTo(TestCluster cluster, String topic, int partition, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of())) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, partition, null, ("v" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
    }

    static long endOffset(TestCluster cluster, String topic, int partition) {
        TopicPartition tp = new TopicPartition(topic, partition);
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            return c.endOffsets(List.of(tp)).get(tp);
        }
    }
}
