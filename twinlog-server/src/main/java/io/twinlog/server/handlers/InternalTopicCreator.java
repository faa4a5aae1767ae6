package io.twinlog.server.handlers;

import io.twinlog.common.RepeatedWarning;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.server.metadata.TopicAdmin;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Creates a coordinator's internal topic ({@code __consumer_offsets}, {@code __transaction_state}) the first time a
 * client looks for a coordinator, as Kafka does: with the configured partitions and replication factor (refused,
 * with a log line, while fewer brokers are live) and the coordinator's topic configs (compacted). Creation runs in
 * the background; the client is told COORDINATOR_NOT_AVAILABLE meanwhile and retries. Every client's
 * FindCoordinator asks again while too few brokers are live (several a millisecond under load), so the refusal is
 * written when the numbers change and otherwise once a minute with how often it repeated ({@link RepeatedWarning}).
 */
public final class InternalTopicCreator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(InternalTopicCreator.class);
    static final long REPEATED_WARNING_INTERVAL_MS = 60_000;

    /** What the topic is created with, read when it is created. */
    public record Spec(int partitions, short replicationFactor, Map<String, String> configs) {
    }

    private final String topic;
    private final String replicationFactorKey;
    private final Supplier<Spec> spec;
    private final TopicAdmin topicAdmin;
    private final Supplier<MetadataImage> image;
    private final Time time;
    private final AtomicBoolean creating = new AtomicBoolean();
    private final RepeatedWarning tooFewBrokers = new RepeatedWarning(REPEATED_WARNING_INTERVAL_MS);
    private final ExecutorService executor;

    /**
     * @param replicationFactorKey the broker config that sets the replication factor, named in the refusal so an
     *                             operator of a small cluster knows what to set
     */
    public InternalTopicCreator(String topic, String replicationFactorKey, Supplier<Spec> spec, TopicAdmin topicAdmin,
                                Supplier<MetadataImage> image, Time time) {
        this.topic = topic;
        this.replicationFactorKey = replicationFactorKey;
        this.spec = spec;
        this.topicAdmin = topicAdmin;
        this.image = image;
        this.time = time;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "twinlog-topic-creator-" + topic);
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts creating the topic unless it exists or is being created. */
    public void ensureCreated() {
        if (image.get().topic(topic).isPresent() || !creating.compareAndSet(false, true)) {
            return;
        }
        executor.execute(() -> {
            try {
                Spec s = spec.get();
                int live = image.get().brokers().size();
                if (live < s.replicationFactor()) {
                    warnTooFewBrokers(s.replicationFactor(), live);
                    return;
                }
                tooFewBrokers.reset();
                TopicAdmin.TopicPlan plan = topicAdmin.plan(topic, s.partitions(), s.replicationFactor(), null,
                        s.configs(), s.partitions(), s.replicationFactor());
                topicAdmin.create(plan);
                log.info("Created {} with {} partitions and replication factor {}", topic, s.partitions(),
                        s.replicationFactor());
            } catch (TopicExistsException e) {
                // another broker created it first
            } catch (Exception e) {
                // broad: any failure leaves the topic to the next request, which tries again
                log.warn("Could not create {}", topic, e);
            } finally {
                creating.set(false);
            }
        });
    }

    private void warnTooFewBrokers(short rf, int live) {
        OptionalLong repeats = tooFewBrokers.onOccurrence(List.of(rf, live), time.milliseconds());
        if (repeats.isPresent()) {
            String repeated = repeats.getAsLong() == 0 ? "" : "; refused " + repeats.getAsLong()
                    + " more times since the last such line";
            log.warn("Not creating {} yet: {} is {} but only {} brokers are live (set {} for a smaller cluster){}; "
                    + "written again when the numbers change or after {} s", topic, replicationFactorKey, rf, live,
                    replicationFactorKey, repeated, REPEATED_WARNING_INTERVAL_MS / 1_000);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
