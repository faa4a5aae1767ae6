package io.twinlog.tests.groups;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Static membership (group.instance.id) and session timeouts, classic protocol: a static member that restarts
 * within its session timeout gets its partitions back without a rebalance of the others; one that stays away past
 * the session timeout is removed and its partitions move.
 */
@Timeout(300)
class StaticMembershipTest {
    private static final String TOPIC = "sensors";
    private static final String GROUP = "telemetry";
    private static final int SESSION_TIMEOUT_MS = 6_000;

    @Test
    void staticMemberRestartsWithoutRebalanceAndIsRemovedAfterItsSessionTimeout() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 4, (short) 1))).all().get();
            AtomicInteger rebalancesOfA = new AtomicInteger();
            try (KafkaConsumer<byte[], byte[]> a = member(cluster, null)) {
                a.subscribe(List.of(TOPIC), counting(rebalancesOfA));
                KafkaConsumer<byte[], byte[]> s = member(cluster, "sensor-host-1");
                s.subscribe(List.of(TOPIC));
                awaitSplit(a, s);
                Set<TopicPartition> staticShare = new HashSet<>(s.assignment());
                int rebalancesBefore = rebalancesOfA.get();

                s.close(); // a static member does not leave the group on close
                try (KafkaConsumer<byte[], byte[]> restarted = member(cluster, "sensor-host-1")) {
                    restarted.subscribe(List.of(TOPIC));
                    Waits.waitUntil("the restarted static member gets its partitions back", () -> {
                        a.poll(Duration.ofMillis(20));
                        restarted.poll(Duration.ofMillis(20));
                        return restarted.assignment().equals(staticShare);
                    });
                    for (int i = 0; i < 20; i++) { // keep both polling a while: no rebalance may reach a
                        a.poll(Duration.ofMillis(20));
                        restarted.poll(Duration.ofMillis(20));
                    }
                    assertEquals(rebalancesBefore, rebalancesOfA.get(), "the dynamic member saw no rebalance");
                    assertEquals(4 - staticShare.size(), a.assignment().size());
                    // gone for good (closed, no leave): after the session timeout its partitions move to a
                }
                long goneAt = System.nanoTime();
                Waits.waitUntil("the remaining member owns every partition after the session timeout", () -> {
                    a.poll(Duration.ofMillis(50));
                    return a.assignment().size() == 4;
                }, Duration.ofSeconds(45));
                long waitedMs = (System.nanoTime() - goneAt) / 1_000_000;
                assertTrue(waitedMs >= SESSION_TIMEOUT_MS - 2_000,
                        "removed only after its session timeout, not at close (" + waitedMs + " ms)");
            }
        }
    }

    private static void awaitSplit(KafkaConsumer<byte[], byte[]> a, KafkaConsumer<byte[], byte[]> s) {
        Waits.waitUntil("two members sharing four partitions", () -> {
            a.poll(Duration.ofMillis(20));
            s.poll(Duration.ofMillis(20));
            return a.assignment().size() == 2 && s.assignment().size() == 2;
        });
    }

    private static ConsumerRebalanceListener counting(AtomicInteger rebalances) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    rebalances.incrementAndGet();
                }
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    rebalances.incrementAndGet();
                }
            }
        };
    }

    private static KafkaConsumer<byte[], byte[]> member(TestCluster cluster, String instanceId) {
        Map<String, Object> p = new HashMap<>(Map.of(ConsumerConfig.GROUP_ID_CONFIG, GROUP,
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, SESSION_TIMEOUT_MS,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500,
                ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                "org.apache.kafka.clients.consumer.RangeAssignor"));
        if (instanceId != null) {
            p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
        }
        return cluster.consumer(p);
    }
}
