package io.twinlog.tests.kafka;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.server.common.MetadataVersion;

import java.util.HashMap;
import java.util.Map;

/** An unmodified Apache Kafka 4.4 cluster of one combined broker and controller, started for a test. */
public final class ApacheKafka {
    private ApacheKafka() {
    }

    /** Started and ready, with single-replica internal topics and no initial rebalance delay. */
    static KafkaClusterTestKit startSingleBroker() throws Exception {
        return startSingleBroker(Map.of());
    }

    /** As {@link #startSingleBroker()}, with {@code brokerConfigs} on top. */
    public static KafkaClusterTestKit startSingleBroker(Map<String, String> brokerConfigs) throws Exception {
        return start(new TestKitNodes.Builder(), brokerConfigs);
    }

    /**
     * As {@link #startSingleBroker(Map)}, configured as a user's production broker: the latest production metadata
     * version and no unstable API or feature versions (the test kit's defaults enable both, so such a broker
     * advertises, say, InitProducerId v6, which Kafka 4.4 as released does not).
     */
    public static KafkaClusterTestKit startProductionBroker(Map<String, String> brokerConfigs) throws Exception {
        Map<String, String> configs = new HashMap<>(brokerConfigs);
        configs.put("unstable.api.versions.enable", "false");
        configs.put("unstable.feature.versions.enable", "false");
        return start(new TestKitNodes.Builder().setBootstrapMetadataVersion(MetadataVersion.latestProduction()),
                configs);
    }

    private static KafkaClusterTestKit start(TestKitNodes.Builder nodes, Map<String, String> brokerConfigs)
            throws Exception {
        KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes
                .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("group.initial.rebalance.delay.ms", "0");
        brokerConfigs.forEach(builder::setConfigProp);
        KafkaClusterTestKit kafka = builder.build();
        try {
            kafka.format();
            kafka.startup();
            kafka.waitForReadyBrokers();
            return kafka;
        } catch (Exception | Error e) {
            kafka.close();
            throw e;
        }
    }
}
