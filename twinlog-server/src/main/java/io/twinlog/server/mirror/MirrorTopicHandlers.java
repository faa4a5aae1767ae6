package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorMessageReader;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import io.twinlog.common.Failures;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.common.tasks.PerKeyExecutor;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.runtime.MirrorRuntime;
import io.twinlog.mirror.runtime.MirrorTopicStarter;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.runtime.SourceClusters;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorStore;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * StartMirrorTopics, StopMirrorTopics (failover), PauseMirrorTopics and ResumeMirrorTopics: they set each topic's
 * desired state; the mirror runtime of each partition's leader carries it out. Start
 * creates the destination topic with the source topic's ID, partition count and configs (minus local-only ones).
 * Stop answers once every partition is STOPPED (writable), or says failover is still in progress after a bound.
 * Each handler is the flow of its request: the checks of {@link MirrorRequestAuthorizer} and
 * {@link MirrorRequestValidator}, the reads and writes of {@link MirrorStore} (and the source, for a start), the
 * answer of {@link MirrorTopicResponses}.
 */
public final class MirrorTopicHandlers implements AutoCloseable {
    private static final int SOURCE_TIMEOUT_MS = MirrorRuntime.SOURCE_TIMEOUT_MS;
    private static final long STOP_WAIT_MS = 30_000;

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final MirrorTopicStarter starter;
    private final MirrorRequestAuthorizer authorizer;
    /**
     * Stop, pause and resume: ZooKeeper reads and writes only, one at a time, off the request threads. Never behind
     * a start, which may wait on an unreachable source for {@value #SOURCE_TIMEOUT_MS} ms per call (issue 25, point
     * 3): a failover must not wait for the source it is failing over from.
     */
    private final ExecutorService adminThread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "twinlog-mirror-admin");
        t.setDaemon(true);
        return t;
    });
    /**
     * Starts, one at a time per mirror: they read the source's topics and configs before they write, so one mirror's
     * unreachable source holds only that mirror's later starts (a thread named {@code twinlog-mirror-start-<mirror>}
     * while it runs; none left for a mirror idle 10 s).
     */
    private final PerKeyExecutor startThreads = new PerKeyExecutor("twinlog-mirror-start", 10_000);

    public MirrorTopicHandlers(MirrorStore store, MetadataWatcher metadata, MirrorTopicStarter starter,
                               BrokerAuthorization authorization) {
        this.store = store;
        this.authorizer = MirrorRequestAuthorizer.of(authorization);
        this.metadata = metadata;
        this.starter = starter;
    }

    /**
     * The four topic APIs answer without holding a request thread: a start's source lookups and writes run on the
     * mirror's start thread, the others' ZooKeeper writes on its mirror admin thread (so a stop never waits
     * for a start stuck on its source), and a failover's wait for STOPPED is a callback on the metadata image, so
     * concurrent failovers do not stall produce and fetch.
     */
    public void register(ApiRegistry.Builder registry) {
        MirrorApiRegistration.addAsync(registry, MirrorApi.START_MIRROR_TOPICS, StartMirrorTopicsRequestData::new,
                (ctx, req, deadline) -> MirrorApiCall.submit(startThreads.forKey(req.mirrorName()),
                        MirrorApi.START_MIRROR_TOPICS, deadline, () -> start(ctx, TopicsRequest.of(req)),
                        Function.identity()));
        addSetDesired(registry, MirrorApi.STOP_MIRROR_TOPICS, StopMirrorTopicsRequestData::new, TopicsRequest::of,
                DesiredMirrorState.STOPPED);
        addSetDesired(registry, MirrorApi.PAUSE_MIRROR_TOPICS, PauseMirrorTopicsRequestData::new, TopicsRequest::of,
                DesiredMirrorState.PAUSED);
        addSetDesired(registry, MirrorApi.RESUME_MIRROR_TOPICS, ResumeMirrorTopicsRequestData::new,
                TopicsRequest::of, DesiredMirrorState.MIRRORING);
    }

    private <Q extends ApiMessage> void addSetDesired(
            ApiRegistry.Builder registry, MirrorApi api, MirrorMessageReader<Q> reader,
            Function<Q, TopicsRequest> shape, DesiredMirrorState desired) {
        MirrorApiRegistration.addAsync(registry, api, reader,
                (ctx, req, deadline) -> setDesired(api, ctx, shape.apply(req), deadline, desired));
    }

    /**
     * A request of one of the four topic APIs: each has its own generated class, all of this one shape
     * ({@code excludePatterns} is empty but for StartMirrorTopics).
     */
    private record TopicsRequest(String mirrorName, List<String> topics, List<String> patterns,
                                 List<String> excludePatterns, long stopAtMs, long stopTimeoutMs) {
        TopicsRequest(String mirrorName, List<String> topics, List<String> patterns, List<String> excludePatterns) {
            this(mirrorName, topics, patterns, excludePatterns, -1L, -1L);
        }

        static TopicsRequest of(StartMirrorTopicsRequestData r) {
            return new TopicsRequest(r.mirrorName(), r.topics(), r.patterns(), r.excludePatterns());
        }

        /** Version 1 may ask for a failover to a point in time (issue 30 point 2); version 0 reads -1 for both. */
        static TopicsRequest of(StopMirrorTopicsRequestData r) {
            return new TopicsRequest(r.mirrorName(), r.topics(), r.patterns(), r.excludePatterns(), r.stopAtMs(),
                    r.stopTimeoutMs());
        }

        /** The failover to a point in time asked for, its deadline {@code stopTimeoutMs} from {@code nowMs}. */
        Optional<PointInTimeStop> stopAt(long nowMs) {
            return stopAtMs < 0 ? Optional.empty()
                    : Optional.of(new PointInTimeStop(stopAtMs, saturatedSum(nowMs, Math.max(0, stopTimeoutMs))));
        }

        static TopicsRequest of(PauseMirrorTopicsRequestData r) {
            return new TopicsRequest(r.mirrorName(), r.topics(), r.patterns(), r.excludePatterns());
        }

        static TopicsRequest of(ResumeMirrorTopicsRequestData r) {
            return new TopicsRequest(r.mirrorName(), r.topics(), r.patterns(), r.excludePatterns());
        }
    }

    /** The mirror a topic API request acts on once the request-level checks pass, or why it may not. */
    private record Checked(Optional<MirrorDefinition> mirror, Optional<MirrorApiError> refused) {
    }

    /** What setting a desired state gives: the answer, or (a failover) the topics whose STOPPED to wait for. */
    private record Outcome(ApiMessage answer, Map<String, TopicResult> stopping, Optional<PointInTimeStop> stopAt) {
        Outcome(ApiMessage answer) {
            this(answer, null, Optional.empty());
        }
    }

    @Override
    public void close() {
        RejectedExecutionException closing = new RejectedExecutionException("closing");
        for (Runnable dropped : adminThread.shutdownNow()) {
            if (dropped instanceof PerKeyExecutor.Rejectable call) {
                call.reject(closing);
            }
        }
        startThreads.close(); // tells the starts still queued
    }

    /**
     * The checks every topic API makes first, in this order: ALTER on the mirror, the mirror exists, the request's
     * patterns (and a start's exclusions) compile.
     */
    private Checked check(AuthorizableRequestContext ctx, TopicsRequest req, List<String> excludePatterns)
            throws Exception {
        String name = req.mirrorName();
        Optional<MirrorApiError> denied = authorizer.mirrorDenied(ctx, AclOperation.ALTER, name);
        if (denied.isPresent()) {
            return new Checked(Optional.empty(), denied);
        }
        Optional<MirrorDefinition> mirror = store.get(name);
        if (mirror.isEmpty()) {
            return new Checked(mirror, Optional.of(MirrorApiError.of(MirrorErrors.UNKNOWN_CLUSTER_MIRROR,
                    "No cluster mirror named '" + name + "'")));
        }
        return new Checked(mirror, MirrorRequestValidator.topicPatterns(req.patterns(), excludePatterns));
    }

    private ApiMessage start(AuthorizableRequestContext ctx, TopicsRequest req) throws Exception {
        MirrorApi api = MirrorApi.START_MIRROR_TOPICS;
        Checked checked = check(ctx, req, req.excludePatterns());
        if (checked.refused().isPresent()) {
            return checked.refused().get().answer(api);
        }
        String name = req.mirrorName();
        MirrorDefinition mirror = checked.mirror().orElseThrow();
        Map<String, TopicResult> results = new LinkedHashMap<>();
        // the topics' desired-state versions before the source is contacted: a stop, pause or resume that comes
        // while this start waits on the source wins over it (MirrorTopicStarter refuses to write over it)
        Map<String, Integer> versions = new HashMap<>();
        for (String topic : req.topics()) {
            versions.put(topic, store.topicVersion(name, mirror.destinationTopic(topic)));
        }
        try (Admin source = SourceClusters.admin(mirror, SOURCE_TIMEOUT_MS)) {
            Set<String> sourceTopics = req.patterns().isEmpty() ? Set.of()
                    : source.listTopics().names().get(SOURCE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<String, Integer> allowed = new LinkedHashMap<>();
            Set<String> byPattern = new HashSet<>();
            for (String topic : MirrorRequestValidator.selectTopics(req.topics(), req.patterns(),
                    req.excludePatterns(), sourceTopics)) {
                Integer version = versions.get(topic);
                allowed.put(topic, version != null ? version
                        : store.topicVersion(name, mirror.destinationTopic(topic)));
                // a pattern that is the topic's very name names it (the CLI sends "a.orders" as a pattern: its
                // '.' could be a regex's); only a topic a pattern merely matches was selected by it
                if (version == null && !req.patterns().contains(topic)) {
                    byPattern.add(topic);
                }
            }
            Map<String, String> skipped = new LinkedHashMap<>();
            // the principal must be allowed to alter the topic it lands in here (a prefixed name, a failback's own)
            results.putAll(starter.startTopics(mirror, allowed, byPattern, source, skipped,
                    destination -> authorizer.topicDenied(ctx, destination)));
            store.recordSkippedTopics(name, skipped, allowed.keySet());
        } catch (Exception e) {
            // broad: whatever failed while the source was read or the topics written (network, TLS, SASL, timeout,
            // ZooKeeper) is this start's answer, with its root cause
            return MirrorApiError.of(MirrorErrors.SOURCE_CLUSTER_UNREACHABLE, "Could not read topics from the source "
                    + mirror.sourceBootstrap() + ": " + Failures.rootMessage(e)).answer(api);
        }
        return MirrorTopicResponses.answer(api, results);
    }

    private CompletableFuture<ApiMessage> setDesired(MirrorApi api, AuthorizableRequestContext ctx, TopicsRequest req,
                                                     AdminDeadline deadline, DesiredMirrorState desired) {
        long receivedMs = System.currentTimeMillis(); // the deadline of a failover to a point in time runs from here
        return MirrorApiCall.submit(adminThread, api, deadline, () -> setDesiredNow(api, ctx, req, desired,
                                receivedMs), Outcome::new)
                .thenCompose(o -> o.stopping() == null ? CompletableFuture.completedFuture(o.answer())
                        : awaitStopped(api, o.stopping(), o.stopAt()));
    }

    /** Sets the desired state of the matching topics (on the admin thread). */
    private Outcome setDesiredNow(MirrorApi api, AuthorizableRequestContext ctx, TopicsRequest req,
                                  DesiredMirrorState desired, long receivedMs) throws Exception {
        // exclusions are StartMirrorTopics' only: the others' are empty, and not read
        Checked checked = check(ctx, req, List.of());
        if (checked.refused().isPresent()) {
            return new Outcome(checked.refused().get().answer(api));
        }
        Optional<MirrorApiError> badTime = MirrorRequestValidator.pointInTimeRefused(req.stopAtMs(),
                req.stopTimeoutMs());
        if (badTime.isPresent()) {
            return new Outcome(badTime.get().answer(api));
        }
        Optional<PointInTimeStop> stopAt = req.stopAt(receivedMs);
        String name = req.mirrorName();
        Map<String, DesiredMirrorState> mirrorTopics = store.topics(name);
        Map<String, TopicResult> results = new LinkedHashMap<>();
        List<String> changing = new ArrayList<>();
        // a topic being failed over to a point in time keeps its time until it is STOPPED (issue 30 point 2)
        Map<String, PointInTimeStop> stored = desired == DesiredMirrorState.STOPPED ? store.stops(name) : Map.of();
        MirrorMetadataView view = MirrorMetadataView.of(metadata.image());
        for (String topic : MirrorRequestValidator.selectTopics(req.topics(), req.patterns(), List.of(),
                mirrorTopics.keySet())) {
            DesiredMirrorState current = mirrorTopics.get(topic);
            Optional<TopicResult> refused = authorizer.topicDenied(ctx, topic).or(() ->
                    MirrorRequestValidator.desiredStateRefused(name, topic, current, desired)).or(() ->
                    MirrorRequestValidator.stopTimeRefused(name, topic, current, stored.get(topic), stopAt,
                            view.allStopped(topic)));
            if (refused.isPresent()) {
                results.put(topic, refused.get());
            } else {
                if (!MirrorRequestValidator.sameStop(current, stored.get(topic), stopAt)) {
                    changing.add(topic); // the same time again: its node, deadline included, stays as written
                }
                results.put(topic, TopicResult.OK);
            }
        }
        MirrorStore.TopicsWritten written = store.setTopics(name, changing, desired, stopAt); // few ZooKeeper writes
        if (written.failure().isPresent()) {
            if (written.written().isEmpty()) {
                throw written.failure().get(); // nothing changed: the whole request failed
            }
            // some transactions committed: those topics are set, and their answer must say so
            for (String topic : written.notWritten()) {
                results.put(topic, MirrorTopicResponses.notWritten(topic, desired, written.failure().get()));
            }
        }
        if (desired == DesiredMirrorState.STOPPED) {
            return new Outcome(null, results, stopAt);
        }
        return new Outcome(MirrorTopicResponses.answer(api, results));
    }

    /**
     * Failover answers when the topics are writable, or says it is still in progress: at once when a partition's
     * failover has gone FAILED (with that partition's reason), else after {@value #STOP_WAIT_MS} ms.
     */
    private CompletableFuture<ApiMessage> awaitStopped(MirrorApi api, Map<String, TopicResult> results,
                                                       Optional<PointInTimeStop> stopAt) {
        List<String> stopping = MirrorTopicResponses.succeeded(results);
        // a failover to a point in time may first wait for the time, up to its deadline
        long waitMs = saturatedSum(STOP_WAIT_MS, stopAt.map(s -> Math.max(0, s.deadlineMs()
                - System.currentTimeMillis())).orElse(0L));
        // tested on the metadata thread at every image until it holds: from the states the image has decoded, the
        // records themselves parsed only for a FAILED partition (a failover of 1,000 partitions makes hundreds of
        // images)
        return metadata.whenApplied("topics " + stopping + " stopped", image -> {
            MirrorMetadataView view = MirrorMetadataView.of(image);
            return stopping.stream().allMatch(view::allStopped)
                    || stopping.stream().anyMatch(t -> view.failedFailover(t).isPresent());
        }, waitMs).handle((image, error) -> {
            // timed out: answer with what the latest image shows
            MetadataImage lastImage = error == null ? image : metadata.image();
            MirrorMetadataView last = MirrorMetadataView.of(lastImage);
            ApiMessage answer = MirrorTopicResponses.answer(api, MirrorTopicResponses.failoverResults(stopping,
                    results, last));
            if (stopAt.isPresent()) {
                PointInTimeAnswers.fill((StopMirrorTopicsResponseData) answer, lastImage);
            }
            return answer;
        });
    }

    /** {@code a + b} for times and waits of 0 or more, {@link Long#MAX_VALUE} instead of overflowing to the past. */
    static long saturatedSum(long a, long b) {
        return b > Long.MAX_VALUE - a ? Long.MAX_VALUE : a + b;
    }
}
