package io.twinlog.tests;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Admin requests have deadlines, and config changes lose no update: a CreateTopics still queued for an admin thread
 * when its timeout passes is never executed, one that does not fit the bounded queue is refused at once, and concurrent IncrementalAlterConfigs from two clients on two brokers
 * of three, each setting keys of its own on one topic, all survive.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AdminDeadlinesTest {
    private static final String ADMIN_THREAD_PREFIX = "twinlog-admin-0-";

    @Test
    void aCreateTopicsQueuedPastItsTimeoutIsNotExecutedLater() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).withFaultProxies()
                .brokerProperty("zookeeper.session.timeout.ms", "30000").build().start();
             Admin holder = longWaitingAdmin(cluster);
             Admin secondHolder = longWaitingAdmin(cluster);
             Admin late = longWaitingAdmin(cluster)) {
            List<CreateTopicsResult> held = holdBothAdminThreads(cluster, holder, secondHolder);

            CreateTopicsResult queued = late.createTopics(List.of(new NewTopic("late-0", 1, (short) 1)),
                    new CreateTopicsOptions().timeoutMs(1_500));
            ExecutionException timedOut = assertThrows(ExecutionException.class,
                    () -> queued.all().get(30, TimeUnit.SECONDS));
            assertTrue(timedOut.getCause() instanceof TimeoutException,
                    timedOut.toString());

            cluster.healZooKeeper(0);
            for (CreateTopicsResult r : held) {
                r.all().get(60, TimeUnit.SECONDS);
            }
            // admin requests are taken in order: once this one is answered, late-0 has been taken too
            holder.createTopics(List.of(new NewTopic("after", 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
            Set<String> topics = holder.listTopics().names().get(30, TimeUnit.SECONDS);
            assertTrue(topics.containsAll(Set.of("held-0", "held-1", "after")), topics.toString());
            assertFalse(topics.contains("late-0"), "a creation whose client gave up was executed later: " + topics);
        }
    }

    /**
     * The admin queue is bounded (admin.queued.max.requests, decision 69): with both admin threads held on ZooKeeper
     * and room for one request, of two more creations one waits in the queue and the other is answered
     * REQUEST_TIMED_OUT at once, and never executed.
     */
    @Test
    void aRequestThatDoesNotFitTheAdminQueueIsRefusedAtOnce() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).withFaultProxies()
                .brokerProperty("zookeeper.session.timeout.ms", "30000")
                .brokerProperty("admin.queued.max.requests", "1").build().start();
             Admin holder = longWaitingAdmin(cluster);
             Admin secondHolder = longWaitingAdmin(cluster);
             Admin first = longWaitingAdmin(cluster);
             Admin second = longWaitingAdmin(cluster)) {
            List<CreateTopicsResult> held = holdBothAdminThreads(cluster, holder, secondHolder);

            long sent = System.nanoTime();
            Map<String, CreateTopicsResult> more = Map.of(
                    "more-0", first.createTopics(List.of(new NewTopic("more-0", 1, (short) 1))),
                    "more-1", second.createTopics(List.of(new NewTopic("more-1", 1, (short) 1))));
            String refused = Waits.waitFor("one of the two answered", () -> more.entrySet().stream()
                    .filter(e -> e.getValue().all().isDone()).map(Map.Entry::getKey).findFirst(),
                    Optional::isPresent).orElseThrow();
            long answeredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            ExecutionException full = assertThrows(ExecutionException.class, () -> more.get(refused).all().get());
            assertTrue(full.getCause() instanceof TimeoutException
                    && full.getCause().getMessage().contains("admin queue is full"), full.toString());
            assertTrue(answeredMs < 10_000, "refused after " + answeredMs + " ms");
            String queued = refused.equals("more-0") ? "more-1" : "more-0";
            assertFalse(more.get(queued).all().isDone(), "the other one waits in the queue");

            cluster.healZooKeeper(0);
            for (CreateTopicsResult r : held) {
                r.all().get(60, TimeUnit.SECONDS);
            }
            more.get(queued).all().get(60, TimeUnit.SECONDS);
            Set<String> topics = holder.listTopics().names().get(30, TimeUnit.SECONDS);
            assertTrue(topics.containsAll(Set.of("held-0", "held-1", queued)), topics.toString());
            assertFalse(topics.contains(refused), "a refused creation was executed: " + topics);
        }
    }

    @Test
    void concurrentAltersOfOneTopicFromTwoBrokersAllSurvive() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin setup = cluster.admin();
             Admin onBroker1 = adminOf(cluster, 1);
             Admin onBroker2 = adminOf(cluster, 2)) {
            setup.createTopics(List.of(new NewTopic("shared", 1, (short) 3))).all().get(60, TimeUnit.SECONDS);
            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "shared");
            for (int round = 0; round < 3; round++) {
                // every alter at once, one key each: client 1 its keys through broker 1, client 2 its own through
                // broker 2; a lost update leaves a key missing or at the previous round's value
                List<CompletableFuture<Void>> alters = new ArrayList<>();
                for (int i = 0; i < KEYS.size(); i++) {
                    alters.add(set(i < KEYS.size() / 2 ? onBroker1 : onBroker2, topic, KEYS.get(i), value(round, i)));
                }
                for (CompletableFuture<Void> f : alters) {
                    f.get(120, TimeUnit.SECONDS);
                }
                // an alter is answered once the broker it went to applied it; the broker a describe reaches may
                // read the last write a moment later, so wait for the round's values (a lost update never comes)
                int r = round;
                Map<String, String> expected = new HashMap<>();
                for (int i = 0; i < KEYS.size(); i++) {
                    expected.put(KEYS.get(i), value(r, i));
                }
                Map<String, String> overrides = Waits.waitFor("round " + round + "'s values described",
                        () -> overrides(setup, topic), expected::equals, Duration.ofSeconds(30));
                assertEquals(expected, overrides, "round " + r);
            }
        }
    }

    /**
     * Topic configs that accept any large number and are checked against no other config (Twinlog validates the
     * complete set with Kafka's rules); the first half set by one client, the second by the other.
     */
    private static final List<String> KEYS = List.of("retention.ms", "retention.bytes", "segment.ms",
            "segment.bytes", "segment.jitter.ms", "flush.messages", "flush.ms", "max.message.bytes",
            "index.interval.bytes", "delete.retention.ms", "max.compaction.lag.ms", "file.delete.delay.ms",
            "message.timestamp.before.max.ms", "message.timestamp.after.max.ms");

    private static String value(int round, int key) {
        return Integer.toString(10_000_000 + round * 1_000 + key);
    }

    private static CompletableFuture<Void> set(Admin admin, ConfigResource topic, String name, String value) {
        Collection<AlterConfigOp> ops = List.of(new AlterConfigOp(new ConfigEntry(name, value),
                AlterConfigOp.OpType.SET));
        return admin.incrementalAlterConfigs(Map.of(topic, ops)).all().toCompletionStage().toCompletableFuture();
    }

    private static Map<String, String> overrides(Admin admin, ConfigResource topic) throws Exception {
        Config config = admin.describeConfigs(List.of(topic)).all().get(30, TimeUnit.SECONDS).get(topic);
        Map<String, String> out = new TreeMap<>();
        for (ConfigEntry e : config.entries()) {
            if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                out.put(e.name(), e.value());
            }
        }
        return out;
    }

    /**
     * Cuts broker 0 off ZooKeeper and has both its admin threads wait on it with a creation each (two clients: a
     * connection sends its next request only once the previous one is answered).
     */
    private static List<CreateTopicsResult> holdBothAdminThreads(TestCluster cluster, Admin holder,
                                                                 Admin secondHolder) {
        // admin threads of an earlier test's broker 0 in this JVM may still be busy: count only new ones
        long busyBefore = busyAdminThreads();
        cluster.cutZooKeeper(0);
        List<CreateTopicsResult> held = List.of(
                holder.createTopics(List.of(new NewTopic("held-0", 1, (short) 1))),
                secondHolder.createTopics(List.of(new NewTopic("held-1", 1, (short) 1))));
        Waits.waitUntil("both admin threads are busy with the held creations",
                () -> busyAdminThreads() - busyBefore == 2);
        return held;
    }

    private static Admin adminOf(TestCluster cluster, int brokerId) {
        Map<String, Object> p = new HashMap<>(cluster.clientProperties());
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.broker(brokerId).bootstrapServers());
        return Admin.create(p);
    }

    private static Admin longWaitingAdmin(TestCluster cluster) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 90_000,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 90_000));
    }

    /** Admin threads of broker 0 inside a CreateTopics handler. */
    private static long busyAdminThreads() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getName().startsWith(ADMIN_THREAD_PREFIX))
                .filter(e -> Arrays.stream(e.getValue())
                        .anyMatch(frame -> frame.getClassName().endsWith("CreateTopicsHandler")))
                .count();
    }
}
