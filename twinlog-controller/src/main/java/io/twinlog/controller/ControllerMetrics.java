package io.twinlog.controller;

import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Timer;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.metrics.MetricsGroup;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * Kafka's controller metrics under Kafka's names: {@code kafka.controller:type=KafkaController} (ActiveControllerCount
 * 1 on the active controller, 0 elsewhere; OfflinePartitionsCount, GlobalTopicCount and GlobalPartitionCount
 * reported by the active controller only, as Kafka does, so a sum over brokers counts each once) and
 * {@code kafka.controller:type=ControllerStats} (LeaderElectionRateAndTimeMs: one event per written batch of states
 * that gave at least one partition a new leader, timed from the write until ZooKeeper took it, as Kafka times a
 * controller event that elects; UncleanLeaderElectionsPerSec, per partition elected uncleanly).
 */
final class ControllerMetrics {
    private final Timer leaderElections;
    private final Meter uncleanElections;

    ControllerMetrics(BrokerMetrics metrics, BooleanSupplier active, Supplier<MetadataImage> image) {
        MetricsGroup controller = metrics.group("kafka.controller", "KafkaController");
        controller.newGauge("ActiveControllerCount", () -> active.getAsBoolean() ? 1 : 0);
        controller.newGauge("OfflinePartitionsCount", () -> active.getAsBoolean()
                ? countPartitions(image.get(), t -> (int) t.partitions().values().stream()
                        .filter(p -> p.leader() < 0).count()) : 0);
        controller.newGauge("GlobalTopicCount", () -> active.getAsBoolean() ? image.get().topics().size() : 0);
        controller.newGauge("GlobalPartitionCount", () -> active.getAsBoolean()
                ? countPartitions(image.get(), t -> t.partitions().size()) : 0);
        MetricsGroup stats = metrics.group("kafka.controller", "ControllerStats");
        leaderElections = stats.newTimer("LeaderElectionRateAndTimeMs");
        uncleanElections = stats.newMeter("UncleanLeaderElectionsPerSec", "elections");
    }

    private static int countPartitions(MetadataImage image, ToIntFunction<TopicImage> count) {
        int n = 0;
        for (TopicImage t : image.topics().values()) {
            n += count.applyAsInt(t);
        }
        return n;
    }

    /** A controller event that elected leaders, and how long it took. */
    void electionEvent(long elapsedNanos) {
        leaderElections.update(TimeUnit.NANOSECONDS.toMillis(elapsedNanos), TimeUnit.MILLISECONDS);
    }

    void uncleanElection() {
        uncleanElections.mark();
    }
}
