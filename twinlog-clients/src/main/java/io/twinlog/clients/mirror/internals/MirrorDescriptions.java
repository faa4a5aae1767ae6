package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.MirrorAdmin.GroupSyncDescription;
import io.twinlog.clients.mirror.MirrorAdmin.MirrorDescription;
import io.twinlog.clients.mirror.MirrorAdmin.PartitionDescription;
import io.twinlog.clients.mirror.MirrorAdmin.TopicDescription;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirror;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorConfig;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorGroup;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorPartition;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorTopic;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A DescribeClusterMirrors answer read into {@link MirrorAdmin}'s descriptions. */
public final class MirrorDescriptions {
    private MirrorDescriptions() {
    }

    /**
     * The mirrors described, by name, in the answer's order.
     *
     * @throws MirrorException the answer's error, or the first mirror's (UNKNOWN_CLUSTER_MIRROR for a named mirror
     *         that does not exist)
     */
    public static Map<String, MirrorDescription> from(DescribeClusterMirrorsResponseData response) {
        checkError(response.errorCode(), response.errorMessage());
        Map<String, MirrorDescription> out = new LinkedHashMap<>();
        for (DescribedMirror m : response.mirrors()) {
            checkError(m.errorCode(), m.errorMessage());
            Map<String, String> configs = new LinkedHashMap<>();
            List<String> sensitive = new ArrayList<>();
            for (DescribedMirrorConfig c : m.configs()) {
                configs.put(c.name(), c.value());
                if (c.sensitive()) {
                    sensitive.add(c.name());
                }
            }
            Map<String, TopicDescription> topics = new LinkedHashMap<>();
            for (DescribedMirrorTopic t : m.topics()) {
                List<PartitionDescription> parts = new ArrayList<>();
                for (DescribedMirrorPartition p : t.partitions()) {
                    parts.add(new PartitionDescription(p.partitionIndex(), p.state(), p.sourceLogEndOffset(),
                            p.destinationLogEndOffset(), p.lag(), p.retryAttempt(), p.lastError(),
                            p.lastMirroredEpoch(), p.lastMirroredOffset(), p.outOfSyncReplicas(),
                            p.truncationOffset(), p.truncationPendingReplicas(), p.truncatedOffsets(),
                            p.consistentFromOffset(), p.newestMirroredTimestamp(), p.mirroredUpToMs(), p.rpoMs()));
                }
                topics.put(t.topicName(), new TopicDescription(t.topicName(), t.desiredState(), parts,
                        t.sourceTopicName() == null ? t.topicName() : t.sourceTopicName()));
            }
            Map<String, GroupSyncDescription> groups = new LinkedHashMap<>();
            for (DescribedMirrorGroup g : m.groups()) {
                groups.put(g.groupId(), new GroupSyncDescription(g.groupId(), g.lastSyncTimeMs(), g.offsetsSynced(),
                        g.offsetsClamped(), g.groupType()));
            }
            Map<String, String> skipped = new LinkedHashMap<>();
            m.skippedTopics().forEach(t -> skipped.put(t.topicName(), t.reason()));
            out.put(m.mirrorName(), new MirrorDescription(m.mirrorName(), m.state(), m.stateReason(),
                    m.sourceBootstrap(), m.sourceClusterId(), configs, sensitive, m.includePatterns(),
                    m.excludePatterns(), topics, groups, skipped));
        }
        return out;
    }

    private static void checkError(short errorCode, String errorMessage) {
        if (errorCode != Errors.NONE.code()) {
            throw new MirrorException(errorCode, errorMessage);
        }
    }
}
