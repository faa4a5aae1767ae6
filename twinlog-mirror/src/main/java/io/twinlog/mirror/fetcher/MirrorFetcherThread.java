package io.twinlog.mirror.fetcher;

import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Pulls record batches for every MIRRORING partition of one cluster mirror from the source partition leaders, with
 * Kafka's Fetch protocol as a read_uncommitted reader (so only records below the source's high watermark, which
 * cannot be lost by a clean election, are copied), sending {@code currentLeaderEpoch} and {@code lastFetchedEpoch}
 * like a follower so a source divergence is detected by epoch. Batches are appended unchanged.
 *
 * <p>Before appending, each batch's epoch is checked against the local leader epoch (DLE ≥ SLE): a batch whose epoch
 * reaches the local one is not appended; the manager fences (raises the local epoch) and fetching resumes.
 *
 * <p>Threading: one thread per mirror. Partitions are added and removed from the manager's thread through a
 * concurrent map; everything else is confined to this thread. Works against any Kafka-protocol source (Twinlog or
 * Apache Kafka). Connections use the mirror's source client configs (TLS, SASL) through {@link SourceChannels}.
 */
public final class MirrorFetcherThread implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(MirrorFetcherThread.class);
    private static final long METADATA_MAX_AGE_MS = 30_000;
    private static final long BACKOFF_MS = 500;
    private static final int FAILURES_BEFORE_REPORT = 3;

    private final String mirrorName;
    private final List<Node> bootstrap;
    private final MirrorFetchListener listener;
    private final Time time;
    private final Map<String, String> sourceClientConfigs;
    /** Made on this thread at first use, so configs that cannot make a channel fail the partitions, with why. */
    private volatile InterBrokerClient client;
    private final ConcurrentHashMap<TopicPartition, MirrorPartitionSink> partitions = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> delayedUntil = new HashMap<>();
    /** When each partition was first seen without a source leader; reported as FAILED after a while. */
    private final Map<TopicPartition, Long> leaderlessSinceMs = new HashMap<>();
    /** How long a partition may have no source leader before it is reported FAILED (retriable). */
    private final long leaderlessReportMs;
    private final Thread thread;
    private final Object wakeup = new Object();
    private volatile boolean running = true;
    private SourceMetadata metadata;
    /**
     * Set when a source broker could not be reached: it may have been a partition leader that died, and the source
     * has moved its leaderships elsewhere; look them up again (from the brokers still known, then the bootstrap list)
     * rather than retrying the dead broker until the metadata ages out.
     */
    private boolean metadataStale;
    private int consecutiveFailures;

    /**
     * @param sourceClientConfigs {@code bootstrap.servers} and the Kafka client configs for the source
     * @param leaderlessReportMs  how long a partition may have no leader on the source before it is reported
     *                            FAILED (retriable), so an offline source partition shows in describe with why
     */
    public MirrorFetcherThread(String mirrorName, Map<String, String> sourceClientConfigs, long leaderlessReportMs,
                               MirrorFetchListener listener, Time time) {
        this.mirrorName = mirrorName;
        this.leaderlessReportMs = leaderlessReportMs;
        this.bootstrap = parseBootstrap(sourceClientConfigs.getOrDefault("bootstrap.servers", ""));
        this.listener = listener;
        this.time = time;
        this.sourceClientConfigs = Map.copyOf(sourceClientConfigs);
        this.thread = new Thread(this, "twinlog-mirror-fetcher-" + mirrorName);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** Adds a partition (the manager re-adds its mirroring partitions on every tick: only a new one wakes us). */
    public void addPartition(TopicPartition tp, MirrorPartitionSink sink) {
        if (partitions.put(tp, sink) == null) {
            synchronized (wakeup) {
                wakeup.notifyAll(); // a back-off in progress is cut short only for a partition not yet fetched
            }
        }
    }

    public void removePartition(TopicPartition tp) {
        partitions.remove(tp);
    }

    public Set<TopicPartition> partitions() {
        return partitions.keySet();
    }

    @Override
    public void run() {
        while (running) {
            try {
                doWork();
            } catch (InterruptedException e) {
                return;
            } catch (Throwable t) {
                if (running) {
                    log.error("[Mirror {}] fetcher failed unexpectedly; continuing", mirrorName, t);
                    pause(BACKOFF_MS);
                }
            }
        }
    }

    private void doWork() throws InterruptedException {
        if (partitions.isEmpty()) {
            synchronized (wakeup) {
                wakeup.wait(200);
            }
            return;
        }
        if (client == null && !connect()) {
            return;
        }
        long now = time.milliseconds();
        if (metadata == null || metadataStale || now - metadata.fetchedAtMs() > METADATA_MAX_AGE_MS
                || partitions.keySet().stream().anyMatch(tp -> !metadata.leaders().containsKey(tp))) {
            if (!refreshMetadata()) {
                return;
            }
        }
        Map<Node, Map<TopicPartition, FetchRequest.PartitionData>> byLeader = new LinkedHashMap<>();
        Map<Uuid, String> topicNames = new HashMap<>();
        for (Map.Entry<TopicPartition, MirrorPartitionSink> e : partitions.entrySet()) {
            TopicPartition tp = e.getKey();
            if (delayedUntil.getOrDefault(tp, 0L) > now || !e.getValue().isLeader()) {
                continue;
            }
            Optional<Node> leader = metadata.leaderNode(tp);
            Uuid topicId = metadata.topicIds().get(tp.topic());
            if (leader.isEmpty() || topicId == null) {
                long since = leaderlessSinceMs.computeIfAbsent(tp, k -> now);
                if (now - since > leaderlessReportMs) {
                    leaderlessSinceMs.remove(tp);
                    listener.onFailure(tp, topicId == null ? "The source topic " + tp.topic() + " is unknown to the "
                            + "source cluster" : "The source partition " + tp + " has had no leader for "
                            + (now - since) + " ms (offline on the source)", true);
                    removePartition(tp);
                    continue;
                }
                metadataStale = true; // look again: a leader may have been elected meanwhile
                delayedUntil.put(tp, now + BACKOFF_MS);
                continue;
            }
            leaderlessSinceMs.remove(tp);
            MirrorPartitionSink sink = e.getValue();
            topicNames.put(topicId, tp.topic());
            byLeader.computeIfAbsent(leader.get(), n -> new LinkedHashMap<>()).put(tp, new FetchRequest.PartitionData(
                    topicId, sink.logEndOffset(), -1L, 1 << 20,
                    Optional.of(metadata.leaders().get(tp).leaderEpoch()), sink.latestEpoch()));
        }
        if (byLeader.isEmpty()) {
            pause(100);
            return;
        }
        for (Map.Entry<Node, Map<TopicPartition, FetchRequest.PartitionData>> e : byLeader.entrySet()) {
            fetchFrom(e.getKey(), e.getValue(), topicNames);
        }
    }

    private boolean connect() {
        String clientId = "mirror-fetcher-" + mirrorName;
        try {
            // a source across a WAN may be down for long: back off reconnects up to 10 s instead of hammering it
            client = new InterBrokerClient(clientId, SourceChannels.channelBuilder(sourceClientConfigs, clientId, time),
                    30_000, 8 << 20, 500, 10_000, time);
            return true;
        } catch (RuntimeException e) {
            String reason = "Cannot connect to the source with the mirror's client configs: " + e.getMessage();
            log.error("[Mirror {}] {}", mirrorName, reason);
            for (TopicPartition tp : new ArrayList<>(partitions.keySet())) {
                listener.onFailure(tp, reason, true); // retried: an --alter of the configs makes a new fetcher
                removePartition(tp);
            }
            pause(BACKOFF_MS);
            return false;
        }
    }

    private void fetchFrom(Node leader, Map<TopicPartition, FetchRequest.PartitionData> fetchData,
                           Map<Uuid, String> topicNames) {
        FetchResponse response;
        try {
            response = client.send(leader, FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 500, 1,
                    fetchData).isolationLevel(IsolationLevel.READ_UNCOMMITTED).setMaxBytes(8 << 20));
            consecutiveFailures = 0;
        } catch (IOException e) {
            metadataStale = true;
            onSourceError("source broker " + leader.id() + " (" + leader.host() + ":" + leader.port()
                    + ") unreachable: " + e.getMessage(), fetchData.keySet());
            return;
        }
        for (Map.Entry<TopicPartition, FetchResponseData.PartitionData> e
                : response.responseData(topicNames, ApiKeys.FETCH.latestVersion()).entrySet()) {
            TopicPartition tp = e.getKey();
            MirrorPartitionSink sink = partitions.get(tp);
            if (sink == null || !sink.isLeader()) {
                continue;
            }
            handle(tp, sink, fetchData.get(tp).fetchOffset, e.getValue());
        }
    }

    private void handle(TopicPartition tp, MirrorPartitionSink sink, long fetchOffset, FetchResponseData.PartitionData data) {
        Errors error = Errors.forCode(data.errorCode());
        try {
            switch (error) {
                case NONE -> {
                    if (FetchResponse.isDivergingEpoch(data)) {
                        listener.onFailure(tp, "Source divergence detected: the source's epoch "
                                + data.divergingEpoch().epoch() + " ends at offset " + data.divergingEpoch().endOffset()
                                + " but this cluster mirrored up to " + fetchOffset + " in epoch "
                                + sink.latestEpoch().orElse(-1) + " (an unclean leader election on the source?)", false);
                        removePartition(tp);
                        return;
                    }
                    Records records = FetchResponse.recordsOrFail(data);
                    if (records.sizeInBytes() > 0) {
                        MemoryRecords memory = (MemoryRecords) records;
                        int maxEpoch = -1;
                        for (RecordBatch b : memory.batches()) {
                            maxEpoch = Math.max(maxEpoch, b.partitionLeaderEpoch());
                        }
                        if (maxEpoch >= sink.leaderEpoch()) {
                            listener.onEpochFencingNeeded(tp, maxEpoch);
                            removePartition(tp);
                            return;
                        }
                        if (sink.logEndOffset() == fetchOffset) {
                            sink.appendMirrored(memory);
                        }
                    }
                    listener.onProgress(tp, data.highWatermark(), sink.logEndOffset());
                }
                case OFFSET_OUT_OF_RANGE -> handleOutOfRange(tp, sink);
                case NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, LEADER_NOT_AVAILABLE -> {
                    metadata = null; // the source's leadership moved: look it up again
                    delayedUntil.put(tp, time.milliseconds() + 100);
                }
                case UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID -> {
                    metadata = null;
                    listener.onFailure(tp, "The source topic partition " + tp + " does not exist (deleted or "
                            + "recreated on the source?)", true);
                    removePartition(tp);
                }
                default -> {
                    log.warn("[Mirror {} {}] fetch failed with {}; backing off", mirrorName, tp, error);
                    delayedUntil.put(tp, time.milliseconds() + BACKOFF_MS);
                }
            }
        } catch (Exception e) {
            log.error("[Mirror {} {}] could not apply fetched data", mirrorName, tp, e);
            listener.onFailure(tp, "Could not apply mirrored data: " + e, true);
            removePartition(tp);
        }
    }

    /**
     * The source cannot serve our next offset. Its log starts after our end (source retention): restart empty at
     * the source's log start. Its log ends before ours: the source lost records we mirrored — a divergence.
     */
    private void handleOutOfRange(TopicPartition tp, MirrorPartitionSink sink) throws IOException {
        Node leader = metadata.leaderNode(tp).orElseThrow(() -> new IOException("no source leader for " + tp));
        long earliest = listOffset(leader, tp, ListOffsetsRequest.EARLIEST_TIMESTAMP);
        long latest = listOffset(leader, tp, ListOffsetsRequest.LATEST_TIMESTAMP);
        long end = sink.logEndOffset();
        if (earliest >= 0 && end < earliest) {
            sink.truncateFullyAndStartAt(earliest, "source log now starts at " + earliest + " (source retention)");
        } else if (latest >= 0 && end > latest) {
            listener.onFailure(tp, "Source divergence detected: the source log ends at " + latest
                    + " but this cluster mirrored up to " + end, false);
            removePartition(tp);
        } else {
            delayedUntil.put(tp, time.milliseconds() + BACKOFF_MS);
        }
    }

    private long listOffset(Node leader, TopicPartition tp, long timestamp) throws IOException {
        ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic().setName(tp.topic());
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(tp.partition())
                .setTimestamp(timestamp));
        ListOffsetsResponse r = client.send(leader, ListOffsetsRequest.Builder
                .forConsumer(false, IsolationLevel.READ_UNCOMMITTED).setTargetTimes(List.of(topic)));
        for (ListOffsetsResponseData.ListOffsetsTopicResponse t : r.data().topics()) {
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse p : t.partitions()) {
                if (p.errorCode() == Errors.NONE.code()) {
                    return p.offset();
                }
            }
        }
        return -1L;
    }

    private boolean refreshMetadata() {
        List<String> topics = new ArrayList<>();
        partitions.keySet().forEach(tp -> {
            if (!topics.contains(tp.topic())) {
                topics.add(tp.topic());
            }
        });
        IOException last = null;
        List<Node> candidates = new ArrayList<>(bootstrap);
        if (metadata != null) {
            candidates.addAll(0, metadata.brokers().values());
        }
        for (Node node : candidates) {
            try {
                MetadataResponse r = client.send(node, new MetadataRequest.Builder(topics, false));
                metadata = parse(r);
                if (!metadataStale) {
                    consecutiveFailures = 0;
                }
                // After an unreachable leader, only a successful fetch clears the failure count: a source that
                // keeps naming a dead broker as leader must still end in FAILED, not loop unreported.
                metadataStale = false;
                return true;
            } catch (IOException e) {
                last = e;
            }
        }
        onSourceError("source cluster unreachable at " + bootstrap + ": " + (last == null ? "?" : last.getMessage()),
                partitions.keySet());
        return false;
    }

    private SourceMetadata parse(MetadataResponse response) {
        Map<TopicPartition, SourceMetadata.Leader> leaders = new HashMap<>();
        Map<String, Uuid> ids = new HashMap<>();
        Map<Integer, Node> brokers = new HashMap<>();
        for (MetadataResponseData.MetadataResponseBroker b : response.data().brokers()) {
            brokers.put(b.nodeId(), new Node(b.nodeId(), b.host(), b.port()));
        }
        for (MetadataResponseData.MetadataResponseTopic t : response.data().topics()) {
            if (t.errorCode() != Errors.NONE.code()) {
                continue;
            }
            ids.put(t.name(), t.topicId());
            for (MetadataResponseData.MetadataResponsePartition p : t.partitions()) {
                if (p.leaderId() >= 0) {
                    leaders.put(new TopicPartition(t.name(), p.partitionIndex()),
                            new SourceMetadata.Leader(p.leaderId(), p.leaderEpoch()));
                }
            }
        }
        return new SourceMetadata(leaders, ids, brokers, response.data().clusterId(), time.milliseconds());
    }

    private void onSourceError(String reason, Set<TopicPartition> affected) {
        consecutiveFailures++;
        log.info("[Mirror {}] {} (attempt {})", mirrorName, reason, consecutiveFailures);
        if (consecutiveFailures >= FAILURES_BEFORE_REPORT) {
            for (TopicPartition tp : new ArrayList<>(affected)) {
                listener.onFailure(tp, reason, true);
                removePartition(tp);
            }
            consecutiveFailures = 0;
        }
        pause(BACKOFF_MS);
    }

    /** The source cluster ID the last metadata reported, if any. */
    public Optional<String> sourceClusterId() {
        SourceMetadata m = metadata;
        return m == null ? Optional.empty() : Optional.ofNullable(m.clusterId());
    }

    private void pause(long ms) {
        synchronized (wakeup) {
            try {
                wakeup.wait(ms); // back-off between attempts; shutdown and new partitions wake it early
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public void shutdown() {
        running = false;
        InterBrokerClient c = client;
        if (c != null) {
            c.wakeup();
        }
        synchronized (wakeup) {
            wakeup.notifyAll();
        }
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        InterBrokerClient connected = client;
        if (connected != null) {
            connected.close();
        }
    }

    static List<Node> parseBootstrap(String csv) {
        List<Node> out = new ArrayList<>();
        int id = -1;
        for (String hp : csv.split(",")) {
            String s = hp.trim();
            if (s.isEmpty()) {
                continue;
            }
            int colon = s.lastIndexOf(':');
            String host = colon <= 0 ? "127.0.0.1" : s.substring(0, colon);
            out.add(new Node(id--, host, Integer.parseInt(s.substring(colon + 1))));
        }
        return out;
    }
}
