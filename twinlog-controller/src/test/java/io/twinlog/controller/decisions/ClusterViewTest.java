package io.twinlog.controller.decisions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which brokers a controller decision counts as live, restarted, available. */
@Timeout(5)
class ClusterViewTest {

    @Test
    void aBrokerWithANewEpochHasRestartedAndIsNotAvailableThisRound() {
        ClusterView view = ClusterView.of(TestImages.builder().broker(0, 100).broker(1, 250).build().brokers(),
                Map.of(0, 100L, 1, 101L));
        assertEquals(Set.of(1), view.restarted());
        assertEquals(Set.of(0, 1), view.live());
        assertEquals(Set.of(0), view.available());
        assertEquals(Map.of(0, 100L, 1, 250L), view.brokerEpochs(), "the epochs the next round compares with");
    }

    @Test
    void aNewControllerSeesNoRestart() {
        ClusterView view = ClusterView.of(TestImages.builder().broker(0, 100).broker(1, 250).build().brokers(),
                Map.of());
        assertEquals(Set.of(), view.restarted());
        assertEquals(Set.of(0, 1), view.available());
    }

    @Test
    void aBrokerThatJoinedOrLeftIsNoRestart() {
        ClusterView view = ClusterView.of(TestImages.builder().broker(0, 100).broker(2, 300).build().brokers(),
                Map.of(0, 100L, 1, 101L));
        assertEquals(Set.of(), view.restarted());
        assertEquals(Set.of(0, 2), view.available());
    }

    @Test
    void aBrokerInControlledShutdownIsLiveButNotEligibleForIsr() {
        ClusterView view = ClusterView.of(TestImages.builder().broker(0, 100).broker(1, 101).shuttingDown(1).build()
                .brokers());
        assertEquals(Set.of(0, 1), view.live());
        assertEquals(Set.of(1), view.shuttingDown());
        assertEquals(Set.of(0), view.eligibleForIsr());
    }
}
