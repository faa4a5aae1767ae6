package io.twinlog.dashboard;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.twinlog.common.tasks.TaskHealth;
import io.twinlog.common.tasks.TaskStatus;

import java.util.List;

/**
 * The document {@code GET /api/v1/background-tasks} answers (docs/operations.md, "Background tasks"): the dashboard
 * broker's periodic tasks with the age of each one's last success, its failures and a status, and the names of
 * those that need attention (FAILING, or STALE: no success for over {@value TaskHealth#STALE_PERIODS} periods).
 * Built from this broker's memory alone, so it answers when the cluster does not. Pure: health in, JSON out.
 */
final class BackgroundTasksView {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private BackgroundTasksView() {
    }

    static ObjectNode build(int brokerId, List<TaskHealth> tasks, long nowMs) {
        ObjectNode root = JSON.objectNode();
        root.put("timeMs", nowMs);
        root.put("brokerId", brokerId);
        root.put("stalePeriods", TaskHealth.STALE_PERIODS);
        ArrayNode attention = root.putArray("attention");
        ArrayNode all = root.putArray("tasks");
        for (TaskHealth t : tasks) {
            ObjectNode tn = all.addObject();
            tn.put("name", t.name());
            tn.put("status", t.status().name());
            tn.put("periodMs", t.periodMs());
            tn.put("lastSuccessAgeMs", t.lastSuccessAgeMs());
            tn.put("succeeded", t.succeeded());
            tn.put("consecutiveFailures", t.consecutiveFailures());
            tn.put("failures", t.failures());
            tn.put("lastError", t.lastError());
            if (t.status() != TaskStatus.OK) {
                attention.add(t.name());
            }
        }
        return root;
    }
}
