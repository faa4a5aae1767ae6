package io.twinlog.bench;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Sends {@code records} values without keys (so the sticky partitioner spreads batches over all partitions) as
 * fast as the producer accepts them, then flushes.
 *
 * <p>Throughput: records and value bytes divided by the time from the first {@code send()} until {@code flush()}
 * returns, i.e. until every record is acknowledged. Latency of a record: from just before its {@code send()} call
 * (so time blocked on a full {@code buffer.memory} counts) until its callback runs. With an unthrottled producer
 * this latency is mostly time queued in the client, so it shows how fast the broker drains a full pipeline, not
 * the latency of an idle system.
 */
final class ProduceBenchmark {
    private static final Logger log = LoggerFactory.getLogger(ProduceBenchmark.class);

    private final String bootstrapServers;
    private final Payloads payloads;
    private final Map<String, Object> security;

    ProduceBenchmark(String bootstrapServers, Payloads payloads) {
        this(bootstrapServers, payloads, Map.of());
    }

    /** @param security the system's client TLS and SASL settings (empty for PLAINTEXT) */
    ProduceBenchmark(String bootstrapServers, Payloads payloads, Map<String, Object> security) {
        this.bootstrapServers = bootstrapServers;
        this.payloads = payloads;
        this.security = security;
    }

    Result run(String topic, Acks acks, int records) {
        LatencyRecorder latencies = new LatencyRecorder(records);
        AtomicReference<Exception> firstError = new AtomicReference<>();
        AtomicLong failed = new AtomicLong();
        long valueBytes = 0;
        long elapsedNanos;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                ClientSettings.producer(bootstrapServers, acks, security))) {
            // Load the topic's metadata (and, with idempotence, a producer ID) before the clock starts.
            producer.partitionsFor(topic);
            long startNanos = System.nanoTime();
            for (int i = 0; i < records; i++) {
                byte[] value = payloads.get(i);
                valueBytes += value.length;
                long sendNanos = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, value), (metadata, exception) -> {
                    if (exception != null) {
                        failed.incrementAndGet();
                        firstError.compareAndSet(null, exception);
                    } else {
                        latencies.record(System.nanoTime() - sendNanos);
                    }
                });
            }
            producer.flush();
            elapsedNanos = System.nanoTime() - startNanos;
        }
        if (firstError.get() != null) {
            throw new IllegalStateException(failed.get() + " of " + records + " sends to " + topic + " (acks="
                    + acks.config() + ") failed; the first error", firstError.get());
        }
        Result result = new Result(new Throughput(records, valueBytes, elapsedNanos), latencies.summary());
        log.info("Produced {} records to {} (acks={}) in {} s: {} records/s, {} MiB/s, p50 {} ms, p99 {} ms",
                records, topic, acks.config(), String.format("%.2f", result.throughput().seconds()),
                String.format("%.0f", result.throughput().recordsPerSecond()),
                String.format("%.1f", result.throughput().mebibytesPerSecond()),
                String.format("%.1f", result.latency().p50Ms()), String.format("%.1f", result.latency().p99Ms()));
        return result;
    }

    record Result(Throughput throughput, LatencyRecorder.LatencySummary latency) {
    }
}
