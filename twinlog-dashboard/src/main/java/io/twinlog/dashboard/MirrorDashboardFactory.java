package io.twinlog.dashboard;

import com.yammer.metrics.core.MetricsRegistry;
import io.twinlog.common.HttpListener;
import io.twinlog.server.plugin.DashboardBroker;
import io.twinlog.server.plugin.DashboardFactory;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;

/**
 * The broker finds the mirror dashboard through this class ({@code ServiceLoader}, named in
 * {@code META-INF/services/io.twinlog.server.plugin.DashboardFactory}) when {@code dashboard.listener} is set.
 */
public final class MirrorDashboardFactory implements DashboardFactory {
    @Override
    public Dashboard start(HttpListener listener, boolean actionsEnabled, DashboardBroker broker,
                           MetricsRegistry registry, Time time) throws IOException {
        return DashboardServer.start(listener, actionsEnabled, broker, registry, time);
    }
}
