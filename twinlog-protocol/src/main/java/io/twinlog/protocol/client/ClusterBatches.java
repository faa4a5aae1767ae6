package io.twinlog.protocol.client;

import io.twinlog.common.mirror.BatchIdentity;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads one cluster's partitions a batch at a time, as an ordinary consumer would (Kafka's Fetch, so it works
 * against Apache Kafka too): the offsets a consumer may read, and the identity of the batch holding an offset
 * ({@link BatchIdentity}). For comparing two clusters' logs (twinlog-mirrors.sh --verify, a failback's
 * reconciliation). Not thread-safe.
 */
public final class ClusterBatches implements AutoCloseable {
    private static final int REQUEST_TIMEOUT_MS = 30_000;
    /** The last Fetch version that names topics instead of giving their IDs. */
    private static final short FETCH_VERSION_BY_NAME = 12;

    /** The offsets a consumer may read: from the log start to the high watermark. */
    public record Range(long start, long end) {
    }

    private final String what;
    private final Admin admin;
    private final InterBrokerClient fetcher;
    private final Map<String, TopicDescription> topics = new TreeMap<>();
    /** Record bytes fetched so far, for a progress report. */
    private long bytesFetched;

    /**
     * @param what    how messages name this cluster ("the source")
     * @param configs Kafka admin client configs (bootstrap servers, security)
     */
    public ClusterBatches(String what, Map<String, Object> configs) {
        this.what = what;
        this.admin = Admin.create(configs);
        AdminClientConfig config = new AdminClientConfig(configs);
        this.fetcher = new InterBrokerClient("twinlog-batches", ClientUtils.createChannelBuilder(config,
                Time.SYSTEM, new LogContext()), REQUEST_TIMEOUT_MS, 64 * 1024, 50, 1_000, Time.SYSTEM);
    }

    public Range range(TopicPartition tp) throws IOException {
        try {
            ListOffsetsResult earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest()));
            ListOffsetsResult latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest()));
            return new Range(earliest.partitionResult(tp).get(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS).offset(),
                    latest.partitionResult(tp).get(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS).offset());
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("Could not read the offsets of " + tp + " on " + what + ": "
                    + (e.getCause() == null ? e : e.getCause()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted", e);
        }
    }

    /** The cluster's ID, as it says (DescribeCluster): which cluster is really at the address. */
    public String clusterId() throws IOException {
        try {
            return admin.describeCluster().clusterId().get(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("Could not read the cluster ID of " + what + ": "
                    + (e.getCause() == null ? e : e.getCause()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted", e);
        }
    }

    /** The record bytes the fetches of {@link #batchAt} read so far. */
    public long bytesFetched() {
        return bytesFetched;
    }

    /** The batch holding {@code offset}, read from the partition's leader; empty if it holds none there. */
    public Optional<BatchIdentity> batchAt(TopicPartition tp, long offset) throws IOException {
        try {
            return fetchBatch(tp, offset);
        } catch (IOException e) {
            // the leader may have moved since the topic was described: describe again, once
            topics.remove(tp.topic());
            return fetchBatch(tp, offset);
        }
    }

    private Optional<BatchIdentity> fetchBatch(TopicPartition tp, long offset) throws IOException {
        TopicDescription topic = topic(tp.topic());
        TopicPartitionInfo info = topic.partitions().get(tp.partition());
        Node leader = info.leader();
        if (leader == null || leader.isEmpty()) {
            throw new IOException(tp + " has no leader on " + what);
        }
        Uuid topicId = topic.topicId();
        LinkedHashMap<TopicPartition, FetchRequest.PartitionData> data = new LinkedHashMap<>();
        data.put(tp, new FetchRequest.PartitionData(topicId, offset, -1L, 1, Optional.empty()));
        // by name (v12) when the cluster gave no topic ID: an ID of zero cannot be fetched by
        short maxVersion = Uuid.ZERO_UUID.equals(topicId) ? FETCH_VERSION_BY_NAME : ApiKeys.FETCH.latestVersion();
        FetchRequest.Builder request = FetchRequest.Builder.forConsumer(maxVersion, 0, 1, data).setMaxBytes(1);
        InterBrokerClient.Exchange<FetchResponse> answer = fetcher.exchange(leader, request);
        FetchResponse response = answer.body();
        if (response.error() != Errors.NONE) {
            throw new IOException("Fetch of " + tp + " from " + what + " failed: " + response.error());
        }
        // read as the version it was answered at: a broker before Kafka 3.1 answers v12, by topic name
        FetchResponseData.PartitionData partition = response.responseData(Map.of(topicId, tp.topic()),
                answer.version()).get(tp);
        Errors error = partition == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.forCode(partition.errorCode());
        if (error == Errors.OFFSET_OUT_OF_RANGE) {
            return Optional.empty();
        }
        if (error != Errors.NONE) {
            throw new IOException("Fetch of " + tp + " at offset " + offset + " from " + what + " failed: "
                    + error);
        }
        Records records = FetchResponse.recordsOrFail(partition);
        bytesFetched += records.sizeInBytes();
        for (RecordBatch batch : records.batches()) {
            if (batch.lastOffset() >= offset) {
                return Optional.of(new BatchIdentity(batch.baseOffset(), batch.lastOffset(),
                        batch.partitionLeaderEpoch(), batch.checksum()));
            }
        }
        return Optional.empty();
    }

    private TopicDescription topic(String name) throws IOException {
        TopicDescription t = topics.get(name);
        if (t == null) {
            try {
                t = admin.describeTopics(List.of(name)).allTopicNames()
                        .get(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS).get(name);
            } catch (ExecutionException | TimeoutException e) {
                throw new IOException("Could not describe " + name + " on " + what + ": "
                        + (e.getCause() == null ? e : e.getCause()), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("Interrupted", e);
            }
            topics.put(name, t);
        }
        return t;
    }

    @Override
    public void close() {
        admin.close();
        fetcher.close();
    }
}
