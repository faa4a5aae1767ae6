package io.twinlog.mirror.fetcher;

import io.twinlog.common.tasks.BackgroundTask;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

/**
 * What one mirror's fetcher threads record for the broker's metrics (the runtime's {@code MirrorMetrics}). Called
 * on the fetch path, once per partition per fetch response: implementations neither block nor allocate.
 */
public interface MirrorFetchMetrics {
    /** Records nothing (tools and tests that run a fetcher alone). */
    MirrorFetchMetrics NONE = new MirrorFetchMetrics() {
        @Override
        public FetchCounter fetcherStarted(Node sourceBroker) {
            return FetchCounter.NONE;
        }

        @Override
        public void onFetched(TopicPartition partition, long sourceHighWatermark, int bytes, int offsets,
                              long newestTimestamp) {
        }

        @Override
        public void onSourceNewestTimestamp(TopicPartition partition, long timestamp) {
        }

        @Override
        public void onSourceNewestTimestampUnavailable(TopicPartition partition) {
        }

        @Override
        public BackgroundTask loopStarted(String name, long periodMs, Logger log) {
            return BackgroundTask.loop(name, periodMs, Time.SYSTEM, log);
        }

        @Override
        public void loopEnded(BackgroundTask loop) {
        }
    };

    /**
     * A fetch thread's loop started: the task it reports each round to ({@link BackgroundTask#loop}), whose age of
     * the last completed round is among the broker's background tasks until {@link #loopEnded} (decision 69).
     */
    BackgroundTask loopStarted(String name, long periodMs, Logger log);

    /** The thread of {@code loop} ended: its liveness is no longer reported. */
    void loopEnded(BackgroundTask loop);

    /** The fetch thread of source broker {@code sourceBroker} started; its fetches are counted until closed. */
    FetchCounter fetcherStarted(Node sourceBroker);

    /**
     * A fetch response for {@code partition}: the source's high watermark, and what was appended from it
     * ({@code bytes} and {@code offsets} 0 and {@code newestTimestamp} -1 when nothing was); {@code newestTimestamp}
     * is the max timestamp of the last batch appended.
     */
    void onFetched(TopicPartition partition, long sourceHighWatermark, int bytes, int offsets, long newestTimestamp);

    /** The source's newest record timestamp of a partition that is behind (ListOffsets max timestamp). */
    void onSourceNewestTimestamp(TopicPartition partition, long timestamp);

    /** The source could not say what its newest record timestamp is (a source before ListOffsets v7). */
    void onSourceNewestTimestampUnavailable(TopicPartition partition);

    /** A fetch thread waited {@code ms} for the mirror's bandwidth cap ({@link MirrorFetchQuota}). */
    default void onThrottled(long ms) {
    }

    /** The mirror's bandwidth cap on this broker changed ({@link MirrorFetchQuota#UNLIMITED}: none). */
    default void onReplicationQuota(long bytesPerSecond) {
    }

    /** Counts one fetch thread's fetch requests. */
    interface FetchCounter extends AutoCloseable {
        FetchCounter NONE = new FetchCounter() {
            @Override
            public void onFetch() {
            }

            @Override
            public void close() {
            }
        };

        void onFetch();

        @Override
        void close();
    }
}
