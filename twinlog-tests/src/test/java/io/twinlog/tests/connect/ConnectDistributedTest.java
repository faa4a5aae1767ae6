package io.twinlog.tests.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.connect.file.FileStreamSinkConnector;
import org.apache.kafka.connect.file.FileStreamSourceConnector;
import org.apache.kafka.connect.storage.StringConverter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A distributed Kafka Connect 4.4 worker against a 3-broker Twinlog cluster (issue 28, point 6): Connect creates
 * its config, offset and status topics compacted, with the partition counts and replication it asks for; a
 * FileStreamSource → topic → FileStreamSink pipeline copies a file's lines; a graceful restart of the worker
 * resumes from the committed offsets without a duplicate, a kill -9 restart loses nothing and re-reads only a
 * contiguous stretch; the status topic is compacted by Twinlog's cleaner. And Connect refuses to start on an
 * offsets topic that is not compacted, which it finds out through Twinlog's DescribeConfigs answer. With exactly-once
 * source support (KIP-618) the source's lines reach the topic exactly once, read read_committed, through a kill -9.
 *
 * <p>The worker runs in a JVM of its own ({@link ConnectWorker}); the brokers run in the test JVM.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ConnectDistributedTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Worker start on a loaded 2-core machine: JVM, plugins, Jetty and Jersey, group join, config topic read. */
    private static final Duration WORKER_START = Duration.ofSeconds(90);
    private static final Duration COPY = Duration.ofSeconds(90);
    private static final String LINES_TOPIC = "lines";

    private static TestCluster cluster;
    /** The class connect-file 4.3.1 needs from Kafka 4.4 under its old name, for the worker's class path. */
    private static Path fileConnectorBridge;

    @TempDir
    static Path classDir;

    @RegisterExtension
    final ConnectWorkers workers = new ConnectWorkers();

    @TempDir
    Path dir;

    @BeforeAll
    static void startCluster() throws Exception {
        fileConnectorBridge = FileConnectorBridge.compile(classDir);
        cluster = TestCluster.builder().brokers(3)
                // the cleaner looks for dirty logs every 0.5 s instead of every 15 s, so that the status topic's
                // compaction shows within the test
                .brokerProperty("log.cleaner.backoff.ms", "500")
                .build().start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void fileStreamPipelineResumesFromItsOffsetsAfterGracefulAndCrashRestarts() throws Exception {
        Path in = dir.resolve("in.txt");
        Path out = dir.resolve("out.txt");
        Files.createFile(in);
        try (Admin admin = cluster.admin()) {
            // one partition: the sink writes the lines in the order the source read them
            admin.createTopics(List.of(new NewTopic(LINES_TOPIC, 1, (short) 3))).all().get();
        }
        ConnectWorker worker = workers.create(dir.resolve("worker"), workerProperties("connect-it", "connect"),
                List.of(fileConnectorBridge));
        worker.start().awaitReady(WORKER_START);

        // Connect created its three topics through CreateTopics and checked them through DescribeConfigs
        Map<String, Uuid> topicIds = assertInternalTopics("connect");

        worker.call("POST", "/connectors", Map.of("name", "src", "config", Map.of(
                "connector.class", FileStreamSourceConnector.class.getName(), "tasks.max", "1",
                "file", in.toString(), "topic", LINES_TOPIC)), 201);
        worker.call("POST", "/connectors", Map.of("name", "sink", "config", Map.of(
                "connector.class", FileStreamSinkConnector.class.getName(), "tasks.max", "1",
                "file", out.toString(), "topics", LINES_TOPIC)), 201);
        appendLines(in, 0, 1_000);
        assertCopiedOnce(awaitCopied(out, 1_000), 1_000, "out.txt after the first 1,000 lines");
        // KIP-875: the source's offset, read back from the offsets topic, is the position after the file's last line
        long fileSize = Files.size(in);
        Waits.waitFor("src's committed offset to reach the end of in.txt (" + fileSize + " bytes)",
                () -> sourcePosition(worker, in), position -> position == fileSize, COPY);

        // graceful restart: the tasks commit their offsets on the way out, so nothing is read twice
        worker.terminate();
        appendLines(in, 1_000, 1_500);
        worker.start().awaitReady(WORKER_START);
        assertCopiedOnce(awaitCopied(out, 1_500), 1_500, "out.txt after a graceful restart");
        assertEquals(topicIds, assertInternalTopics("connect"), "topic IDs after a restart (none re-created)");

        // crash restart: what was read or written since the last commit is done again (at least once)
        appendLines(in, 1_500, 2_000);
        worker.kill();
        worker.start().awaitReady(WORKER_START);
        CopiedLines copied = awaitCopied(out, 2_000);
        assertNull(copied.skipAhead(), "out.txt after a kill -9 restart: " + copied);
        assertTrue(copied.lowestDuplicate() >= 1_000, "only lines read after the graceful restart's commits may be "
                + "copied twice, but line " + copied.lowestDuplicate() + " was: " + copied);
        System.out.printf("kill -9 restart: %d of %d lines in out.txt are re-reads (%s)%n", copied.duplicates(),
                copied.numbers().size(), copied);
        assertEquals(topicIds, assertInternalTopics("connect"), "topic IDs after a crash restart");

        // every start and stop wrote a status for each connector and task: the cleaner keeps the latest of each
        StatusRecords status = Waits.waitFor("Twinlog's cleaner to compact connect-status",
                () -> readStatusTopic("connect-status"), s -> s.records() < s.offsets(), Duration.ofSeconds(60));
        System.out.printf("connect-status compacted: %d records left over %d offsets%n", status.records(),
                status.offsets());
        for (String key : List.of("status-connector-src", "status-connector-sink", "status-task-src-0",
                "status-task-sink-0")) {
            assertEquals("RUNNING", status.latestState(key), key + " in " + status);
        }
    }

    @Test
    void connectRefusesAnInternalTopicThatIsNotCompacted() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("refused-offsets", 1, (short) 3)
                    .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE))))
                    .all().get();
        }
        Map<String, String> properties = workerProperties("connect-refused", "refused");
        // Connect exits from its herder thread, and the shutdown hook that exit runs waits for that same thread to
        // end, twice (worker.sync.timeout.ms + task.shutdown.graceful.timeout.ms + 15 s): 46 s with the defaults.
        // This worker never runs a task, so both are cut to bring the exit within about half a minute.
        properties.put("worker.sync.timeout.ms", "500");
        properties.put("task.shutdown.graceful.timeout.ms", "500");
        ConnectWorker worker = workers.create(dir.resolve("worker"), properties, List.of(fileConnectorBridge));
        int exitCode = worker.start().awaitExit(WORKER_START);
        String log = worker.logText();
        assertTrue(log.contains("'refused-offsets'") && log.contains("is required to have 'cleanup.policy=compact'"),
                "the worker's log names the offsets topic and the cleanup policy it requires");
        assertEquals(1, exitCode, "the worker's exit code");
    }

    /**
     * KIP-618: with {@code exactly.once.source.support=enabled} the source task writes its records and their offsets
     * in transactions (transactional id {@code <group>-<connector>-<task>}), and the leader writes the config topic
     * with its own ({@code connect-cluster-<group>}). The worker is killed while a transaction holds lines in the log
     * uncommitted; the restarted task's producer takes the same transactional id, which aborts that transaction, and
     * the task resumes from the offsets committed with the last committed lines: a read_committed reader sees every
     * line exactly once, while the aborted copies stay in the log for read_uncommitted readers.
     */
    @Test
    void exactlyOnceSourceCopiesEachLineOnceThroughAWorkerCrash() throws Exception {
        String topic = "eos-lines";
        Path in = dir.resolve("in.txt");
        Files.createFile(in);
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get();
        }
        Map<String, String> properties = workerProperties("connect-eos", "eos");
        properties.put("exactly.once.source.support", "enabled");
        ConnectWorker worker = workers.create(dir.resolve("worker"), properties, List.of(fileConnectorBridge));
        worker.start().awaitReady(WORKER_START);
        worker.call("POST", "/connectors", Map.of("name", "src", "config", Map.of(
                "connector.class", FileStreamSourceConnector.class.getName(), "tasks.max", "1",
                "file", in.toString(), "topic", topic,
                // Connect refuses the connector unless it declares exactly-once support (FileStreamSource does)
                "exactly.once.support", "required",
                // one transaction per 10 s instead of one per poll, so that the kill below finds one open
                "transaction.boundary", "interval", "transaction.boundary.interval.ms", "10000")), 201);
        appendLines(in, 0, 1_000);
        assertCopiedOnce(awaitLines(topic, "read_committed", 1_000), 1_000, topic + " read read_committed");

        // a transaction was just committed: the next one, holding the new lines, stays open for about 10 s
        appendLines(in, 1_000, 1_500);
        awaitLines(topic, "read_uncommitted", 1_500);
        worker.kill();
        long stable = endOffset(topic, "read_committed");
        long high = endOffset(topic, "read_uncommitted");
        assertTrue(stable < high, "the kill left a transaction open in " + topic + ": last stable offset " + stable
                + ", high watermark " + high);

        worker.start().awaitReady(WORKER_START);
        assertCopiedOnce(awaitLines(topic, "read_committed", 1_500), 1_500,
                topic + " read read_committed after a kill -9 restart");
        CopiedLines all = readLines(topic, "read_uncommitted");
        assertTrue(all.duplicates() > 0, "the aborted transaction's lines are in the log: " + all);
        System.out.printf("exactly-once kill -9 restart: read_uncommitted %s; read_committed each line once%n", all);

        ToolResult transactions = KafkaTools.run(dir.toFile(), Duration.ofSeconds(60),
                "org.apache.kafka.tools.TransactionsCommand", null, "--bootstrap-server", cluster.bootstrapServers(),
                "list");
        transactions.assertSuccess();
        assertTrue(transactions.stdout().contains("connect-cluster-connect-eos")
                && transactions.stdout().contains("connect-eos-src-0"), "the leader's and the task's transactional "
                + "ids in kafka-transactions.sh list: " + transactions);
    }

    /**
     * A worker of group {@code group} whose internal topics are {@code prefix-configs}, {@code -offsets} and
     * {@code -status}, with Connect's default partition counts (1, 25, 5) and replication factor 3.
     */
    private static Map<String, String> workerProperties(String group, String prefix) {
        Map<String, String> p = new HashMap<>();
        p.put("bootstrap.servers", cluster.bootstrapServers());
        p.put("group.id", group);
        p.put("config.storage.topic", prefix + "-configs");
        p.put("offset.storage.topic", prefix + "-offsets");
        p.put("status.storage.topic", prefix + "-status");
        p.put("key.converter", StringConverter.class.getName());
        p.put("value.converter", StringConverter.class.getName());
        // offsets committed every second, so a crash re-reads little; a lost worker's share is reassigned after
        // 5 s and a killed worker leaves the group after 6 s, so the restarts stay short
        p.put("offset.flush.interval.ms", "1000");
        p.put("scheduled.rebalance.max.delay.ms", "5000");
        p.put("session.timeout.ms", "6000");
        p.put("heartbeat.interval.ms", "1000");
        // the same for the sink task's consumer group: a killed worker's consumer would otherwise hold up the
        // restarted one's join for the consumer's default 45 s session timeout
        p.put("consumer.session.timeout.ms", "6000");
        p.put("consumer.heartbeat.interval.ms", "1000");
        // the connectors are found through their jars' service manifests, without scanning the whole class path
        p.put("plugin.discovery", "service_load");
        // KIP-605: configs of the status topic. A segment rolls on an append 2 s after the last roll, and a little
        // dirt makes a log worth cleaning, so the records of one start are compacted away after the next
        p.put("status.storage.segment.ms", "2000");
        p.put("status.storage.min.cleanable.dirty.ratio", "0.01");
        return p;
    }

    /**
     * Asserts, through Admin, that the worker's three topics are compacted with the expected partitions, 3 replicas
     * each, and the status topic's own segment.ms; returns their topic IDs.
     */
    private static Map<String, Uuid> assertInternalTopics(String prefix) throws Exception {
        Map<String, Integer> partitions = Map.of(prefix + "-configs", 1, prefix + "-offsets", 25,
                prefix + "-status", 5);
        Map<String, Uuid> ids = new TreeMap<>();
        try (Admin admin = cluster.admin()) {
            Map<String, TopicDescription> topics = admin.describeTopics(partitions.keySet()).allTopicNames().get();
            List<ConfigResource> resources = partitions.keySet().stream()
                    .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).collect(Collectors.toList());
            Map<ConfigResource, Config> configs = admin.describeConfigs(resources).all().get();
            for (Map.Entry<String, Integer> expected : partitions.entrySet()) {
                String topic = expected.getKey();
                TopicDescription description = topics.get(topic);
                assertEquals(expected.getValue(), description.partitions().size(), "partitions of " + topic);
                description.partitions().forEach(p -> assertEquals(3, p.replicas().size(), "replicas of " + p));
                Config config = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic));
                assertEquals(TopicConfig.CLEANUP_POLICY_COMPACT, config.get(TopicConfig.CLEANUP_POLICY_CONFIG).value(),
                        "cleanup.policy of " + topic);
                ids.put(topic, description.topicId());
            }
            Config status = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, prefix + "-status"));
            assertEquals("2000", status.get(TopicConfig.SEGMENT_MS_CONFIG).value(), "segment.ms of the status topic");
        }
        return ids;
    }

    private static void appendLines(Path file, int from, int to) throws Exception {
        String text = lines(from, to).stream().map(ConnectDistributedTest::line).collect(Collectors.joining());
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    }

    private static List<Integer> lines(int from, int to) {
        return IntStream.range(from, to).boxed().collect(Collectors.toList());
    }

    private static String line(int number) {
        return String.format("line-%05d\n", number);
    }

    private static void assertCopiedOnce(CopiedLines copied, int count, String what) {
        assertTrue(copied.numbers().equals(lines(0, count)), what + ": every line once, in order, but "
                + copied + (copied.skipAhead() == null ? "" : "; " + copied.skipAhead()));
    }

    /** Waits until out.txt holds every line 0..count-1 at least once. */
    private static CopiedLines awaitCopied(Path out, int count) {
        return Waits.waitFor("out.txt to hold lines 0 to " + (count - 1), () -> CopiedLines.read(out),
                copied -> copied.hasAll(count), COPY);
    }

    /** Waits until a reader of the topic's one partition at this isolation level sees every line 0..count-1. */
    private static CopiedLines awaitLines(String topic, String isolation, int count) {
        return Waits.waitFor(topic + " to hold lines 0 to " + (count - 1) + " " + isolation,
                () -> readLines(topic, isolation), copied -> copied.hasAll(count), COPY);
    }

    /**
     * The lines of a topic's partition 0 up to its end at this isolation level: the high watermark, or for
     * read_committed the last stable offset, short of any open transaction.
     */
    private static CopiedLines readLines(String topic, String isolation) {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of(
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation))) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            List<Integer> numbers = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (consumer.position(partition) < end) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("did not read " + topic + " " + isolation + " to " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    numbers.add(CopiedLines.number(new String(r.value(), StandardCharsets.UTF_8)));
                }
            }
            return new CopiedLines(numbers);
        }
    }

    private static long endOffset(String topic, String isolation) {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of(
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation))) {
            return consumer.endOffsets(List.of(partition)).get(partition);
        }
    }

    /** The source connector's offset for {@code file} through {@code GET /connectors/src/offsets}; -1 if none. */
    private static long sourcePosition(ConnectWorker worker, Path file) throws Exception {
        JsonNode answer = worker.call("GET", "/connectors/src/offsets", null, 200);
        for (JsonNode offset : answer.path("offsets")) {
            if (file.toString().equals(offset.path("partition").path("filename").asText())) {
                return offset.path("offset").path("position").asLong();
            }
        }
        return -1;
    }

    /** Reads a status topic from its log start to its end: how many records, over how many offsets, the last ones. */
    private static StatusRecords readStatusTopic(String topic) throws Exception {
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).collect(Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> start = consumer.beginningOffsets(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long offsets = partitions.stream().mapToLong(tp -> end.get(tp) - start.get(tp)).sum();
            long records = 0;
            Map<String, String> latest = new TreeMap<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("did not read " + topic + " to its end offsets " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    records++;
                    latest.put(new String(r.key(), StandardCharsets.UTF_8),
                            r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            return new StatusRecords(records, offsets, latest);
        }
    }

    /** A status topic as read: {@code records} found between the log starts and ends, spanning {@code offsets}. */
    private record StatusRecords(long records, long offsets, Map<String, String> latest) {
        String latestState(String key) throws Exception {
            String value = latest.get(key);
            return value == null ? null : JSON.readTree(value).path("state").asText();
        }
    }

    /**
     * Line numbers in the order they were copied: from out.txt as the sink wrote it (a line still being written is
     * left out), or from a topic as the source produced it.
     */
    private record CopiedLines(List<Integer> numbers) {
        static CopiedLines read(Path file) throws Exception {
            List<Integer> numbers = new ArrayList<>();
            if (Files.exists(file)) {
                String text = Files.readString(file);
                // only complete lines: the sink may be between a line and its line separator
                int complete = text.lastIndexOf('\n') + 1;
                for (String line : text.substring(0, complete).split("\n", -1)) {
                    if (!line.isEmpty()) {
                        numbers.add(number(line));
                    }
                }
            }
            return new CopiedLines(numbers);
        }

        /** The number of a line as the source read it (without its line separator). */
        static int number(String line) {
            if (!line.startsWith("line-")) {
                throw new AssertionError("A line the source never read: " + line);
            }
            return Integer.parseInt(line.substring("line-".length()));
        }

        boolean hasAll(int count) {
            return distinct() == count && numbers.stream().allMatch(n -> n < count);
        }

        long distinct() {
            return numbers.stream().distinct().count();
        }

        long duplicates() {
            return numbers.size() - distinct();
        }

        int lowestDuplicate() {
            Map<Integer, Long> seen = numbers.stream().collect(Collectors.groupingBy(n -> n, Collectors.counting()));
            return seen.entrySet().stream().filter(e -> e.getValue() > 1).mapToInt(Map.Entry::getKey).min()
                    .orElse(Integer.MAX_VALUE);
        }

        /**
         * Null if every line follows the one before it or starts a re-read (a line at or before the previous one);
         * else where a line was skipped. A re-read replays a stretch of the topic, and the topic a stretch of the
         * file, both from a committed offset, so there is never a jump forward: that would be a lost line.
         */
        String skipAhead() {
            for (int i = 0; i < numbers.size(); i++) {
                int previous = i == 0 ? -1 : numbers.get(i - 1);
                if (numbers.get(i) > previous + 1) {
                    return "line " + numbers.get(i) + " at position " + i + " follows line " + previous;
                }
            }
            return null;
        }

        /** Each run of lines written again, as "first..last" (a run starts where a line is not its predecessor + 1). */
        List<String> reReads() {
            List<String> runs = new ArrayList<>();
            int max = -1;
            int start = -1;
            for (int i = 0; i < numbers.size(); i++) {
                int n = numbers.get(i);
                if (start >= 0 && (n > max || n != numbers.get(i - 1) + 1)) {
                    runs.add(start + ".." + numbers.get(i - 1));
                    start = -1;
                }
                if (n <= max && start < 0) {
                    start = n;
                }
                max = Math.max(max, n);
            }
            if (start >= 0) {
                runs.add(start + ".." + numbers.get(numbers.size() - 1));
            }
            return runs;
        }

        @Override
        public String toString() {
            return numbers.size() + " lines, " + distinct() + " distinct, " + duplicates() + " re-read"
                    + (numbers.isEmpty() ? "" : ", last " + numbers.get(numbers.size() - 1))
                    + (duplicates() == 0 ? "" : ", re-read runs " + reReads());
        }
    }
}
