package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The two clusters of a group offset sync test ({@link MirroredClusters}) with a mirror "dr" between them with a
 * 300 ms group sync, and the steps and waits those tests share.
 */
class GroupSyncClusters extends MirroredClusters {

    GroupSyncClusters(TestCluster source, TestCluster destination) {
        super(source, destination);
    }

    /** Two one-broker clusters. */
    public static GroupSyncClusters start() throws Exception {
        return start(TestCluster.builder().brokers(1), TestCluster.builder().brokers(1), GroupSyncClusters::new);
    }

    /** A one-broker cluster whose share coordinator state topic fits it (share groups are on by default). */
    static TestCluster.Builder shareGroupCluster() {
        return TestCluster.builder().brokers(1)
                .brokerProperty("share.coordinator.state.topic.replication.factor", "1")
                .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3");
    }

    /** A share group's start offsets as {@code admin}'s cluster describes them (none for a group it does not know). */
    static Map<TopicPartition, Long> shareStartOffsets(Admin admin, String group) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> offsets;
        try {
            offsets = admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Map.of();
            }
            throw e;
        }
        Map<TopicPartition, Long> out = new HashMap<>();
        offsets.forEach((tp, info) -> {
            if (info != null) {
                out.put(tp, info.startOffset());
            }
        });
        return out;
    }

    /** A topic of one partition with 100 records on the source only (not mirrored). */
    void createOnSource(String topic) throws Exception {
        createSourceTopics(new NewTopic(topic, 1, (short) 1));
        produce(topic, 0, 100);
    }

    /** Source topics of 2 partitions with 100 records each, mirrored by "dr" with a 300 ms group sync. */
    void createAndMirror(Map<String, String> groupConfigs, String... topics) throws Exception {
        for (String topic : topics) {
            createSourceTopics(new NewTopic(topic, 2, (short) 1));
            produce(topic, 0, 100);
            produce(topic, 1, 100);
        }
        Map<String, String> configs = new HashMap<>(groupConfigs);
        configs.put("mirror.groups.sync.interval.ms", "300");
        createMirror("dr", configs);
        assertEquals(Map.of(), mirrors().startMirrorTopics("dr", List.of(topics), List.of(), List.of()));
        for (String topic : topics) {
            awaitPartitionState(topic, "MIRRORING");
            Waits.waitUntil(topic + " mirrored", () -> destination().logEndOffset(new TopicPartition(topic, 1)) == 100,
                    TIMEOUT);
        }
    }

    /** {@code count} records {@code v0}, {@code v1}, ... to the source. */
    void produce(String topic, int partition, int count) throws Exception {
        source().produce(topic, partition, count, "v");
    }

    /** Commits as a consumer of the source would (leader epoch 0: the source's only epoch). */
    void commitOnSource(String group, Map<TopicPartition, Long> offsets) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
        offsets.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o, Optional.of(0), "from-source")));
        sourceAdmin().alterConsumerGroupOffsets(group, commit).all().get();
    }

    Map<TopicPartition, OffsetAndMetadata> destinationCommitted(String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        destinationAdmin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, o) -> {
            if (o != null) {
                out.put(tp, o);
            }
        });
        return out;
    }

    void awaitDestinationOffsets(String group, Map<TopicPartition, Long> expected) {
        Waits.waitFor("group " + group + " at " + expected + " on the destination", () -> {
            Map<TopicPartition, Long> offsets = new HashMap<>();
            destinationCommitted(group).forEach((tp, o) -> offsets.put(tp, o.offset()));
            return offsets;
        }, expected::equals, TIMEOUT);
    }

    Map<String, MirrorAdmin.GroupSyncDescription> describeGroups() throws Exception {
        return mirrors().describeClusterMirrors(List.of("dr")).get("dr").groups();
    }

    void awaitPartitionState(String topic, String state) {
        awaitState("dr", topic, state);
    }
}
