package io.twinlog.group;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.image.MetadataDelta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.OptionalInt;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Feeds one hosted Kafka coordinator runtime (the group coordinator, the share coordinator) from Twinlog's metadata,
 * as Kafka's brokers do from theirs: starts it on the first image with its topic's partition count (the topic's
 * if it exists, else the one it will be created with; read once), hands it each change as a KRaft delta
 * ({@link KafkaImageBridge}) and elects and resigns it per partition of its topic, image by image in their order
 * ({@link CoordinatorLeadership}).
 *
 * <p>Images are applied on one event thread of this class, never the metadata thread: a coordinator may block
 * there, for instance while it writes tombstones for deleted topics.
 */
public final class CoordinatorMetadataFollower implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CoordinatorMetadataFollower.class);

    /** What Kafka's coordinator services take, as method references. */
    public record Coordinator(Consumer<IntSupplier> startup,
                              BiConsumer<MetadataDelta, org.apache.kafka.image.MetadataImage> onMetadataUpdate,
                              BiConsumer<Integer, Integer> onElection,
                              BiConsumer<Integer, OptionalInt> onResignation) {
    }

    private final int brokerId;
    private final String name;
    private final String topic;
    private final IntSupplier configuredPartitions;
    private final Coordinator coordinator;
    private final Time time;
    private final KafkaImageBridge bridge = new KafkaImageBridge();
    private final CoordinatorLeadership leadership;
    private final ExecutorService events;
    private volatile boolean started;
    private volatile boolean closed;

    /**
     * @param name                 the coordinator, for logs and its thread ("group", "share")
     * @param coordinates          what a partition of the topic holds, for the log ("the groups")
     * @param configuredPartitions the partition count the topic is created with
     */
    public CoordinatorMetadataFollower(int brokerId, String name, String topic, String coordinates,
                                       IntSupplier configuredPartitions, ReplicaManager replicaManager,
                                       Coordinator coordinator, Time time) {
        this.brokerId = brokerId;
        this.name = name;
        this.topic = topic;
        this.configuredPartitions = configuredPartitions;
        this.coordinator = coordinator;
        this.time = time;
        this.leadership = new CoordinatorLeadership(brokerId, topic, coordinates, replicaManager,
                coordinator.onElection(), coordinator.onResignation());
        this.events = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "twinlog-" + name + "-events-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /** Whether the coordinator has been started (requests before that are answered not available). */
    public boolean isStarted() {
        return started;
    }

    /** Metadata listener: queues the image for the event thread. */
    public void onImage(MetadataImage previous, MetadataImage next) {
        if (closed) {
            return;
        }
        try {
            events.execute(() -> apply(next));
        } catch (RejectedExecutionException ignored) {
            // closing
        }
    }

    private void apply(MetadataImage image) {
        try {
            if (!started) {
                int partitions = image.topic(topic).map(t -> t.partitions().size())
                        .orElse(configuredPartitions.getAsInt());
                coordinator.startup().accept(() -> partitions);
                started = true;
                log.info("The {} coordinator started on broker {} ({} partitions of {})", name, brokerId,
                        partitions, topic);
            }
            bridge.update(image, time.milliseconds())
                    .ifPresent(u -> coordinator.onMetadataUpdate().accept(u.delta(), u.image()));
            leadership.apply(image.topic(topic));
        } catch (RuntimeException e) {
            // broad: Kafka's coordinator may throw anything on an image; the next image tries again
            log.error("Could not apply metadata to the {} coordinator on broker {}", name, brokerId, e);
        }
    }

    /** Stops applying images; the coordinator itself is shut down by its host. */
    @Override
    public void close() {
        closed = true;
        events.shutdown();
        try {
            events.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
