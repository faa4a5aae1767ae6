package io.twinlog.storage;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.ConfigRepository;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Broker configs changed while the log store runs, on real logs: new defaults of topic configs reach every log
 * whose topic does not override them (and new logs), a smaller {@code max.message.bytes} default refuses larger
 * batches, and the cleaner restarts with more threads or refuses a change with Kafka's message.
 */
@Timeout(60)
class LogStoreReconfigurationTest {
    private static final String CLEANER_THREAD_PREFIX = "kafka-log-cleaner-thread-";
    private static final long KAFKA_DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000L;
    private static final LogStoreConfig.CleanerSettings ONE_CLEANER = new LogStoreConfig.CleanerSettings(1,
            16L << 20, 0.9, 512 * 1024, Double.MAX_VALUE, 15_000L, 1_048_588);

    @TempDir
    File dir;
    /** The topics' overrides, as the broker's metadata image holds them. */
    private final Map<String, Map<String, String>> overrides = new ConcurrentHashMap<>();
    private LogStore store;

    private LogStore open(boolean cleanerEnable) throws Exception {
        ConfigRepository repository = (ConfigResource resource) -> {
            Properties p = new Properties();
            p.putAll(overrides.getOrDefault(resource.name(), Map.of()));
            return p;
        };
        store = new LogStore(new LogStoreConfig(1, List.of(dir), Map.of(), 300_000L, 60_000L, 5_000L, cleanerEnable,
                ONE_CLEANER, 86_400_000, 600_000, 900_000, false, 1, 10_000L), repository, Time.SYSTEM);
        store.startup();
        return store;
    }

    @AfterEach
    void close() throws Exception {
        if (store != null) {
            store.close();
        }
        // the next test counts cleaner threads: this store's must be gone
        for (Thread t : cleanerThreads()) {
            t.join(10_000);
        }
    }

    private final Map<String, Uuid> topicIds = new ConcurrentHashMap<>();

    private UnifiedLog log(String topic, int partition) throws IOException {
        return store.getOrCreateLog(new TopicPartition(topic, partition),
                topicIds.computeIfAbsent(topic, t -> Uuid.randomUuid()));
    }

