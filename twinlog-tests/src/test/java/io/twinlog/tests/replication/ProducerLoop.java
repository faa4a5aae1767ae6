package io.twinlog.tests.replication;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A producer writing numbered records ({@code prefix-0}, {@code prefix-1}, ...) to one partition on its own thread
 * while a test breaks the cluster, remembering what the cluster acknowledged: the offset of every acked record and
 * every failed send. A bounded number of sends is in flight, so a stalled cluster stalls the loop instead of
 * queueing without limit.
 */
final class ProducerLoop implements AutoCloseable {
    private static final int MAX_IN_FLIGHT_SENDS = 100;

    private final KafkaProducer<byte[], byte[]> producer;
    private final TopicPartition tp;
    private final String prefix;
    private final NavigableMap<Long, String> acked = new ConcurrentSkipListMap<>();
    private final List<Exception> errors = new CopyOnWriteArrayList<>();
    private final Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT_SENDS);
    private final AtomicLong sent = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    ProducerLoop(TestCluster cluster, TopicPartition tp, String prefix, Map<String, Object> producerConfig) {
        this(cluster.producer(producerConfig), tp, prefix);
    }

    /** With a producer of the caller's (brokers in other processes); closed with the loop. */
    ProducerLoop(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, String prefix) {
        this.producer = producer;
        this.tp = tp;
        this.prefix = prefix;
        this.thread = new Thread(this::run, "producer-loop-" + prefix);
        this.thread.setDaemon(true);
    }

    ProducerLoop start() {
        thread.start();
        return this;
    }

    private void run() {
        while (running) {
            try {
                if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
            } catch (InterruptedException e) {
                return;
            }
            String value = prefix + "-" + sent.getAndIncrement();
            try {
                producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null,
                        value.getBytes(StandardCharsets.UTF_8)), (metadata, exception) -> {
                            if (exception == null) {
                                String previous = acked.put(metadata.offset(), value);
                                if (previous != null) {
                                    errors.add(new IllegalStateException("offset " + metadata.offset()
                                            + " acknowledged twice: " + previous + " and " + value));
                                }
                            } else {
                                errors.add(exception);
                            }
                            inFlight.release();
                        });
            } catch (RuntimeException e) {
                errors.add(e);
                inFlight.release();
            }
        }
    }

    /** Waits until {@code more} further records than now have been acknowledged. */
    void awaitMoreAcked(int more, Duration timeout) {
        int target = acked.size() + more;
        Waits.waitFor(more + " more acknowledged records of " + prefix + " (errors " + errors.size() + ": "
                + (errors.isEmpty() ? "" : errors.get(errors.size() - 1)) + ")", acked::size, n -> n >= target, timeout);
    }

    /** Stops sending and waits for every send to complete (acked or failed). */
    void stop() {
        running = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.flush();
    }

    NavigableMap<Long, String> acked() {
        return acked;
    }

    List<Exception> errors() {
        return errors;
    }

    long sent() {
        return sent.get();
    }

    @Override
    public void close() {
        running = false;
        producer.close(Duration.ofSeconds(10));
    }
}
