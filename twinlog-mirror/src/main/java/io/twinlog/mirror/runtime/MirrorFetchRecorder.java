package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.mirror.fetcher.MirrorFetchMetrics;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What one mirror's fetcher threads record ({@link MirrorFetchMetrics}), into {@link MirrorMetrics}: each fetch
 * answer's progress into the led partition's metrics, what was appended into the mirror's meters, each source
 * broker's fetch thread as its own request meter ({@code kafka.server:type=FetcherStats,name=RequestsPerSec,
 * clientId=MirrorReplica,mirror,brokerHost,brokerPort}, read by {@code MinFetchRate}), and its loops' liveness
 * among the broker's background tasks.
 *
 * <p>Threading: called on the fetch threads; looks up, never allocates, on the fetch path.
 */
final class MirrorFetchRecorder implements MirrorFetchMetrics {
    private final String mirror;
    private final MirrorMetricRegistry registry;
    /** The mirror's metrics, looked up at each use: they are made again if removed meanwhile. */
    private final Supplier<MirrorSetMetrics> mirrorMetrics;
    private final Map<TopicPartition, LedPartitionMetrics> partitions;
    private final Collection<FetchThreadMeter> fetchThreads;
    private final Collection<BackgroundTask> backgroundTasks;

    MirrorFetchRecorder(String mirror, MirrorMetricRegistry registry, Supplier<MirrorSetMetrics> mirrorMetrics,
                        Map<TopicPartition, LedPartitionMetrics> partitions, Collection<FetchThreadMeter> fetchThreads,
                        Collection<BackgroundTask> backgroundTasks) {
        this.mirror = mirror;
        this.registry = registry;
        this.mirrorMetrics = mirrorMetrics;
        this.partitions = partitions;
        this.fetchThreads = fetchThreads;
        this.backgroundTasks = backgroundTasks;
    }

    @Override
    public FetchCounter fetcherStarted(Node sourceBroker) {
        FetchThreadMeter thread = new FetchThreadMeter(mirror, sourceBroker);
        fetchThreads.add(thread);
        return thread;
    }

    @Override
    public BackgroundTask loopStarted(String name, long periodMs, Logger log) {
        BackgroundTask loop = registry.metrics.backgroundTasks().register(BackgroundTask.loop(name, periodMs,
                registry.time, log));
        backgroundTasks.add(loop);
        return loop;
    }

    @Override
    public void loopEnded(BackgroundTask loop) {
        backgroundTasks.remove(loop);
        registry.metrics.backgroundTasks().remove(loop);
    }

    @Override
    public void onFetched(TopicPartition tp, long sourceHighWatermark, int bytes, int offsets, long newestTimestamp) {
        LedPartitionMetrics led = partitions.get(tp);
        if (led != null) {
            led.onFetched(sourceHighWatermark, bytes, offsets, newestTimestamp);
        }
    }

    @Override
    public void onSourceNewestTimestamp(TopicPartition tp, long timestamp) {
        LedPartitionMetrics led = partitions.get(tp);
        if (led != null) {
            led.sourceNewestTimestamp = timestamp;
        }
    }

    @Override
    public void onSourceNewestTimestampUnavailable(TopicPartition tp) {
        onSourceNewestTimestamp(tp, PartitionLag.UNAVAILABLE);
    }

    @Override
    public void onThrottled(long ms) {
        mirrorMetrics.get().throttledTime.mark(ms);
    }

    @Override
    public void onReplicationQuota(long bytesPerSecond) {
        mirrorMetrics.get().replicationThrottledRate = bytesPerSecond;
    }

    /** One source broker fetch thread of a mirror: its fetch request rate, for {@code MinFetchRate}. */
    final class FetchThreadMeter implements FetchCounter {
        private final List<MetricName> names = new ArrayList<>(1);
        final Meter requests;

        FetchThreadMeter(String mirror, Node sourceBroker) {
            Map<String, String> tags = new LinkedHashMap<>();
            tags.put("clientId", MirrorMetricRegistry.CLIENT_ID);
            tags.put("mirror", mirror);
            tags.put("brokerHost", sourceBroker.host());
            tags.put("brokerPort", Integer.toString(sourceBroker.port()));
            requests = registry.meter(names, registry.fetcherStats, "RequestsPerSec", "requests", tags);
        }

        @Override
        public void onFetch() {
            requests.mark();
        }

        @Override
        public void close() {
            fetchThreads.remove(this);
            registry.remove(names);
        }
    }
}
