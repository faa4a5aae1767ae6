package io.twinlog.mirror.fetcher;

import io.twinlog.common.tasks.FetcherThread;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.partition.SourceProblem;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Mirrors every MIRRORING partition of one cluster mirror from the source partition leaders. Its metadata thread
 * ({@link SourceMetadataThread}, {@code twinlog-mirror-fetcher-<mirror>}) keeps the source's metadata and hands each
 * partition to the {@link SourceBrokerFetcher} of its source leader: one thread, one connection and one fetch
 * session per source broker, as Kafka's fetcher manager does, so a long poll to an idle broker never delays the batches waiting on a
 * busy one. Partitions without a source leader are reported FAILED (retriable) after a while, so describe shows why.
 * Whether each topic can be mirrored at all (the source topic deleted or created again with another topic ID, the
 * source not answering) is kept by {@link SourceTopicStatus} and asked by the state machine at every pass
 * ({@link #sourceProblem}); a partition is fetched only from the source topic with its destination topic's ID.
 * A Metadata answer from another cluster than the recorded source cluster ({@link #expectClusterId}) is never
 * adopted: its brokers are not asked or fetched from, the addresses learned before are dropped, and the fetcher
 * bootstraps again from the mirror's {@code bootstrap.servers} with a backoff, the partitions' source problem saying
 * so ({@link SourceProblem.Kind#WRONG_CLUSTER}), until the recorded cluster answers again (decision 68).
 *
 * <p>Threading: partitions are added and removed from the mirror manager's thread (concurrent maps); the metadata
 * and the assignment to broker fetchers are confined to the metadata thread; each broker fetcher owns its session.
 * All of them are {@link FetcherThread}s (Kafka's {@code ShutdownableThread}). Works
 * against any Kafka-protocol source (Twinlog or Apache Kafka). Connections use the mirror's source client configs
 * (TLS, SASL) through {@link SourceChannels}.
 */
public final class MirrorFetcher {
    private static final Logger log = LoggerFactory.getLogger(MirrorFetcher.class);
    static final long BACKOFF_MS = 500;
    /**
     * The longest a healthy round of a fetch thread takes, for its liveness (decision 69), at least: a metadata lookup
     * or a fetch waits at most one request timeout of {@link #newClient} ({@link #loopPeriodMs}).
     */
    static final long LOOP_PERIOD_MS = 30_000;
    /** Consecutive failures to reach one source broker before its partitions are reported FAILED. */
    static final int FAILURES_BEFORE_REPORT = 3;
    /** How soon the bootstrap list is asked again while it answers for another cluster: 1 s doubling to 10 s. */
    static final long WRONG_CLUSTER_MAX_BACKOFF_MS = 10_000;
    /** How the reason of an address answering for another cluster begins (the mirror's state reason shows it). */
    public static final String WRONG_CLUSTER_PREFIX = "The source address answers for another cluster";
    static final ExponentialBackoff WRONG_CLUSTER_BACKOFF = new ExponentialBackoff(1_000, 2,
            WRONG_CLUSTER_MAX_BACKOFF_MS, 0);

    private final String mirrorName;
    private final MirrorFetchListener listener;
    private final MirrorFetchMetrics metrics;
    private final MirrorFetchQuota quota;
    private final Time time;
    private final Map<String, String> sourceClientConfigs;
    /** The mirror's {@code request.timeout.ms} (Kafka's default, 30 s, when unset), for every request to the source. */
    private final int requestTimeoutMs;
    private final ConcurrentHashMap<TopicPartition, MirrorPartitionSink> partitions = new ConcurrentHashMap<>();
    /** Local topic → source topic, for the local topics named otherwise than on the source (decision 125). */
    private final ConcurrentHashMap<String, String> sourceTopics = new ConcurrentHashMap<>();
    /** One lock per partition: a partition moving between broker fetchers is never appended to by both. */
    private final ConcurrentHashMap<TopicPartition, Object> appendLocks = new ConcurrentHashMap<>();
    private final SourceTopicStatus topicStatus;
    private final SourceMetadataThread metadataThread;

    /**
     * @param sourceClientConfigs {@code bootstrap.servers} and the Kafka client configs for the source
     * @param stateTimeoutMs      {@code mirror.state.timeout.ms}: how long a partition may have no leader on the
     *                            source before it is reported FAILED (retriable), so an offline source partition
     *                            shows in describe with why; how long the source may answer no metadata request
     *                            before it is unreachable; twice how long a deletion must be seen before it is one
     * @param metrics             where the fetch threads record what they fetch and append
     * @param quota               the mirror's bandwidth cap on this broker, shared by its fetch threads; closed with
     *                            this fetcher
     */
    public MirrorFetcher(String mirrorName, Map<String, String> sourceClientConfigs, long stateTimeoutMs,
                         MirrorFetchListener listener, MirrorFetchMetrics metrics, MirrorFetchQuota quota,
                         Time time) {
        this.mirrorName = mirrorName;
        this.quota = quota;
        String bootstrapServers = sourceClientConfigs.getOrDefault("bootstrap.servers", "");
        this.topicStatus = new SourceTopicStatus(bootstrapServers, stateTimeoutMs, time.milliseconds());
        this.listener = listener;
        this.metrics = metrics;
        this.time = time;
        this.sourceClientConfigs = Map.copyOf(sourceClientConfigs);
        this.requestTimeoutMs = requestTimeoutMs(mirrorName, sourceClientConfigs);
        this.metadataThread = new SourceMetadataThread(this, bootstrapServers, stateTimeoutMs, topicStatus, time);
    }

    public void start() {
        metadataThread.start();
    }

    /** Adds a partition (the manager re-adds its mirroring partitions on every tick: only a new one wakes us). */
    public void addPartition(TopicPartition tp, MirrorPartitionSink sink) {
        addPartition(tp, tp.topic(), sink);
    }

    /**
     * Adds a partition that mirrors the same partition of source topic {@code sourceTopic}: a prefixed mirror's
     * {@code west.orders-0} is fed from {@code orders-0}. The fetcher works with the local partitions; only what it
     * sends the source (Metadata, Fetch, ListOffsets) names the source topic.
     */
    public void addPartition(TopicPartition tp, String sourceTopic, MirrorPartitionSink sink) {
        if (!sourceTopic.equals(tp.topic())) {
            sourceTopics.put(tp.topic(), sourceTopic);
        } else {
            sourceTopics.remove(tp.topic());
        }
        if (partitions.put(tp, sink) == null) {
            metadataThread.wake();
        }
    }

    /** The source partition that feeds local partition {@code tp}. */
    TopicPartition sourcePartition(TopicPartition tp) {
        String source = sourceTopics.get(tp.topic());
        return source == null ? tp : new TopicPartition(source, tp.partition());
    }

    /** Stops fetching {@code tp}; a fetch in flight for it appends nothing more once this returns. */
    public void removePartition(TopicPartition tp) {
        if (partitions.remove(tp) != null) {
            synchronized (appendLock(tp)) {
                appendLocks.remove(tp); // taken after any append in progress; later ones see it gone
            }
        }
    }

    public Set<TopicPartition> partitions() {
        return partitions.keySet();
    }

    /**
     * Why source topic {@code topic}, whose destination topic has the ID {@code localTopicId} (the source's, given at
     * its start),
     * cannot be mirrored from the source now, if it cannot ({@link SourceTopicStatus}). Asked by the state machine's
     * pass over each partition this broker leads; the topic is then looked up at every metadata refresh, fetched or
     * not.
     */
    public Optional<SourceProblem> sourceProblem(String topic, Uuid localTopicId) {
        long now = time.milliseconds();
        if (topicStatus.watch(topic, localTopicId, now)) {
            metadataThread.metadataStale(); // look it up now, not at the next refresh
        }
        return topicStatus.problem(topic, now);
    }

    /**
     * The source cluster ID recorded for the mirror (the manager passes it at every pass, so one recorded at first
     * contact applies at once): an answer from any other cluster is not adopted.
     */
    public void expectClusterId(Optional<String> clusterId) {
        metadataThread.expectClusterId(clusterId);
    }

    /** Why the source cannot be mirrored now if another cluster answers at its address: the partitions' reason. */
    public Optional<String> wrongClusterReason() {
        return topicStatus.wrongClusterReason();
    }

    /** The source cluster ID the last metadata adopted reported, if any (never another than the expected one). */
    public Optional<String> sourceClusterId() {
        return metadataThread.sourceClusterId();
    }

    /**
     * When the source broker that leads {@code tp} last answered this mirror's fetch, on the monotonic clock
     * ({@code Time.hiResClockMs}): empty when no broker fetcher fetches it (its leader unknown, or not assigned
     * yet), which the metadata loop reports on its own.
     */
    public OptionalLong lastAnsweredMs(TopicPartition tp) {
        return metadataThread.lastAnsweredMs(tp);
    }

    /** A connection to the source, with the mirror's client configs (TLS, SASL). */
    InterBrokerClient newClient(String clientId) {
        // a source across a WAN may be down for long: back off reconnects up to 10 s instead of hammering it
        return new InterBrokerClient(clientId, SourceChannels.channelBuilder(sourceClientConfigs, clientId, time),
                requestTimeoutMs, 8 << 20, 500, 10_000, time);
    }

    /**
     * Validated at create and alter; one recorded before that validation and invalid (not a positive int) falls back
     * to Kafka's default, said at WARN (a config the channel cannot be built from fails the partitions anyway).
     */
    private static int requestTimeoutMs(String mirrorName, Map<String, String> sourceClientConfigs) {
        int fallback = SourceChannels.requestTimeoutMs(Map.of());
        try {
            int configured = SourceChannels.requestTimeoutMs(sourceClientConfigs);
            if (configured > 0) {
                return configured;
            }
            log.warn("[Mirror {}] request.timeout.ms {} is not positive; its fetchers use {} ms", mirrorName,
                    configured, fallback);
        } catch (ConfigException e) {
            log.warn("[Mirror {}] invalid request.timeout.ms ({}); its fetchers use {} ms", mirrorName,
                    e.getMessage(), fallback);
        }
        return fallback;
    }

    /** The period of the fetch threads' liveness: a round may wait one request timeout, as long as it is. */
    long loopPeriodMs() {
        return Math.max(LOOP_PERIOD_MS, requestTimeoutMs);
    }

    // --- what the broker fetchers report (from their threads) ---

    String mirrorName() {
        return mirrorName;
    }

    MirrorFetchListener listener() {
        return listener;
    }

    MirrorFetchMetrics metrics() {
        return metrics;
    }

    MirrorFetchQuota quota() {
        return quota;
    }

    /** Sets the mirror's bandwidth cap on this broker ({@code mirror.replication.throttled.rate}), live. */
    public void updateReplicationQuota(long bytesPerSecond) {
        if (bytesPerSecond != quota.bytesPerSecond()) {
            log.info("[Mirror {}] fetching from the source capped at {} on this broker", mirrorName,
                    bytesPerSecond == MirrorFetchQuota.UNLIMITED ? "nothing (no cap)" : bytesPerSecond + " bytes/s");
            quota.update(bytesPerSecond);
            metrics.onReplicationQuota(bytesPerSecond);
        }
    }

    Time time() {
        return time;
    }

    /** Leadership may have moved (an error from a source broker, or it could not be reached): look it up again. */
    void metadataStale() {
        metadataThread.metadataStale();
    }

    /**
     * Reports partitions FAILED with why and stops fetching them; the manager decides when to retry. Their source
     * end is reported unknown first (to the manager and to the lag gauges), so neither describe nor the metrics
     * show a lag against an old figure, before the failure or after a retry, until a fetch answers again.
     */
    void fail(List<TopicPartition> failed, String reason, boolean retriable) {
        long unknown = MirrorProgress.UNKNOWN.sourceHighWatermark();
        for (TopicPartition tp : failed) {
            MirrorPartitionSink sink = partitions.get(tp);
            if (sink != null) {
                metrics.onFetched(tp, unknown, 0, 0, -1);
                listener.onProgress(tp, unknown, sink.logEndOffset());
                listener.onFailure(tp, reason, retriable);
                removePartition(tp);
            }
        }
    }

    /** The source diverged from what was mirrored: reported with where, and the partition is no longer fetched. */
    void diverged(TopicPartition tp, int sourceEpoch, long sourceEndOffset, String reason) {
        if (partitions.containsKey(tp)) {
            listener.onSourceDiverged(tp, sourceEpoch, sourceEndOffset, reason);
            removePartition(tp);
        }
    }

    /** A fetched batch carries a source epoch at or above the local one: the manager fences, then re-adds it. */
    void removePartitionForFencing(TopicPartition tp, int sourceEpoch) {
        if (partitions.remove(tp) != null) {
            appendLocks.remove(tp); // called holding the lock: the next append sees the partition gone
            listener.onEpochFencingNeeded(tp, sourceEpoch);
        }
    }

    /**
     * The lock a broker fetcher holds while it checks that {@code tp} is still fetched and at the offset it asked
     * from, and appends.
     */
    Object appendLock(TopicPartition tp) {
        return appendLocks.computeIfAbsent(tp, k -> new Object());
    }

    /** The local partition {@code tp} is appended to, or null once it is no longer mirrored. */
    MirrorPartitionSink sink(TopicPartition tp) {
        return partitions.get(tp);
    }

    /**
     * Stops the fetcher without waiting for its threads: no partition is fetched or appended to after this returns
     * (each is removed under its append lock, after any append in progress), and the threads end at their next
     * round. {@link #shutdown} then waits for them and closes the connections; a blackholed source can hold that
     * for a request timeout, so the mirror manager does it on another thread.
     */
    public void detach() {
        metadataThread.initiateShutdown();
        new ArrayList<>(partitions.keySet()).forEach(this::removePartition);
        metadataThread.wake();
    }

    /**
     * Stops the metadata thread, then the broker fetchers, each waited for up to 5 s, and the connections. A request
     * in flight is abandoned, not waited for (a fetch the source holds up to its max wait, a silent source).
     */
    public void shutdown() {
        metadataThread.shutdown();
        quota.close();
    }

    /** The bootstrap list as nodes with negative ids (they are not the source's broker ids), parsed by Kafka's helpers. */
    static List<Node> parseBootstrap(String csv) {
        List<Node> out = new ArrayList<>();
        int id = -1;
        for (String hp : csv.split(",")) {
            String s = hp.trim();
            if (s.isEmpty()) {
                continue;
            }
            String host = Utils.getHost(s);
            Integer port = Utils.getPort(s);
            if (port == null) {
                throw new IllegalArgumentException("Invalid source bootstrap server '" + s + "' (host:port)");
            }
            out.add(new Node(id--, host == null || host.isEmpty() ? "127.0.0.1" : host, port));
        }
        return out;
    }
}
