package io.twinlog.storage;

import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.common.tasks.HealthRecordingScheduler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.ConfigRepository;
import org.apache.kafka.server.util.FileLock;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.CleanShutdownFileHandler;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.CleanerConfig;
import org.apache.kafka.storage.internals.log.LogCleaner;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The broker's partition logs: Kafka's {@link LogManager} (loading and recovery, retention, cleaning, flushing,
 * recovery-point and log-start checkpoints) plus what it leaves to the broker, the high-watermark checkpoint
 * ({@value #HIGH_WATERMARK_CHECKPOINT_FILE} in each log dir, same file name and format as Kafka's, so the high
 * watermark survives a restart or a kill -9).
 *
 * <p>Log dir failures: every I/O error inside Kafka's classes (appends, rolls, checkpoints, deletes) marks its log
 * dir offline in the {@link LogDirFailureChannel} this store owns; the broker's failure handler thread takes them
 * with {@link #takeNextOfflineLogDir()}, stops serving the dir's partitions, then calls
 * {@link #handleLogDirFailure(String)}. The data on disk is left as it is.
 *
 * <p>Broker configs changed while it runs (dynamic broker configs): {@link #reconfigureDefaults} takes new defaults
 * of topic configs to every log, {@link #reconfigureCleaner} restarts the cleaner with new settings.
 *
 * <p>Thread-safe: LogManager and UnifiedLog are; the checkpoint is written by one scheduler task at a time; a log's
 * config changes (new defaults, a topic's overrides, a new log) one at a time, see {@link #logConfigLock}.
 */
public final class LogStore implements AutoCloseable {
    public static final String HIGH_WATERMARK_CHECKPOINT_FILE = "replication-offset-checkpoint";
    private static final Logger log = LoggerFactory.getLogger(LogStore.class);

    private final LogStoreConfig config;
    /** Kafka's scheduler, every periodic task on it guarded and its health recorded (decision 63). */
    private final HealthRecordingScheduler scheduler;
    private final LogDirFailureChannel logDirFailureChannel;
    private final BrokerTopicStats brokerTopicStats = new BrokerTopicStats();
    private final LogManager logManager;
    /** The log dirs without Kafka's clean-shutdown file at start-up. */
    private final Set<File> loadedAfterCrash = ConcurrentHashMap.newKeySet();
    private final Map<File, OffsetCheckpointFile> highWatermarkFiles = new HashMap<>();
    private final Map<TopicPartition, Long> recoveredHighWatermarks = new ConcurrentHashMap<>();
    private final Object checkpointLock = new Object();
    /** Each topic's overrides: what new logs are created with, and what new defaults are merged under. */
    private final ConfigRepository topicConfigs;
    /**
     * Held while a log's config is set: new defaults for every log (the reconfigure thread), a topic's new overrides
     * (the metadata thread), a log created with both. Kafka's LogManager merges its current defaults with the
     * overrides given at each of these, so in any order the last one leaves each log with the latest defaults, and
     * the latest overrides as long as {@link #reconfigureDefaults} reads them inside the lock. Without it a log
     * created or updated while new defaults are taken to the logs could keep the old ones.
     */
    private final Object logConfigLock = new Object();
    /** The defaults of topic configs the logs have now, by topic config name; guarded by {@link #logConfigLock}. */
    private Map<String, String> defaultTopicConfigs;
    /** Held while the cleaner restarts with new settings, which waits for its threads to stop. */
    private final Object cleanerLock = new Object();
    private volatile LogStoreConfig.CleanerSettings cleanerSettings;

    public LogStore(LogStoreConfig config, ConfigRepository topicConfigs, Time time) throws IOException {
        this.config = config;
        this.topicConfigs = topicConfigs;
        this.defaultTopicConfigs = Map.copyOf(config.defaultTopicConfigs());
        this.cleanerSettings = config.cleaner();
        this.scheduler = new HealthRecordingScheduler(new KafkaScheduler(config.backgroundThreads(), true,
                "twinlog-log-" + config.brokerId() + "-"), time, log);
        this.logDirFailureChannel = new LogDirFailureChannel(config.logDirs().size());
        LogConfig defaults = new LogConfig(config.defaultTopicConfigs());
        CleanerConfig cleanerConfig = config.cleaner().toKafka(config.cleanerEnable());
        this.logManager = new LogManager(config.logDirs(), List.of(), topicConfigs, defaults, cleanerConfig,
                1, config.flushCheckMs(), 60_000L, 60_000L, config.retentionCheckIntervalMs(),
                config.transactionMaxTimeoutMs(),
                new ProducerStateManagerConfig(config.producerIdExpirationMs(), config.transactionVerificationEnable()),
                config.producerIdExpirationCheckIntervalMs(), scheduler, brokerTopicStats, logDirFailureChannel, time, false, config.initialTaskDelayMs(),
                LogCleaner::new);
    }

    /** Loads and recovers every log on disk, then starts retention, cleaning, flushing and checkpoint tasks. */
    public void startup() throws Exception {
        scheduler.startup();
        long start = System.nanoTime();
        for (File dir : config.logDirs()) {
            OffsetCheckpointFile f = new OffsetCheckpointFile(new File(dir, HIGH_WATERMARK_CHECKPOINT_FILE),
                    logDirFailureChannel);
            highWatermarkFiles.put(dir, f);
            recoveredHighWatermarks.putAll(f.read());
        }
        for (File dir : config.logDirs()) {
            // Kafka deletes it while loading: read first whether this dir's logs were closed cleanly
            if (!new File(dir, CleanShutdownFileHandler.CLEAN_SHUTDOWN_FILE_NAME).exists()) {
                loadedAfterCrash.add(dir.getAbsoluteFile());
            }
        }
        logManager.startup(Set.of());
        log.info("Loaded {} partition logs from {} in {} ms", logManager.allLogs().size(), config.logDirs(),
                (System.nanoTime() - start) / 1_000_000);
        scheduler.schedule("twinlog-highwatermark-checkpoint", this::checkpointHighWatermarks,
                config.highWatermarkCheckpointIntervalMs(), config.highWatermarkCheckpointIntervalMs());
    }

    /**
     * The periodic tasks of the logs (Kafka's retention, flusher, recovery-point and log-start-offset checkpoints;
     * the high-watermark checkpoint), scheduled by {@link #startup}, for the broker's metrics.
     */
    public List<BackgroundTask> backgroundTasks() {
        return scheduler.periodicTasks();
    }

    /**
     * Whether {@code log} lives in a dir that was not shut down cleanly before this start: Kafka's recovery rebuilt
     * its state by replaying batches, rather than reloading what was snapshotted at close.
     */
    public boolean loadedAfterCrash(UnifiedLog log) {
        return loadedAfterCrash.contains(log.parentDirFile().getAbsoluteFile());
    }

    public Optional<UnifiedLog> log(TopicPartition tp) {
        return logManager.getLog(tp);
    }

    /**
     * The log of a partition this broker hosts, created if missing. A log left on disk by an earlier incarnation of
     * the topic (same name, other topic ID) is an error of the caller, who must delete it first.
     */
    public UnifiedLog getOrCreateLog(TopicPartition tp, Uuid topicId) throws IOException {
        synchronized (logConfigLock) {
            return logManager.getOrCreateLog(tp, Optional.of(topicId));
        }
    }

    /** The high watermark recorded at the last checkpoint before start-up, if any. */
    public Optional<Long> recoveredHighWatermark(TopicPartition tp) {
        return Optional.ofNullable(recoveredHighWatermarks.get(tp));
    }

    /** Removes a partition's log (renamed to *-delete, files removed in the background). */
    public void deleteLog(TopicPartition tp) {
        recoveredHighWatermarks.remove(tp);
        logManager.asyncDelete(tp);
    }

    /**
     * Takes a partition's log out of service and renames its dir {@code <topic>-<p>.<id>-stray}, keeping every file:
     * Kafka's LogManager neither serves nor deletes such a dir (it logs it at each start). An operator deletes it, or
     * renames it back. Frees the partition's name for a log of another topic ID.
     */
    public void setAsideLog(TopicPartition tp) {
        recoveredHighWatermarks.remove(tp);
        logManager.asyncDelete(tp, false, true, true);
    }

    public Set<UnifiedLog> allLogs() {
        return logManager.allLogs();
    }

    /**
     * Blocks until some log dir has failed (an I/O error in it was reported to the failure channel) and returns its
     * absolute path. Each dir is returned once.
     */
    public String takeNextOfflineLogDir() throws InterruptedException {
        return logDirFailureChannel.takeNextOfflineLogDir();
    }

    /** The configured log dirs that have not failed (absolute paths). */
    public Set<String> liveLogDirs() {
        return logManager.liveLogDirs().stream().map(File::getAbsolutePath).collect(Collectors.toSet());
    }

    public boolean isLogDirOnline(String dir) {
        return logManager.isLogDirOnline(dir);
    }

    /** The partitions whose logs are in {@code dir} (absolute path). */
    public Set<TopicPartition> partitionsIn(String dir) {
        return logManager.allLogs().stream().filter(l -> l.parentDir().equals(dir)).map(UnifiedLog::topicPartition)
                .collect(Collectors.toSet());
    }

    /**
     * Stops using a failed log dir: its logs are closed and forgotten (not deleted), its checkpoints are no longer
     * written, and new logs go to the other dirs. The caller first stops serving the dir's partitions. It must not
     * be called for the last live dir: Kafka's LogManager halts the JVM then, so a broker whose every dir failed
     * shuts itself down instead ({@link IllegalStateException} here).
     */
    public void handleLogDirFailure(String dir) {
        Set<String> live = liveLogDirs();
        if (live.equals(Set.of(dir))) {
            throw new IllegalStateException("Log dir " + dir + " is the last live log dir: the broker must shut down");
        }
        synchronized (checkpointLock) {
            highWatermarkFiles.keySet().removeIf(f -> f.getAbsolutePath().equals(dir));
        }
        logManager.handleLogDirFailure(dir);
    }

    /** Applies a topic's new overrides to its logs, over the current defaults. */
    public void topicConfigUpdated(String topic, Properties overrides) {
        synchronized (logConfigLock) {
            logManager.updateTopicConfig(topic, overrides, false, false);
        }
    }

    public LogConfig currentDefaultConfig() {
        return logManager.currentDefaultConfig();
    }

    /**
     * The broker's defaults of topic configs changed (Kafka's {@code DynamicLogConfig}): every log this store holds
     * takes {@code brokerTopicDefaults} plus its topic's overrides, read from the config repository now, and logs
     * created from now on take them too.
     *
     * @param brokerTopicDefaults every default, by topic config name ({@code retention.ms}, {@code max.message.bytes},
     *                            as {@code BrokerConfig.defaultTopicConfigs()} gives them): a key
     *                            left out goes back to Kafka's default
     * @throws ConfigException       when a value cannot be parsed: nothing changed
     * @throws IllegalStateException when the logs of some topics could not take the new defaults (named, the first
     *                               error as the cause); every other log and every new one has them
     */
    public void reconfigureDefaults(Map<String, String> brokerTopicDefaults) {
        LogConfig next = new LogConfig(brokerTopicDefaults);
        synchronized (logConfigLock) {
            Map<String, String> before = defaultTopicConfigs;
            logManager.reconfigureDefaultLogConfig(next);
            defaultTopicConfigs = Map.copyOf(brokerTopicDefaults);
            Set<String> topics = new TreeSet<>();
            logManager.allLogs().forEach(l -> topics.add(l.topicPartition().topic()));
            Map<String, RuntimeException> failed = new TreeMap<>();
            for (String topic : topics) {
                try {
                    logManager.updateTopicConfig(topic, logOverrides(topic), false, false);
                } catch (RuntimeException e) {
                    // broad: one topic's log failing to take its config must not stop the others; reported below
                    failed.put(topic, e);
                }
            }
            log.info("Log defaults of broker {}: {}; applied to the logs of {} topics", config.brokerId(),
                    changes(before, defaultTopicConfigs), topics.size() - failed.size());
            if (!failed.isEmpty()) {
                RuntimeException first = failed.values().iterator().next();
                throw new IllegalStateException("The logs of topics " + failed.keySet() + " on broker "
                        + config.brokerId() + " kept their previous config: " + first.getMessage(), first);
            }
        }
    }

    /** A topic's overrides of log configs; its Twinlog keys (a mirror's) are left out, as the metadata thread does. */
    private Properties logOverrides(String topic) {
        Properties out = new Properties();
        topicConfigs.topicConfig(topic).forEach((k, v) -> {
            if (LogConfig.configNames().contains((String) k)) {
                out.put(k, v);
            }
        });
        return out;
    }

    /** "key old -> new" for every key that differs, "(default)" for one not set. */
    private static String changes(Map<String, String> before, Map<String, String> after) {
        Set<String> keys = new TreeSet<>(before.keySet());
        keys.addAll(after.keySet());
        List<String> out = keys.stream().filter(k -> !Objects.equals(before.get(k), after.get(k)))
                .map(k -> k + " " + before.getOrDefault(k, "(default)") + " -> " + after.getOrDefault(k, "(default)"))
                .toList();
        return out.isEmpty() ? "unchanged" : String.join(", ", out);
    }

    /** The settings the log cleaner runs with (or would, when it is disabled). */
    public LogStoreConfig.CleanerSettings cleanerSettings() {
        return cleanerSettings;
    }

    /**
     * Whether the cleaner would take {@code next}: Kafka's rule for its threads, at least 1 and at most double or
     * half the current number ({@link LogCleaner#validateReconfiguration}). A broker whose cleaner is disabled
     * ({@code log.cleaner.enable=false}) has none to change, so it refuses every cleaner setting but
     * {@code message.max.bytes}.
     *
     * @throws ConfigException with Kafka's message
     */
    public void validateCleanerReconfiguration(LogStoreConfig.CleanerSettings next) {
        LogCleaner cleaner = logManager.cleaner();
        if (cleaner == null) {
            if (next.cleanerOnlySettingsDiffer(cleanerSettings)) {
                throw new ConfigException("The log cleaner of broker " + config.brokerId() + " is disabled ("
                        + CleanerConfig.LOG_CLEANER_ENABLE_PROP + "=false): its settings cannot be changed");
            }
            return;
        }
        cleaner.validateReconfiguration(next.toKafka(true));
    }

    /**
     * Restarts the log cleaner with {@code next} ({@link LogCleaner#reconfigure}): every cleaner thread stops, which
     * aborts the cleanings in progress (they start again later), and {@code next.threads()} start. Blocks until the
     * old threads stopped. Nothing happens for settings equal to the current ones.
     *
     * @throws ConfigException       when {@link #validateCleanerReconfiguration} refuses {@code next}: the cleaner
     *                               runs on as it was
     * @throws IllegalStateException when the new threads could not start (their dedupe buffers did not fit in the
     *                               heap): the cleaner was restarted with its previous settings
     */
    public void reconfigureCleaner(LogStoreConfig.CleanerSettings next) {
        synchronized (cleanerLock) {
            LogStoreConfig.CleanerSettings before = cleanerSettings;
            if (next.equals(before)) {
                return;
            }
            validateCleanerReconfiguration(next);
            LogCleaner cleaner = logManager.cleaner();
            if (cleaner != null) {
                CleanerConfig running = cleaner.currentConfig();
                CleanerConfig wanted = next.toKafka(true);
                try {
                    cleaner.reconfigure(running, wanted);
                } catch (RuntimeException | OutOfMemoryError e) {
                    // broad: the cleaner may fail to start its threads with an OutOfMemoryError too; rolled back
                    cleaner.reconfigure(wanted, running);
                    throw new IllegalStateException("The log cleaner of broker " + config.brokerId()
                            + " could not start with " + next + "; it runs with its previous settings", e);
                }
            }
            cleanerSettings = next;
            log.info("Log cleaner of broker {}{}: {}", config.brokerId(), cleaner == null ? " (disabled)" : "",
                    next.changesFrom(before));
        }
    }

    /** Writes every hosted log's high watermark to its log dir's checkpoint file. */
    public void checkpointHighWatermarks() {
        synchronized (checkpointLock) {
            Map<File, Map<TopicPartition, Long>> byDir = new HashMap<>();
            for (UnifiedLog l : logManager.allLogs()) {
                byDir.computeIfAbsent(l.parentDirFile(), d -> new HashMap<>()).put(l.topicPartition(), l.highWatermark());
            }
            for (Map.Entry<File, OffsetCheckpointFile> e : highWatermarkFiles.entrySet()) {
                String dir = e.getKey().getAbsolutePath();
                // a failed dir is skipped even before it is handled (the last one never is: the broker stops)
                if (!logManager.isLogDirOnline(dir) || logDirFailureChannel.hasOfflineLogDir(dir)) {
                    continue;
                }
                try {
                    e.getValue().write(byDir.getOrDefault(e.getKey(), Map.of()));
                } catch (RuntimeException ex) {
                    // broad: one log dir's checkpoint failure must not stop the others'
                    log.error("Could not write the high-watermark checkpoint in {}", e.getKey(), ex);
                }
            }
        }
    }

    private void releaseDirLocks() {
        for (FileLock lock : logManager.dirLocks()) {
            try {
                lock.destroy();
            } catch (ClosedChannelException e) {
                // the failed dir's lock, released when the dir went offline
            } catch (IOException e) {
                log.warn("Could not release the lock of log dir {}: {}", lock.file().getParent(), e.toString());
            }
        }
    }

    @Override
    public void close() throws Exception {
        try {
            checkpointHighWatermarks();
            logManager.shutdown(); // throws when a dir failed while it was the last one: still stop the threads
        } catch (ClosedChannelException e) {
            if (!logManager.hasOfflineLogDirs()) {
                throw e;
            }
            // Kafka's handleLogDirFailure already released a failed dir's lock, and shutdown stops at that lock,
            // leaving the locks after it held (a broker restarted in this JVM could not lock its dirs again)
            releaseDirLocks();
        } finally {
            scheduler.shutdown();
            brokerTopicStats.close();
        }
    }
}
