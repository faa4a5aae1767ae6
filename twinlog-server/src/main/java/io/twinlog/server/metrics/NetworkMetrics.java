package io.twinlog.server.metrics;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.metrics.MetricsGroup;
import io.twinlog.protocol.RequestChannel;
import org.apache.kafka.common.metrics.KafkaMetric;

/**
 * Kafka's network gauges over the listeners' selectors: {@code kafka.network:type=SocketServer,
 * name=NetworkProcessorAvgIdlePercent} (the mean over every network thread of its selector's {@code io-wait-ratio},
 * as Kafka computes it: near 0 means the network threads are saturated) and {@code kafka.network:type=RequestChannel,
 * name=RequestQueueSize}.
 */
public final class NetworkMetrics {
    private static final String SELECTOR_GROUP = "socket-server-metrics";

    private NetworkMetrics() {
    }

    public static void register(BrokerMetrics metrics, RequestChannel channel) {
        MetricsGroup socketServer = metrics.group("kafka.network", "SocketServer");
        socketServer.newGauge("NetworkProcessorAvgIdlePercent", () -> averageIdle(metrics));
        metrics.group("kafka.network", "RequestChannel").newGauge("RequestQueueSize", channel::size);
    }

    private static double averageIdle(BrokerMetrics metrics) {
        double sum = 0;
        int n = 0;
        for (KafkaMetric m : metrics.kafkaMetrics().metrics().values()) {
            if (m.metricName().name().equals("io-wait-ratio") && m.metricName().group().equals(SELECTOR_GROUP)
                    && m.metricValue() instanceof Double idle && !idle.isNaN()) {
                sum += Math.min(1.0, idle);
                n++;
            }
        }
        // no network thread yet (start-up) or any more (shutdown): idle, as Kafka reports it, not saturated
        return n == 0 ? 1.0 : sum / n;
    }
}
