package io.twinlog.tests.kafka.protocol;

import io.twinlog.tests.kafka.ApacheKafka;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.test.KafkaClusterTestKit;

import java.util.List;
import java.util.Map;

/**
 * An Apache Kafka 4.4 broker and a Twinlog broker, one each, configured alike (no auto-creation, no initial
 * rebalance delay, single replicas) and holding the same topic, so that one request can be sent to both and the
 * answers compared.
 */
final class SideBySideClusters implements AutoCloseable {
    static final String TOPIC = "matrix";

    private final KafkaClusterTestKit kafka;
    private final TestCluster twinlog;
    private final Target kafkaTarget;
    private final Target twinlogTarget;

    private SideBySideClusters(KafkaClusterTestKit kafka, TestCluster twinlog) throws Exception {
        this.kafka = kafka;
        this.twinlog = twinlog;
        this.kafkaTarget = target("Kafka", kafka.bootstrapServers());
        this.twinlogTarget = target("Twinlog", twinlog.bootstrapServers());
    }

    static SideBySideClusters start() throws Exception {
        // compared with Kafka as users run it, not with the test kit's unstable versions
        KafkaClusterTestKit kafka = ApacheKafka.startProductionBroker(Map.of("offsets.topic.num.partitions", "1",
                "auto.create.topics.enable", "false"));
        TestCluster twinlog = null;
        try {
            twinlog = TestCluster.builder().brokers(1)
                    .brokerProperty("offsets.topic.num.partitions", "1")
                    .brokerProperty("auto.create.topics.enable", "false")
                    .brokerProperty("group.initial.rebalance.delay.ms", "0").build().start();
            return new SideBySideClusters(kafka, twinlog);
        } catch (Exception | Error e) {
            if (twinlog != null) {
                twinlog.close();
            }
            kafka.close();
            throw e;
        }
    }

    private static Target target(String name, String bootstrap) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            // a broker may answer UNKNOWN_TOPIC_OR_PARTITION for a moment after CreateTopics (seen once in CI):
            // describe until it is known and led, as clients retry
            TopicDescription described = Waits.waitFor(TOPIC + " led on " + name,
                    () -> admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC),
                    d -> d.partitions().get(0).leader() != null, Waits.DEFAULT_TIMEOUT);
            int brokerId = admin.describeCluster().nodes().get().iterator().next().id();
            return new Target(name, bootstrap, described.topicId(), brokerId);
        }
    }

    Target kafka() {
        return kafkaTarget;
    }

    Target twinlog() {
        return twinlogTarget;
    }

    @Override
    public void close() throws Exception {
        try {
            twinlog.close();
        } finally {
            kafka.close();
        }
    }

    /** One broker to send requests to, with what differs between the two clusters (IDs). */
    record Target(String name, String bootstrap, Uuid topicId, int brokerId) {
        @Override
        public String toString() {
            return name;
        }
    }
}
