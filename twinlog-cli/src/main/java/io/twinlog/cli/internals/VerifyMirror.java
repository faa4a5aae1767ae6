package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.protocol.client.InterBrokerClient;
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
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/**
 * {@code --verify --mirror NAME [--topic REGEX]... [--full]}: compares each partition of the mirror's topics on this
 * cluster with the same partition on the mirror's source, without stopping anything (issue 12, point 6). A batch
 * is identified by its base and last offsets, partition leader epoch and CRC; mirroring copies batches as they are,
 * so two logs agree up to where their batches stop matching. The first difference is found by binary search with
 * ordinary Fetch requests of one batch each (O(log n) per side; it works against an Apache Kafka source), over the
 * offsets both clusters hold below their high watermarks; {@code --full} compares every batch instead. One line per
 * partition:
 * <pre>
 * orders 0 identical up to 1500
 * orders 1 differ from offset 120 (here: epoch 3 crc 2712386541; source: epoch 4 crc 918273645)
 * orders 2 forked at offset 800, where it failed over (identical before it)
 * </pre>
 * A failed-over partition is expected to differ from its last mirrored offset on; anything else that differs
 * makes the exit status 1.
 */
public final class VerifyMirror implements MirrorAction {
    private static final int REQUEST_TIMEOUT_MS = 30_000;

    private final String mirror;
    private final List<String> topicPatterns;
    private final boolean full;
    private final Map<String, Object> destinationConfigs;
    private boolean differs;

    /** What one fetch of one batch tells: where the batch is and what it holds. */
    record BatchIdentity(long baseOffset, long lastOffset, int epoch, long crc) {
    }

    public VerifyMirror(String mirror, List<String> topicPatterns, boolean full,
                        Map<String, Object> destinationConfigs) {
        this.mirror = mirror;
        this.topicPatterns = List.copyOf(topicPatterns);
        this.full = full;
        this.destinationConfigs = Map.copyOf(destinationConfigs);
    }

    /** This verification reading this cluster with {@code configs} (the command's admin client configs). */
    public VerifyMirror reading(Map<String, Object> configs) {
        return new VerifyMirror(mirror, topicPatterns, full, configs);
    }

