package io.twinlog.tests;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Topic changes wait for ZooKeeper on the broker's admin threads, not its request threads: with two request
 * threads and ZooKeeper unreachable, four CreateTopics left waiting do not hold produce to an existing topic.
 */
@Timeout(300)
class AdminRequestThreadsTest {

    @Test
    void createTopicsWaitingForZooKeeperLeaveProduceAnswered() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).withFaultProxies()
                .brokerProperty("num.io.threads", "2").brokerProperty("zookeeper.session.timeout.ms", "30000")
                .build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("audit", 1, (short) 1))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
                producer.send(new ProducerRecord<>("audit", "warm-up".getBytes(StandardCharsets.UTF_8))).get();
                cluster.cutZooKeeper(0);
                List<Admin> admins = new ArrayList<>();
                List<CreateTopicsResult> waiting = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    Admin a = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000));
                    admins.add(a);
                    waiting.add(a.createTopics(List.of(new NewTopic("new-" + i, 1, (short) 1))));
                }
                long slowestMs = 0;
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                for (int i = 0; System.nanoTime() < end; i++) {
                    long start = System.nanoTime();
                    producer.send(new ProducerRecord<>("audit", ("r" + i).getBytes(StandardCharsets.UTF_8)))
                            .get(30, TimeUnit.SECONDS);
                    slowestMs = Math.max(slowestMs, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                }
                assertTrue(waiting.stream().noneMatch(r -> r.all().isDone()),
                        "the topic creations were still waiting for ZooKeeper while the records were produced");
                assertTrue(slowestMs < 3_000, "a produce waited " + slowestMs + " ms behind the topic creations");
                cluster.healZooKeeper(0);
                for (Admin a : admins) {
                    a.close();
                }
            }
        }
    }
}
