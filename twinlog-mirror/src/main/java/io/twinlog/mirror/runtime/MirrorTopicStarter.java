package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Starts mirroring one source topic: checks it may be mirrored here, creates the destination topic with the
 * source's topic ID, partition count and configs (minus local-only ones), and records the desired state. Used by
 * StartMirrorTopics and by the metadata sync's discovery of new source topics.
 */
public final class MirrorTopicStarter {
    private static final Logger log = LoggerFactory.getLogger(MirrorTopicStarter.class);
    /** Topic configs that belong to the destination cluster and are never copied from the source. */
    public static final Set<String> LOCAL_ONLY_CONFIGS = Set.of("min.insync.replicas",
            "unclean.leader.election.enable", "mirror.support.unclean.leader.election",
            "leader.replication.throttled.replicas", "follower.replication.throttled.replicas");

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final LocalTopics localTopics;
    private final int sourceTimeoutMs;

    /** A topic's outcome: a Kafka (or mirror) error code and message, {@link #OK} when it started. */
    public record TopicResult(short code, String message) {
        public static final TopicResult OK = new TopicResult(Errors.NONE.code(), null);
    }

    public MirrorTopicStarter(MirrorStore store, MetadataWatcher metadata, LocalTopics localTopics,
                              int sourceTimeoutMs) {
        this.store = store;
        this.metadata = metadata;
        this.localTopics = localTopics;
        this.sourceTimeoutMs = sourceTimeoutMs;
    }

    /** Blocks on the source and ZooKeeper: call it from an admin or sync thread only. */
    public TopicResult startTopic(String mirror, String topic, Admin source) throws Exception {
        return startTopic(mirror, topic, source, store.topicVersion(mirror, topic));
    }

