package io.twinlog.mirror.runtime;

import io.twinlog.controller.zk.MetadataWatcher;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Keeps what a mirroring truncation removes (issue 12, point 5): before a mirror partition's leader cuts its log
 * (a failback's truncation point, a recovery from a source divergence), every data record it removes is copied —
 * key, value, headers and timestamp — to the topic {@value #TOPIC} on this same cluster, with headers saying where
 * it came from. Kafka's console consumer reads it ({@code --property print.headers=true}). The topic is created on
 * first use with a 7-day retention (an operator changes it with kafka-configs like any topic's), and is never
 * mirrored. The copy is acknowledged by the in-sync replicas (acks=all, idempotent) before the cut: a copy that
 * fails stops the cut, and the partition's next pass tries again.
 */
public final class MirrorQuarantine implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorQuarantine.class);
    public static final String TOPIC = "__twinlog_quarantine";
    public static final String RETENTION_MS = Long.toString(TimeUnit.DAYS.toMillis(7));
    /** Read from the log per step; a long tail is copied a step at a time, with progress logged. */
    private static final int READ_BYTES = 1024 * 1024;
    private static final long SEND_TIMEOUT_MS = 60_000;
    private static final String HEADER_PREFIX = "twinlog.quarantine.";

    private final Supplier<Optional<Map<String, Object>>> localClients;
    private final LocalTopics topics;
    private final MetadataWatcher metadata;
    private KafkaProducer<byte[], byte[]> producer;

    /** @param localClients how this broker's clients reach its own cluster (address and security) */
    public MirrorQuarantine(Supplier<Optional<Map<String, Object>>> localClients, LocalTopics topics,
                            MetadataWatcher metadata) {
        this.localClients = localClients;
        this.topics = topics;
        this.metadata = metadata;
    }

    /** What a copy did: the data records copied and the offsets they came from. */
    public record Copied(long records, long fromOffset, long toOffset) {
    }

    /**
     * Copies the data records of {@code partition} from {@code from} to its log end into the quarantine, and waits
     * until every copy is acknowledged. Control batches (transaction markers, producer-state barriers) are skipped.
     */
    public synchronized Copied copy(String mirror, TopicPartition tp, MirrorLocalPartition partition, long from,
                                    String reason) throws IOException {
        long end = partition.logEndOffset();
        if (from >= end) {
            return new Copied(0, from, end);
        }
        ensureTopic();
        long copied = 0;
        long reported = 0;
        long offset = Math.max(from, partition.logStartOffset());
        long now = System.currentTimeMillis();
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try {
            while (offset < end) {
                Records records = partition.read(offset, READ_BYTES);
                long next = offset;
                for (RecordBatch batch : records.batches()) {
                    next = batch.nextOffset();
                    if (batch.isControlBatch() || batch.lastOffset() < from) {
                        continue;
                    }
                    for (Record r : batch) {
                        if (r.offset() < from || r.offset() >= end) {
                            continue;
                        }
                        ProducerRecord<byte[], byte[]> copy = new ProducerRecord<>(TOPIC, null, r.timestamp(),
                                r.hasKey() ? Utils.toArray(r.key()) : null,
                                r.hasValue() ? Utils.toArray(r.value()) : null);
                        addHeaders(copy.headers(), mirror, tp, r, batch, reason, now);
                        sent.add(producer().send(copy));
                        copied++;
                    }
                }
                // each step acknowledged before the next is read: memory stays bounded by one step
                for (Future<RecordMetadata> f : sent) {
                    f.get(SEND_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                }
                sent.clear();
                if (next <= offset) {
                    break; // nothing more could be read
                }
                offset = next;
                if (offset < end && copied - reported >= 100_000) {
                    reported = copied;
                    log.info("[Mirror {} {}] quarantining the records a truncation removes: {} copied, at offset {} "
                            + "of {}-{}", mirror, tp, copied, offset, from, end - 1);
                }
            }
        } catch (ExecutionException e) {
            throw new IOException("Could not copy the records of " + tp + " from offset " + from + " to the "
                    + "quarantine topic " + TOPIC + "; the truncation waits: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("Copying the records of " + tp + " to the quarantine topic " + TOPIC + " timed out "
                    + "after " + SEND_TIMEOUT_MS + " ms; the truncation waits", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while copying records to the quarantine", e);
        }
        if (copied > 0) {
            log.info("[Mirror {} {}] quarantined {} records of offsets {}-{} in {} before cutting them ({})", mirror,
                    tp, copied, from, end - 1, TOPIC, reason);
        }
        return new Copied(copied, from, end);
    }

    /** The record's own headers, then where it came from and why it was quarantined. */
    private static void addHeaders(Headers h, String mirror, TopicPartition tp, Record r, RecordBatch batch,
                                   String reason, long now) {
        for (Header header : r.headers()) {
            h.add(header);
        }
        add(h, "topic", tp.topic());
        add(h, "partition", Integer.toString(tp.partition()));
        add(h, "offset", Long.toString(r.offset()));
        add(h, "leader.epoch", Integer.toString(batch.partitionLeaderEpoch()));
        add(h, "producer.id", Long.toString(batch.producerId()));
        add(h, "mirror", mirror);
        add(h, "reason", reason);
        add(h, "time", Instant.ofEpochMilli(now).toString());
    }

    private static void add(Headers h, String key, String value) {
        h.add(HEADER_PREFIX + key, value.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean existsAlready(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TopicExistsException) {
                return true;
            }
        }
        return false;
    }

    private void ensureTopic() throws IOException {
        if (metadata.image().topic(TOPIC).isPresent()) {
            return;
        }
        try {
            topics.createMirrorTopic(TOPIC, Uuid.randomUuid(), 1, Map.of("retention.ms", RETENTION_MS,
                    "cleanup.policy", "delete"));
            log.info("Created the quarantine topic {} (retention {} ms): records a mirroring truncation removes are "
                    + "copied there first", TOPIC, RETENTION_MS);
        } catch (Exception e) { // broad: rethrown as the copy's failure unless the topic is there after all
            if (metadata.image().topic(TOPIC).isEmpty() && !existsAlready(e)) {
                throw new IOException("Could not create the quarantine topic " + TOPIC + ": " + e, e);
            }
            // another partition's copy, another broker or a client's auto-creation made it first (this broker's
            // image may not show it yet): it is there, which is all we need
            log.info("The quarantine topic {} was created meanwhile by another broker or client ({})", TOPIC,
                    e.toString());
        }
    }

    private KafkaProducer<byte[], byte[]> producer() throws IOException {
        if (producer == null) {
            Map<String, Object> configs = new HashMap<>(localClients.get().orElseThrow(() -> new IOException(
                    "this cluster's address is not known yet: cannot write the quarantine")));
            configs.put(ProducerConfig.ACKS_CONFIG, "all");
            configs.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            configs.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            configs.put(ProducerConfig.CLIENT_ID_CONFIG, "twinlog-quarantine");
            configs.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, SEND_TIMEOUT_MS);
            configs.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) SEND_TIMEOUT_MS);
            producer = new KafkaProducer<>(configs, new ByteArraySerializer(), new ByteArraySerializer());
        }
        return producer;
    }

    @Override
    public synchronized void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
            producer = null;
        }
    }
}
