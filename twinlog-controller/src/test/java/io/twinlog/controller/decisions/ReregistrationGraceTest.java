package io.twinlog.controller.decisions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When a controller waits for brokers to register again after a ZooKeeper outage. */
@Timeout(60)
class ReregistrationGraceTest {
    private static final long GRACE_MS = 6_000;

    @Test
    void noGraceWithoutAReconnection() {
        assertTrue(ReregistrationGrace.remainingMs(GRACE_MS, -1, 1_000, 1_000) <= 0);
    }

    @Test
    void noGraceWhenDisabled() {
        assertTrue(ReregistrationGrace.remainingMs(0, 1_000, 1_000, 1_000) <= 0);
    }

    @Test
    void aControllerElectedBecauseOfTheOutageWaitsFromItsElection() {
        // reconnected at 10 s, elected at 17 s when the old /controller expired: waits until 23 s
        assertEquals(6_000, ReregistrationGrace.remainingMs(GRACE_MS, 10_000, 17_000, 17_000));
        assertEquals(1_000, ReregistrationGrace.remainingMs(GRACE_MS, 10_000, 17_000, 22_000));
        assertTrue(ReregistrationGrace.remainingMs(GRACE_MS, 10_000, 17_000, 23_000) <= 0);
    }

    @Test
    void aControllerThatStayedActiveWaitsFromTheReconnection() {
        assertEquals(5_000, ReregistrationGrace.remainingMs(GRACE_MS, 20_000, 1_000, 21_000));
    }

    @Test
    void aControllerElectedLongAfterItsLastReconnectionWaitsForNothing() {
        // elected because the previous controller crashed, a minute after an unrelated blip
        assertTrue(ReregistrationGrace.remainingMs(GRACE_MS, 10_000, 70_000, 70_000) <= 0);
    }
}
