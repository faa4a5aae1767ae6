package io.twinlog.replication;

import io.twinlog.common.progress.ProgressReporter;
import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.common.tasks.FetcherThread;
import io.twinlog.protocol.client.InterBrokerClient;
import io.twinlog.protocol.client.SinglePartitionOffsets;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Fetches every partition this broker follows from one leader broker, with Kafka's Fetch protocol as a replica
 * (replica id and broker epoch, current leader epoch, last fetched epoch), and appends the batches unchanged.
 *
 * <p>Threading: one thread ({@link FetcherThread}, on Kafka's {@code ShutdownableThread}); partitions are added and
 * removed from other threads through a concurrent map, and a partition's fetch state is only read and written by
 * this thread. Errors back off the partition (not the thread): a fenced or unknown epoch waits for the metadata to
 * bring the new leadership; an unreachable leader, or a round that throws, backs off the thread.
 */
final class ReplicaFetcherThread extends FetcherThread {
    private static final Logger log = LoggerFactory.getLogger(ReplicaFetcherThread.class);
    private static final long PARTITION_BACKOFF_MS = 500;
    private static final long LEADER_UNREACHABLE_BACKOFF_MS = 500;
    private static final long DIVERGENCE_STUCK_BACKOFF_MS = 5_000;

    private final int localBrokerId;
    private final int leaderId;
    private final Function<Integer, Optional<Node>> brokerEndpoints;
    private final LongSupplier brokerEpoch;
    private final ReplicaManager replicaManager;
    private final FetchSettings settings;
    private final Time time;
    private final InterBrokerClient client;
    /** This thread's fetch session with the leader (KIP-227); used by this thread only. */
    private final FetchSessionHandler session;
    private final ConcurrentHashMap<TopicPartition, FetchState> partitions = new ConcurrentHashMap<>();
    /**
     * The age of this thread's last completed round (a fetch, or an idle wait), reported as a background task's
     * (decision 69): a thread stuck inside a round ages; a round waits at most one request timeout.
     */
    private final BackgroundTask liveness;

    /**
     * Fetch sizes and waits ({@code replica.fetch.*}), and how a fetcher's connection is made: a configured channel
     * builder for the inter-broker listener's security, by client id.
     */
    record FetchSettings(int maxWaitMs, int minBytes, int maxBytes, int partitionMaxBytes, int requestTimeoutMs,
                         Function<String, ChannelBuilder> channels) {
    }

    /** A follower further behind the leader's high watermark than this reports its catch-up (a new replica). */
    static final long CATCH_UP_REPORT_MIN_LAG = 10_000;

    private static final class FetchState {
        final Uuid topicId;
        final int leaderEpoch;
        long delayedUntilMs;
        /** Records behind the leader's high watermark at the last fetch (Kafka's fetcher lag). */
        volatile long lag;
        /** How far a large backlog is fetched (a replica added by a reassignment, a long-stopped one); or null. */
        ProgressReporter catchUp;

        FetchState(Uuid topicId, int leaderEpoch) {
            this.topicId = topicId;
            this.leaderEpoch = leaderEpoch;
        }
    }

    ReplicaFetcherThread(int localBrokerId, int leaderId, int fetcherId,
                         Function<Integer, Optional<Node>> brokerEndpoints, LongSupplier brokerEpoch,
                         ReplicaManager replicaManager, FetchSettings settings, Time time) {
        super("twinlog-" + name(localBrokerId, leaderId, fetcherId),
                "[" + name(localBrokerId, leaderId, fetcherId) + "] ", LEADER_UNREACHABLE_BACKOFF_MS);
        this.localBrokerId = localBrokerId;
        this.leaderId = leaderId;
        this.brokerEndpoints = brokerEndpoints;
        this.brokerEpoch = brokerEpoch;
        this.replicaManager = replicaManager;
        this.settings = settings;
        this.time = time;
        String name = name(localBrokerId, leaderId, fetcherId);
        this.client = new InterBrokerClient(name, settings.channels().apply(name), settings.requestTimeoutMs(),
                settings.maxBytes() + 1024 * 1024, 50, 1_000, time);
        this.session = new FetchSessionHandler(new LogContext("[" + name + "] "), leaderId);
        this.liveness = BackgroundTask.loop(name, settings.requestTimeoutMs(), time, log);
    }

    private static String name(int localBrokerId, int leaderId, int fetcherId) {
        return "replica-fetcher-" + localBrokerId + "-from-" + leaderId + "-" + fetcherId;
    }

    BackgroundTask liveness() {
        return liveness;
    }

    @Override
    protected BackgroundTask openLiveness() {
        return liveness; // registered by the manager when it made this thread
    }

    void addPartition(TopicPartition tp, Uuid topicId, int leaderEpoch) {
        partitions.put(tp, new FetchState(topicId, leaderEpoch));
        wake();
    }

    /** What a fetcher needs to follow a partition, kept when the partition moves to another fetcher. */
    record Followed(Uuid topicId, int leaderEpoch) {
    }

    /**
     * Stops fetching {@code tp}: a response for it still in flight is dropped.
     *
     * @return what it was fetched with, or empty if this fetcher did not have it
     */
    Optional<Followed> removePartition(TopicPartition tp) {
        FetchState removed = partitions.remove(tp);
        return removed == null ? Optional.empty() : Optional.of(new Followed(removed.topicId, removed.leaderEpoch));
    }

    /** The leader epoch {@code tp} is fetched in, if this fetcher has it. */
    Optional<Integer> leaderEpoch(TopicPartition tp) {
        FetchState s = partitions.get(tp);
        return s == null ? Optional.empty() : Optional.of(s.leaderEpoch);
    }

    /** The largest lag of this fetcher's partitions, in records. */
    long maxLag() {
        long max = 0;
        for (FetchState s : partitions.values()) {
            max = Math.max(max, s.lag);
        }
        return max;
    }

    boolean isEmpty() {
        return partitions.isEmpty();
    }

    @Override
    protected void doRound() {
        long now = time.hiResClockMs(); // monotonic: a step of the wall clock must not hold a delayed partition
        FetchSessionHandler.Builder builder = session.newBuilder(partitions.size(), false);
        Map<TopicPartition, FetchState> inRequest = new HashMap<>();
        for (Map.Entry<TopicPartition, FetchState> e : partitions.entrySet()) {
            FetchState s = e.getValue();
            if (s.delayedUntilMs > now) {
                continue;
            }
            Optional<Partition> p = replicaManager.partition(e.getKey());
            if (p.isEmpty() || p.get().isLeader()) {
                continue;
            }
            var unifiedLog = p.get().log();
            builder.add(e.getKey(), new FetchRequest.PartitionData(s.topicId, unifiedLog.logEndOffset(),
                    unifiedLog.logStartOffset(), settings.partitionMaxBytes(), Optional.of(s.leaderEpoch),
                    unifiedLog.latestEpoch()));
            inRequest.put(e.getKey(), s);
        }
        // the session (KIP-227) sends only the partitions whose position changed since the last request, and the
        // leader answers only those with something new; a partition left out (backing off, gone) is forgotten
        FetchSessionHandler.FetchRequestData fetchData = builder.build();
        if (fetchData.sessionPartitions().isEmpty() && fetchData.toForget().isEmpty()) {
            waitForWork(100);
            return;
        }
        Optional<Node> leader = brokerEndpoints.apply(leaderId);
        if (leader.isEmpty()) {
            session.handleError(new IOException("leader " + leaderId + " has no endpoint"));
            waitForWork(LEADER_UNREACHABLE_BACKOFF_MS);
            return;
        }
        FetchResponse response;
        short version = ApiKeys.FETCH.latestVersion();
        try {
            FetchRequest.Builder request = FetchRequest.Builder.forReplica(version, localBrokerId,
                    brokerEpoch.getAsLong(), settings.maxWaitMs(), settings.minBytes(), fetchData.toSend())
                    .setMaxBytes(settings.maxBytes())
                    .removed(fetchData.toForget())
                    .replaced(fetchData.toReplace())
                    .metadata(fetchData.metadata());
            response = client.send(leader.get(), request);
        } catch (IOException e) {
            session.handleError(e);
            if (isRunning()) {
                log.info("Replica fetcher of broker {}: leader {} unreachable: {}", localBrokerId, leaderId, e.getMessage());
                waitForWork(LEADER_UNREACHABLE_BACKOFF_MS);
            }
            return;
        }
        if (!session.handleResponse(response, version)) {
            // the leader lost the session (it restarted, or evicted it) or refused the request: the handler logged
            // why, and the next request is a full one that starts a new session
            if (response.error() != Errors.FETCH_SESSION_ID_NOT_FOUND
                    && response.error() != Errors.INVALID_FETCH_SESSION_EPOCH) {
                log.info("Fetch from leader {} failed: {}", leaderId, response.error());
                waitForWork(LEADER_UNREACHABLE_BACKOFF_MS);
            }
            return;
        }
        for (Map.Entry<TopicPartition, FetchResponseData.PartitionData> e
                : response.responseData(session.sessionTopicNames(), version).entrySet()) {
            FetchState s = inRequest.get(e.getKey());
            FetchRequest.PartitionData requested = fetchData.sessionPartitions().get(e.getKey());
            if (s == null || requested == null || partitions.get(e.getKey()) != s) {
                continue; // removed or re-added with a new epoch while the fetch was in flight
            }
            handlePartition(e.getKey(), s, requested, e.getValue(), leader.get());
        }
    }

    private void handlePartition(TopicPartition tp, FetchState s, FetchRequest.PartitionData requested,
                                 FetchResponseData.PartitionData data, Node leader) {
        long fetchOffset = requested.fetchOffset;
        Optional<Partition> maybePartition = replicaManager.partition(tp);
        if (maybePartition.isEmpty()) {
            return;
        }
        Partition partition = maybePartition.get();
        Errors error = Errors.forCode(data.errorCode());
        try {
            switch (error) {
                case NONE -> {
                    if (FetchResponse.isDivergingEpoch(data)) {
                        FetchResponseData.EpochEndOffset d = data.divergingEpoch();
                        long to = FollowerTruncation.truncationOffset(d.epoch(), d.endOffset(),
                                d.epoch() < 0 ? Optional.empty() : partition.log().endOffsetForEpoch(d.epoch()),
                                partition.log().logStartOffset(), partition.log().logEndOffset());
                        if (to >= partition.log().logEndOffset()) {
                            // nothing to cut, but an epoch this replica started at its log end as a leader that
                            // wrote nothing (a rolling restart) is unknown to this leader: dropping it lets the next
                            // fetch name the last epoch both have
                            Optional<Integer> latest = partition.log().latestEpoch();
                            partition.truncateTo(to, "leader " + leaderId + " reports epoch " + d.epoch()
                                    + " ends at " + d.endOffset());
                            if (!latest.equals(partition.log().latestEpoch())) {
                                return;
                            }
                            if (fetchOffset != partition.log().logEndOffset()
                                    || !requested.lastFetchedEpoch.equals(partition.log().latestEpoch())) {
                                // an answer to a fetch sent before this log changed (cut to 0 for a failback,
                                // say): the next fetch asks with what the log holds now, and needs no wait
                                return;
                            }
                            // the answer does not move this replica back: fetching again at once would get the
                            // same answer in a tight loop; wait, and say why this replica is not converging
                            log.warn("Replica of {} cannot converge with leader {}: the leader reports epoch {} ends "
                                    + "at {}, which does not cut this log (end offset {}, latest epoch {}); retrying "
                                    + "in {} ms", tp, leaderId, d.epoch(), d.endOffset(),
                                    partition.log().logEndOffset(), partition.log().latestEpoch().orElse(-1),
                                    DIVERGENCE_STUCK_BACKOFF_MS);
                            s.delayedUntilMs = time.hiResClockMs() + DIVERGENCE_STUCK_BACKOFF_MS;
                            return;
                        }
                        partition.truncateTo(to, "leader " + leaderId + " reports epoch " + d.epoch() + " ends at "
                                + d.endOffset());
                        return;
                    }
                    Records records = FetchResponse.recordsOrFail(data);
                    boolean appended = records.sizeInBytes() > 0;
                    if (appended) {
                        // records parsed from the network are always in memory
                        partition.appendRecordsAsFollower((MemoryRecords) records, fetchOffset);
                    }
                    boolean moved = partition.updateFollowerHighWatermark(data.highWatermark(), data.logStartOffset());
                    if (appended || moved) {
                        // consumers reading from this follower wait on its high watermark; nothing else changed
                        replicaManager.completeDelayedRequests(tp);
                    }
                    s.lag = Math.max(0, data.highWatermark() - partition.log().logEndOffset());
                    maybeReportCatchUp(tp, s, partition.log().logEndOffset(), data.highWatermark());
                }
                case OFFSET_OUT_OF_RANGE -> handleOutOfRange(tp, s, partition, leader);
                case FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
                     UNKNOWN_TOPIC_ID, INCONSISTENT_TOPIC_ID -> {
                    log.debug("Fetch of {} from leader {} in epoch {}: {}; waiting for new metadata", tp, leaderId,
                            s.leaderEpoch, error);
                    s.delayedUntilMs = time.hiResClockMs() + PARTITION_BACKOFF_MS;
                }
                default -> {
                    log.warn("Fetch of {} from leader {} failed with {}; backing off", tp, leaderId, error);
                    s.delayedUntilMs = time.hiResClockMs() + PARTITION_BACKOFF_MS;
                }
            }
        } catch (NotLeaderOrFollowerException e) {
            // this broker became the leader while the fetch was in flight (the metadata thread switches the role
            // first and removes the partition from this fetcher right after): an expected race, not a failure
            log.debug("Dropping fetched data of {} from broker {}: {}", tp, leaderId, e.getMessage());
        } catch (Exception e) {
            // broad: whatever applying one partition's data throws backs off that partition alone; logged with the
            // stack trace unless it is the expected race of a partition moved to another fetcher
            if (partitions.get(tp) != s) {
                // moved to another fetcher (a new leader, a new num.replica.fetchers) while this response was
                // applied: that fetcher appended first, and the log refused this append below its end
                log.debug("Dropping fetched data of {} from broker {}: the partition moved to another fetcher ({})",
                        tp, leaderId, e.toString());
                return;
            }
            log.error("Could not apply fetched data of {} from leader {}; backing off", tp, leaderId, e);
            s.delayedUntilMs = time.hiResClockMs() + PARTITION_BACKOFF_MS;
        }
    }

    /**
     * A replica far behind its leader (one a reassignment adds, one back after a long stop) says how far it is: the
     * percentage of the backlog fetched, the rate and the time left, at most every 30 s, and once that it caught up
     * with the leader's high watermark (the leader then adds it to the ISR). Nothing for a backlog fetched in 30 s.
     */
    private void maybeReportCatchUp(TopicPartition tp, FetchState s, long logEndOffset, long leaderHighWatermark) {
        long lag = Math.max(0, leaderHighWatermark - logEndOffset);
        if (s.catchUp == null && lag > CATCH_UP_REPORT_MIN_LAG) {
            s.catchUp = new ProgressReporter(log, "[Partition " + tp + " broker=" + localBrokerId + "] catching up "
                    + "with leader " + leaderId + " in epoch " + s.leaderEpoch + " from offset " + logEndOffset,
                    "records", time);
        }
        if (s.catchUp != null) {
            s.catchUp.update(logEndOffset, leaderHighWatermark);
            if (lag == 0) {
                s.catchUp.finish("caught up with the leader's high watermark " + leaderHighWatermark);
                s.catchUp = null;
            }
        }
    }

    /**
     * The leader cannot serve our fetch offset: either its log starts after our end (retention), and we restart
     * empty at its log start, or it ends before our end (only without epoch information), and we truncate to it.
     */
    private void handleOutOfRange(TopicPartition tp, FetchState s, Partition partition, Node leader) throws IOException {
        long earliest = listOffset(leader, tp, s, ListOffsetsRequest.EARLIEST_TIMESTAMP);
        long latest = listOffset(leader, tp, s, ListOffsetsRequest.LATEST_TIMESTAMP);
        long end = partition.log().logEndOffset();
        if (latest >= 0 && end > latest) {
            partition.truncateTo(latest, "leader " + leaderId + " log ends at " + latest);
        } else if (earliest >= 0 && end < earliest) {
            partition.truncateFullyAndStartAt(earliest, "leader " + leaderId + " log starts at " + earliest);
        } else {
            s.delayedUntilMs = time.hiResClockMs() + PARTITION_BACKOFF_MS;
        }
    }

    private long listOffset(Node leader, TopicPartition tp, FetchState s, long timestamp) throws IOException {
        ListOffsetsResponse r = client.send(leader, ListOffsetsRequest.Builder
                .forReplica(ApiKeys.LIST_OFFSETS.latestVersion(), localBrokerId)
                .setTargetTimes(SinglePartitionOffsets.target(tp, timestamp, s.leaderEpoch)));
        return SinglePartitionOffsets.offset(r);
    }

    @Override
    protected void onShutdownInitiated() {
        client.wakeup(); // as before: the client's poll returns, and the loop sees the shutdown sooner
    }

    @Override
    public void shutdown() {
        super.shutdown();
        client.close();
    }
}
