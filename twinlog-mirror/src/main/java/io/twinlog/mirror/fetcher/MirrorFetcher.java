package io.twinlog.mirror.fetcher;

import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.partition.SourceProblem;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Mirrors every MIRRORING partition of one cluster mirror from the source partition leaders. This thread
 * ({@code twinlog-mirror-fetcher-<mirror>}) keeps the source's metadata and hands each partition to the
 * {@link SourceBrokerFetcher} of its source leader: one thread, one connection and one fetch session per source
 * broker, as Kafka's fetcher manager does, so a long poll to an idle broker never delays the batches waiting on a
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
 * and the assignment to broker fetchers are confined to this thread; each broker fetcher owns its session. Works
 * against any Kafka-protocol source (Twinlog or Apache Kafka). Connections use the mirror's source client configs
 * (TLS, SASL) through {@link SourceChannels}.
 */
public final class MirrorFetcher implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(MirrorFetcher.class);
    private static final long METADATA_MAX_AGE_MS = 30_000;
    static final long BACKOFF_MS = 500;
    /**
     * The longest a healthy round of a fetch thread takes, for its liveness (decision 69): a metadata lookup or a
     * fetch waits at most one request timeout of {@link #newClient}.
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
    private final List<Node> bootstrap;
    private final MirrorFetchListener listener;
    private final MirrorFetchMetrics metrics;
    private final MirrorFetchQuota quota;
    private final Time time;
    private final Map<String, String> sourceClientConfigs;
    /** Made on this thread at first use, so configs that cannot make a channel fail the partitions, with why. */
    private volatile InterBrokerClient client;
    private final ConcurrentHashMap<TopicPartition, MirrorPartitionSink> partitions = new ConcurrentHashMap<>();
    /** One lock per partition: a partition moving between broker fetchers is never appended to by both. */
    private final ConcurrentHashMap<TopicPartition, Object> appendLocks = new ConcurrentHashMap<>();
    /** The broker fetchers by source broker id; touched only by this thread (and shutdown, after it ended). */
    private final Map<Integer, SourceBrokerFetcher> brokerFetchers = new HashMap<>();
    /** Which broker fetcher fetches each partition, for the manager's thread ({@link #lastAnsweredMs}). */
    private final Map<TopicPartition, SourceBrokerFetcher> fetcherOf = new ConcurrentHashMap<>();
    /** When each partition was first seen without a source leader; reported as FAILED after a while. */
    private final Map<TopicPartition, Long> leaderlessSinceMs = new HashMap<>();
    private final Map<TopicPartition, Long> leaderlessRetryAt = new HashMap<>();
    /** How long a partition may have no source leader before it is reported FAILED (retriable). */
    private final long stateTimeoutMs;
    private final SourceTopicStatus topicStatus;
    /** When the metadata is to be looked up again at the latest; this thread only. */
    private long nextRefreshMs;
    private final Thread thread;
    private final Object wakeup = new Object();
    private volatile boolean running = true;
    private volatile SourceMetadata metadata;
    /** The source cluster ID recorded for the mirror; null until recorded (then the first answer is adopted). */
    private volatile String expectedClusterId;
    /** Consecutive metadata rounds answered only by another cluster; this thread only. */
    private int wrongClusterRounds;
    /**
     * Set when a source broker could not be reached or said it no longer leads a partition: leaderships may have
     * moved; look them up again (from the brokers still known, then the bootstrap list) rather than retrying the
     * old leader until the metadata ages out.
     */
    private volatile boolean metadataStale;

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
        this.stateTimeoutMs = stateTimeoutMs;
        this.topicStatus = new SourceTopicStatus(sourceClientConfigs.getOrDefault("bootstrap.servers", ""),
                stateTimeoutMs, time.milliseconds());
        this.bootstrap = parseBootstrap(sourceClientConfigs.getOrDefault("bootstrap.servers", ""));
        this.listener = listener;
        this.metrics = metrics;
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
            wake();
        }
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
     * Why {@code topic}, whose destination topic has the ID {@code localTopicId} (the source's, given at its start),
     * cannot be mirrored from the source now, if it cannot ({@link SourceTopicStatus}). Asked by the state machine's
     * pass over each partition this broker leads; the topic is then looked up at every metadata refresh, fetched or
     * not.
     */
    public Optional<SourceProblem> sourceProblem(String topic, Uuid localTopicId) {
        long now = time.milliseconds();
        if (topicStatus.watch(topic, localTopicId, now)) {
            metadataStale = true; // look it up now, not at the next refresh
            wake();
        }
        return topicStatus.problem(topic, now);
    }

    /**
     * The source cluster ID recorded for the mirror (the manager passes it at every pass, so one recorded at first
     * contact applies at once): an answer from any other cluster is not adopted.
     */
    public void expectClusterId(Optional<String> clusterId) {
        expectedClusterId = clusterId.orElse(null);
    }

    /** Why the source cannot be mirrored now if another cluster answers at its address: the partitions' reason. */
    public Optional<String> wrongClusterReason() {
        return topicStatus.wrongClusterReason();
    }

    /** The source cluster ID the last metadata adopted reported, if any (never another than the expected one). */
    public Optional<String> sourceClusterId() {
        SourceMetadata m = metadata;
        return m == null ? Optional.empty() : Optional.ofNullable(m.clusterId());
    }

    @Override
    public void run() {
        BackgroundTask liveness = metrics.loopStarted("mirror-fetcher-" + mirrorName, LOOP_PERIOD_MS, log);
        try {
            liveness.runWhile(() -> running, this::doWork, () -> pause(BACKOFF_MS));
        } finally {
            metrics.loopEnded(liveness);
        }
    }

    private void doWork() {
        long now = time.milliseconds();
        Set<String> topics = topicStatus.topics(fetchedTopics(), now);
        if (topics.isEmpty()) {
            assign(Map.of());
            pause(200);
            return;
        }
        if (client == null && !connect()) {
            return;
        }
        SourceMetadata m = metadata;
        if (m == null || metadataStale || now >= nextRefreshMs
                || partitions.keySet().stream().anyMatch(tp -> !metadata.leaders().containsKey(tp))) {
            if (!refreshMetadata(topics)) {
                return;
            }
        }
        if (partitions.isEmpty()) {
            assign(Map.of());
            pause(200);
            return;
        }
        assign(leadersNow(now));
        pause(200); // metadata problems and new partitions wake us early
    }

    /** Each partition's source leader now; leaderless ones are retried, then reported. */
    private Map<TopicPartition, Node> leadersNow(long now) {
        Map<TopicPartition, Node> out = new HashMap<>();
        SourceMetadata m = metadata;
        for (TopicPartition tp : partitions.keySet()) {
            Optional<Node> leader = m.leaderNode(tp);
            Uuid topicId = m.topicIds().get(tp.topic());
            if (m.unknownTopics().contains(tp.topic()) || !topicStatus.isMirroredTopic(tp.topic(), topicId)) {
                // deleted, created again, or not asked about yet: the topic's status decides, nothing is fetched
                leaderlessSinceMs.remove(tp);
                leaderlessRetryAt.remove(tp);
                continue;
            }
            if (leader.isPresent() && topicId != null) {
                leaderlessSinceMs.remove(tp);
                leaderlessRetryAt.remove(tp);
                out.put(tp, leader.get());
                continue;
            }
            long since = leaderlessSinceMs.computeIfAbsent(tp, k -> now);
            if (now - since > stateTimeoutMs) {
                leaderlessSinceMs.remove(tp);
                leaderlessRetryAt.remove(tp);
                fail(List.of(tp), topicId == null ? "The source topic " + tp.topic() + " cannot be described on "
                        + "the source cluster" : "The source partition " + tp + " has had no leader for "
                        + (now - since) + " ms (offline on the source)", true);
            } else if (leaderlessRetryAt.getOrDefault(tp, 0L) <= now) {
                leaderlessRetryAt.put(tp, now + BACKOFF_MS);
                metadataStale = true; // look again: a leader may have been elected meanwhile
            }
        }
        return out;
    }

    /** Hands each partition to its leader's broker fetcher; fetchers left without partitions stop. */
    private void assign(Map<TopicPartition, Node> leaders) {
        Map<Integer, Map<TopicPartition, SourceBrokerFetcher.Assigned>> byBroker = new HashMap<>();
        SourceMetadata m = metadata;
        leaders.forEach((tp, node) -> byBroker.computeIfAbsent(node.id(), id -> new HashMap<>())
                .put(tp, new SourceBrokerFetcher.Assigned(m.topicIds().get(tp.topic()),
                        m.leaders().get(tp).leaderEpoch())));
        for (Iterator<Map.Entry<Integer, SourceBrokerFetcher>> it = brokerFetchers.entrySet().iterator();
             it.hasNext(); ) {
            Map.Entry<Integer, SourceBrokerFetcher> e = it.next();
            Node now = m == null ? null : m.brokers().get(e.getKey());
            if (!byBroker.containsKey(e.getKey()) || now == null || !now.equals(e.getValue().node())) {
                e.getValue().shutdown(); // no longer a leader of ours, or now at another address
                it.remove();
            }
        }
        byBroker.forEach((brokerId, assigned) -> brokerFetchers.computeIfAbsent(brokerId, id -> {
            SourceBrokerFetcher f = new SourceBrokerFetcher(this, m.brokers().get(id));
            f.start();
            return f;
        }).assign(assigned));
        fetcherOf.keySet().retainAll(leaders.keySet());
        byBroker.forEach((brokerId, assigned) -> assigned.keySet().forEach(tp ->
                fetcherOf.put(tp, brokerFetchers.get(brokerId))));
    }

    /**
     * When the source broker that leads {@code tp} last answered this mirror's fetch, on the monotonic clock
     * ({@code Time.hiResClockMs}): empty when no broker fetcher fetches it (its leader unknown, or not assigned
     * yet), which the metadata loop reports on its own.
     */
    public OptionalLong lastAnsweredMs(TopicPartition tp) {
        SourceBrokerFetcher f = fetcherOf.get(tp);
        return f == null ? OptionalLong.empty() : OptionalLong.of(f.lastAnsweredMs());
    }

    private boolean connect() {
        try {
            // a source across a WAN may be down for long: back off reconnects up to 10 s instead of hammering it
            client = newClient("mirror-fetcher-" + mirrorName);
            return true;
        } catch (RuntimeException e) {
            String reason = "Cannot connect to the source with the mirror's client configs: " + e.getMessage();
            log.error("[Mirror {}] {}", mirrorName, reason, e);
            fail(new ArrayList<>(partitions.keySet()), reason, true); // retried: an --alter makes a new fetcher
            pause(BACKOFF_MS);
            return false;
        }
    }

    private String bootstrapServers() {
        return sourceClientConfigs.getOrDefault("bootstrap.servers", "");
    }

    InterBrokerClient newClient(String clientId) {
        return new InterBrokerClient(clientId, SourceChannels.channelBuilder(sourceClientConfigs, clientId, time),
                30_000, 8 << 20, 500, 10_000, time);
    }

    private Set<String> fetchedTopics() {
        Set<String> topics = new LinkedHashSet<>();
        partitions.keySet().forEach(tp -> topics.add(tp.topic()));
        return topics;
    }

    /**
     * Looks up {@code topics} on the source; the outcome, answered or not, goes to {@link #topicStatus}. The brokers
     * learned from the last answer are asked first, then the bootstrap list; an answer for another cluster than the
     * expected one is passed over (the next candidate is asked) and never adopted.
     */
    private boolean refreshMetadata(Set<String> topics) {
        IOException last = null;
        SourceMetadata foreign = null;
        Node foreignNode = null;
        List<Node> candidates = new ArrayList<>(bootstrap);
        if (metadata != null) {
            candidates.addAll(0, metadata.brokers().values());
        }
        for (Node node : candidates) {
            try {
                metadataStale = false; // before the request: a report arriving meanwhile asks again
                MetadataResponse r = client.send(node, new MetadataRequest.Builder(List.copyOf(topics), false));
                SourceMetadata m = parse(r);
                String expected = expectedClusterId;
                if (expected != null && !expected.equals(m.clusterId())) {
                    foreign = m; // a rebuilt source, a DNS entry or proxy now pointing elsewhere: ask the next one
                    foreignNode = node;
                    continue;
                }
                metadata = m;
                if (topicStatus.isOutage()) {
                    log.info("[Mirror {}] the source answers again (broker {})", mirrorName, node.id());
                }
                if (wrongClusterRounds > 0) {
                    log.info("[Mirror {}] the source cluster {} answers again (broker {} at {}:{}) after {} metadata "
                            + "rounds answered by another cluster", mirrorName, m.clusterId(), node.id(), node.host(),
                            node.port(), wrongClusterRounds);
                    wrongClusterRounds = 0;
                }
                nextRefreshMs = m.fetchedAtMs() + topicStatus.onMetadata(m, m.fetchedAtMs(), METADATA_MAX_AGE_MS);
                return true;
            } catch (IOException e) {
                last = e;
            }
        }
        metadataStale = true;
        if (foreign != null) {
            onWrongCluster(foreign, foreignNode);
            return false;
        }
        String error = last == null ? "no source broker known" : last.getMessage();
        // the partitions are failed by the state machine once the source has not answered for the bound
        // (SourceTopicStatus), the same way in every run, not after a count of attempts of varying length
        if (topicStatus.onNoAnswer(error, authenticationFailed(last))) {
            log.info("[Mirror {}] no source broker answers metadata requests (bootstrap {}): {}; asking again every "
                    + "{} ms, its partitions FAILED after {} ms (mirror.state.timeout.ms) without an answer", mirrorName,
                    bootstrapServers(), error, BACKOFF_MS, stateTimeoutMs);
        } else {
            log.debug("[Mirror {}] no source broker answered a metadata request: {}", mirrorName, error);
        }
        pause(BACKOFF_MS);
        return false;
    }

    /**
     * Only another cluster answered: what was learned of the source goes (its broker addresses may now lead to that
     * cluster too), the broker fetchers stop, and the next round starts from the bootstrap list after a backoff.
     */
    private void onWrongCluster(SourceMetadata foreign, Node node) {
        String expected = expectedClusterId;
        metadata = null;
        assign(Map.of());
        String reason = WRONG_CLUSTER_PREFIX + ": " + bootstrapServers() + " leads to "
                + "cluster " + foreign.clusterId() + ", not to this mirror's source cluster " + expected
                + " (WRONG_CLUSTER); nothing is fetched from it and nothing is cut, and mirroring resumes by itself "
                + "once the source cluster answers there again (if the source was rebuilt for good, fail the "
                + "topics over with --stop, or create a new mirror for the new cluster)";
        topicStatus.onWrongCluster(reason);
        long backoffMs = WRONG_CLUSTER_BACKOFF.backoff(wrongClusterRounds);
        if (wrongClusterRounds == 0) {
            log.error("[Mirror {}] broker {} at {}:{} answered for cluster {}, not for the mirror's source cluster "
                    + "{}: its metadata is not used, the broker addresses learned before are dropped, and the "
                    + "bootstrap servers {} are asked again with a backoff of {} ms doubling to {} ms", mirrorName,
                    node.id(), node.host(), node.port(), foreign.clusterId(), expected, bootstrapServers(),
                    backoffMs, WRONG_CLUSTER_MAX_BACKOFF_MS);
        } else {
            log.debug("[Mirror {}] still answered by cluster {} (round {})", mirrorName, foreign.clusterId(),
                    wrongClusterRounds + 1);
        }
        wrongClusterRounds++;
        pause(backoffMs);
    }

    private static boolean authenticationFailed(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AuthenticationException) {
                return true;
            }
        }
        return false;
    }

    private SourceMetadata parse(MetadataResponse response) {
        Map<TopicPartition, SourceMetadata.Leader> leaders = new HashMap<>();
        Map<String, Uuid> ids = new HashMap<>();
        Set<String> unknown = new HashSet<>();
        Map<Integer, Node> brokers = new HashMap<>();
        for (MetadataResponseData.MetadataResponseBroker b : response.data().brokers()) {
            brokers.put(b.nodeId(), new Node(b.nodeId(), b.host(), b.port()));
        }
        for (MetadataResponseData.MetadataResponseTopic t : response.data().topics()) {
            if (t.errorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION.code()) {
                unknown.add(t.name());
            }
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
        return new SourceMetadata(leaders, ids, brokers, unknown, response.data().clusterId(), time.milliseconds());
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
        metadataStale = true;
        wake();
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

    private void wake() {
        synchronized (wakeup) {
            wakeup.notifyAll();
        }
    }

    private void pause(long ms) {
        synchronized (wakeup) {
            try {
                wakeup.wait(ms); // shutdown, new partitions and stale metadata wake it early
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stops the fetcher without waiting for its threads: no partition is fetched or appended to after this returns
     * (each is removed under its append lock, after any append in progress), and the threads end at their next
     * round. {@link #shutdown} then waits for them and closes the connections; a blackholed source can hold that
     * for a request timeout, so the mirror manager does it on another thread.
     */
    public void detach() {
        running = false;
        new ArrayList<>(partitions.keySet()).forEach(this::removePartition);
        wake();
    }

    public void shutdown() {
        running = false;
        InterBrokerClient c = client;
        if (c != null) {
            c.wakeup();
        }
        wake();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        brokerFetchers.values().forEach(SourceBrokerFetcher::shutdown);
        brokerFetchers.clear();
        InterBrokerClient connected = client;
        if (connected != null) {
            connected.close();
        }
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
