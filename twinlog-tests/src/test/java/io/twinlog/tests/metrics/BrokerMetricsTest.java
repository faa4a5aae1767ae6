package io.twinlog.tests.metrics;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Histogram;
import com.yammer.metrics.core.Metered;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import com.yammer.metrics.core.Timer;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaRequests;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.server.metrics.KafkaYammerMetrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka's broker metrics, under Kafka's MBean names, follow real traffic on a 3-broker cluster: records and bytes
 * in and out per topic, request counts and stage times per request type, partition and leader counts, a replica
 * lost (under-replicated, under min ISR, ISR shrink, failed acks=all produce) and back (ISR expand), log offsets,
 * the controller's counts and an election; and the same metrics come out of the Prometheus endpoint in a text
 * format a strict reader accepts, with the usual JMX-exporter names.
 */
@Timeout(300)
class BrokerMetricsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String TOPIC = "metered";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int RECORDS = 100;

    @Test
    void kafkaMetricsFollowTrafficFailuresAndElections() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("replica.lag.time.max.ms", "3000")
                .brokerProperty("metrics.prometheus.listener", "http://127.0.0.1:0").build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1, 2)))
                    .configs(Map.of("min.insync.replicas", "3")))).all().get(30, TimeUnit.SECONDS);
            awaitIsr(admin, Set.of(0, 1, 2));
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                for (int i = 0; i < RECORDS; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, 0, null, ("record-" + i).getBytes()))
                            .get(30, TimeUnit.SECONDS);
                }
            }
            consumeAll(cluster);
            BrokerServer leader = cluster.broker(0);

            Waits.waitUntil("MessagesInPerSec of the topic counts every record", () ->
                    meterCount(leader, server("BrokerTopicMetrics", "MessagesInPerSec", topicTag())) == RECORDS);
            assertTrue(meterCount(leader, server("BrokerTopicMetrics", "MessagesInPerSec", Map.of())) >= RECORDS);
            assertTrue(meterCount(leader, server("BrokerTopicMetrics", "BytesInPerSec", topicTag())) > RECORDS * 8);
            assertTrue(meterCount(leader, server("BrokerTopicMetrics", "TotalProduceRequestsPerSec", topicTag()))
                    >= RECORDS);
            Waits.waitUntil("bytes out to the consumer and to the followers", () ->
                    meterCount(leader, server("BrokerTopicMetrics", "BytesOutPerSec", topicTag())) > RECORDS * 8
                            && meterCount(leader, server("BrokerTopicMetrics", "ReplicationBytesOutPerSec", Map.of()))
                            > RECORDS * 8);
            assertEquals(0, meterCount(leader, server("BrokerTopicMetrics", "FailedProduceRequestsPerSec",
                    topicTag())));
            Waits.waitUntil("request metrics of produce and both kinds of fetch", () ->
                    timedCount(leader, network("TotalTimeMs", "Produce")) >= RECORDS
                            && timedCount(leader, network("RequestQueueTimeMs", "FetchConsumer")) > 0
                            && timedCount(leader, network("RemoteTimeMs", "FetchFollower")) > 0
                            && timedCount(leader, network("ResponseSendTimeMs", "Fetch")) > 0);
            assertTrue(leader.metrics().registry().allMetrics().keySet().stream().anyMatch(n ->
                    n.getMBeanName().startsWith("kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,"
                            + "version=")), "RequestsPerSec per version");
            for (int id = 0; id < 3; id++) {
                int broker = id;
                Waits.waitUntil("LogEndOffset of the replica on broker " + id, () -> RECORDS
                        == ((Number) gauge(cluster.broker(broker), logGauge("LogEndOffset"))).longValue());
                assertTrue(((Number) gauge(cluster.broker(broker), logGauge("Size"))).longValue() > RECORDS * 8);
                assertEquals(0L, ((Number) gauge(cluster.broker(broker), logGauge("LogStartOffset"))).longValue());
            }
            assertEquals(1, intGauge(leader, server("ReplicaManager", "LeaderCount", Map.of()))
                    - leaderCountOfOtherTopics(cluster, 0));
            assertTrue(intGauge(leader, server("ReplicaManager", "PartitionCount", Map.of())) >= 1);
            assertEquals(0, intGauge(leader, server("ReplicaManager", "UnderReplicatedPartitions", Map.of())));
            double idle = ((Number) gauge(leader, KafkaYammerMetrics.getMetricName("kafka.network", "SocketServer",
                    "NetworkProcessorAvgIdlePercent"))).doubleValue();
            assertTrue(idle > 0 && idle <= 1, "NetworkProcessorAvgIdlePercent " + idle);

            int controllers = 0;
            for (int id = 0; id < 3; id++) {
                controllers += intGauge(cluster.broker(id), controller("ActiveControllerCount"));
            }
            assertEquals(1, controllers, "exactly one active controller");
            BrokerServer active = activeController(cluster);
            assertTrue(intGauge(active, controller("GlobalTopicCount")) >= 1);
            assertTrue(intGauge(active, controller("GlobalPartitionCount")) >= 1);
            assertEquals(0, intGauge(active, controller("OfflinePartitionsCount")));

            checkPrometheus(leader);

            // a client naming topics that do not exist creates no meters (Kafka counts only topics it has)
            try (RawKafkaConnection raw = RawKafkaConnection.to(cluster.bootstrapServers())) {
                ProduceResponse refused = raw.send(KafkaRequests.produce((short) 11, "no-such-topic", Uuid.ZERO_UUID,
                        0, (short) 1, KafkaRequests.records(1, "x")));
                assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(),
                        KafkaRequests.onlyPartition(refused).errorCode());
            }
            for (int id = 0; id < 3; id++) {
                assertTrue(cluster.broker(id).metrics().registry().allMetrics().keySet().stream()
                        .noneMatch(n -> n.getMBeanName().contains("topic=no-such-topic")), "broker " + id);
            }
            // a deleted topic's meters go with it
            admin.createTopics(List.of(new NewTopic("deleted", Map.of(0, List.of(0))))).all().get(30, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
                producer.send(new ProducerRecord<>("deleted", 0, null, "x".getBytes())).get(30, TimeUnit.SECONDS);
            }
            MetricName deletedIn = server("BrokerTopicMetrics", "MessagesInPerSec", Map.of("topic", "deleted"));
            assertEquals(1, meterCount(leader, deletedIn));
            admin.deleteTopics(List.of("deleted")).all().get(30, TimeUnit.SECONDS);
            Waits.waitUntil("the deleted topic's meters removed", () ->
                    !leader.metrics().registry().allMetrics().containsKey(deletedIn));

            // a replica goes away: under-replicated and under min ISR, an ISR shrink, acks=all refused
            cluster.stopBroker(2);
            Waits.waitUntil("the ISR shrinks without broker 2", () ->
                    meterCount(leader, server("ReplicaManager", "IsrShrinksPerSec", Map.of())) >= 1
                            && intGauge(leader, server("ReplicaManager", "UnderReplicatedPartitions", Map.of())) >= 1
                            && intGauge(leader, server("ReplicaManager", "UnderMinIsrPartitionCount", Map.of())) >= 1,
                    TIMEOUT);
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 3_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000,
                    ProducerConfig.LINGER_MS_CONFIG, 0))) {
                assertThrows(ExecutionException.class, () ->
                        producer.send(new ProducerRecord<>(TOPIC, 0, null, "refused".getBytes()))
                                .get(30, TimeUnit.SECONDS));
            }
            assertTrue(meterCount(leader, server("BrokerTopicMetrics", "FailedProduceRequestsPerSec", topicTag())) >= 1,
                    "NOT_ENOUGH_REPLICAS is a failed produce request");

            // it comes back: an ISR expand, nothing under-replicated
            cluster.startBroker(2);
            Waits.waitUntil("the ISR expands back to broker 2", () ->
                    meterCount(leader, server("ReplicaManager", "IsrExpandsPerSec", Map.of())) >= 1
                            && intGauge(leader, server("ReplicaManager", "UnderReplicatedPartitions", Map.of())) == 0,
                    TIMEOUT);
            awaitIsr(admin, Set.of(0, 1, 2));

            // a leader that is not the controller goes away: the controller elects another and times it
            admin.createTopics(List.of(new NewTopic("elected", Map.of(0, List.of(0, 1, 2), 1, List.of(1, 2, 0)))))
                    .all().get(30, TimeUnit.SECONDS);
            BrokerServer controller = activeController(cluster);
            int leaving = controller.config().brokerId() == 0 ? 1 : 0;
            Waits.waitUntil("broker " + leaving + " leads its partition of 'elected' with a full ISR", () ->
                    cluster.broker(leaving).replicaManager().partitions().stream().anyMatch(p -> p.isLeader()
                            && p.topicPartition().topic().equals("elected") && p.isr().size() == 3));
            cluster.stopBroker(leaving);
            MetricName elections = KafkaYammerMetrics.getMetricName("kafka.controller", "ControllerStats",
                    "LeaderElectionRateAndTimeMs");
            Waits.waitUntil("the election counted by the controller", () -> timedCount(controller, elections) >= 1,
                    TIMEOUT);
            assertEquals(0, meterCount(controller, KafkaYammerMetrics.getMetricName("kafka.controller",
                    "ControllerStats", "UncleanLeaderElectionsPerSec")));
        }
    }

    /** The Prometheus endpoint serves the same metrics, Kafka-exporter names, in a format a strict reader takes. */
    private static void checkPrometheus(BrokerServer broker) throws Exception {
        String url = broker.prometheusUrl().orElseThrow();
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"),
                "text format: " + response.headers().firstValue("Content-Type"));
        // the Prometheus client orders labels by name (a summary's quantile comes last)
        Map<String, Double> series = PrometheusText.parse(response.body());
        assertEquals(RECORDS, value(series, "kafka_server_brokertopicmetrics_messagesin_total{topic=\"metered\"}"));
        assertEquals(RECORDS, value(series, "kafka_log_log_logendoffset{partition=\"0\",topic=\"metered\"}"));
        assertEquals(0.0, value(series, "kafka_server_replicamanager_underreplicatedpartitions"));
        assertTrue(series.containsKey(
                "kafka_network_requestmetrics_totaltimems{request=\"Produce\",quantile=\"0.99\"}"),
                () -> names(series, "kafka_network_requestmetrics_totaltimems"));
        assertTrue(series.get("kafka_network_requestmetrics_totaltimems_count{request=\"Produce\"}") >= RECORDS);
        assertTrue(series.containsKey("kafka_controller_kafkacontroller_activecontrollercount"));
        double handlerIdle = value(series, "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent");
        assertTrue(handlerIdle >= 0 && handlerIdle <= 1, "request handlers' idle fraction " + handlerIdle);
        assertTrue(series.keySet().stream().anyMatch(k -> k.startsWith(
                "kafka_server_socket_server_metrics_connection_count{")), () -> names(series, "kafka_server_socket"));
        assertTrue(series.keySet().stream().anyMatch(k -> k.startsWith("jvm_memory_used_bytes")), "JVM metrics");
        // the hosted group coordinator's own metrics, in the broker's registries
        assertTrue(series.containsKey("kafka_coordinator_group_groupmetadatamanager_numoffsets"),
                () -> names(series, "kafka_coordinator"));
        assertTrue(series.keySet().stream().anyMatch(k -> k.startsWith(
                "kafka_server_group_coordinator_metrics_group_count")), () -> names(series, "kafka_server_group"));
        // every periodic task of the broker, ours and those Kafka's LogManager schedules, with its last success's age
        for (String task : List.of("metadata-resync", "isr-expiration", "mirror-manager-tick", "mirror-metadata-sync",
                "twinlog-highwatermark-checkpoint", "kafka-log-retention", "kafka-recovery-point-checkpoint")) {
            String labels = "{task=\"" + task + "\"}";
            double ageMs = value(series, "kafka_server_backgroundtask_lastsuccessagems" + labels);
            assertTrue(ageMs >= 0 && ageMs < TimeUnit.MINUTES.toMillis(10), task + " last succeeded " + ageMs
                    + " ms ago");
            assertEquals(0.0, value(series, "kafka_server_backgroundtask_consecutivefailures" + labels), task);
            assertEquals(0.0, value(series, "kafka_server_backgroundtask_failures_total" + labels), task);
        }
    }

    private static double value(Map<String, Double> series, String key) {
        Double v = series.get(key);
        if (v == null) {
            throw new AssertionError("no series " + key + "; series of that name:\n"
                    + names(series, key.substring(0, key.indexOf('{') > 0 ? key.indexOf('{') : key.length())));
        }
        return v;
    }

    private static String names(Map<String, Double> series, String prefix) {
        return series.keySet().stream().filter(k -> k.startsWith(prefix)).limit(20).collect(Collectors.joining("\n"));
    }

    private static void consumeAll(TestCluster cluster) {
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of(
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"))) {
            consumer.assign(List.of(TP));
            int[] read = {0};
            Waits.waitUntil("the consumer reads every record", () -> {
                read[0] += consumer.poll(Duration.ofMillis(200)).count();
                return read[0] >= RECORDS;
            });
        }
    }

    private static void awaitIsr(Admin admin, Set<Integer> isr) {
        Waits.waitFor("ISR " + isr, () -> {
            TopicPartitionInfo info = admin.describeTopics(List.of(TOPIC)).allTopicNames()
                    .get(10, TimeUnit.SECONDS).get(TOPIC)
                    .partitions().get(0);
            return info.isr().stream().map(n -> n.id()).collect(Collectors.toSet());
        }, isr::equals, TIMEOUT);
    }

    private static BrokerServer activeController(TestCluster cluster) {
        for (int id : cluster.runningBrokerIds()) {
            if (intGauge(cluster.broker(id), controller("ActiveControllerCount")) == 1) {
                return cluster.broker(id);
            }
        }
        throw new AssertionError("no active controller");
    }

    /** Leaderships broker {@code id} holds besides the test topic's (the offsets topic may have some). */
    private static int leaderCountOfOtherTopics(TestCluster cluster, int id) {
        return (int) cluster.broker(id).replicaManager().partitions().stream()
                .filter(p -> p.isLeader() && !p.topicPartition().topic().equals(TOPIC)).count();
    }

    private static Map<String, String> topicTag() {
        return Map.of("topic", TOPIC);
    }

    private static MetricName server(String type, String name, Map<String, String> tags) {
        return KafkaYammerMetrics.getMetricName("kafka.server", type, name, new LinkedHashMap<>(tags));
    }

    private static MetricName controller(String name) {
        return KafkaYammerMetrics.getMetricName("kafka.controller", "KafkaController", name);
    }

    private static MetricName network(String name, String request) {
        return KafkaYammerMetrics.getMetricName("kafka.network", "RequestMetrics", name,
                new LinkedHashMap<>(Map.of("request", request)));
    }

    private static MetricName logGauge(String name) {
        LinkedHashMap<String, String> tags = new LinkedHashMap<>();
        tags.put("topic", TOPIC);
        tags.put("partition", "0");
        return KafkaYammerMetrics.getMetricName("kafka.log", "Log", name, tags);
    }

    private static Metric metric(BrokerServer broker, MetricName name) {
        Metric m = broker.metrics().registry().allMetrics().get(name);
        if (m == null) {
            throw new AssertionError("no metric " + name.getMBeanName() + " on broker " + broker.config().brokerId());
        }
        return m;
    }

    private static long meterCount(BrokerServer broker, MetricName name) {
        Metric m = broker.metrics().registry().allMetrics().get(name);
        return m == null ? 0 : ((Metered) m).count();
    }

    private static long timedCount(BrokerServer broker, MetricName name) {
        Metric m = broker.metrics().registry().allMetrics().get(name);
        if (m == null) {
            return 0;
        }
        return m instanceof Timer t ? t.count() : ((Histogram) m).count();
    }

    private static Object gauge(BrokerServer broker, MetricName name) {
        return ((Gauge<?>) metric(broker, name)).value();
    }

    private static int intGauge(BrokerServer broker, MetricName name) {
        return ((Number) gauge(broker, name)).intValue();
    }
}
