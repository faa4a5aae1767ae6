package io.twinlog.replication;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What a leader (broker 0) concludes from its followers' fetches: one rule per test. */
@Timeout(60)
class FollowerTrackerTest {
    private static final int LOCAL = 0;
    private final FollowerTracker tracker = new FollowerTracker(LOCAL);

    private List<Integer> fetch(int replica, long offset, long leaderEnd, long nowMs, List<Integer> isr, long hw) {
        return tracker.onFollowerFetch(replica, 7, offset, leaderEnd, nowMs, isr, () -> hw, () -> 0L, () -> true);
    }

    @Test
    void theHighWatermarkIsBoundedByTheSlowestIsrMemberAndUnknownCountsAsZero() {
        tracker.onLeadershipRecord(true, true, List.of(0, 1, 2), 0);
        assertEquals(0, tracker.highWatermarkBound(List.of(0, 1, 2), 10), "followers not heard from yet");
        fetch(1, 8, 10, 1, List.of(0, 1, 2), 0);
        fetch(2, 6, 10, 1, List.of(0, 1, 2), 0);
        assertEquals(6, tracker.highWatermarkBound(List.of(0, 1, 2), 10));
        assertEquals(8, tracker.highWatermarkBound(List.of(0, 1), 10), "2 out of the ISR does not hold it back");
        assertEquals(5, tracker.highWatermarkBound(List.of(0, 1), 5), "never past the leader's own end");
    }

    @Test
    void aFollowerThatReachesTheHighWatermarkIsProposedOnceAndCountsWhileTheChangeIsInFlight() {
        tracker.onLeadershipRecord(true, true, List.of(0, 1), 0);
        assertNull(fetch(1, 3, 10, 1, List.of(0), 5), "behind the high watermark");
        assertEquals(List.of(0, 1), fetch(1, 5, 10, 2, List.of(0), 5));
        assertNull(fetch(1, 6, 10, 3, List.of(0), 5), "one change in flight at a time");
        assertEquals(2, tracker.maximalIsrSize(List.of(0)), "the maximal ISR holds the joining follower");
        assertEquals(6, tracker.highWatermarkBound(List.of(0), 10), "and the high watermark waits for it");
        tracker.onIsrChangeCompleted();
        assertEquals(1, tracker.maximalIsrSize(List.of(0)));
    }

    @Test
    void aRepeatedRecordKeepsTheChangeInFlightANewOneEndsIt() {
        tracker.onLeadershipRecord(true, true, List.of(0, 1), 0);
        fetch(1, 5, 10, 1, List.of(0), 5);
        tracker.onLeadershipRecord(false, false, List.of(0, 1), 2);
        assertEquals(2, tracker.maximalIsrSize(List.of(0)), "the same record applied again");
        tracker.onLeadershipRecord(true, false, List.of(0, 1), 3);
        assertEquals(1, tracker.maximalIsrSize(List.of(0)), "a new partition epoch");
        assertEquals(Map.of(1, 5L), tracker.logEndOffsets(), "the same term keeps the positions");
        tracker.onLeadershipRecord(true, true, List.of(0, 1), 4);
        assertEquals(Map.of(1, -1L), tracker.logEndOffsets(), "a new term starts afresh");
    }

    @Test
    void aFollowerNotCaughtUpForTheLagLimitIsProposedOut() {
        tracker.onLeadershipRecord(true, true, List.of(0, 1, 2), 0);
        fetch(1, 10, 10, 1_000, List.of(0, 1, 2), 10); // at the leader's end
        fetch(2, 4, 10, 1_000, List.of(0, 1, 2), 10);
        assertNull(tracker.proposeShrink(List.of(0, 1, 2), 1_500, 30_000, () -> 10L), "within the lag limit");
        FollowerTracker.Shrink shrink = tracker.proposeShrink(List.of(0, 1, 2), 40_000, 30_000, () -> 10L);
        assertEquals(List.of(0, 1), shrink.shrinkTo(), "1 is at the log end however long ago it fetched");
        assertEquals(List.of(2), shrink.lagging());
        assertEquals(3, tracker.maximalIsrSize(List.of(0, 1)), "the larger ISR counts until committed");
        assertNull(tracker.proposeShrink(List.of(0, 1, 2), 40_000, 30_000, () -> 10L), "one change at a time");
    }

    @Test
    void theLowWatermarkIsTheLowestInSyncLogStart() {
        tracker.onLeadershipRecord(true, true, List.of(0, 1, 2), 0);
        assertEquals(true, tracker.updateLogStartOffset(1, 7));
        assertEquals(false, tracker.updateLogStartOffset(1, 7), "unchanged");
        assertEquals(0, tracker.lowWatermark(List.of(0, 1, 2), 9), "2 has not fetched: counts as 0");
        tracker.updateLogStartOffset(2, 8);
        assertEquals(7, tracker.lowWatermark(List.of(0, 1, 2), 9));
        assertEquals(8, tracker.lowWatermark(List.of(0, 2), 9), "out of the ISR: not waited for");
    }
}
