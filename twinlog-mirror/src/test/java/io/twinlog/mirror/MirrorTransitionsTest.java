package io.twinlog.mirror;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Optional;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.PAUSED;
import static io.twinlog.common.mirror.MirrorPartitionState.PAUSING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static io.twinlog.common.mirror.MirrorPartitionState.UNKNOWN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class MirrorTransitionsTest {

    @Test
    void theLifecycleOfTheDesignIsAllowedInOrder() {
        MirrorPartitionState[] path = {UNKNOWN, LOG_TRUNCATION, EPOCH_FENCING, MIRRORING, PAUSING, PAUSED, MIRRORING,
            EPOCH_FENCING, MIRRORING, STOPPING, STOPPED, LOG_TRUNCATION};
        for (int i = 1; i < path.length; i++) {
            assertTrue(MirrorTransitions.isValid(path[i - 1], path[i]), path[i - 1] + " -> " + path[i]);
        }
    }

    @ParameterizedTest
    @EnumSource(MirrorPartitionState.class)
    void anyStateMayFailAndStayPut(MirrorPartitionState s) {
        assertTrue(MirrorTransitions.isValid(s, FAILED));
        assertTrue(MirrorTransitions.isValid(s, s));
    }

    @Test
    void failoverWorksFromFailedBecauseTheSourceMayBeDown() {
        assertTrue(MirrorTransitions.isValid(FAILED, STOPPING));
        assertEquals(Optional.of(STOPPING), MirrorTransitions.reconcile(DesiredMirrorState.STOPPED, FAILED));
    }

    @Test
    void illegalShortcutsAreRefused() {
        assertFalse(MirrorTransitions.isValid(MIRRORING, STOPPED), "stop goes through STOPPING");
        assertFalse(MirrorTransitions.isValid(STOPPED, MIRRORING), "restart truncates first");
        assertFalse(MirrorTransitions.isValid(PAUSED, PAUSING));
        assertFalse(MirrorTransitions.isValid(LOG_TRUNCATION, PAUSED));
        assertFalse(MirrorTransitions.isValid(STOPPING, MIRRORING));
        assertFalse(MirrorTransitions.isValid(MIRRORING, UNKNOWN));
    }

    @Test
    void reconcileFollowsTheDesiredState() {
        assertEquals(Optional.of(LOG_TRUNCATION), MirrorTransitions.reconcile(DesiredMirrorState.MIRRORING, UNKNOWN));
        assertEquals(Optional.of(LOG_TRUNCATION), MirrorTransitions.reconcile(DesiredMirrorState.MIRRORING, STOPPED));
        assertEquals(Optional.of(MIRRORING), MirrorTransitions.reconcile(DesiredMirrorState.MIRRORING, PAUSED));
        assertEquals(Optional.empty(), MirrorTransitions.reconcile(DesiredMirrorState.MIRRORING, FAILED),
                "FAILED is moved by the retry schedule, not by reconciliation");
        assertEquals(Optional.of(PAUSING), MirrorTransitions.reconcile(DesiredMirrorState.PAUSED, MIRRORING));
        assertEquals(Optional.empty(), MirrorTransitions.reconcile(DesiredMirrorState.PAUSED, PAUSED));
        assertEquals(Optional.of(STOPPING), MirrorTransitions.reconcile(DesiredMirrorState.STOPPED, PAUSED));
        assertEquals(Optional.empty(), MirrorTransitions.reconcile(DesiredMirrorState.STOPPED, STOPPED));
        for (DesiredMirrorState d : DesiredMirrorState.values()) {
            for (MirrorPartitionState a : MirrorPartitionState.values()) {
                MirrorTransitions.reconcile(d, a).ifPresent(next ->
                        assertTrue(MirrorTransitions.isValid(a, next), "reconcile " + d + "/" + a + " -> " + next));
            }
        }
    }

    @Test
    void retryBackoffGrowsExponentiallyWithinBounds() {
        assertEquals(1_000, MirrorTransitions.retryBackoffMs(1, 1_000, 300_000, 0.5));
        assertEquals(8_000, MirrorTransitions.retryBackoffMs(4, 1_000, 300_000, 0.5));
        assertEquals(300_000, MirrorTransitions.retryBackoffMs(30, 1_000, 300_000, 0.5));
        assertEquals(800, MirrorTransitions.retryBackoffMs(1, 1_000, 300_000, 0.0));
        assertEquals(1_200, MirrorTransitions.retryBackoffMs(1, 1_000, 300_000, 0.99999), 1);
    }

    @Test
    void wireValuesRoundTrip() {
        for (MirrorPartitionState s : MirrorPartitionState.values()) {
            assertEquals(Optional.of(s), MirrorPartitionState.fromValue(s.value()));
        }
        assertTrue(MIRRORING.isReadOnly());
        assertFalse(STOPPED.isReadOnly());
    }
}
