package io.twinlog.mirror.fetcher;

import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.common.tasks.FetcherThread;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The metadata thread of one mirror ({@code twinlog-mirror-fetcher-<mirror>}, a {@link FetcherThread}): keeps the
 * source's metadata and hands each of the {@link MirrorFetcher}'s partitions to the {@link SourceBrokerFetcher} of
 * its source leader, started and stopped here. Partitions without a source leader are reported FAILED (retriable)
 * after {@code mirror.state.timeout.ms}. What each topic's status is (deleted, created again, the source not
 * answering) is recorded in the fetcher's {@link SourceTopicStatus}. A Metadata answer from another cluster than
 * the expected one is never adopted: the addresses learned before are dropped and the bootstrap list is asked again
 * with a backoff (decision 68).
 *
 * <p>Threading: the metadata and the broker fetchers are confined to this thread (and to {@link #shutdown}, after it
 * ended); {@link #metadataStale}, {@link #expectClusterId} and the read-only views may be called from any thread.
 */
final class SourceMetadataThread extends FetcherThread {
    private static final Logger log = LoggerFactory.getLogger(SourceMetadataThread.class);
    private static final long METADATA_MAX_AGE_MS = 30_000;

    private final MirrorFetcher fetcher;
    private final String mirrorName;
    private final String bootstrapServers;
    private final List<Node> bootstrap;
    private final long stateTimeoutMs;
    private final SourceTopicStatus topicStatus;
    private final Time time;
    /** Made on this thread at first use, so configs that cannot make a channel fail the partitions, with why. */
    private volatile InterBrokerClient client;
    /** The broker fetchers by source broker id; touched only by this thread (and shutdown, after it ended). */
    private final Map<Integer, SourceBrokerFetcher> brokerFetchers = new HashMap<>();
    /** Which broker fetcher fetches each partition, for the manager's thread ({@link #lastAnsweredMs}). */
    private final Map<TopicPartition, SourceBrokerFetcher> fetcherOf = new ConcurrentHashMap<>();
    /** When each partition was first seen without a source leader; reported as FAILED after a while. */
    private final Map<TopicPartition, Long> leaderlessSinceMs = new HashMap<>();
    private final Map<TopicPartition, Long> leaderlessRetryAt = new HashMap<>();
    /** When the metadata is to be looked up again at the latest; this thread only. */
    private long nextRefreshMs;
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

    SourceMetadataThread(MirrorFetcher fetcher, String bootstrapServers, long stateTimeoutMs,
                         SourceTopicStatus topicStatus, Time time) {
        super("twinlog-mirror-fetcher-" + fetcher.mirrorName(), "[Mirror " + fetcher.mirrorName() + "] ",
                MirrorFetcher.BACKOFF_MS);
        this.fetcher = fetcher;
        this.mirrorName = fetcher.mirrorName();
        this.bootstrapServers = bootstrapServers;
        this.bootstrap = MirrorFetcher.parseBootstrap(bootstrapServers);
        this.stateTimeoutMs = stateTimeoutMs;
        this.topicStatus = topicStatus;
        this.time = time;
    }

    @Override
    protected BackgroundTask openLiveness() {
        return fetcher.metrics().loopStarted("mirror-fetcher-" + mirrorName, fetcher.loopPeriodMs(), log);
    }

    @Override
    protected void closeLiveness(BackgroundTask liveness) {
        fetcher.metrics().loopEnded(liveness);
    }

    /** Leadership may have moved, or a topic is to be looked up now: look the metadata up again. */
    void metadataStale() {
        metadataStale = true;
        wake();
    }

    void expectClusterId(Optional<String> clusterId) {
        expectedClusterId = clusterId.orElse(null);
    }

    Optional<String> sourceClusterId() {
        SourceMetadata m = metadata;
        return m == null ? Optional.empty() : Optional.ofNullable(m.clusterId());
    }

    /** When the source broker fetching {@code tp} last answered (monotonic ms); empty when none fetches it. */
    OptionalLong lastAnsweredMs(TopicPartition tp) {
        SourceBrokerFetcher f = fetcherOf.get(tp);
        return f == null ? OptionalLong.empty() : OptionalLong.of(f.lastAnsweredMs());
    }

    @Override
    protected void doRound() {
        long now = time.milliseconds();
        Set<TopicPartition> partitions = fetcher.partitions();
        Set<String> topics = topicStatus.topics(fetchedTopics(partitions), now); // by their source names
        if (topics.isEmpty()) {
            assign(Map.of());
            waitForWork(200);
            return;
        }
        if (client == null && !connect()) {
            return;
        }
        SourceMetadata m = metadata;
        if (m == null || metadataStale || now >= nextRefreshMs
                || partitions.stream().anyMatch(tp -> !m.leaders().containsKey(fetcher.sourcePartition(tp)))) {
            if (!refreshMetadata(topics)) {
                return;
            }
        }
        if (partitions.isEmpty()) {
            assign(Map.of());
            waitForWork(200);
            return;
        }
        assign(leadersNow(now));
        waitForWork(200); // metadata problems and new partitions wake us early
    }

    /** The source topics of the fetched partitions. */
    private Set<String> fetchedTopics(Set<TopicPartition> partitions) {
        Set<String> topics = new LinkedHashSet<>();
        partitions.forEach(tp -> topics.add(fetcher.sourcePartition(tp).topic()));
        return topics;
    }

    /** Each partition's source leader now; leaderless ones are retried, then reported. */
    private Map<TopicPartition, Node> leadersNow(long now) {
        Map<TopicPartition, Node> out = new HashMap<>();
        SourceMetadata m = metadata;
        for (TopicPartition tp : fetcher.partitions()) {
            TopicPartition source = fetcher.sourcePartition(tp);
            Optional<Node> leader = m.leaderNode(source);
            Uuid topicId = m.topicIds().get(source.topic());
            if (m.unknownTopics().contains(source.topic()) || !topicStatus.isMirroredTopic(source.topic(), topicId)) {
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
                fetcher.fail(List.of(tp), topicId == null ? "The source topic " + source.topic() + " cannot be "
                        + "described on the source cluster" : "The source partition " + source + " has had no leader "
                        + "for "
                        + (now - since) + " ms (offline on the source)", true);
            } else if (leaderlessRetryAt.getOrDefault(tp, 0L) <= now) {
                leaderlessRetryAt.put(tp, now + MirrorFetcher.BACKOFF_MS);
                metadataStale = true; // look again: a leader may have been elected meanwhile
            }
        }
        return out;
    }

    /** Hands each partition to its leader's broker fetcher; fetchers left without partitions stop. */
    private void assign(Map<TopicPartition, Node> leaders) {
        Map<Integer, Map<TopicPartition, SourceBrokerFetcher.Assigned>> byBroker = new HashMap<>();
        SourceMetadata m = metadata;
        leaders.forEach((tp, node) -> {
            TopicPartition source = fetcher.sourcePartition(tp);
            byBroker.computeIfAbsent(node.id(), id -> new HashMap<>()).put(tp, new SourceBrokerFetcher.Assigned(
                    m.topicIds().get(source.topic()), m.leaders().get(source).leaderEpoch(), source));
        });
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
            SourceBrokerFetcher f = new SourceBrokerFetcher(fetcher, m.brokers().get(id));
            f.start();
            return f;
        }).assign(assigned));
        fetcherOf.keySet().retainAll(leaders.keySet());
        byBroker.forEach((brokerId, assigned) -> assigned.keySet().forEach(tp ->
                fetcherOf.put(tp, brokerFetchers.get(brokerId))));
    }

    private boolean connect() {
        try {
            client = fetcher.newClient("mirror-fetcher-" + mirrorName);
            return !isShutdownInitiated(); // stopped meanwhile: onShutdownInitiated may have missed it to abort
        } catch (RuntimeException e) { // broad: any config the channel builder rejects; logged with its stack trace
            String reason = "Cannot connect to the source with the mirror's client configs: " + e.getMessage();
            log.error("[Mirror {}] {}", mirrorName, reason, e);
            // retried: an --alter makes a new fetcher
            fetcher.fail(new ArrayList<>(fetcher.partitions()), reason, true);
            waitForWork(MirrorFetcher.BACKOFF_MS);
            return false;
        }
    }

    /**
     * Looks up {@code topics} on the source; the outcome, answered or not, goes to the topic status. The brokers
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
                SourceMetadata m = SourceMetadata.from(r, time.milliseconds());
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
                if (isShutdownInitiated()) {
                    return false; // abandoned by the stop (onShutdownInitiated): no outage of the source
                }
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
                    bootstrapServers, error, MirrorFetcher.BACKOFF_MS, stateTimeoutMs);
        } else {
            log.debug("[Mirror {}] no source broker answered a metadata request: {}", mirrorName, error);
        }
        waitForWork(MirrorFetcher.BACKOFF_MS);
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
        String reason = MirrorFetcher.WRONG_CLUSTER_PREFIX + ": " + bootstrapServers + " leads to "
                + "cluster " + foreign.clusterId() + ", not to this mirror's source cluster " + expected
                + " (WRONG_CLUSTER); nothing is fetched from it and nothing is cut, and mirroring resumes by itself "
                + "once the source cluster answers there again (if the source was rebuilt for good, fail the "
                + "topics over with --stop, or create a new mirror for the new cluster)";
        topicStatus.onWrongCluster(reason);
        long backoffMs = MirrorFetcher.WRONG_CLUSTER_BACKOFF.backoff(wrongClusterRounds);
        if (wrongClusterRounds == 0) {
            log.error("[Mirror {}] broker {} at {}:{} answered for cluster {}, not for the mirror's source cluster "
                    + "{}: its metadata is not used, the broker addresses learned before are dropped, and the "
                    + "bootstrap servers {} are asked again with a backoff of {} ms doubling to {} ms", mirrorName,
                    node.id(), node.host(), node.port(), foreign.clusterId(), expected, bootstrapServers,
                    backoffMs, MirrorFetcher.WRONG_CLUSTER_MAX_BACKOFF_MS);
        } else {
            log.debug("[Mirror {}] still answered by cluster {} (round {})", mirrorName, foreign.clusterId(),
                    wrongClusterRounds + 1);
        }
        wrongClusterRounds++;
        waitForWork(backoffMs);
    }

    private static boolean authenticationFailed(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AuthenticationException) {
                return true;
            }
        }
        return false;
    }

    @Override
    protected void onShutdownInitiated() {
        InterBrokerClient c = client;
        if (c != null) {
            c.abort(); // its lookup in flight is abandoned, not waited for (a silent source holds it a request timeout)
        }
    }

    /**
     * Stops this thread (waiting up to {@value FetcherThread#SHUTDOWN_WAIT_MS} ms), then the broker fetchers (all
     * told first, then each waited for), and closes the connection.
     */
    @Override
    public void shutdown() {
        super.shutdown();
        brokerFetchers.values().forEach(SourceBrokerFetcher::initiateShutdown);
        brokerFetchers.values().forEach(SourceBrokerFetcher::shutdown);
        brokerFetchers.clear();
        InterBrokerClient connected = client;
        if (connected != null) {
            connected.close();
        }
    }
}
