package io.twinlog.tests.kafka;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

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
        KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
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
