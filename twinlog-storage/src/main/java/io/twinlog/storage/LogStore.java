package io.twinlog.storage;

import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.common.tasks.HealthRecordingScheduler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
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
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
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
 * <p>Thread-safe: LogManager and UnifiedLog are; the checkpoint is written by one scheduler task at a time.
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

    public LogStore(LogStoreConfig config, ConfigRepository topicConfigs, Time time) throws IOException {
        this.config = config;
        this.scheduler = new HealthRecordingScheduler(new KafkaScheduler(config.backgroundThreads(), true,
                "twinlog-log-" + config.brokerId() + "-"), time, log);
        this.logDirFailureChannel = new LogDirFailureChannel(config.logDirs().size());
        LogConfig defaults = new LogConfig(config.defaultTopicConfigs());
        CleanerConfig cleanerConfig = new CleanerConfig(1, 16L << 20, 0.9, 512 * 1024, defaults.maxMessageSize(),
                Double.MAX_VALUE, config.cleanerBackoffMs(), config.cleanerEnable());
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
        return logManager.getOrCreateLog(tp, Optional.of(topicId));
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

    /** Re-reads a topic's overrides from the config repository and applies them to its logs. */
    public void topicConfigUpdated(String topic, Properties overrides) {
        logManager.updateTopicConfig(topic, overrides, false, false);
    }

    public LogConfig currentDefaultConfig() {
        return logManager.currentDefaultConfig();
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
