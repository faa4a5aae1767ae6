package io.twinlog.common.mirror;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which truncation points a replica applies, and where it cuts, from the ids it applied (decisions 38, 125). */
@Timeout(10)
class TruncationPointsTest {
    private static final TruncationPoints.Point START = new TruncationPoints.Point(11, 0);
    private static final TruncationPoints.Point FAILBACK = new TruncationPoints.Point(22, 40);
    private static final TruncationPoints.Point FAILOVER = new TruncationPoints.Point(33, 25);

    private static TruncationPoints list(TruncationPoints.Point... points) {
        return new TruncationPoints(List.of(points), "test");
    }

    @Test
    void aReplicaThatAppliedNothingCutsToTheLowestOfAllPoints() {
        assertEquals(OptionalLong.of(0), list(START, FAILBACK, FAILOVER).cutFor(Set.of()));
    }

    @Test
    void aReplicaAwayThroughSeveralPointsCutsToTheLowestOfThoseItMissed() {
        assertEquals(OptionalLong.of(25), list(START, FAILBACK, FAILOVER).cutFor(Set.of(11L)));
        assertEquals(List.of(FAILBACK, FAILOVER), list(START, FAILBACK, FAILOVER).toApply(Set.of(11L)));
    }

    @Test
    void aReplicaThatAppliedTheLatestCutsNothing() {
        assertEquals(OptionalLong.empty(), list(START, FAILBACK).cutFor(Set.of(11L, 22L)));
        assertEquals(OptionalLong.empty(), list(START, FAILBACK).cutFor(Set.of(22L)), "the newest listed decides");
        assertEquals(OptionalLong.empty(), list().cutFor(Set.of()));
    }

    @Test
    void aLeaderThatAppliedItsNewPointBeforeTheRecordHoldsItCutsNothingOnTheRecordBefore() {
        // the leader cut to its new point 33 at 25, then its metadata thread sees the record of the previous pass
        assertEquals(OptionalLong.empty(), list(START).cutFor(Set.of(11L, 33L)),
                "the old rule read an unlisted applied id as 'applied none' and cut to 0: offsets 0-24 lost");
        assertEquals(OptionalLong.empty(), list(START, FAILBACK).cutFor(Set.of(11L, 22L, 33L)));
    }

    @Test
    void aRecordRecreatedWithFreshIdsIsAppliedWhole() {
        TruncationPoints fresh = list(new TruncationPoints.Point(44, 7), new TruncationPoints.Point(55, 9));
        assertEquals(OptionalLong.of(7), fresh.cutFor(Set.of(11L, 22L, 33L)));
        assertEquals(fresh.points(), fresh.toApply(Set.of(11L, 22L, 33L)));
    }
}
