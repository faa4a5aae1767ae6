package io.twinlog.server.handlers.group;

import io.twinlog.common.RepeatedWarning;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.server.metadata.TopicAdmin;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Creates {@code __consumer_offsets} the first time a client looks for a group coordinator, as Kafka does: with
 * {@code offsets.topic.num.partitions} partitions, {@code offsets.topic.replication.factor} replicas (refused,
 * with a log line, while fewer brokers are live) and the coordinator's topic configs (compacted). Creation runs in
 * the background; the client is told COORDINATOR_NOT_AVAILABLE meanwhile and retries. Every consumer's
 * FindCoordinator asks again while too few brokers are live (several a millisecond under load), so the refusal is
 * written when the numbers change and otherwise once a minute with how often it repeated ({@link RepeatedWarning}).
 */
final class OffsetsTopic implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OffsetsTopic.class);
    static final long REPEATED_WARNING_INTERVAL_MS = 60_000;
    private final GroupCoordinatorHost host;
    private final TopicAdmin topicAdmin;
    private final Supplier<MetadataImage> image;
    private final Time time;
    private final AtomicBoolean creating = new AtomicBoolean();
    private final RepeatedWarning tooFewBrokers = new RepeatedWarning(REPEATED_WARNING_INTERVAL_MS);
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "twinlog-offsets-topic-creator");
        t.setDaemon(true);
        return t;
    });

    OffsetsTopic(GroupCoordinatorHost host, TopicAdmin topicAdmin, Supplier<MetadataImage> image, Time time) {
        this.host = host;
        this.topicAdmin = topicAdmin;
        this.image = image;
        this.time = time;
    }

    /** Starts creating the topic unless it exists or is being created. */
    void ensureCreated() {
        if (image.get().topic(GroupCoordinatorHost.OFFSETS_TOPIC).isPresent() || !creating.compareAndSet(false, true)) {
            return;
        }
        executor.execute(() -> {
            try {
                int partitions = host.config().offsetsTopicPartitions();
                short rf = host.config().offsetsTopicReplicationFactor();
                int live = image.get().brokers().size();
                if (live < rf) {
                    warnTooFewBrokers(rf, live);
                    return;
                }
                tooFewBrokers.reset();
                TopicAdmin.TopicPlan plan = topicAdmin.plan(GroupCoordinatorHost.OFFSETS_TOPIC, partitions, rf, null,
                        host.offsetsTopicConfigs(), partitions, rf);
                topicAdmin.create(plan);
                log.info("Created {} with {} partitions and replication factor {}",
                        GroupCoordinatorHost.OFFSETS_TOPIC, partitions, rf);
            } catch (TopicExistsException e) {
                // another broker created it first
            } catch (Exception e) {
                log.warn("Could not create {}: {}", GroupCoordinatorHost.OFFSETS_TOPIC, e.toString());
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
            log.warn("Not creating {} yet: offsets.topic.replication.factor is {} but only {} brokers are live (set "
                    + "offsets.topic.replication.factor for a smaller cluster){}; written again when the numbers "
                    + "change or after {} s", GroupCoordinatorHost.OFFSETS_TOPIC, rf, live, repeated,
                    REPEATED_WARNING_INTERVAL_MS / 1_000);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