    /** Whether some partition differs where the two clusters should agree (exit status 1). */
    public boolean differs() {
        return differs;
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        MirrorAdmin.MirrorDescription d = admin.describeClusterMirrors(List.of(mirror)).get(mirror);
        Map<String, Object> sourceConfigs = new HashMap<>();
        d.configs().forEach((k, v) -> {
            if (!k.startsWith("mirror.") && v != null && !d.sensitiveConfigs().contains(k)) {
                sourceConfigs.put(k, v);
            }
        });
        if (!d.sensitiveConfigs().isEmpty()) {
            throw CommandException.failed("--verify cannot reach a source that needs credentials yet (the mirror's "
                    + String.join(", ", d.sensitiveConfigs()) + " are never shown back)");
        }
        sourceConfigs.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, d.sourceBootstrap());
        List<String> topics = d.topics().keySet().stream()
                .filter(t -> topicPatterns.isEmpty() || topicPatterns.stream().anyMatch(p -> Pattern.matches(p, t)))
                .sorted().toList();
        if (topics.isEmpty()) {
            throw CommandException.failed("Mirror '" + mirror + "' has no topic matching " + topicPatterns);
        }
        try (Side here = new Side("this cluster", destinationConfigs);
             Side source = new Side("the source", sourceConfigs)) {
            for (String topic : topics) {
                MirrorAdmin.TopicDescription t = d.topics().get(topic);
                for (MirrorAdmin.PartitionDescription p : t.partitions()) {
                    TopicPartition tp = new TopicPartition(topic, p.partition());
                    long failedOverAt = p.state().equals("STOPPED") ? p.lastMirroredOffset() : -1;
                    out.println(compare(tp, here, source, failedOverAt));
                    out.flush();
                }
            }
        }
    }

    private String compare(TopicPartition tp, Side here, Side source, long failedOverAt) throws IOException {
        Side.Range h = here.range(tp);
        Side.Range s = source.range(tp);
        long lo = Math.max(h.start(), s.start());
        long hi = Math.min(h.end(), s.end());
        String name = tp.topic() + " " + tp.partition();
        if (hi <= lo) {
            return name + " identical up to " + lo + " (no offset in common to compare)";
        }
        Optional<Long> firstDifference = full ? linear(tp, here, source, lo, hi) : search(tp, here, source, lo, hi);
        if (firstDifference.isEmpty()) {
            return name + " identical up to " + hi;
        }
        long at = firstDifference.get();
        if (failedOverAt >= 0 && at >= failedOverAt) {
            return name + " forked at offset " + at + ", where it failed over (identical before it)";
        }
        differs = true;
        BatchIdentity mine = here.batchAt(tp, at).orElse(null);
        BatchIdentity theirs = source.batchAt(tp, at).orElse(null);
        return name + " differ from offset " + at + " (here: " + describe(mine) + "; source: " + describe(theirs) + ")";
    }

    private static String describe(BatchIdentity b) {
        return b == null ? "none" : "epoch " + b.epoch() + " crc " + b.crc();
    }

    /** Binary search for the first offset in [lo, hi) whose batch differs; empty when none does. */
    private static Optional<Long> search(TopicPartition tp, Side here, Side source, long lo, long hi)
            throws IOException {
        if (same(tp, here, source, hi - 1)) {
            return Optional.empty();
        }
        if (!same(tp, here, source, lo)) {
            return Optional.of(lo);
        }
        long good = lo;
        long bad = hi - 1;
        while (bad - good > 1) {
            long mid = good + (bad - good) / 2;
            if (same(tp, here, source, mid)) {
                good = mid;
            } else {
                bad = mid;
            }
        }
        return Optional.of(bad);
    }

    /** Every batch in [lo, hi), one after the other; the first that differs. */
    private static Optional<Long> linear(TopicPartition tp, Side here, Side source, long lo, long hi)
            throws IOException {
        long offset = lo;
        while (offset < hi) {
            Optional<BatchIdentity> a = here.batchAt(tp, offset);
            Optional<BatchIdentity> b = source.batchAt(tp, offset);
            if (a.isEmpty() || !a.equals(b)) {
                return Optional.of(offset);
            }
            offset = a.get().lastOffset() + 1;
        }
        return Optional.empty();
    }

    private static boolean same(TopicPartition tp, Side here, Side source, long offset) throws IOException {
        Optional<BatchIdentity> a = here.batchAt(tp, offset);
        return a.isPresent() && a.equals(source.batchAt(tp, offset));
    }

    /** One cluster: its admin client for leaders and offsets, and a fetch channel for single batches. */
    private static final class Side implements AutoCloseable {
        private final String what;
        private final Admin admin;
        private final InterBrokerClient fetcher;
        private final Map<String, TopicDescription> topics = new TreeMap<>();

        record Range(long start, long end) {
        }

        Side(String what, Map<String, Object> configs) {
            this.what = what;
            this.admin = Admin.create(configs);
            AdminClientConfig config = new AdminClientConfig(configs);
            this.fetcher = new InterBrokerClient("twinlog-verify", ClientUtils.createChannelBuilder(config,
                    Time.SYSTEM, new LogContext()), REQUEST_TIMEOUT_MS, 64 * 1024, 50, 1_000, Time.SYSTEM);
        }

        /** The offsets a consumer may read: log start to high watermark. */
        Range range(TopicPartition tp) throws IOException {
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

        /** The batch holding {@code offset}, read from the partition's leader; empty if it holds none there. */
        Optional<BatchIdentity> batchAt(TopicPartition tp, long offset) throws IOException {
            TopicDescription topic = topic(tp.topic());
            TopicPartitionInfo info = topic.partitions().get(tp.partition());
            Node leader = info.leader();
            if (leader == null || leader.isEmpty()) {
                throw new IOException(tp + " has no leader on " + what);
            }
            Uuid topicId = topic.topicId();
            LinkedHashMap<TopicPartition, FetchRequest.PartitionData> data = new LinkedHashMap<>();
            data.put(tp, new FetchRequest.PartitionData(topicId, offset, -1L, 1, Optional.empty()));
            FetchRequest.Builder request = FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 0, 1, data)
                    .setMaxBytes(1);
            FetchResponse response = fetcher.send(leader, request);
            if (response.error() != Errors.NONE) {
                throw new IOException("Fetch of " + tp + " from " + what + " failed: " + response.error());
            }
            FetchResponseData.PartitionData partition = response.responseData(Map.of(topicId, tp.topic()),
                    ApiKeys.FETCH.latestVersion()).get(tp);
            Errors error = partition == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.forCode(partition.errorCode());
            if (error == Errors.OFFSET_OUT_OF_RANGE) {
                return Optional.empty();
            }
            if (error != Errors.NONE) {
                throw new IOException("Fetch of " + tp + " at offset " + offset + " from " + what + " failed: "
                        + error);
            }
            Records records = FetchResponse.recordsOrFail(partition);
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
}
