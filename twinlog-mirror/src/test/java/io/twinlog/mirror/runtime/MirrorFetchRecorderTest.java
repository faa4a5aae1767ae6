package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.mirror.fetcher.MirrorFetchMetrics;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a mirror's fetch threads record, in a real registry: per-thread request meters, led partitions, the cap. */
@Timeout(30)
class MirrorFetchRecorderTest {
    private static final TopicPartition LED = new TopicPartition("orders", 0);

    private final BrokerMetrics broker = BrokerMetrics.unreported(0, Time.SYSTEM);
    private final MirrorMetricRegistry registry = new MirrorMetricRegistry(broker, Time.SYSTEM);
    private final MirrorSetMetrics set = new MirrorSetMetrics("m", registry, List.of());
    private final Map<TopicPartition, LedPartitionMetrics> partitions = new ConcurrentHashMap<>();
    private final List<MirrorFetchRecorder.FetchThreadMeter> fetchThreads = new CopyOnWriteArrayList<>();
    private final List<BackgroundTask> loops = new CopyOnWriteArrayList<>();
    private final MirrorFetchRecorder recorder = new MirrorFetchRecorder("m", registry, () -> set, partitions,
            fetchThreads, loops);

    @AfterEach
    void close() {
        broker.close();
    }

    @Test
    void eachSourceBrokersFetchThreadHasItsOwnRequestMeterUntilItCloses() throws Exception {
        MirrorFetchMetrics.FetchCounter thread = recorder.fetcherStarted(new Node(3, "source-3", 9093));
        thread.onFetch();
        thread.onFetch();
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("clientId", "MirrorReplica");
        tags.put("mirror", "m");
        tags.put("brokerHost", "source-3");
        tags.put("brokerPort", "9093");
        MetricName name = broker.group("kafka.server", "FetcherStats").metricName("RequestsPerSec", tags);
        assertEquals(2, ((Meter) broker.registry().allMetrics().get(name)).count());
        assertEquals(1, fetchThreads.size());

        thread.close();
        assertNull(broker.registry().allMetrics().get(name));
        assertTrue(fetchThreads.isEmpty());
    }

    @Test
    void fetchAnswersReachTheLedPartitionOnly() {
        FakeMirrorBroker.Partition log = new FakeMirrorBroker().new Partition();
        log.logEndOffset = 10;
        LedPartitionMetrics led = new LedPartitionMetrics(set, LED, log, registry);
        partitions.put(LED, led);

        recorder.onFetched(LED, 25, 150, 15, 1_000);
        recorder.onFetched(new TopicPartition("orders", 1), 99, 990, 99, 1_000); // not led here: ignored
        assertEquals(15, led.lagRecords());
        assertEquals(150, set.bytes.count());
        recorder.onSourceNewestTimestamp(LED, 5_000);
        assertEquals(4_000, led.lagMillis());
        recorder.onSourceNewestTimestampUnavailable(LED);
        assertEquals(PartitionLag.UNAVAILABLE, led.sourceNewestTimestamp);
    }

    @Test
    void throttlingAndTheCapGoToTheMirrorsMetrics() {
        recorder.onThrottled(25);
        recorder.onThrottled(5);
        assertEquals(30, set.throttledTime.count());
        recorder.onReplicationQuota(1_000_000);
        assertEquals(1_000_000, set.replicationThrottledRate);
    }

    @Test
    void aFetchLoopIsABackgroundTaskWhileItRuns() {
        BackgroundTask loop = recorder.loopStarted("mirror-m-source-3", 1_000,
                LoggerFactory.getLogger(MirrorFetchRecorderTest.class));
        assertEquals(List.of(loop), loops);
        recorder.loopEnded(loop);
        assertFalse(loops.contains(loop));
    }
}
