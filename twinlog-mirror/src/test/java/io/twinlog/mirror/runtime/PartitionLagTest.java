package io.twinlog.mirror.runtime;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PartitionLagTest {
    private static final long NOW = 1_000_000;

    @Test
    void recordsAreTheSourceHighWatermarkMinusTheLogEnd() {
        assertEquals(60, PartitionLag.records(100, 40));
        assertEquals(0, PartitionLag.records(100, 100));
    }

    @Test
    void recordsAreZeroWhileTheSourceHighWatermarkIsUnknownOrBehind() {
        assertEquals(0, PartitionLag.records(-1, 40));
        assertEquals(0, PartitionLag.records(30, 40), "a log end past the high watermark last seen is not behind");
    }

    @Test
    void bytesAreTheLagTimesTheAverageSizePerOffsetMirrored() {
        assertEquals(6_000, PartitionLag.bytes(60, 4_000, 40));
        assertEquals(2, PartitionLag.bytes(1, 3, 2), "rounded up: a lag is never estimated at less than it is");
    }

    @Test
    void bytesAreZeroWhenCaughtUpOrBeforeAnythingWasMirrored() {
        assertEquals(0, PartitionLag.bytes(0, 4_000, 40));
        assertEquals(0, PartitionLag.bytes(60, 0, 0));
    }

    @Test
    void timeIsTheSourcesNewestTimestampMinusTheNewestMirrored() {
        assertEquals(7_000, PartitionLag.millis(10, NOW - 1_000, NOW - 8_000, NOW));
    }

    @Test
    void timeIsZeroWhenCaughtUpWhateverTheTimestamps() {
        assertEquals(0, PartitionLag.millis(0, NOW, NOW - 8_000, NOW));
    }

    @Test
    void timeIsNeverNegative() {
        // the source's newest timestamp was looked up before the newest batch mirrored was written there
        assertEquals(0, PartitionLag.millis(10, NOW - 9_000, NOW - 8_000, NOW));
    }

    @Test
    void timeFallsBackToTheAgeOfTheNewestMirroredWhenTheSourceCannotSay() {
        assertEquals(8_000, PartitionLag.millis(10, PartitionLag.UNAVAILABLE, NOW - 8_000, NOW));
    }

    @Test
    void timeIsZeroUntilTheSourceIsAsked() {
        // one round trip: the wall clock would make old records look minutes behind
        assertEquals(0, PartitionLag.millis(10, PartitionLag.NOT_ASKED, NOW - 300_000, NOW));
    }

    @Test
    void timeIsZeroBeforeAnythingWasMirrored() {
        assertEquals(0, PartitionLag.millis(10, NOW, -1, NOW));
    }
}
