package io.twinlog.tests.kafka;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/** An unmodified Apache Kafka 4.4 cluster of one combined broker and controller, started for a test. */
final class ApacheKafka {
    private ApacheKafka() {
    }

    /** Started and ready, with single-replica internal topics and no initial rebalance delay. */
    static KafkaClusterTestKit startSingleBroker() throws Exception {
        KafkaClusterTestKit kafka = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("group.initial.rebalance.delay.ms", "0").build();
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
