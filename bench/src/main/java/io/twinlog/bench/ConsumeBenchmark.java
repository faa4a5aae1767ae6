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
import java.util.OptionalDouble;
import java.util.stream.IntStream;

/**
 * Reads a topic that is no longer written with one {@link KafkaConsumer} using {@code assign()} (no consumer group)
 * for the warm-up and the measured interval of a {@link SteadyWindow}: from the beginning to the end offsets, then
 * from the beginning again, as long as the window lasts. Throughput: records and value bytes returned by
 * {@code poll()} inside the measured interval, divided by its length; CPU: the system's over the interval. The
 * topic is smaller than the machine's memory, so the passes after the first read from the page cache, as a
 * consumer that keeps up with its producers does.
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

    Measured run(String topic, int partitions, SteadyWindow window) {
        List<TopicPartition> assignment = IntStream.range(0, partitions)
                .mapToObj(p -> new TopicPartition(topic, p)).toList();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                ClientSettings.consumer(bootstrapServers, security))) {
            Map<TopicPartition, Long> endOffsets = consumer.endOffsets(assignment, Duration.ofSeconds(30));
            if (endOffsets.values().stream().mapToLong(Long::longValue).sum() == 0) {
                throw new IllegalStateException("Topic " + topic + " is empty");
            }
            long records = 0;
            long valueBytes = 0;
            int passes = 0;
            SystemCpu.Snapshot cpuBefore = null;
            consumer.assign(assignment);
            consumer.seekToBeginning(assignment);
            SteadyWindow.Bounds bounds = window.from(System.nanoTime());
            long lastProgressNanos = System.nanoTime();
            long now = lastProgressNanos;
            while (now < bounds.endNanos()) {
                if (cpuBefore == null && now >= bounds.beginNanos()) {
                    cpuBefore = SystemCpu.snapshot();
                }
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(POLL_TIMEOUT);
                now = System.nanoTime();
                if (batch.isEmpty()) {
                    if (now - lastProgressNanos > stallTimeout.toNanos()) {
                        throw new IllegalStateException("No records from " + topic + " for "
                                + stallTimeout.toSeconds() + " s; end offsets " + endOffsets);
                    }
                } else {
                    lastProgressNanos = now;
                    if (bounds.contains(now)) {
                        for (ConsumerRecord<byte[], byte[]> record : batch) {
                            records++;
                            valueBytes += record.serializedValueSize();
                        }
                    }
                }
                if (atEnd(consumer, endOffsets)) {
                    passes++;
                    consumer.seekToBeginning(assignment);
                }
            }
            SystemCpu.Snapshot cpuAfter = SystemCpu.snapshot();
            if (cpuBefore == null) {
                throw new IllegalStateException("The measured interval of " + topic + " never began");
            }
            Measured result = new Measured(new Throughput(records, valueBytes, bounds.lengthNanos()),
                    OptionalDouble.of(cpuAfter.systemSecondsSince(cpuBefore)));
            log.info("Consumed {} for {} s after {} s of warm-up ({} full passes): {} records/s, {} MiB/s, {} "
                            + "system CPU-s", topic, window.measured().toSeconds(), window.warmUp().toSeconds(), passes,
                    String.format("%.0f", result.throughput().recordsPerSecond()),
                    String.format("%.1f", result.throughput().mebibytesPerSecond()),
                    String.format("%.1f", result.systemCpuSeconds().getAsDouble()));
            return result;
        }
    }

    /** Whether every partition's position reached its end offset (positions are known locally after a poll). */
    private static boolean atEnd(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> endOffsets) {
        for (Map.Entry<TopicPartition, Long> e : endOffsets.entrySet()) {
            if (consumer.position(e.getKey(), Duration.ofSeconds(30)) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    record Measured(Throughput throughput, OptionalDouble systemCpuSeconds) {
    }
}
