package io.twinlog.mirror.partition;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The mirrored-up-to time and the RPO (decision 122): the newest mirrored timestamp, moved forward to the time of a
 * fetch that found the partition caught up; an idle caught-up partition keeps a small RPO, one that falls behind or
 * stops fetching sees it grow with the clock.
 */
@Timeout(10)
class MirroredTimeTest {
    private static final long T = 1_796_637_600_000L;

    @Test
    void aNewLeaderStartsFromItsLogsLastBatch() {
        assertEquals(new MirroredTime(T, T), MirroredTime.fromLog(T));
        assertEquals(MirroredTime.UNKNOWN, MirroredTime.fromLog(-1L), "an empty log: unknown");
        assertEquals(-1L, MirroredTime.UNKNOWN.rpoMs(T), "unknown, never 0");
    }

    @Test
    void appendedBatchesMoveTheNewestTimestamp() {
        MirroredTime behind = MirroredTime.fromLog(T).afterFetch(T + 500, -1L);
        assertEquals(new MirroredTime(T + 500, T + 500), behind, "still behind: up to the newest record held");
        assertEquals(9_500L, behind.rpoMs(T + 10_000));
        assertSame(behind, behind.afterFetch(-1L, -1L), "nothing appended, not caught up: unchanged");
    }

    @Test
    void aFetchThatFindsItCaughtUpMovesTheMirroredUpToTime() {
        MirroredTime caughtUp = MirroredTime.fromLog(T).afterFetch(T + 500, T + 2_000);
        assertEquals(new MirroredTime(T + 500, T + 2_000), caughtUp);
        // idle: each fetch finds it caught up, nothing appended; the RPO stays the time since the last one
        MirroredTime idle = caughtUp.afterFetch(-1L, T + 60_000);
        assertEquals(new MirroredTime(T + 500, T + 60_000), idle);
        assertEquals(400L, idle.rpoMs(T + 60_400), "small although the newest record is a minute old");
    }

    @Test
    void aFetchThatFindsItBehindFallsBackToTheNewestTimestamp() {
        MirroredTime caughtUp = new MirroredTime(T, T + 60_000);
        MirroredTime behind = caughtUp.afterFetch(T + 61_000, -1L);
        assertEquals(new MirroredTime(T + 61_000, T + 61_000), behind);
        assertEquals(new MirroredTime(T + 61_000, T + 61_000), behind.afterFetch(-1L, -1L));
    }

    @Test
    void recordsTimestampedAfterTheFetchKeepTheirOwnTime() {
        // producer clocks ahead of the destination's: the newest timestamp wins over an earlier fetch time
        assertEquals(new MirroredTime(T + 5_000, T + 5_000), MirroredTime.fromLog(T).afterFetch(T + 5_000, T + 1_000));
        assertEquals(0L, new MirroredTime(T + 5_000, T + 5_000).rpoMs(T + 1_000), "never negative");
    }

    @Test
    void theRecordedTimeGivesTheSameRpo() {
        assertEquals(3_000L, MirroredTime.rpoMs(T, T + 3_000));
        assertEquals(-1L, MirroredTime.rpoMs(-1L, T));
    }
}