    private static MemoryRecords batchOf(int valueBytes) {
        return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[valueBytes]));
    }

    private static Set<Thread> cleanerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(CLEANER_THREAD_PREFIX)).collect(Collectors.toSet());
    }

    @Test
    void aNewRetentionDefaultReachesTheLogsWithoutAnOverrideAndNewLogs() throws Exception {
        overrides.put("pinned", Map.of(TopicConfig.RETENTION_MS_CONFIG, "1000"));
        overrides.put("free", Map.of(TopicConfig.SEGMENT_BYTES_CONFIG, "1048576"));
        open(true);
        UnifiedLog free0 = log("free", 0);
        UnifiedLog pinned = log("pinned", 0);
        assertEquals(KAFKA_DEFAULT_RETENTION_MS, free0.config().retentionMs);

        store.reconfigureDefaults(Map.of(TopicConfig.RETENTION_MS_CONFIG, "3600000",
                TopicConfig.RETENTION_BYTES_CONFIG, "5000000"));

        assertEquals(3_600_000L, free0.config().retentionMs);
        assertEquals(5_000_000L, free0.config().retentionSize);
        assertEquals(1_048_576, free0.config().segmentSize(), "the topic's own override stays");
        assertEquals(1_000L, pinned.config().retentionMs, "an overridden key is left alone");
        assertEquals(5_000_000L, pinned.config().retentionSize, "a key the topic does not override is taken");
        assertEquals(3_600_000L, log("free", 1).config().retentionMs, "a log created afterwards");
        assertEquals(3_600_000L, store.currentDefaultConfig().retentionMs);

        store.reconfigureDefaults(Map.of());
        assertEquals(KAFKA_DEFAULT_RETENTION_MS, free0.config().retentionMs, "a default removed: Kafka's again");
        assertEquals(1_000L, pinned.config().retentionMs);
    }

    @Test
    void aSmallerMaxMessageBytesDefaultRefusesLargerBatchesOnLogsWithoutAnOverride() throws Exception {
        overrides.put("big", Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "1000000"));
        open(true);
        UnifiedLog plain = log("plain", 0);
        UnifiedLog big = log("big", 0);
        plain.appendAsLeader(batchOf(4_000), 0);

        store.reconfigureDefaults(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "2048"));

        assertThrows(RecordTooLargeException.class, () -> plain.appendAsLeader(batchOf(4_000), 0));
        assertEquals(1L, plain.logEndOffset());
        plain.appendAsLeader(batchOf(1_000), 0);
        big.appendAsLeader(batchOf(4_000), 0);
        assertEquals(2L, plain.logEndOffset());
        assertEquals(1L, big.logEndOffset());
    }

    @Test
    void anUnparsableDefaultChangesNothing() throws Exception {
        open(true);
        UnifiedLog l = log("t", 0);
        store.reconfigureDefaults(Map.of(TopicConfig.RETENTION_MS_CONFIG, "60000"));
        ConfigException e = assertThrows(ConfigException.class, () -> store.reconfigureDefaults(
                Map.of(TopicConfig.RETENTION_MS_CONFIG, "1000", TopicConfig.SEGMENT_BYTES_CONFIG, "lots")));
        assertTrue(e.getMessage().contains(TopicConfig.SEGMENT_BYTES_CONFIG), e.getMessage());
        assertEquals(60_000L, l.config().retentionMs);
        assertEquals(60_000L, store.currentDefaultConfig().retentionMs);
    }

    /**
     * The metadata thread applies topics' new overrides (after the image holds them) while the reconfigure thread
     * applies new defaults: whatever the interleaving, every log ends with the last defaults and its last overrides.
     */
    @Test
    void defaultsAndTopicOverridesChangedAtOnceEndWithTheLatestOfBoth() throws Exception {
        open(true);
        List<String> topics = List.of("a", "b", "c", "d");
        for (String topic : topics) {
            log(topic, 0);
            log(topic, 1);
        }
        int rounds = 200;
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<?> metadata = threads.submit(() -> {
                start.await();
                for (int i = 1; i <= rounds; i++) {
                    for (String topic : topics) {
                        Map<String, String> next = Map.of(TopicConfig.SEGMENT_MS_CONFIG, String.valueOf(60_000 + i));
                        overrides.put(topic, next);
                        Properties p = new Properties();
                        p.putAll(next);
                        store.topicConfigUpdated(topic, p);
                    }
                }
                return null;
            });
            Future<?> reconfigure = threads.submit(() -> {
                start.await();
                for (int i = 1; i <= rounds; i++) {
                    store.reconfigureDefaults(Map.of(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(3_600_000 + i),
                            TopicConfig.SEGMENT_MS_CONFIG, "1000"));
                }
                return null;
            });
            metadata.get();
            reconfigure.get();
        } finally {
            threads.shutdownNow();
        }
        for (UnifiedLog l : store.allLogs()) {
            LogConfig c = l.config();
            assertEquals(3_600_000L + rounds, c.retentionMs, l.topicPartition().toString());
            assertEquals(60_000L + rounds, c.segmentMs, l.topicPartition() + ": the topic's override wins");
        }
    }

    @Test
    void moreCleanerThreadsRestartTheCleanerWithThem() throws Exception {
        open(true);
        Set<Thread> before = cleanerThreads();
        assertEquals(1, before.size(), before.toString());
        LogStoreConfig.CleanerSettings two = new LogStoreConfig.CleanerSettings(2, 16L << 20, 0.9, 512 * 1024,
                Double.MAX_VALUE, 15_000L, 1_048_588);

        store.validateCleanerReconfiguration(two);
        store.reconfigureCleaner(two);

        for (Thread old : before) {
            old.join(10_000);
            assertFalse(old.isAlive(), "every cleaner thread restarts: " + old.getName());
        }
        Set<String> names = cleanerThreads().stream().map(Thread::getName).collect(Collectors.toSet());
        assertEquals(Set.of(CLEANER_THREAD_PREFIX + "0", CLEANER_THREAD_PREFIX + "1"), names);
        assertEquals(two, store.cleanerSettings());
    }

    @Test
    void aRefusedCleanerChangeKeepsTheRunningThreads() throws Exception {
        open(true);
        Set<Thread> before = cleanerThreads();
        LogStoreConfig.CleanerSettings three = new LogStoreConfig.CleanerSettings(3, 16L << 20, 0.9, 512 * 1024,
                Double.MAX_VALUE, 15_000L, 1_048_588);

        ConfigException validation = assertThrows(ConfigException.class,
                () -> store.validateCleanerReconfiguration(three));
        ConfigException applied = assertThrows(ConfigException.class, () -> store.reconfigureCleaner(three));

        String kafkas = "Log cleaner threads cannot be increased to more than double the current value 1";
        assertEquals(kafkas, validation.getMessage());
        assertEquals(kafkas, applied.getMessage());
        assertEquals(before, cleanerThreads(), "the same threads, still running");
        assertEquals(ONE_CLEANER, store.cleanerSettings());
    }

    @Test
    void aDedupeBufferOfOneMebibytePerThreadIsRefusedWithKafkasMessage() {
        ConfigException e = assertThrows(ConfigException.class, () -> new LogStoreConfig.CleanerSettings(16,
                16L << 20, 0.9, 512 * 1024, Double.MAX_VALUE, 15_000L, 1_048_588));
        assertEquals("log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.", e.getMessage());
        new LogStoreConfig.CleanerSettings(15, 16L << 20, 0.9, 512 * 1024, Double.MAX_VALUE, 15_000L, 1_048_588);
    }

    @Test
    void aDisabledCleanerRefusesItsSettingsButTakesMessageMaxBytes() throws Exception {
        open(false);
        assertEquals(Set.of(), cleanerThreads());
        LogStoreConfig.CleanerSettings two = new LogStoreConfig.CleanerSettings(2, 16L << 20, 0.9, 512 * 1024,
                Double.MAX_VALUE, 15_000L, 1_048_588);
        ConfigException e = assertThrows(ConfigException.class, () -> store.reconfigureCleaner(two));
        assertTrue(e.getMessage().contains("log.cleaner.enable=false"), e.getMessage());

        LogStoreConfig.CleanerSettings smallerMessages = new LogStoreConfig.CleanerSettings(1, 16L << 20, 0.9,
                512 * 1024, Double.MAX_VALUE, 15_000L, 100_000);
        store.reconfigureCleaner(smallerMessages);
        assertEquals(smallerMessages, store.cleanerSettings());
        assertEquals(Set.of(), cleanerThreads());
    }

    @Test
    void settingsComeFromTheBrokerConfig() {
        Map<String, String> props = new HashMap<>();
        props.put("log.cleaner.threads", "2");
        props.put("log.cleaner.dedupe.buffer.size", "33554432");
        props.put("message.max.bytes", "2000000");
        LogStoreConfig.CleanerSettings s = LogStoreConfig.CleanerSettings.from(new BrokerConfig(props));
        assertEquals(new LogStoreConfig.CleanerSettings(2, 32L << 20, 0.9, 512 * 1024, Double.MAX_VALUE, 15_000L,
                2_000_000), s);
    }
}
