package io.twinlog.bench;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Reads a topic from the beginning to its end offsets with one {@link KafkaConsumer} using {@code assign()} (no
 * consumer group). Throughput: records and value bytes divided by the time from {@code seekToBeginning} until the
 * last record has been returned by {@code poll()}.
 */
final class ConsumeBenchmark {
    private static final Logger log = LoggerFactory.getLogger(ConsumeBenchmark.class);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(200);

    private final String bootstrapServers;
    private final Duration stallTimeout;
    private final Map<String, Object> security;

    ConsumeBenchmark(String bootstrapServers, Duration stallTimeout) {
        this(bootstrapServers, stallTimeout, Map.of());
    }

    /** @param security the system's client TLS and SASL settings (empty for PLAINTEXT) */
    ConsumeBenchmark(String bootstrapServers, Duration stallTimeout, Map<String, Object> security) {
        this.bootstrapServers = bootstrapServers;
        this.stallTimeout = stallTimeout;
        this.security = security;
    }

    Throughput run(String topic, int partitions, long expectedRecords) {
        List<TopicPartition> assignment = IntStream.range(0, partitions)
                .mapToObj(p -> new TopicPartition(topic, p)).toList();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                ClientSettings.consumer(bootstrapServers, security))) {
            Map<TopicPartition, Long> endOffsets = consumer.endOffsets(assignment, Duration.ofSeconds(30));
            long totalRecords = endOffsets.values().stream().mapToLong(Long::longValue).sum();
            if (totalRecords != expectedRecords) {
                throw new IllegalStateException("Topic " + topic + " holds " + totalRecords + " records by its end "
                        + "offsets " + endOffsets + ", but " + expectedRecords + " were produced");
            }
            long records = 0;
            long valueBytes = 0;
            long startNanos = System.nanoTime();
            long lastProgressNanos = startNanos;
            consumer.assign(assignment);
            consumer.seekToBeginning(assignment);
            while (records < totalRecords) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(POLL_TIMEOUT);
                long now = System.nanoTime();
                if (batch.isEmpty()) {
                    if (now - lastProgressNanos > stallTimeout.toNanos()) {
                        throw new IllegalStateException("No records from " + topic + " for " + stallTimeout.toSeconds()
                                + " s after reading " + records + " of " + totalRecords + "; end offsets " + endOffsets);
                    }
                    continue;
                }
                lastProgressNanos = now;
                for (ConsumerRecord<byte[], byte[]> record : batch) {
                    records++;
                    valueBytes += record.serializedValueSize();
                }
            }
            Throughput result = new Throughput(records, valueBytes, System.nanoTime() - startNanos);
            log.info("Consumed {} records from {} in {} s: {} records/s, {} MiB/s", records, topic,
                    String.format("%.2f", result.seconds()), String.format("%.0f", result.recordsPerSecond()),
                    String.format("%.1f", result.mebibytesPerSecond()));
            return result;
        }
    }
}
