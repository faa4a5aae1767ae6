package io.twinlog.server.metrics;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.twinlog.common.HttpListener;
import io.twinlog.common.metrics.BrokerMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * {@code metrics.prometheus.listener}: the broker's metrics in Prometheus' text format at {@code /metrics}, served
 * by the Prometheus Java client's own HTTP server from a registry of this broker's (its Kafka metrics and the
 * JVM's), so several brokers in one JVM each serve their own.
 */
public final class PrometheusEndpoint implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PrometheusEndpoint.class);
    private final HTTPServer server;
    private final String url;

    private PrometheusEndpoint(HTTPServer server, String url) {
        this.server = server;
        this.url = url;
    }

    public static PrometheusEndpoint start(HttpListener listener, BrokerMetrics metrics) throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new KafkaMetricsCollector(metrics));
        JvmMetrics.builder().register(registry);
        HTTPServer server = HTTPServer.builder().hostname(listener.host()).port(listener.port()).registry(registry)
                .buildAndStart();
        String url = listener.url(server.getPort(), "/metrics");
        log.info("Broker {} serves its metrics for Prometheus at {}", metrics.brokerId(), url);
        return new PrometheusEndpoint(server, url);
    }

    /** Where the metrics are served, with the port actually bound. */
    public String url() {
        return url;
    }

    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.close();
    }
}
