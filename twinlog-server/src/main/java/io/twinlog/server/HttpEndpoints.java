package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.HttpListener;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.tasks.TaskHealth;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.server.metrics.PrometheusEndpoint;
import io.twinlog.server.plugin.DashboardBroker;
import io.twinlog.server.plugin.DashboardFactory;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.server.security.LocalClientConfigs;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The broker's HTTP endpoints, the last parts to start: the mirror dashboard on {@code dashboard.listener} (after
 * the mirror runtime, which it describes; from the {@code twinlog-dashboard} module through
 * {@link DashboardFactory}, decision 112), then the metrics for Prometheus on {@code metrics.prometheus.listener}.
 * They close in the reverse order.
 */
final class HttpEndpoints implements AutoCloseable {
    private final BrokerConfig config;
    private final Time time;
    // volatile: the broker's close() may run on another thread while start-up runs; null when not (yet) started
    private volatile DashboardFactory dashboardFactory;
    private volatile DashboardFactory.Dashboard dashboard;
    private volatile PrometheusEndpoint prometheus;

    HttpEndpoints(BrokerConfig config, Time time) {
        this.config = config;
        this.time = time;
    }

    /**
     * Looks the dashboard module up when {@code dashboard.listener} is set, before anything of the broker starts:
     * a dashboard configured but not installed is refused in one line ({@link ConfigException}).
     */
    void findDashboard() {
        if (config.dashboardListener().isPresent()) {
            dashboardFactory = DashboardFactory.load(HttpEndpoints.class.getClassLoader());
        }
    }

    /** Starts what is configured: the dashboard, then the Prometheus endpoint. */
    void start(MetadataWatcher watcher, BrokerAuthorization authorization, BrokerMetrics metrics) throws IOException {
        if (config.dashboardListener().isPresent()) {
            dashboard = dashboardFactory.start(config.dashboardListener().get(), config.dashboardActionsEnable(),
                    new BrokerView(config, watcher, authorization, metrics), metrics.registry(), time);
        }
        if (config.prometheusListener().isPresent()) {
            prometheus = startPrometheus(config.prometheusListener().get(), metrics);
        }
    }

    private static PrometheusEndpoint startPrometheus(HttpListener listener, BrokerMetrics metrics) {
        try {
            return PrometheusEndpoint.start(listener, metrics);
        } catch (IOException e) {
            throw new ConfigException(BrokerConfig.METRICS_PROMETHEUS_LISTENER + ": cannot serve on "
                    + listener.host() + ":" + listener.port() + ": " + e.getMessage());
        }
    }

    /** The mirror dashboard's URL; empty when it is off or not started. */
    Optional<String> dashboardUrl() {
        return Optional.ofNullable(dashboard).map(DashboardFactory.Dashboard::url);
    }

    /** Where this broker serves its metrics for Prometheus, when it does. */
    Optional<String> prometheusUrl() {
        return Optional.ofNullable(prometheus).map(PrometheusEndpoint::url);
    }

    @Override
    public void close() {
        QuietClose.close("Prometheus endpoint", prometheus);
        QuietClose.close("dashboard", dashboard);
    }

    /** What the dashboard reads from this broker. */
    private static final class BrokerView implements DashboardBroker {
        private final BrokerConfig config;
        private final MetadataWatcher watcher;
        private final BrokerAuthorization authorization;
        private final BrokerMetrics metrics;
        private final String clientListener;

        BrokerView(BrokerConfig config, MetadataWatcher watcher, BrokerAuthorization authorization,
                   BrokerMetrics metrics) {
            this.config = config;
            this.watcher = watcher;
            this.authorization = authorization;
            this.metrics = metrics;
            this.clientListener = config.advertisedListeners().get(0).listenerName();
        }

        @Override
        public int brokerId() {
            return config.brokerId();
        }

        @Override
        public MetadataImage image() {
            return watcher.image();
        }

        @Override
        public String clientListener() {
            return clientListener;
        }

        @Override
        public Optional<Map<String, Object>> localClientConfigs() {
            return LocalClientConfigs.of(config, watcher.image(), config.brokerId());
        }

        @Override
        public boolean authorizerEnabled() {
            return authorization.enabled();
        }

        @Override
        public List<TaskHealth> backgroundTasks() {
            return metrics.backgroundTasks().health();
        }
    }
}
