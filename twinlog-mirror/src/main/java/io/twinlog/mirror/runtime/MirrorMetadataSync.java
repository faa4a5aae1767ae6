package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.tasks.PerKeyExecutor;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.groups.OffsetSyncPlan;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.regex.Pattern;

/**
 * Keeps each mirror's topics in step with its source, on the controller broker only (one writer): new source
 * topics matching the mirror's include patterns (and no exclude pattern) start mirroring by themselves, partition
 * increases on the source are followed, source topic config changes are copied (local-only configs excepted; neither
 * from a source topic deleted, or created again with another topic ID than the mirror topic's), and
 * the source ACLs {@code mirror.acls.include} selects are created ({@link MirrorAclSync}), every
 * {@code mirror.metadata.refresh.interval.ms} (default 30 s). In the same turn, at each mirror's own
 * interval, {@link MirrorGroupOffsetSync} copies consumer group offsets from the source. One mirror's failure does
 * not hold the others, nor does its slow or unreachable source (issue 25, point 3).
 *
 * <p>Threading: a scheduler thread lists the mirrors every second and hands each mirror's turn to that mirror's own
 * thread ({@link PerKeyExecutor}), unless its last turn still runs; each turn is bounded by the source admin
 * timeouts.
 */
public final class MirrorMetadataSync implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorMetadataSync.class);
    private static final int SOURCE_TIMEOUT_MS = MirrorRuntime.SOURCE_TIMEOUT_MS;
    private static final long TICK_MS = 1_000;

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final LocalTopics localTopics;
    private final MirrorTopicStarter topics;
    private final BooleanSupplier isController;
    private final ScheduledExecutorService thread;
    private final Map<String, Long> lastSyncMs = new ConcurrentHashMap<>();
    /** Each mirror's passes, one at a time per mirror: {@code twinlog-mirror-sync-<broker>-<mirror>} while one runs. */
    private final PerKeyExecutor mirrorSyncs;
    private final MirrorGroupOffsetSync groupOffsets;
    private final MirrorAclSync acls;
    private final MirrorMetrics metrics;

    /**
     * @param isController whether this broker is the active controller now (only it syncs: one writer)
     * @param localClients how this broker's clients reach its own cluster: group offsets are written through it
     */
    MirrorMetadataSync(MirrorStore store, MetadataWatcher metadata, LocalTopics localTopics,
                       MirrorTopicStarter topics, BooleanSupplier isController, int brokerId,
                       Supplier<Optional<Map<String, Object>>> localClients, MirrorMetrics metrics) {
        this.groupOffsets = new MirrorGroupOffsetSync(store, metadata, localClients, metrics, Time.SYSTEM);
        this.acls = new MirrorAclSync(localClients, metrics);
        this.metrics = metrics;
        this.store = store;
        this.metadata = metadata;
        this.localTopics = localTopics;
        this.topics = topics;
        this.isController = isController;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-mirror-metadata-sync-" + brokerId);
            t.setDaemon(true);
            return t;
        });
        this.mirrorSyncs = new PerKeyExecutor("twinlog-mirror-sync-" + brokerId, 10_000);
    }

    public void start() {
        thread.scheduleWithFixedDelay(metrics.backgroundTask("mirror-metadata-sync", TICK_MS, log, this::tick),
                TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
    }

    private void tick() {
        if (!isController.getAsBoolean()) {
            metrics.syncedMirrors(Set.of());
            return;
        }
        List<MirrorDefinition> definitions;
        try {
            definitions = store.list();
        } catch (Exception e) { // broad: any ZooKeeper failure; the next round lists again; logged with its trace
            log.warn("Mirror metadata sync could not list the mirrors", e);
            return;
        }
        Set<String> names = definitions.stream().map(MirrorDefinition::name).collect(Collectors.toSet());
        metrics.syncedMirrors(names);
        lastSyncMs.keySet().retainAll(names);
        groupOffsets.retainMirrors(names);
        for (MirrorDefinition def : definitions) {
            // a mirror whose pass still runs (its source slow or unreachable) is left to it: each mirror's passes
            // run on its own thread, so one mirror's source never delays another's sync
            if (def.state() != MirrorDefinition.State.FAILED && !mirrorSyncs.busy(def.name())) {
                mirrorSyncs.execute(def.name(), () -> syncMirror(def));
            }
        }
    }

    /** One mirror's turn: its metadata sync when its interval has passed, and its group offset sync likewise. */
    private void syncMirror(MirrorDefinition def) {
        if (!isController.getAsBoolean()) {
            return; // resigned since the tick (session lost, another controller): the new one syncs
        }
        try {
            long now = System.currentTimeMillis();
            if (now - lastSyncMs.getOrDefault(def.name(), 0L) >= def.metadataRefreshIntervalMs()) {
                lastSyncMs.put(def.name(), now);
                sync(def);
            }
            groupOffsets.maybeSync(def);
        } catch (Exception e) {
            // broad: one mirror's failure (a setting stored before it was validated, say) does not hold the others
            metrics.onTopicMetadataRefreshError(def.name());
            log.warn("[Mirror {}] metadata sync failed", def.name(), e);
        }
    }

    private void sync(MirrorDefinition def) {
        try (Admin source = SourceClusters.admin(def, SOURCE_TIMEOUT_MS)) {
            Map<String, DesiredMirrorState> mirrored = store.topics(def.name());
            discover(def, source, mirrored);
            for (Map.Entry<String, DesiredMirrorState> t : mirrored.entrySet()) {
                if (t.getValue() != DesiredMirrorState.STOPPED) {
                    followPartitionsAndConfigs(def, source, t.getKey(),
                            metadata.image().mirrors().sourceTopicOf(t.getKey()));
                }
            }
            acls.maybeSync(def, source, OffsetSyncPlan.destinationTopics(def.name(), metadata.image().mirrors()));
        } catch (TopicConfigSyncException e) {
            metrics.onTopicConfigSyncError(def.name());
            log.info("[Mirror {}] metadata sync with the source skipped: {}", def.name(), e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing
        } catch (Exception e) { // broad: any failure of the source or ZooKeeper; the next round tries again
            metrics.onTopicMetadataRefreshError(def.name());
            log.info("[Mirror {}] metadata sync with the source skipped: {}", def.name(), e.toString(), e);
        }
    }

    /** Copying a topic's configs from the source failed (counted apart from the metadata refresh's failures). */
    private static final class TopicConfigSyncException extends Exception {
        TopicConfigSyncException(String topic, Exception cause) {
            super("syncing the configs of " + topic + " failed: " + cause, cause);
        }
    }

    /** Starts source topics that match the include patterns and are not mirrored yet. */
    private void discover(MirrorDefinition def, Admin source, Map<String, DesiredMirrorState> mirrored) throws Exception {
        List<String> include = def.includePatterns();
        if (include.isEmpty()) {
            return;
        }
        List<String> exclude = def.excludePatterns();
        Set<String> sourceTopics = source.listTopics().names().get(SOURCE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        MirrorImage mirrors = metadata.image().mirrors();
        // the source topics this mirror has: by their source names (a prefixed mirror's are renamed here)
        Set<String> mirroredSources = new HashSet<>();
        mirrors.topics().forEach((topic, t) -> {
            if (t.mirror().equals(def.name())) {
                mirroredSources.add(t.sourceName(topic));
            }
        });
        Map<String, Integer> discovered = new LinkedHashMap<>();
        for (String topic : sourceTopics) {
            String destination = def.destinationTopic(topic);
            if (mirrored.containsKey(destination) || mirrors.topics().containsKey(destination)
                    || mirroredSources.contains(topic) || MirrorQuarantine.TOPIC.equals(topic)
                    || include.stream().noneMatch(p -> Pattern.matches(p, topic))
                    || exclude.stream().anyMatch(p -> Pattern.matches(p, topic))) {
                continue;
            }
            discovered.put(topic, store.topicVersion(def.name(), destination));
        }
        if (discovered.isEmpty()) {
            return;
        }
        Map<String, String> skipped = new LinkedHashMap<>();
        topics.startTopics(def, discovered, discovered.keySet(), source, skipped, topic -> Optional.empty())
                .forEach((topic, r) -> {
            if (r.code() == 0) {
                log.info("[Mirror {}] discovered source topic {} (matches {}); mirroring it", def.name(), topic, include);
            } else {
                log.info("[Mirror {}] source topic {} matches {} but could not start: {}", def.name(), topic, include,
                        r.message());
            }
        });
        store.recordSkippedTopics(def.name(), skipped, discovered.keySet());
    }

    /** Follows source topic {@code sourceTopic}'s partition count and configs onto its mirror topic {@code topic}. */
    private void followPartitionsAndConfigs(MirrorDefinition def, Admin source, String topic, String sourceTopic)
            throws Exception {
        Optional<TopicImage> local = metadata.image().topic(topic);
        if (local.isEmpty()) {
            return;
        }
        TopicDescription d;
        try {
            d = source.describeTopics(List.of(sourceTopic)).allTopicNames()
                    .get(SOURCE_TIMEOUT_MS, TimeUnit.MILLISECONDS).get(sourceTopic);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                // deleted on the source: its partitions say so (FAILED, decision 61); the mirror's other topics go on
                log.debug("[Mirror {}] {} does not exist on the source; nothing to follow", def.name(), topic);
                return;
            }
            throw e;
        }
        if (!Uuid.ZERO_UUID.equals(d.topicId()) && !d.topicId().equals(local.get().topicId())) {
            // created again on the source: another topic, whose partitions and configs are not this one's
            log.debug("[Mirror {}] {} on the source has topic ID {}, this topic mirrors {}; nothing to follow",
                    def.name(), topic, d.topicId(), local.get().topicId());
            return;
        }
        int sourcePartitions = d.partitions().size();
        int localPartitions = local.get().partitions().size();
        if (sourcePartitions > localPartitions) {
            localTopics.addPartitions(topic, sourcePartitions);
            log.info("[Mirror {}] {}: followed the source's partition increase {} -> {}", def.name(), topic,
                    localPartitions, sourcePartitions);
        }
        try {
            Map<String, String> wanted = new HashMap<>(metadata.image().topicConfig(topic));
            wanted.keySet().retainAll(MirrorTopicStarter.LOCAL_ONLY_CONFIGS);
            Set<String> notCopied = new TreeSet<>();
            wanted.putAll(MirrorTopicStarter.copiedConfigs(source, sourceTopic, SOURCE_TIMEOUT_MS, notCopied));
            if (!notCopied.isEmpty()) {
                // said at INFO when the topic's mirror started; here at every sync, so only for the curious
                log.debug("[Mirror {}] {}: source configs {} are unknown to this cluster; not copied", def.name(),
                        topic, notCopied);
            }
            if (!wanted.equals(metadata.image().topicConfig(topic))) {
                localTopics.setConfigs(topic, wanted);
                log.info("[Mirror {}] {}: synced topic configs from the source: {}", def.name(), topic, wanted);
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) { // broad: rethrown as this topic's config sync failure, counted apart by the caller
            throw new TopicConfigSyncException(topic, e);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        mirrorSyncs.close(); // interrupts the passes: their admin calls end at once, their clients close within a second
        try {
            // the passes, not only the scheduler that hands them out: none may write after the broker closes
            if (!thread.awaitTermination(5, TimeUnit.SECONDS) || !mirrorSyncs.awaitTermination(5, TimeUnit.SECONDS)) {
                log.warn("Mirror metadata sync did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
