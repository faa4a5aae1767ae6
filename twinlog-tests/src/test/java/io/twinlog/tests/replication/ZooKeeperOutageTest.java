package io.twinlog.tests.replication;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.BrokerProcess;
import io.twinlog.testkit.BrokerProcesses;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.testkit.ZooKeeperProcess;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cluster outlives its ZooKeeper (issue 25, point 5): brokers in their own JVMs share a ZooKeeper in its own
 * JVM, which is killed under steady acks=all producers and started again on its data. While it is away the
 * leaders keep serving (acks go on); afterwards every broker is registered again, every partition has a leader with
 * its full ISR, the producers went on by themselves without a failed send, every acknowledged record is in the log,
 * and no two brokers acted as controller at once (from the brokers' own logs). In the first and the last case a
 * mirror from a source cluster (written to throughout) runs into those brokers across the outage, and ends with
 * every record the source acknowledged at its offset.
 *
 * <p>With {@code zookeeper.session.timeout.ms} at 6 s the long outage (13 s) expires every session; the short one
 * (2 s, and ZooKeeper's start) expires none of the 15 s sessions.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ZooKeeperOutageTest {
    private static final int PARTITIONS = 3;
    private static final TopicPartition MIRRORED = new TopicPartition("events", 0);
    private static final int SHORT_SESSION_TIMEOUT_MS = 6_000;
    private static final int LONG_SESSION_TIMEOUT_MS = 15_000;
    private static final Pattern BECAME = Pattern.compile(
            "^\\[(\\S+)\\].*Became the controller with controller epoch (\\d+)");
    private static final Pattern RESIGNED = Pattern.compile(
            "^\\[(\\S+)\\].*No longer the controller \\(epoch (\\d+)\\): (.*)");

    private ZooKeeperProcess zooKeeper;
    /** The brokers' JVMs: killed after each test, their log tails printed first when it failed. */
    @RegisterExtension
    final BrokerProcesses processes = new BrokerProcesses("zk-outage");
    private final List<BrokerProcess> brokers = new ArrayList<>();
    private final List<ProducerLoop> producers = new ArrayList<>();
    private TestCluster source;
    private ProducerLoop sourceProducer;

    @AfterEach
    void cleanUp() throws InterruptedException {
        producers.forEach(ProducerLoop::close);
        if (sourceProducer != null) {
            sourceProducer.close();
        }
        if (source != null) {
            source.close();
        }
        for (BrokerProcess b : brokers) {
            b.close();
        }
        if (zooKeeper != null) {
            zooKeeper.close();
        }
    }

    @Test
    void threeBrokersAndAMirrorOutliveAnOutageLongerThanTheSessionTimeout() throws Exception {
        runOutage(3, Duration.ofSeconds(13), SHORT_SESSION_TIMEOUT_MS, true, true);
    }

    @Test
    void threeBrokersOutliveAnOutageShorterThanTheSessionTimeout() throws Exception {
        // killed for 2 s, then ZooKeeper's own start (a JVM, a few seconds here) is part of the outage too
        runOutage(3, Duration.ofSeconds(2), LONG_SESSION_TIMEOUT_MS, false, false);
    }

    @Test
    void oneBrokerOutlivesAnOutageLongerThanTheSessionTimeout() throws Exception {
        runOutage(1, Duration.ofSeconds(13), SHORT_SESSION_TIMEOUT_MS, true, false);
    }

    @Test
    void oneBrokerAndAMirrorOutliveAnOutageShorterThanTheSessionTimeout() throws Exception {
        runOutage(1, Duration.ofSeconds(2), LONG_SESSION_TIMEOUT_MS, false, true);
    }

    /**
     * @param withMirror also mirror a topic from a source cluster (in this JVM, with its own ZooKeeper) into the
     *                   brokers whose ZooKeeper goes away, while the source is written to
     */
    private void runOutage(int brokerCount, Duration outage, int sessionTimeoutMs, boolean sessionsExpire,
                           boolean withMirror) throws Exception {
        zooKeeper = new ZooKeeperProcess(new File(processes.directory(), "zookeeper"));
        zooKeeper.start();
        for (int id = 0; id < brokerCount; id++) {
            BrokerProcess broker = processes.create("broker-" + id, Map.of(
                    "broker.id", Integer.toString(id),
                    "zookeeper.connect", zooKeeper.connectString(),
                    "zookeeper.session.timeout.ms", Integer.toString(sessionTimeoutMs),
                    "default.replication.factor", Integer.toString(brokerCount)));
            broker.start();
            brokers.add(broker);
        }
        String bootstrap = brokers.get(0).bootstrapServers();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
             MirrorAdmin mirrors = MirrorAdmin.create(bootstrap, Duration.ofSeconds(60))) {
            Waits.waitUntil(brokerCount + " brokers registered",
                    () -> admin.describeCluster().nodes().get().size() == brokerCount);
            admin.createTopics(List.of(new NewTopic("steady", PARTITIONS, (short) brokerCount)
                    .configs(Map.of("min.insync.replicas", Integer.toString(Math.min(2, brokerCount))))))
                    .all().get();
            awaitEveryPartitionLedWithFullIsr(admin, brokerCount);

            for (int p = 0; p < PARTITIONS; p++) {
                producers.add(new ProducerLoop(producer(bootstrap), new TopicPartition("steady", p), "p" + p)
                        .start());
            }
            producers.forEach(loop -> loop.awaitMoreAcked(200, Duration.ofSeconds(30)));
            if (withMirror) {
                startMirror(mirrors);
            }
            zooKeeper.kill();
            long killedAtNanos = System.nanoTime();
            // leaders keep serving while ZooKeeper is away: every partition's acks go on, through the whole outage
            Waits.waitUntil("the " + outage.toSeconds() + " s outage to pass, acks going on", () -> {
                producers.forEach(loop -> loop.awaitMoreAcked(50, Duration.ofSeconds(10)));
                return System.nanoTime() - killedAtNanos >= outage.toNanos();
            }, outage.plusSeconds(30));
            if (sessionsExpire) {
                for (BrokerProcess b : brokers) {
                    assertTrue(b.logFile().exists() && log(b).contains("ZooKeeper session of broker"),
                            "every broker's session expired during the outage");
                }
            }
            zooKeeper.start();

            if (sessionsExpire) {
                // the nodes of the expired sessions still show every broker and the old controller for a while
                Waits.waitUntil("a controller elected after the outage", () -> controllerEpochs().size() >= 2,
                        Duration.ofSeconds(60));
            }
            Waits.waitUntil(brokerCount + " brokers registered again",
                    () -> admin.describeCluster().nodes().get().size() == brokerCount, Duration.ofSeconds(60));
            awaitEveryPartitionLedWithFullIsr(admin, brokerCount);
            // the producers go on by themselves after ZooKeeper is back, too
            producers.forEach(loop -> loop.awaitMoreAcked(500, Duration.ofSeconds(30)));
            if (withMirror) {
                awaitMirrorCaughtUp(mirrors, bootstrap);
            }
        }
        producers.forEach(ProducerLoop::stop);
        for (ProducerLoop loop : producers) {
            assertEquals(List.of(), loop.errors(), "no send failed");
        }
        for (int p = 0; p < PARTITIONS; p++) {
            assertAckedAtTheirOffsets(bootstrap, new TopicPartition("steady", p), producers.get(p).acked());
        }
        if (withMirror) {
            // the mirror kept the source's offsets: every record the source acknowledged is at its offset
            assertAckedAtTheirOffsets(bootstrap, MIRRORED, sourceProducer.acked());
        }
        assertOneControllerAtATime(sessionsExpire);
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static void awaitEveryPartitionLedWithFullIsr(Admin admin, int brokerCount) {
        Waits.waitFor("every partition of steady led, with all " + brokerCount + " replicas in sync", () -> {
            TopicDescription d = admin.describeTopics(List.of("steady")).allTopicNames().get().get("steady");
            return d.partitions();
        }, partitions -> partitions.size() == PARTITIONS && partitions.stream().allMatch(
                (TopicPartitionInfo p) -> p.leader() != null && p.leader().id() >= 0 && p.isr().size() == brokerCount),
                Duration.ofSeconds(60));
    }

    /** A source cluster writing to {@link #MIRRORED}, mirrored as mirror {@code m}; returns once it is MIRRORING. */
    private void startMirror(MirrorAdmin mirrors) throws Exception {
        source = TestCluster.builder().brokers(1).build().start();
        try (Admin sourceAdmin = source.admin()) {
            sourceAdmin.createTopics(List.of(new NewTopic(MIRRORED.topic(), 1, (short) 1))).all().get();
        }
        sourceProducer = new ProducerLoop(source, MIRRORED, "source", Map.<String, Object>of(ProducerConfig.ACKS_CONFIG, "all"))
                .start();
        sourceProducer.awaitMoreAcked(200, Duration.ofSeconds(30));
        MirrorSteps.startMirroring(mirrors, "m", source, MIRRORED.topic());
        awaitMirroring(mirrors);
    }

    private static void awaitMirroring(MirrorAdmin mirrors) {
        Waits.waitUntil("mirror m's partition MIRRORING", () -> mirrors.describeClusterMirrors(List.of("m"))
                .get("m").topics().get(MIRRORED.topic()).partitions().stream()
                .allMatch(p -> p.state().equals("MIRRORING")), Duration.ofSeconds(60));
    }

    /** The mirror goes on after the outage: MIRRORING, and up to the source's end once the source stops. */
    private void awaitMirrorCaughtUp(MirrorAdmin mirrors, String bootstrap) {
        sourceProducer.awaitMoreAcked(200, Duration.ofSeconds(30));
        sourceProducer.stop();
        assertEquals(List.of(), sourceProducer.errors(), "no send to the source failed");
        awaitMirroring(mirrors);
        long sourceEnd = sourceProducer.acked().lastKey() + 1;
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            Waits.waitFor("the mirrored partition's end at the source's end " + sourceEnd,
                    () -> consumer.endOffsets(List.of(MIRRORED)).get(MIRRORED), end -> end == sourceEnd,
                    Duration.ofSeconds(60));
        }
    }

    private void assertAckedAtTheirOffsets(String bootstrap, TopicPartition tp, NavigableMap<Long, String> acked) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            long end = acked.lastKey() + 1;
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            Map<Long, String> log = new HashMap<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (consumer.position(tp) < end) {
                assertTrue(System.nanoTime() < deadline, "read " + tp + " up to offset " + end + " within 60 s; at "
                        + consumer.position(tp));
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    log.put(r.offset(), new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            List<String> missing = new ArrayList<>();
            acked.forEach((offset, value) -> {
                if (!value.equals(log.get(offset))) {
                    missing.add(offset + "=" + value + " (log: " + log.get(offset) + ")");
                }
            });
            assertEquals(List.of(), missing.subList(0, Math.min(10, missing.size())),
                    acked.size() + " acknowledged records of " + tp + " at their offsets");
        }
    }

    /**
     * Every controller epoch was claimed once, and each controllership ended (in its holder's log) before the next
     * one began: the brokers' log times come from one machine's clock.
     */
    private void assertOneControllerAtATime(boolean sessionsExpire) throws IOException {
        record Term(int broker, int epoch, LocalTime from, LocalTime to) {
        }
        List<Term> terms = new ArrayList<>();
        boolean resignedOnSessionLoss = false;
        DateTimeFormatter format = DateTimeFormatter.ofPattern("HH:mm:ss,SSS");
        for (int id = 0; id < brokers.size(); id++) {
            Map<Integer, LocalTime> open = new HashMap<>();
            for (String line : Files.readAllLines(brokers.get(id).logFile().toPath())) {
                Matcher became = BECAME.matcher(line);
                Matcher resigned = RESIGNED.matcher(line);
                if (became.find()) {
                    open.put(Integer.parseInt(became.group(2)), LocalTime.parse(became.group(1), format));
                } else if (resigned.find()) {
                    int epoch = Integer.parseInt(resigned.group(2));
                    terms.add(new Term(id, epoch, open.remove(epoch), LocalTime.parse(resigned.group(1), format)));
                    resignedOnSessionLoss |= resigned.group(3).contains("session was lost");
                }
            }
            for (Map.Entry<Integer, LocalTime> e : open.entrySet()) {
                terms.add(new Term(id, e.getKey(), e.getValue(), LocalTime.MAX));
            }
        }
        terms.sort((a, b) -> Integer.compare(a.epoch(), b.epoch()));
        Set<Integer> epochs = new HashSet<>();
        for (int i = 0; i < terms.size(); i++) {
            Term t = terms.get(i);
            assertTrue(t.from() != null && epochs.add(t.epoch()), "controller epoch " + t.epoch()
                    + " claimed once, and its start logged: " + terms);
            if (i > 0) {
                assertTrue(!terms.get(i - 1).to().isAfter(t.from()), "controllership " + terms.get(i - 1)
                        + " ended before " + t + " began: " + terms);
            }
        }
        assertEquals(1, terms.stream().filter(t -> t.to().equals(LocalTime.MAX)).count(),
                "exactly one broker is controller at the end: " + terms);
        if (sessionsExpire) {
            assertTrue(resignedOnSessionLoss, "the controller resigned when its session was lost: " + terms);
        }
    }

    /** Every controller epoch a broker logged claiming. */
    private Set<Integer> controllerEpochs() throws IOException {
        Set<Integer> epochs = new HashSet<>();
        for (BrokerProcess b : brokers) {
            Matcher m = BECAME.matcher("");
            for (String line : Files.readAllLines(b.logFile().toPath())) {
                if (m.reset(line).find()) {
                    epochs.add(Integer.parseInt(m.group(2)));
                }
            }
        }
        return epochs;
    }

    private static String log(BrokerProcess broker) throws IOException {
        return Files.readString(broker.logFile().toPath());
    }
}
