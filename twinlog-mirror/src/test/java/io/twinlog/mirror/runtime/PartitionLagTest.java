package io.twinlog.mirror.runtime;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

@Timeout(60)
class PartitionLagTest {
    private static final long NOW = 1_000_000;

    @Test
    void recordsAreTheSourceHighWatermarkMinusTheLogEnd() {
        assertEquals(60, PartitionLag.records(100, 40));
        assertEquals(0, PartitionLag.records(100, 100));
    }

    @Test
    void recordsAreUnknownWhileTheSourceHighWatermarkIs() {
        // a new leader or a restarted broker whose source does not answer: 0 would say a failover loses nothing
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.records(-1, 40));
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.records(-1, 0));
    }

    @Test
    void recordsAreZeroWhenTheLogEndIsPastTheHighWatermarkLastSeen() {
        assertEquals(0, PartitionLag.records(30, 40), "a log end past the high watermark last seen is not behind");
    }

    @Test
    void bytesAreTheLagTimesTheAverageSizePerOffsetMirrored() {
        assertEquals(6_000, PartitionLag.bytes(60, 4_000, 40));
        assertEquals(2, PartitionLag.bytes(1, 3, 2), "rounded up: a lag is never estimated at less than it is");
    }

    @Test
    void bytesAreZeroWhenCaughtUp() {
        assertEquals(0, PartitionLag.bytes(0, 4_000, 40));
        assertEquals(0, PartitionLag.bytes(0, 0, 0));
    }

    @Test
    void bytesAreUnknownWhenTheRecordsAreOrWhenNothingWasMirroredToEstimateFrom() {
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.bytes(PartitionLag.UNKNOWN, 4_000, 40));
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.bytes(60, 0, 0), "60 records behind are not 0 bytes");
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
    void timeIsUnknownWhenTheRecordsAre() {
        // the source has not answered since this broker took the partition: nothing says it is caught up
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.millis(PartitionLag.UNKNOWN, NOW, NOW - 8_000, NOW));
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.millis(PartitionLag.UNKNOWN, PartitionLag.NOT_ASKED, -1,
                NOW));
    }

    @Test
    void timeIsUnknownWhileBehindUntilTheSourceAnswers() {
        // one round trip; not the wall clock either, which would make old records look minutes behind
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.millis(10, PartitionLag.NOT_ASKED, NOW - 300_000, NOW));
    }

    @Test
    void timeIsUnknownWhileBehindBeforeAnythingWasMirrored() {
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.millis(10, NOW, -1, NOW));
        assertEquals(PartitionLag.UNKNOWN, PartitionLag.millis(10, PartitionLag.UNAVAILABLE, -1, NOW));
    }

    @Test
    void timeIsZeroWhenCaughtUpBeforeAnythingWasMirroredOrAsked() {
        assertEquals(0, PartitionLag.millis(0, PartitionLag.NOT_ASKED, -1, NOW));
    }

    @Test
    void secondsKeepUnknownAsMinusOne() {
        assertEquals(-1.0, PartitionLag.seconds(PartitionLag.UNKNOWN));
        assertEquals(7.5, PartitionLag.seconds(7_500));
        assertEquals(0.0, PartitionLag.seconds(0));
    }
}
