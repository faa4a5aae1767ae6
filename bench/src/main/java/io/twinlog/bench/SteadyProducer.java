package io.twinlog.bench;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The failover benchmark's producer: sends one record every 1/{@value FailoverBenchmark#RATE_PER_SECOND} s from its
 * own thread ({@code acks=all}, idempotent) and keeps score of the acknowledgements around the stop of the leader:
 * the longest gap after it, and the offsets acknowledged before and after it.
 */
final class SteadyProducer implements AutoCloseable {
    private static final int MAX_ACKS_KEPT = 200_000;

    private final KafkaProducer<byte[], byte[]> producer;
    private final String topic;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long stopNanos = Long.MAX_VALUE;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicReference<Exception> firstError = new AtomicReference<>();
    private final Object ackLock = new Object();
    private long lastAckNanos;
    private long lastAckedSendNanos;
    private long maxGapAfterStopNanos;
    private long maxGapStartNanos;
    private long lastOffsetAckedBeforeStop = -1;
    private final List<long[]> acksAfterStop = new ArrayList<>();

    SteadyProducer(String bootstrapServers, String topic, Payloads payloads) {
        this.producer = new KafkaProducer<>(ClientSettings.producer(bootstrapServers, Acks.ALL));
        this.topic = topic;
        this.thread = new Thread(() -> sendLoop(payloads), "failover-producer");
        this.thread.setDaemon(true);
    }

    void start() {
        producer.partitionsFor(topic);
        thread.start();
    }

    private void sendLoop(Payloads payloads) {
        long intervalNanos = 1_000_000_000L / FailoverBenchmark.RATE_PER_SECOND;
        long start = System.nanoTime();
        long i = 0;
        while (running) {
            long wait = start + i * intervalNanos - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
                continue;
            }
            long sendNanos = System.nanoTime();
            try {
                producer.send(new ProducerRecord<>(topic, payloads.get(i)), (metadata, exception) -> {
                    if (exception != null) {
                        failed.incrementAndGet();
                        firstError.compareAndSet(null, exception);
                    } else {
                        acknowledged(sendNanos, metadata.offset(), System.nanoTime());
                    }
                });
                sent.incrementAndGet();
            } catch (RuntimeException e) {
                // broad: a send the producer refuses is counted; the first one is reported at the end
                failed.incrementAndGet();
                firstError.compareAndSet(null, e);
            }
            // Skip the slots missed while send() blocked rather than bursting to catch up.
            i = Math.max(i + 1, (System.nanoTime() - start) / intervalNanos);
        }
    }

    private void acknowledged(long sendNanos, long offset, long nowNanos) {
        acked.incrementAndGet();
        synchronized (ackLock) {
            if (nowNanos >= stopNanos) {
                if (lastAckNanos != 0) {
                    if (nowNanos - lastAckNanos > maxGapAfterStopNanos) {
                        maxGapAfterStopNanos = nowNanos - lastAckNanos;
                        maxGapStartNanos = lastAckNanos;
                    }
                }
                if (acksAfterStop.size() < MAX_ACKS_KEPT) {
                    acksAfterStop.add(new long[] {nowNanos, offset});
                }
            } else {
                lastOffsetAckedBeforeStop = Math.max(lastOffsetAckedBeforeStop, offset);
            }
            lastAckNanos = nowNanos;
            lastAckedSendNanos = Math.max(lastAckedSendNanos, sendNanos);
        }
    }

    void markStop(long nanos) {
        stopNanos = nanos;
    }

    long acked() {
        return acked.get();
    }

    long sent() {
        return sent.get();
    }

    long failed() {
        return failed.get();
    }

    Exception firstError() {
        return firstError.get();
    }

    /** When the most recently sent record that has been acknowledged was sent. */
    long lastAckedSendNanos() {
        synchronized (ackLock) {
            return lastAckedSendNanos;
        }
    }

    long maxGapAfterStopNanos() {
        synchronized (ackLock) {
            return maxGapAfterStopNanos;
        }
    }

    long maxGapStartNanos() {
        synchronized (ackLock) {
            return maxGapStartNanos;
        }
    }

    long lastOffsetAckedBeforeStop() {
        synchronized (ackLock) {
            return lastOffsetAckedBeforeStop;
        }
    }

    /** (arrival nanos, offset) of every acknowledgement after the stop began, in arrival order. */
    long[][] acksAfterStop() {
        synchronized (ackLock) {
            return acksAfterStop.toArray(long[][]::new);
        }
    }

    String describe() {
        return sent.get() + " sent, " + acked.get() + " acked, " + failed.get() + " failed"
                + (firstError.get() == null ? "" : ", first error " + firstError.get());
    }

    /** Stops sending and waits (up to 15 s) for what is in flight; unsent records then fail. */
    void stopSending() throws InterruptedException {
        running = false;
        thread.join(5_000);
        producer.close(Duration.ofSeconds(15));
    }

    @Override
    public void close() throws InterruptedException {
        if (running) {
            stopSending();
        }
    }
}
