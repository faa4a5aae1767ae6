package io.twinlog.bench;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sends values without keys (so the sticky partitioner spreads batches over all partitions) as fast as the
 * producer accepts them for the warm-up and the measured interval of a {@link SteadyWindow}, then flushes.
 *
 * <p>Throughput: the records (and value bytes) whose acknowledgement arrived inside the measured interval, divided
 * by its length. Latency: of every record sent inside the interval, from just before its {@code send()} call (so
 * time blocked on a full {@code buffer.memory} counts) until its callback runs. With an unthrottled producer this
 * latency is mostly time queued in the client, so it shows how fast the broker drains a full pipeline, not the
 * latency of an idle system. CPU: the system's ({@link SystemCpu}) over the interval.
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

    /** Sends with acks=all for {@code duration}, nothing measured: a fresh cluster's warm-up. */
    void warmUp(String topic, Duration duration) {
        if (duration.isZero()) {
            return;
        }
        log.info("Warm-up: producing to {} for {} s", topic, duration.toSeconds());
        run(topic, Acks.ALL, new SteadyWindow(Duration.ZERO, duration));
    }

    Result run(String topic, Acks acks, SteadyWindow window) {
        LatencyHistogram latencies = new LatencyHistogram();
        AtomicReference<Exception> firstError = new AtomicReference<>();
        AtomicLong failed = new AtomicLong();
        LongAdder ackedRecords = new LongAdder();
        LongAdder ackedBytes = new LongAdder();
        long sent = 0;
        SystemCpu.Snapshot cpuBefore = null;
        ThreadCpu threadsBefore = null;
        SystemCpu.Snapshot cpuAfter;
        ThreadCpu threadsAfter;
        SteadyWindow.Bounds bounds;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                ClientSettings.producer(bootstrapServers, acks, security))) {
            // Load the topic's metadata (and, with idempotence, a producer ID) before the clock starts.
            producer.partitionsFor(topic);
            bounds = window.from(System.nanoTime());
            long now = System.nanoTime();
            while (now < bounds.endNanos() && firstError.get() == null) {
                if (cpuBefore == null && now >= bounds.beginNanos()) {
                    cpuBefore = SystemCpu.snapshot();
                    threadsBefore = ThreadCpu.snapshot();
                }
                byte[] value = payloads.get(sent++);
                long sendNanos = now;
                producer.send(new ProducerRecord<>(topic, value), (metadata, exception) -> {
                    if (exception != null) {
                        failed.incrementAndGet();
                        firstError.compareAndSet(null, exception);
                        return;
                    }
                    long ackNanos = System.nanoTime();
                    if (bounds.contains(ackNanos)) {
                        ackedRecords.increment();
                        ackedBytes.add(value.length);
                    }
                    if (bounds.contains(sendNanos)) {
                        latencies.record(ackNanos - sendNanos);
                    }
                });
                now = System.nanoTime();
            }
            cpuAfter = SystemCpu.snapshot();
            threadsAfter = ThreadCpu.snapshot();
            producer.flush();
        }
        if (firstError.get() != null) {
            throw new IllegalStateException(failed.get() + " of " + sent + " sends to " + topic + " (acks="
                    + acks.config() + ") failed; the first error", firstError.get());
        }
        if (cpuBefore == null) {
            throw new IllegalStateException("The measured interval of " + topic + " never began");
        }
        Result result = new Result(new Throughput(ackedRecords.sum(), ackedBytes.sum(), bounds.lengthNanos()),
                latencies.summary(), OptionalDouble.of(cpuAfter.systemSecondsSince(cpuBefore)));
        log.info("Produced to {} (acks={}) for {} s after {} s of warm-up: {} records/s, {} MiB/s, p50 {} ms, "
                        + "p99 {} ms, p99.9 {} ms, {} system CPU-s", topic, acks.config(),
                window.measured().toSeconds(), window.warmUp().toSeconds(),
                String.format("%.0f", result.throughput().recordsPerSecond()),
                String.format("%.1f", result.throughput().mebibytesPerSecond()),
                String.format("%.1f", result.latency().p50Ms()), String.format("%.1f", result.latency().p99Ms()),
                String.format("%.1f", result.latency().p999Ms()),
                String.format("%.1f", result.systemCpuSeconds().getAsDouble()));
        log.info("Where the cores went while producing to {}:{}", topic,
                ThreadCpu.describe(threadsAfter.coresSince(threadsBefore, bounds.lengthNanos()), 12));
        return result;
    }

    record Result(Throughput throughput, LatencyRecorder.LatencySummary latency, OptionalDouble systemCpuSeconds) {
    }
}
