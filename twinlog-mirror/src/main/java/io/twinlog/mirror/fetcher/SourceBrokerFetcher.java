package io.twinlog.mirror.fetcher;

import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.common.tasks.FetcherThread;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.protocol.client.InterBrokerClient;
import io.twinlog.protocol.client.SinglePartitionOffsets;
import io.twinlog.protocol.client.UnsupportedApiVersionException;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.utils.internals.LogContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Fetches one mirror's partitions led by one source broker ({@code twinlog-mirror-fetcher-<mirror>-<broker>}):
 * its own connection and its own fetch session (KIP-227, Kafka's {@link FetchSessionHandler}: against a source
 * that keeps sessions, an unchanged partition is not re-sent), with Kafka's Fetch protocol as a read_uncommitted
 * reader (so only records below the source's high watermark, which a clean election cannot lose, are copied),
 * sending {@code currentLeaderEpoch} and {@code lastFetchedEpoch} like a follower so a source divergence is detected
 * by epoch. Batches are appended unchanged.
 *
 * <p>Before appending, each batch's epoch is checked against the local leader epoch (DLE ≥ SLE): a batch whose epoch
 * reaches the local one is not appended; the manager fences (raises the local epoch) and fetching resumes.
 *
 * <p>Metrics ({@link MirrorFetchMetrics}): every fetch, and per partition the source's high watermark and what was
 * appended; for partitions behind their source, the source's newest record timestamp (ListOffsets max timestamp, at
 * most every {@value #TIMESTAMP_PROBE_INTERVAL_MS} ms per partition, one request for all of them), from which the
 * lag in seconds is computed.
 *
 * <p>Threading: a {@link FetcherThread} (Kafka's {@code ShutdownableThread}); the mirror fetcher's metadata thread
 * assigns its partitions ({@link #assign}) and stops it.
 */
final class SourceBrokerFetcher extends FetcherThread {
    private static final Logger log = LoggerFactory.getLogger(SourceBrokerFetcher.class);
    private static final int MAX_WAIT_MS = 500;
    /** The last Fetch version that names topics instead of giving their IDs. */
    private static final short FETCH_VERSION_BY_NAME = 12;
    private static final int PARTITION_MAX_BYTES = 1 << 20;
    private static final int MAX_BYTES = 8 << 20;
    /** How long a fetch thread waits before it looks at the mirror's bandwidth cap again. */
    private static final long QUOTA_WAIT_MS = 100;
    private static final long NOT_LEADER_RETRY_MS = 100;
    static final long TIMESTAMP_PROBE_INTERVAL_MS = 5_000;
    /**
     * How long a source broker that does not serve the max-timestamp probe (Kafka before 3.0) is not asked again: long
     * enough not to cost a request per fetch, short enough to notice a rolling upgrade of the source.
     */
    static final long TIMESTAMP_PROBE_UNSERVED_INTERVAL_MS = 10 * 60_000;

    /**
     * What the mirror fetcher hands over for one local partition: the source topic ID, the leader epoch it knows, and
     * the source partition (another topic name for a renamed mirror topic), which is what requests name.
     */
    record Assigned(Uuid topicId, int leaderEpoch, TopicPartition source) {
    }

    private final MirrorFetcher owner;
    private final Node node;
    private final FetchSessionHandler session;
    /** Replaced by the owner's thread at each assignment; read by this thread. */
    private volatile Map<TopicPartition, Assigned> assigned = Map.of();
    private final Map<TopicPartition, Long> delayedUntil = new HashMap<>();
    /** When each partition behind its source may next have the source's newest timestamp looked up. */
    private final Map<TopicPartition, Long> nextTimestampProbeMs = new HashMap<>();
    /** Partitions of the current response that are behind and due for a probe; this thread only. */
    private final List<TopicPartition> timestampProbes = new ArrayList<>();
    /**
     * The partitions whose last fetch answer left them caught up with the source's high watermark: an incremental
     * fetch session leaves a partition out of an answer when nothing changed, which for these says they still are.
     */
    private final Set<TopicPartition> caughtUp = new HashSet<>();
    private final MirrorFetchMetrics.FetchCounter fetches;
    private boolean timestampProbeFailureReported;
    /** Made on this thread at its first round. */
    private volatile InterBrokerClient client;
    private int consecutiveFailures;
    /**
     * When this broker last answered a fetch (or there was nothing to ask it): the source ends its answers gave are
     * current as of then. A fetch held by a network that drops packets leaves it behind (decision 80).
     */
    private volatile long lastAnsweredMs;

    SourceBrokerFetcher(MirrorFetcher owner, Node node) {
        super("twinlog-mirror-fetcher-" + owner.mirrorName() + "-" + node.id(),
                "[Mirror " + owner.mirrorName() + " source broker " + node.id() + "] ", MirrorFetcher.BACKOFF_MS);
        this.owner = owner;
        this.node = node;
        this.session = new FetchSessionHandler(new LogContext("[" + getName() + "] "), node.id());
        this.fetches = owner.metrics().fetcherStarted(node);
        this.lastAnsweredMs = owner.time().hiResClockMs();
    }

    /** When this source broker last answered a fetch of this mirror, or had nothing to be asked (monotonic ms). */
    long lastAnsweredMs() {
        return lastAnsweredMs;
    }

    Node node() {
        return node;
    }

    /** The partitions this source broker leads, as the owner's latest metadata says. */
    void assign(Map<TopicPartition, Assigned> partitions) {
        boolean added = !assigned.keySet().containsAll(partitions.keySet());
        assigned = Map.copyOf(partitions);
        if (added) {
            wake();
        }
    }

    @Override
    protected BackgroundTask openLiveness() {
        return owner.metrics().loopStarted("mirror-fetcher-" + owner.mirrorName() + "-from-" + node.id(),
                owner.loopPeriodMs(), log);
    }

    @Override
    protected void closeLiveness(BackgroundTask liveness) {
        owner.metrics().loopEnded(liveness);
    }

    @Override
    protected void doRound() {
        if (client == null) {
            try {
                client = owner.newClient("mirror-fetcher-" + owner.mirrorName() + "-" + node.id());
            } catch (RuntimeException e) { // broad: any config the channel builder rejects; logged with the stack
                // the owner made its own client with the same configs first: this is not expected to fail
                log.error("[Mirror {}] cannot connect to source broker {}", owner.mirrorName(), node.id(), e);
                owner.fail(new ArrayList<>(assigned.keySet()), "Cannot connect to the source: " + e.getMessage(),
                        true);
                initiateShutdown(); // this thread ends; the owner stops it when the partitions move on
                return;
            }
            if (isShutdownInitiated()) {
                return; // stopped while connecting: onShutdownInitiated may have missed this client to abort
            }
        }
        fetchOnce();
    }

    private void fetchOnce() {
        long now = owner.time().milliseconds();
        Map<TopicPartition, Assigned> current = assigned;
        delayedUntil.keySet().retainAll(current.keySet());
        nextTimestampProbeMs.keySet().retainAll(current.keySet());
        FetchSessionHandler.Builder builder = session.newBuilder();
        Map<TopicPartition, Long> fetchOffsets = new HashMap<>();
        // the answer names the source partitions: each maps back to the local one it feeds
        Map<TopicPartition, TopicPartition> localOf = new HashMap<>();
        // under a cap, one second's worth at most: a low cap is then spread evenly, not taken in 8 MiB bursts
        int partitionMaxBytes = owner.quota().maxBytes(PARTITION_MAX_BYTES);
        current.forEach((tp, a) -> {
            MirrorPartitionSink sink = owner.sink(tp);
            if (sink == null || delayedUntil.getOrDefault(tp, 0L) > now || !sink.isLeader()) {
                return;
            }
            long offset = sink.logEndOffset();
            fetchOffsets.put(tp, offset);
            localOf.put(a.source(), tp);
            builder.add(a.source(), new FetchRequest.PartitionData(a.topicId(), offset, -1L, partitionMaxBytes,
                    Optional.of(a.leaderEpoch()), sink.latestEpoch()));
        });
        if (fetchOffsets.isEmpty()) {
            lastAnsweredMs = owner.time().hiResClockMs(); // nothing outstanding: nothing is out of date for the network
            waitForWork(100);
            return;
        }
        MirrorFetchQuota quota = owner.quota();
        if (quota.exceeded()) {
            // over the mirror's bandwidth cap: no request until the rate is back under it, as a throttled follower
            lastAnsweredMs = owner.time().hiResClockMs(); // waiting by choice, not for the network
            waitForWork(QUOTA_WAIT_MS);
            owner.metrics().onThrottled(QUOTA_WAIT_MS);
            return;
        }
        FetchSessionHandler.FetchRequestData data = builder.build();
        // by topic ID (v13+) when the source gives IDs; a source before Kafka 3.1 negotiates down to v12, by name
        short maxVersion = data.canUseTopicIds() ? ApiKeys.FETCH.latestVersion() : FETCH_VERSION_BY_NAME;
        FetchResponse response;
        short version;
        try {
            InterBrokerClient.Exchange<FetchResponse> answer = client.exchange(node, FetchRequest.Builder
                    .forConsumer(maxVersion, MAX_WAIT_MS, 1, data.toSend())
                    .isolationLevel(IsolationLevel.READ_UNCOMMITTED).setMaxBytes(quota.maxBytes(MAX_BYTES))
                    .metadata(data.metadata()).removed(data.toForget()).replaced(data.toReplace()));
            response = answer.body();
            // the answer is laid out as the version it was sent at: by name below v13
            version = answer.version();
        } catch (IOException e) {
            if (isShutdownInitiated()) {
                return; // abandoned by the stop (onShutdownInitiated): the source did nothing wrong
            }
            session.handleError(e);
            onUnreachable(e, fetchOffsets.keySet());
            return;
        }
        lastAnsweredMs = owner.time().hiResClockMs();
        if (!session.handleResponse(response, version)) {
            // the session was lost or the answer does not match it: the handler's next request is a full one
            if (response.error() != Errors.NONE) {
                log.info("[Mirror {}] fetch session with source broker {} reset: {}", owner.mirrorName(), node.id(),
                        response.error());
            }
            return;
        }
        consecutiveFailures = 0;
        fetches.onFetch();
        timestampProbes.clear();
        Map<TopicPartition, FetchResponseData.PartitionData> answered = response.responseData(
                session.sessionTopicNames(), version);
        for (Map.Entry<TopicPartition, FetchResponseData.PartitionData> e : answered.entrySet()) {
            quota.record(FetchResponse.recordsSize(e.getValue()));
            TopicPartition local = localOf.get(e.getKey());
            Long fetchOffset = local == null ? null : fetchOffsets.get(local);
            if (fetchOffset != null) {
                handle(local, fetchOffset, e.getValue(), now);
            }
        }
        caughtUp.retainAll(fetchOffsets.keySet()); // one not asked for left the session: its next answer is full
        for (TopicPartition tp : caughtUp) {
            Assigned a = current.get(tp);
            if (a != null && !answered.containsKey(a.source())) { // the answer names the source partitions
                owner.listener().onMirrored(tp, -1L, now); // unchanged since an answer that found it caught up
            }
        }
        if (!timestampProbes.isEmpty()) {
            probeSourceNewestTimestamps(current, now);
        }
    }

    /**
     * The source's newest record timestamp of the partitions behind it (ListOffsets max timestamp, KIP-734), for
     * the lag in seconds. A source that cannot answer (before ListOffsets v7) leaves the lag to its fallback
     * ({@code PartitionLag}); said once at INFO, then at DEBUG.
     */
    private void probeSourceNewestTimestamps(Map<TopicPartition, Assigned> current, long now) {
        Map<String, ListOffsetsRequestData.ListOffsetsTopic> topics = new HashMap<>();
        List<TopicPartition> probed = new ArrayList<>(timestampProbes.size());
        Map<TopicPartition, TopicPartition> localOf = new HashMap<>();
        for (TopicPartition tp : timestampProbes) {
            Assigned a = current.get(tp);
            if (a == null) {
                continue;
            }
            probed.add(tp);
            localOf.put(a.source(), tp);
            nextTimestampProbeMs.put(tp, now + TIMESTAMP_PROBE_INTERVAL_MS);
            topics.computeIfAbsent(a.source().topic(), t -> new ListOffsetsRequestData.ListOffsetsTopic().setName(t))
                    .partitions().add(new ListOffsetsRequestData.ListOffsetsPartition()
                            .setPartitionIndex(tp.partition()).setTimestamp(ListOffsetsRequest.MAX_TIMESTAMP)
                            .setCurrentLeaderEpoch(a.leaderEpoch()));
        }
        timestampProbes.clear();
        if (topics.isEmpty()) {
            return;
        }
        ListOffsetsResponse response;
        try {
            response = client.send(node, ListOffsetsRequest.Builder
                    .forConsumer(false, IsolationLevel.READ_UNCOMMITTED, true, false, false, false)
                    .setTargetTimes(List.copyOf(topics.values())));
        } catch (IOException | RuntimeException e) {
            if (isShutdownInitiated()) {
                return; // abandoned by the stop: nothing to say about the source
            }
            // broad: the probe is optional, and whatever ends it only costs the lag in seconds its better figure; an
            // unexpected failure (a RuntimeException, not the network) is logged with its stack trace below
            if (e instanceof UnsupportedApiVersionException) {
                // an older source (before ListOffsets v7): asking again at every fetch would only cost a request
                long later = now + TIMESTAMP_PROBE_UNSERVED_INTERVAL_MS;
                probed.forEach(tp -> nextTimestampProbeMs.put(tp, later));
            }
            String message = "[Mirror {}] source broker {} did not give its newest record timestamps ({}); the lag "
                    + "in seconds falls back to the age of the newest record mirrored";
            Throwable stackTrace = e instanceof RuntimeException ? e : null;
            if (timestampProbeFailureReported) {
                log.debug(message, owner.mirrorName(), node.id(), e.toString(), stackTrace);
            } else {
                timestampProbeFailureReported = true;
                log.info(message, owner.mirrorName(), node.id(), e.toString(), stackTrace);
            }
            probed.forEach(owner.metrics()::onSourceNewestTimestampUnavailable);
            return;
        }
        for (ListOffsetsResponseData.ListOffsetsTopicResponse t : response.data().topics()) {
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse p : t.partitions()) {
                TopicPartition local = localOf.get(new TopicPartition(t.name(), p.partitionIndex()));
                if (p.errorCode() == Errors.NONE.code() && p.timestamp() >= 0 && local != null) {
                    owner.metrics().onSourceNewestTimestamp(local, p.timestamp());
                }
            }
        }
    }

    private void onUnreachable(IOException e, Collection<TopicPartition> affected) {
        consecutiveFailures++;
        String reason = "source broker " + node.id() + " (" + node.host() + ":" + node.port() + ") unreachable: "
                + e.getMessage();
        log.info("[Mirror {}] {} (attempt {})", owner.mirrorName(), reason, consecutiveFailures);
        owner.metadataStale(); // it may have been a leader that died, and the source moved its leaderships
        if (consecutiveFailures >= MirrorFetcher.FAILURES_BEFORE_REPORT) {
            consecutiveFailures = 0;
            owner.fail(new ArrayList<>(affected), reason, true);
        }
        waitForWork(MirrorFetcher.BACKOFF_MS);
    }

    /** @param sentMs when the fetch was sent (before it: the source's high watermark in the answer is later) */
    private void handle(TopicPartition tp, long fetchOffset, FetchResponseData.PartitionData data, long sentMs) {
        Errors error = Errors.forCode(data.errorCode());
        MirrorFetchListener listener = owner.listener();
        try {
            switch (error) {
                case NONE -> {
                    if (FetchResponse.isDivergingEpoch(data)) {
                        MirrorPartitionSink sink = owner.sink(tp);
                        owner.diverged(tp, data.divergingEpoch().epoch(), data.divergingEpoch().endOffset(),
                                "Source divergence detected: the source's epoch " + data.divergingEpoch().epoch()
                                + " ends at offset " + data.divergingEpoch().endOffset() + " but this cluster "
                                + "mirrored up to " + fetchOffset + " in epoch "
                                + (sink == null ? -1 : sink.latestEpoch().orElse(-1))
                                + " (an unclean leader election on the source?)");
                        return;
                    }
                    Records records = FetchResponse.recordsOrFail(data);
                    long end;
                    synchronized (owner.appendLock(tp)) {
                        MirrorPartitionSink sink = owner.sink(tp);
                        if (sink == null || !sink.isLeader()) {
                            return; // removed (a failover, a lost leadership) while the fetch was in flight
                        }
                        int appendedBytes = 0;
                        int appendedOffsets = 0;
                        long newestTimestamp = -1;
                        if (records.sizeInBytes() > 0) {
                            MemoryRecords memory = (MemoryRecords) records;
                            int maxEpoch = -1;
                            int offsets = 0;
                            for (RecordBatch b : memory.batches()) {
                                maxEpoch = Math.max(maxEpoch, b.partitionLeaderEpoch());
                                offsets += (int) (b.lastOffset() - b.baseOffset() + 1);
                                newestTimestamp = b.maxTimestamp();
                            }
                            if (maxEpoch >= sink.leaderEpoch()) {
                                owner.removePartitionForFencing(tp, maxEpoch);
                                return;
                            }
                            if (sink.logEndOffset() == fetchOffset) {
                                sink.appendMirrored(memory);
                                appendedBytes = memory.sizeInBytes();
                                appendedOffsets = offsets;
                            }
                        }
                        end = sink.logEndOffset();
                        owner.metrics().onFetched(tp, data.highWatermark(), appendedBytes, appendedOffsets,
                                appendedOffsets > 0 ? newestTimestamp : -1);
                        boolean isCaughtUp = end >= data.highWatermark();
                        if (isCaughtUp) {
                            caughtUp.add(tp);
                        } else {
                            caughtUp.remove(tp);
                        }
                        listener.onMirrored(tp, appendedOffsets > 0 ? newestTimestamp : -1L,
                                isCaughtUp ? sentMs : -1L);
                    }
                    if (data.highWatermark() > end
                            && nextTimestampProbeMs.getOrDefault(tp, 0L) <= owner.time().milliseconds()) {
                        timestampProbes.add(tp);
                    }
                    listener.onProgress(tp, data.highWatermark(), end);
                }
                case OFFSET_OUT_OF_RANGE -> handleOutOfRange(tp);
                case NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, LEADER_NOT_AVAILABLE -> {
                    owner.metadataStale(); // the source's leadership moved: look it up again
                    delayedUntil.put(tp, owner.time().milliseconds() + NOT_LEADER_RETRY_MS);
                }
                case UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID -> {
                    // deleted or created again on the source, or a broker that does not know it yet: the metadata
                    // decides (SourceTopicStatus), and the state machine fails the partition with the reason
                    owner.metadataStale();
                    delayedUntil.put(tp, owner.time().milliseconds() + MirrorFetcher.BACKOFF_MS);
                }
                default -> {
                    log.warn("[Mirror {} {}] fetch failed with {}; backing off", owner.mirrorName(), tp, error);
                    delayedUntil.put(tp, owner.time().milliseconds() + MirrorFetcher.BACKOFF_MS);
                }
            }
        } catch (Exception e) { // broad: whatever the append refused fails this partition alone, with the stack trace
            if (isShutdownInitiated() && e instanceof IOException) {
                log.debug("[Mirror {} {}] a source lookup abandoned by the stop", owner.mirrorName(), tp, e);
                return; // the partition's next fetcher asks again
            }
            log.error("[Mirror {} {}] could not apply fetched data", owner.mirrorName(), tp, e);
            owner.fail(List.of(tp), "Could not apply mirrored data: " + e, true);
        }
    }

    /**
     * The source cannot serve our next offset. Its log starts after our end (source retention): restart empty at
     * the source's log start. Its log ends before ours: the source lost records we mirrored — a divergence.
     */
    private void handleOutOfRange(TopicPartition tp) throws IOException {
        long earliest = listOffset(tp, ListOffsetsRequest.EARLIEST_TIMESTAMP);
        long latest = listOffset(tp, ListOffsetsRequest.LATEST_TIMESTAMP);
        synchronized (owner.appendLock(tp)) {
            MirrorPartitionSink sink = owner.sink(tp);
            if (sink == null) {
                return;
            }
            long end = sink.logEndOffset();
            if (earliest >= 0 && end < earliest) {
                sink.truncateFullyAndStartAt(earliest, "source log now starts at " + earliest
                        + " (source retention)");
                return;
            }
            if (latest >= 0 && end > latest) {
                // the source's log ends in its latest epoch: that epoch ends there, which cuts at most to it
                owner.diverged(tp, sink.latestEpoch().orElse(-1), latest, "Source divergence detected: the source "
                        + "log ends at " + latest + " but this cluster mirrored up to " + end);
                return;
            }
        }
        delayedUntil.put(tp, owner.time().milliseconds() + MirrorFetcher.BACKOFF_MS);
    }

    private long listOffset(TopicPartition tp, long timestamp) throws IOException {
        Assigned a = assigned.get(tp);
        TopicPartition source = a == null ? tp : a.source();
        ListOffsetsResponse r = client.send(node, ListOffsetsRequest.Builder
                .forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(SinglePartitionOffsets.target(source, timestamp, -1)));
        return SinglePartitionOffsets.offset(r);
    }

    @Override
    protected void onShutdownInitiated() {
        fetches.close();
        InterBrokerClient c = client;
        if (c != null) {
            c.abort(); // its request in flight is abandoned, not waited for: a stopping fetcher appends nothing
        }
    }

    /**
     * Stops this thread and closes its connection. Its request in flight is abandoned (the client's abort), so this
     * does not wait out the source's fetch max wait, nor a silent source's request timeout; the thread is waited
     * for up to 5 s, which only an append in progress takes.
     */
    @Override
    public void shutdown() {
        super.shutdown();
        InterBrokerClient connected = client;
        if (connected != null) {
            connected.close();
        }
    }
}
