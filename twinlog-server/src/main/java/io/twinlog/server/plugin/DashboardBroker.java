package io.twinlog.server.plugin;

import io.twinlog.common.tasks.TaskHealth;
import io.twinlog.controller.metadata.MetadataImage;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What the mirror dashboard reads from its broker; the broker implements it, the dashboard module only reads. */
public interface DashboardBroker {
    int brokerId();

    MetadataImage image();

    /** The listener name clients use (the first advertised listener); its endpoints make the bootstrap list. */
    String clientListener();

    /** The broker's own client configs for its inter-broker listener; empty before any broker registered. */
    Optional<Map<String, Object>> localClientConfigs();

    boolean authorizerEnabled();

    /** This broker's periodic tasks and their health (decision 63). */
    default List<TaskHealth> backgroundTasks() {
        return List.of();
    }
}
