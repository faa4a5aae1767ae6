package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * The many topics of the {@code mirror-scale} phase ({@code scale-00000}, ...: {@code --mirror-partitions} partitions
 * in topics of {@code --mirror-topic-partitions}), the same on Twinlog's source and on Kafka's cluster.
 */
final class ScaleTopics {
    static final String PATTERN = "scale-.*";
    private static final int TOPICS_PER_CREATE = 50;
    private static final long POLL_MS = 50;
    private static final long TIMEOUT_MS = 600_000;
    private static final int SCALE_BATCH_SIZE_BYTES = 16_384;
    private static final long SCALE_BUFFER_MEMORY_BYTES = 256L << 20;

    private final BenchOptions options;
    private final Payloads payloads;

    ScaleTopics(BenchOptions options, Payloads payloads) {
        this.options = options;
        this.payloads = payloads;
    }

    int partitions() {
        return options.mirrorPartitions();
    }

    int count() {
        return options.mirrorPartitions() / options.mirrorTopicPartitions();
    }

    static String name(int i) {
        return String.format("scale-%05d", i);
    }

    List<String> names() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count(); i++) {
            names.add(name(i));
        }
        return names;
    }

    /** Creates every topic, with the phase's replication factor, a few CreateTopics at a time. */
    void create(Admin admin) throws Exception {
        List<NewTopic> newTopics = new ArrayList<>();
        for (String name : names()) {
            newTopics.add(new NewTopic(name, options.mirrorTopicPartitions(),
                    (short) options.mirrorReplicationFactor()));
        }
        // in batches, so that one CreateTopics does not outlast its timeout
        for (int from = 0; from < newTopics.size(); from += TOPICS_PER_CREATE) {
            admin.createTopics(newTopics.subList(from, Math.min(newTopics.size(), from + TOPICS_PER_CREATE))).all()
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }

    /** Every partition of the topics, as DescribeTopics shows it. */
    Map<TopicPartition, TopicPartitionInfo> describe(Admin admin) throws Exception {
        Map<TopicPartition, TopicPartitionInfo> out = new HashMap<>();
        Map<String, TopicDescription> described = admin.describeTopics(names()).allTopicNames()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        described.forEach((name, d) -> d.partitions().forEach(p ->
                out.put(new TopicPartition(name, p.partition()), p)));
        return out;
    }

    /** Polls DescribeTopics until every partition passes {@code check}. */
    void awaitPartitions(Admin admin, String what, Predicate<TopicPartitionInfo> check) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        String last = "nothing yet";
        Throwable lastError = null;
        while (System.currentTimeMillis() < deadline) {
            try {
                long holding = describe(admin).values().stream().filter(check).count();
                if (holding == partitions()) {
                    return;
                }
                last = holding + " of " + partitions();
                lastError = null;
            } catch (ExecutionException e) {
                last = e.getCause().toString();   // a topic not in every broker's metadata yet: polled again
                lastError = e.getCause();
            }
            Thread.sleep(POLL_MS);
        }
        throw new IllegalStateException("Timed out waiting for " + what + ": " + last, lastError);
    }

    /**
     * Produces {@code count} records round-robin over all partitions, paced to {@code recordsPerSecond} (0: as fast
     * as the producer goes).
     */
    void produce(String bootstrap, long count, int recordsPerSecond) throws InterruptedException {
        AtomicReference<Exception> error = new AtomicReference<>();
        Properties settings = ClientSettings.producer(bootstrap, Acks.ONE);
        // a record per partition in turn: a batch rarely holds more than one, and at the benchmark's 128 KiB per
        // batch 32 MiB of buffer would hold only 256 partitions' batches, so send() would wait for memory
        settings.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(SCALE_BATCH_SIZE_BYTES));
        settings.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(SCALE_BUFFER_MEMORY_BYTES));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings)) {
            long begin = System.nanoTime();
            for (long i = 0; i < count; i++) {
                if (recordsPerSecond > 0) {
                    long due = begin + i * 1_000_000_000L / recordsPerSecond;
                    long waitMs = (due - System.nanoTime()) / 1_000_000;
                    if (waitMs > 0) {
                        Thread.sleep(waitMs);    // pacing the load, not waiting for state
                    }
                }
                int partition = (int) (i % partitions());
                producer.send(new ProducerRecord<>(name(partition / options.mirrorTopicPartitions()),
                        partition % options.mirrorTopicPartitions(), null, payloads.get(i)), (m, e) -> {
                            if (e != null) {
                                error.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
        }
        if (error.get() != null) {
            throw new IllegalStateException("producing to the scale topics failed", error.get());
        }
    }
}
