package io.twinlog.tests.metrics;

import io.twinlog.testkit.BrokerProcess;
import io.twinlog.testkit.BrokerProcesses;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka's MBean names read the way jconsole and the JMX exporter read them: over a remote JMX connection to a broker
 * in its own JVM, started with Kafka's default {@code metric.reporters} (the JMX reporter) and the JVM's standard
 * remote-JMX options.
 */
@Timeout(120)
class JmxMetricsTest {
    private static final int RECORDS = 20;
    @RegisterExtension
    final BrokerProcesses processes = new BrokerProcesses("jmx-metrics");

    @Test
    void kafkaMBeansAreReadableOverRemoteJmx() throws Exception {
        int jmxPort = freePort();
        BrokerProcess broker = processes.create("broker", Map.of()).withJvm(List.of(
                "-Dcom.sun.management.jmxremote.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.rmi.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.authenticate=false",
                "-Dcom.sun.management.jmxremote.ssl=false",
                "-Djava.rmi.server.hostname=127.0.0.1"), Map.of());
        broker.start();
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic("jmx", 1, (short) 1))).all()
                    .get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>("jmx", 0, null, new byte[100])).get(30, TimeUnit.SECONDS);
            }
        }
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPort + "/jmxrmi");
        try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
            MBeanServerConnection jmx = connector.getMBeanServerConnection();
            Waits.waitUntil("MessagesInPerSec of topic jmx over JMX", () -> ((Number) jmx.getAttribute(
                    new ObjectName("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=jmx"), "Count"))
                    .longValue() == RECORDS);
            assertTrue(number(jmx, "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec", "Count") > RECORDS * 100);
            assertEquals(1, number(jmx, "kafka.controller:type=KafkaController,name=ActiveControllerCount", "Value"));
            assertTrue(number(jmx, "kafka.server:type=ReplicaManager,name=PartitionCount", "Value") >= 1);
            assertEquals(0, number(jmx, "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", "Value"));
            assertEquals(RECORDS, number(jmx, "kafka.log:type=Log,name=LogEndOffset,topic=jmx,partition=0", "Value"));
            assertTrue(number(jmx, "kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce", "Count")
                    >= RECORDS);
            jmx.getAttribute(new ObjectName("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce"),
                    "99thPercentile");
            jmx.getAttribute(new ObjectName("kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent"),
                    "Value");
            jmx.getAttribute(new ObjectName("kafka.server:type=KafkaRequestHandlerPool,"
                    + "name=RequestHandlerAvgIdlePercent"), "OneMinuteRate");
            assertTrue(number(jmx, "kafka.server:type=socket-server-metrics,listener=PLAINTEXT,networkProcessor=0",
                    "connection-creation-total") >= 1, "kafka-clients metrics under kafka.server");
        }
    }

    private static long number(MBeanServerConnection jmx, String mbean, String attribute) throws Exception {
        return ((Number) jmx.getAttribute(new ObjectName(mbean), attribute)).longValue();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
