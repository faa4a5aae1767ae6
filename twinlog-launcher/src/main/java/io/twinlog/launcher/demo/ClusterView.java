package io.twinlog.launcher.demo;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.protocol.client.ClusterBatches;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One of the demo's two clusters as its clients see it: Kafka's {@link Admin}, Twinlog's {@link MirrorAdmin}, a
 * batch reader ({@link ClusterBatches}, what {@code twinlog-mirrors.sh --verify} compares) and a Metadata request
 * for what Admin does not show (partition leader epochs). Used by the demo's one thread.
 */
final class ClusterView implements AutoCloseable {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    /** A partition's identity and position as any client can read them. */
    record PartitionView(int partition, Uuid topicId, long logEndOffset, int leaderEpoch, int lastBatchEpoch) {
    }

    private final String name;
    private final String bootstrap;
    private final String address;
    private final Admin admin;
    private final MirrorAdmin mirrors;
    private final ClusterBatches batches;
    private final InterBrokerClient metadataClient;

    /**
     * @param name      how the demo names it ("source")
     * @param bootstrap its bootstrap servers
     * @param address   the short form an operator types ({@code :9092})
     */
    ClusterView(String name, String bootstrap, String address) {
        this.name = name;
        this.bootstrap = bootstrap;
        this.address = address;
        Map<String, Object> configs = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        this.admin = Admin.create(configs);
        this.mirrors = MirrorAdmin.create(bootstrap, CALL_TIMEOUT);
        this.batches = new ClusterBatches("the " + name, configs);
        this.metadataClient = new InterBrokerClient("twinlog-demo-" + name, (int) CALL_TIMEOUT.toMillis(), 64 * 1024,
                Time.SYSTEM);
    }

    String name() {
        return name;
    }

    String bootstrap() {
        return bootstrap;
    }

    /** {@code :9092}: the address as the printed commands give it. */
    String address() {
        return address;
    }

    Admin admin() {
        return admin;
    }

    MirrorAdmin mirrors() {
        return mirrors;
    }

    String clusterId() throws Exception {
        return get(admin.describeCluster().clusterId());
    }

    Set<String> topics() throws Exception {
        return get(admin.listTopics().names());
    }

    TopicDescription describe(String topic) throws Exception {
        return get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic);
    }

    /** The high watermark of each partition: the end of what consumers read (ListOffsets latest). */
    Map<Integer, Long> endOffsets(String topic, int partitions) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new TreeMap<>(Comparator.comparing(TopicPartition::partition));
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, ListOffsetsResultInfo> result = get(admin.listOffsets(request).all());
        Map<Integer, Long> out = new TreeMap<>();
        result.forEach((tp, info) -> out.put(tp.partition(), info.offset()));
        return out;
    }

    /**
     * Topic ID, end offset, partition leader epoch (from a Metadata request, as clients see it) and the epoch of the
     * last batch (from a Fetch of it) of each partition.
     */
    List<PartitionView> partitions(String topic, int partitions) throws Exception {
        Map<Integer, Long> ends = endOffsets(topic, partitions);
        Node node = get(admin.describeCluster().nodes()).iterator().next();
        MetadataResponse response = metadataClient.send(node, new MetadataRequest.Builder(List.of(topic), false));
        List<PartitionView> out = new ArrayList<>();
        for (MetadataResponse.TopicMetadata t : response.topicMetadata()) {
            if (t.error() != Errors.NONE) {
                throw new IOException("Metadata of " + topic + " on the " + name + ": " + t.error());
            }
            for (MetadataResponse.PartitionMetadata p : t.partitionMetadata()) {
                long end = ends.get(p.partition());
                out.add(new PartitionView(p.partition(), t.topicId(), end, p.leaderEpoch.orElse(-1),
                        lastBatch(new TopicPartition(topic, p.partition()), end).map(BatchIdentity::epoch).orElse(-1)));
            }
        }
        out.sort(Comparator.comparingInt(PartitionView::partition));
        return out;
    }

    private Optional<BatchIdentity> lastBatch(TopicPartition tp, long endOffset) throws IOException {
        return endOffset == 0 ? Optional.empty() : batches.batchAt(tp, endOffset - 1);
    }

    /** Every batch of a partition below {@code endOffset}, one Fetch each, in offset order. */
    List<BatchIdentity> batches(TopicPartition tp, long endOffset) throws IOException {
        List<BatchIdentity> out = new ArrayList<>();
        long offset = batches.range(tp).start();
        while (offset < endOffset) {
            Optional<BatchIdentity> batch = batches.batchAt(tp, offset);
            if (batch.isEmpty()) {
                throw new IOException("The " + name + " returned no batch for " + tp + " at offset " + offset
                        + " below its end offset " + endOffset);
            }
            out.add(batch.get());
            offset = batch.get().lastOffset() + 1;
        }
        return out;
    }

    /** A group's committed offsets for one topic, by partition. */
    Map<Integer, Long> groupOffsets(String group, String topic) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets = get(admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata());
        return offsets.entrySet().stream()
                .filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
                .collect(Collectors.toMap(e -> e.getKey().partition(), e -> e.getValue().offset(), (a, b) -> a,
                        TreeMap::new));
    }

    /** The topic's partitions as the mirror on this cluster describes them (empty if the mirror has no such topic). */
    List<MirrorAdmin.PartitionDescription> mirrorPartitions(String mirror, String topic) throws IOException {
        MirrorAdmin.MirrorDescription d = mirrors.describeClusterMirrors(List.of(mirror)).get(mirror);
        MirrorAdmin.TopicDescription t = d == null ? null : d.topics().get(topic);
        return t == null ? List.of() : t.partitions().stream()
                .sorted(Comparator.comparingInt(MirrorAdmin.PartitionDescription::partition)).toList();
    }

    private static <T> T get(KafkaFuture<T> future) throws Exception {
        try {
            return future.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    @Override
    public void close() {
        metadataClient.close();
        batches.close();
        mirrors.close();
        admin.close();
    }
}
