package io.twinlog.tests.transactions;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Writing and reading string records for the transaction tests. */
final class TransactionalRecords {
    static final Duration WAIT = Duration.ofSeconds(60);

    private TransactionalRecords() {
    }

    static ProducerRecord<byte[], byte[]> record(String topic, String value) {
        return new ProducerRecord<>(topic, null, value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Every partition of {@code topic} from the start under {@code isolation}: until {@code expected} values
     * arrived (or {@link #WAIT} passed), then half a second more, so that anything beyond them shows too.
     */
    static List<String> readAll(TestCluster cluster, String topic, String isolation, int expected) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of("isolation.level", isolation))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (values.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(new String(r.value(),
                        StandardCharsets.UTF_8)));
            }
            consumer.poll(Duration.ofMillis(500)).forEach(r -> values.add(new String(r.value(),
                    StandardCharsets.UTF_8)));
        }
        return values;
    }

    /** Whether {@code t} or one of its causes is a {@code type}. */
    static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
