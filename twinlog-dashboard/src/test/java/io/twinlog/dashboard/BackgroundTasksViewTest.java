package io.twinlog.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.twinlog.common.tasks.TaskHealth;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The background tasks document: each task's health and status, and which ones need attention. */
@Timeout(10)
class BackgroundTasksViewTest {
    private static final long NOW_MS = 1_700_000_000_000L;

    @Test
    void aFailingTaskAndOneWithoutASuccessForOverThreePeriodsNeedAttention() {
        ObjectNode doc = BackgroundTasksView.build(3, List.of(
                new TaskHealth("isr-expiration", 15_000, 200, true, 0, 0, null),
                new TaskHealth("metadata-resync", 2_000, 9_000, true, 4, 11,
                        "org.apache.zookeeper.KeeperException$ConnectionLossException: ConnectionLoss"),
                new TaskHealth("mirror-manager-tick", 500, 1_501, true, 0, 0, null)), NOW_MS);

        assertEquals(NOW_MS, doc.get("timeMs").asLong());
        assertEquals(3, doc.get("brokerId").asInt());
        assertEquals(TaskHealth.STALE_PERIODS, doc.get("stalePeriods").asInt());
        assertEquals(List.of("metadata-resync", "mirror-manager-tick"), texts(doc.get("attention")));
        JsonNode tasks = doc.get("tasks");
        assertEquals(List.of("OK", "FAILING", "STALE"), tasks.findValuesAsText("status"));
        JsonNode failing = tasks.get(1);
        assertEquals(2_000, failing.get("periodMs").asLong());
        assertEquals(9_000, failing.get("lastSuccessAgeMs").asLong());
        assertEquals(4, failing.get("consecutiveFailures").asInt());
        assertEquals(11, failing.get("failures").asLong());
        assertTrue(failing.get("lastError").asText().contains("ConnectionLoss"));
        assertTrue(tasks.get(0).get("lastError").isNull(), "a task that never failed has no error");
    }

    @Test
    void aTaskThatNeverSucceededSaysSo() {
        ObjectNode doc = BackgroundTasksView.build(1, List.of(
                new TaskHealth("kafka-log-retention", 300_000, 1_000, false, 0, 0, null)), NOW_MS);
        JsonNode task = doc.get("tasks").get(0);
        assertEquals(false, task.get("succeeded").asBoolean());
        assertEquals("OK", task.get("status").asText(), "not yet due: its first run is still ahead");
        assertTrue(doc.get("attention").isEmpty());
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
