package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The two clusters of a group offset sync test: a source and a destination, a mirror "dr" between them with a
 * 300 ms group sync, and clients for both, with the steps and waits those tests share.
 */
class GroupSyncClusters implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Opens the clients of two started clusters, after whatever the test needs done to them first. */
    @FunctionalInterface
    interface Opener<T extends GroupSyncClusters> {
        T open(TestCluster source, TestCluster destination) throws Exception;
    }

    final TestCluster source;
    final TestCluster destination;
    final Admin sourceAdmin;
    final Admin destinationAdmin;
    final MirrorAdmin mirrors;

    GroupSyncClusters(TestCluster source, TestCluster destination) {
        this.source = source;
        this.destination = destination;
        this.sourceAdmin = source.admin();
        this.destinationAdmin = destination.admin();
        this.mirrors = MirrorAdmin.create(destination.bootstrapServers(), TIMEOUT);
    }

    /** Two one-broker clusters. */
    static GroupSyncClusters start() throws Exception {
        return start(TestCluster.builder().brokers(1), TestCluster.builder().brokers(1), GroupSyncClusters::new);
    }

    /** Two clusters built by {@code source} and {@code destination}, both closed if {@code open} fails. */
    static <T extends GroupSyncClusters> T start(TestCluster.Builder source, TestCluster.Builder destination,
                                                  Opener<T> open) throws Exception {
        TestCluster started = source.build().start();
        TestCluster startedDestination = null;
        try {
            startedDestination = destination.build().start();
            return open.open(started, startedDestination);
        } catch (Exception | Error e) {
            if (startedDestination != null) {
                startedDestination.close();
            }
            started.close();
            throw e;
        }
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
        sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        produce(topic, 0, 100);
    }

    /** Source topics of 2 partitions with 100 records each, mirrored by "dr" with a 300 ms group sync. */
    void createAndMirror(Map<String, String> groupConfigs, String... topics) throws Exception {
        for (String topic : topics) {
            sourceAdmin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            produce(topic, 0, 100);
            produce(topic, 1, 100);
        }
        Map<String, String> configs = new HashMap<>(groupConfigs);
        configs.put("bootstrap.servers", source.bootstrapServers());
        configs.put("mirror.groups.sync.interval.ms", "300");
        mirrors.createClusterMirror("dr", configs);
        assertEquals(Map.of(), mirrors.startMirrorTopics("dr", List.of(topics), List.of(), List.of()));
        for (String topic : topics) {
            awaitPartitionState(topic, "MIRRORING");
            Waits.waitUntil(topic + " mirrored", () -> destination.broker(0).logStore()
                    .log(new TopicPartition(topic, 1)).map(l -> l.logEndOffset() == 100).orElse(false), TIMEOUT);
        }
    }

    void produce(String topic, int partition, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = source.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, partition, null, ("v" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }

    /** Commits as a consumer of the source would (leader epoch 0: the source's only epoch). */
    void commitOnSource(String group, Map<TopicPartition, Long> offsets) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
        offsets.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o, Optional.of(0), "from-source")));
        sourceAdmin.alterConsumerGroupOffsets(group, commit).all().get();
    }

    Map<TopicPartition, OffsetAndMetadata> destinationCommitted(String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        destinationAdmin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, o) -> {
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
        return mirrors.describeClusterMirrors(List.of("dr")).get("dr").groups();
    }

    void awaitPartitionState(String topic, String state) {
        Waits.waitFor(topic + " " + state, () -> mirrors.describeClusterMirrors(List.of("dr")).get("dr").topics()
                .get(topic).partitions(), ps -> !ps.isEmpty() && ps.stream().allMatch(p -> p.state().equals(state)),
                TIMEOUT);
    }

    @Override
    public void close() {
        mirrors.close();
        sourceAdmin.close();
        destinationAdmin.close();
        destination.close();
        source.close();
    }
}