    /**
     * As {@link #startTopic(String, String, Admin)}, writing the desired state only if the topic's node is still at
     * {@code expectedVersion} (read before the source was first contacted, -1 for none): a stop, pause or resume
     * that came while this start waited on the source wins, and this topic's start is refused with the reason.
     */
    public TopicResult startTopic(String mirror, String topic, Admin source, int expectedVersion) throws Exception {
        if (Topic.isInternal(topic)) {
            // __consumer_offsets belongs to each cluster's own coordinator; groups move by offset sync instead
            return new TopicResult(Errors.INVALID_TOPIC_EXCEPTION.code(), "Internal topic '" + topic
                    + "' cannot be mirrored; consumer group offsets are synced by the mirror instead");
        }
        if (MirrorQuarantine.TOPIC.equals(topic)) {
            return new TopicResult(Errors.INVALID_TOPIC_EXCEPTION.code(), "Topic '" + topic + "' is a cluster's "
                    + "quarantine of records removed by mirroring truncations; it is never mirrored");
        }
        MirrorImage.MirrorTopic existing = metadata.image().mirrors().topics().get(topic);
        if (existing != null && !existing.mirror().equals(mirror) && existing.desired() != DesiredMirrorState.STOPPED) {
            return new TopicResult(MirrorErrors.TOPIC_ALREADY_IN_CLUSTER_MIRROR.code, "Topic '" + topic
                    + "' is mirrored by cluster mirror '" + existing.mirror() + "'");
        }
        TopicDescription sourceTopic;
        Map<String, String> configs = new LinkedHashMap<>();
        try {
            sourceTopic = source.describeTopics(List.of(topic)).allTopicNames()
                    .get(sourceTimeoutMs, TimeUnit.MILLISECONDS).get(topic);
            configs.putAll(copiedConfigs(source, topic));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return new TopicResult(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), "Topic '" + topic
                        + "' does not exist on the source cluster");
            }
            throw e;
        }
        Optional<TopicImage> local = metadata.image().topic(topic);
        if (local.isPresent() && !local.get().topicId().equals(sourceTopic.topicId())) {
            return new TopicResult(Errors.INCONSISTENT_TOPIC_ID.code(), "A local topic '" + topic + "' exists with ID "
                    + local.get().topicId() + "; the source topic has ID " + sourceTopic.topicId());
        }
        // the desired state goes first, so the partitions' first leaders already keep the source's epochs
        MirrorStore.TopicClaim claim = store.claimTopicAt(mirror, topic, DesiredMirrorState.MIRRORING,
                expectedVersion);
        if (claim == MirrorStore.TopicClaim.HELD_BY_ANOTHER_MIRROR) {
            log.info("Mirror {}: the start of {} is not applied: another cluster mirror mirrors it", mirror, topic);
            return new TopicResult(MirrorErrors.TOPIC_ALREADY_IN_CLUSTER_MIRROR.code, "Topic '" + topic
                    + "' is mirrored by another cluster mirror (started while this start read the source)");
        }
        if (claim == MirrorStore.TopicClaim.CHANGED) {
            log.info("Mirror {}: the start of {} is not applied: its desired state changed while the start read the "
                    + "source", mirror, topic);
            return new TopicResult(MirrorErrors.INVALID_MIRROR_STATE.code, "The desired state of topic '" + topic
                    + "' changed while this start read the source (a stop, pause, resume or another start meanwhile); "
                    + "describe the mirror, and start the topic again if it should mirror");
        }
        if (local.isEmpty()) {
            localTopics.createMirrorTopic(topic, sourceTopic.topicId(), sourceTopic.partitions().size(), configs);
            log.info("Mirror {}: created mirror topic {} with the source's topic ID {}, {} partitions, configs {}",
                    mirror, topic, sourceTopic.topicId(), sourceTopic.partitions().size(), configs);
        } else {
            restartPartitions(mirror, topic);
        }
        return TopicResult.OK;
    }

    /**
     * A start of a topic already mirrored acts on its partitions as the operator means it. One FAILED for good
     * (not retriable by itself, as a truncation that outlived its deadline with
     * mirror.support.unclean.leader.election) is retried: the operator has dealt with the cause. One MIRRORING has
     * its leader compare its log with the source's again and repair what differs (issue 12 point 4c; what
     * {@code --verify} reported). A record its leader changed meanwhile is left to that leader.
     */
    private void restartPartitions(String mirror, String topic) throws Exception {
        for (Map.Entry<TopicPartition, MirrorImage.MirrorPartition> e
                : metadata.image().mirrors().partitions().entrySet()) {
            MirrorPartitionState state = e.getValue().state();
            if (!e.getKey().topic().equals(topic)
                    || state != MirrorPartitionState.FAILED && state != MirrorPartitionState.MIRRORING) {
                continue;
            }
            MirrorPartitionRecord rec = MirrorPartitionRecord.fromJson(e.getValue().json());
            if (state == MirrorPartitionState.MIRRORING) {
                if (store.replacePartitionRecord(e.getKey(), rec.withReconcileRequested(), e.getValue().version())) {
                    log.info("Mirror {}: {} is compared with the source again on the operator's start; what "
                            + "differs is cut (kept in the quarantine) and mirrored again", mirror, e.getKey());
                }
                continue;
            }
            if (rec.retryAttempt() >= 0) {
                continue;
            }
            if (store.replacePartitionRecord(e.getKey(), rec.restartedByOperator(), e.getValue().version())) {
                log.info("Mirror {}: {} was FAILED for good ({}); restarted by the operator, its leader retries {}",
                        mirror, e.getKey(), rec.lastError().orElse("no reason recorded"), rec.previousState());
            }
        }
    }

    /** The source topic's own (dynamic) configs that a mirror topic copies: all but the local-only ones. */
    static Map<String, String> copiedConfigs(Admin source, String topic, int timeoutMs) throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config c = source.describeConfigs(List.of(res)).all().get(timeoutMs, TimeUnit.MILLISECONDS).get(res);
        Map<String, String> out = new LinkedHashMap<>();
        for (ConfigEntry e : c.entries()) {
            if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG && e.value() != null
                    && !LOCAL_ONLY_CONFIGS.contains(e.name())) {
                out.put(e.name(), e.value());
            }
        }
        return out;
    }

    private Map<String, String> copiedConfigs(Admin source, String topic) throws Exception {
        return copiedConfigs(source, topic, sourceTimeoutMs);
    }
}
