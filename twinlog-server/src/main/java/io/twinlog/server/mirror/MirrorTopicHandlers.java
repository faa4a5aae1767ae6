package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import io.twinlog.common.Failures;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.tasks.PerKeyExecutor;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.runtime.MirrorRuntime;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.runtime.MirrorTopicStarter;
import io.twinlog.mirror.runtime.SourceClusters;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorStore;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * StartMirrorTopics, StopMirrorTopics (failover), PauseMirrorTopics and ResumeMirrorTopics: they set each topic's
 * desired state; the partition leaders' {@link MirrorManager}s carry it out. Start creates the destination topic
 * with the source topic's ID, partition count and configs (minus local-only ones). Stop answers once every
 * partition is STOPPED (writable), or says failover is still in progress after a bound.
 */
public final class MirrorTopicHandlers implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorTopicHandlers.class);
    private static final int SOURCE_TIMEOUT_MS = MirrorRuntime.SOURCE_TIMEOUT_MS;
    private static final long STOP_WAIT_MS = 30_000;

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final MirrorTopicStarter starter;
    private final BrokerAuthorization authorization;
    /**
     * Stop, pause and resume: ZooKeeper reads and writes only, one at a time, off the request threads. Never behind
     * a start, which may wait on an unreachable source for {@value #SOURCE_TIMEOUT_MS} ms per call (issue 25, point
     * 3): a failover must not wait for the source it is failing over from.
     */
    private final ExecutorService adminThread = daemonThread("twinlog-mirror-admin");
    /**
     * Starts, one at a time per mirror: they read the source's topics and configs before they write, so one mirror's
     * unreachable source holds only that mirror's later starts (a thread named {@code twinlog-mirror-start-<mirror>}
     * while it runs; none left for a mirror idle 10 s).
     */
    private final PerKeyExecutor startThreads = new PerKeyExecutor("twinlog-mirror-start", 10_000);

    private static ExecutorService daemonThread(String name) {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    public MirrorTopicHandlers(MirrorStore store, MetadataWatcher metadata, MirrorTopicStarter starter,
                               BrokerAuthorization authorization) {
        this.store = store;
        this.authorization = authorization;
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
                (ctx, req, deadline) -> onThread(startThreads.forKey(req.mirrorName()),
                        MirrorApi.START_MIRROR_TOPICS, deadline, () -> start(ctx, new TopicsRequest(req.mirrorName(),
                                req.topics(), req.patterns(), req.excludePatterns())), answer -> answer));
        MirrorApiRegistration.addAsync(registry, MirrorApi.STOP_MIRROR_TOPICS, StopMirrorTopicsRequestData::new,
                (ctx, req, deadline) -> setDesired(MirrorApi.STOP_MIRROR_TOPICS, ctx,
                        new TopicsRequest(req.mirrorName(), req.topics(), req.patterns(), req.excludePatterns()),
                        deadline, DesiredMirrorState.STOPPED));
        MirrorApiRegistration.addAsync(registry, MirrorApi.PAUSE_MIRROR_TOPICS, PauseMirrorTopicsRequestData::new,
                (ctx, req, deadline) -> setDesired(MirrorApi.PAUSE_MIRROR_TOPICS, ctx,
                        new TopicsRequest(req.mirrorName(), req.topics(), req.patterns(), req.excludePatterns()),
                        deadline, DesiredMirrorState.PAUSED));
        MirrorApiRegistration.addAsync(registry, MirrorApi.RESUME_MIRROR_TOPICS, ResumeMirrorTopicsRequestData::new,
                (ctx, req, deadline) -> setDesired(MirrorApi.RESUME_MIRROR_TOPICS, ctx,
                        new TopicsRequest(req.mirrorName(), req.topics(), req.patterns(), req.excludePatterns()),
                        deadline, DesiredMirrorState.MIRRORING));
    }

    /**
     * A request of one of the four topic APIs: each has its own generated class, all of this one shape
     * ({@code excludePatterns} is empty but for StartMirrorTopics).
     */
    private record TopicsRequest(String mirrorName, List<String> topics, List<String> patterns,
                                 List<String> excludePatterns) {
    }

    /**
     * Runs {@code work} on {@code thread}; a failure becomes the API's error answer (logged with its stack trace),
     * wrapped by {@code asResult}. A request the thread takes after its {@code deadline} (the client's default
     * request timeout: these APIs carry none) is answered REQUEST_TIMED_OUT and not executed, as the other admin
     * requests (decision 60): a start queued behind starts waiting on their sources, or a stop behind a ZooKeeper
     * write that waits for a reconnection, must not take effect after its client was told it timed out.
     */
    private <T> CompletableFuture<T> onThread(Executor thread, MirrorApi api, AdminDeadline deadline,
                                              Callable<T> work, Function<ApiMessage, T> asResult) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Call<T> call = new Call<>(api, deadline, work, asResult, result);
        try {
            thread.execute(call);
        } catch (RejectedExecutionException e) {
            call.reject(e);
        }
        return result;
    }

    /** One API call on its thread; told when it will not run (the broker closing), so its client gets an answer. */
    private record Call<T>(MirrorApi api, AdminDeadline deadline, Callable<T> work, Function<ApiMessage, T> asResult,
                           CompletableFuture<T> result) implements PerKeyExecutor.Rejectable {
        @Override
        public void run() {
            try {
                Optional<ApiMessage> expired = MirrorApiRegistration.expiredAnswer(api, deadline);
                result.complete(expired.isPresent() ? asResult.apply(expired.get()) : work.call());
            } catch (Exception e) {
                log.error("{} failed", api.name, e);
                result.complete(asResult.apply(topLevel(api, Errors.forException(e).code(),
                        Failures.rootMessage(e))));
            }
        }

        @Override
        public void reject(Throwable why) {
            result.complete(asResult.apply(topLevel(api, Errors.BROKER_NOT_AVAILABLE.code(),
                    "The broker is shutting down")));
        }
    }

    /** What setting a desired state gives: the answer, or (a failover) the topics whose STOPPED to wait for. */
    private record Outcome(ApiMessage answer, Map<String, TopicResult> stopping) {
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

    private ApiMessage start(AuthorizableRequestContext ctx, TopicsRequest req) throws Exception {
        String name = req.mirrorName();
        if (!authorization.allowedOnMirror(ctx, AclOperation.ALTER, name)) {
            return topLevel(MirrorApi.START_MIRROR_TOPICS, MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code,
                    notAuthorized(name));
        }
        Optional<MirrorDefinition> def = store.get(name);
        if (def.isEmpty()) {
            return topLevel(MirrorApi.START_MIRROR_TOPICS, MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code,
                    "No cluster mirror named '" + name + "'");
        }
        List<String> patterns = req.patterns();
        List<String> excludes = req.excludePatterns();
        List<String> all = new ArrayList<>(patterns);
        all.addAll(excludes);
        Optional<String> bad = MirrorDefinition.validatePatterns(all);
        if (bad.isPresent()) {
            return topLevel(MirrorApi.START_MIRROR_TOPICS, Errors.INVALID_REGULAR_EXPRESSION.code(), bad.get());
        }
        Map<String, TopicResult> results = new LinkedHashMap<>();
        // the topics' desired-state versions before the source is contacted: a stop, pause or resume that comes
        // while this start waits on the source wins over it (MirrorTopicStarter refuses to write over it)
        Map<String, Integer> versions = new HashMap<>();
        for (String topic : req.topics()) {
            versions.put(topic, store.topicVersion(name, topic));
        }
        try (Admin source = SourceClusters.admin(def.get(), SOURCE_TIMEOUT_MS)) {
            Set<String> wanted = new LinkedHashSet<>(req.topics());
            if (!patterns.isEmpty()) {
                for (String t : source.listTopics().names().get(SOURCE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                    if (patterns.stream().anyMatch(p -> Pattern.matches(p, t))
                            && excludes.stream().noneMatch(p -> Pattern.matches(p, t))) {
                        wanted.add(t);
                    }
                }
            }
            Map<String, Integer> allowed = new LinkedHashMap<>();
            for (String topic : wanted) {
                Optional<TopicResult> denied = topicDenied(ctx, topic);
                if (denied.isPresent()) {
                    results.put(topic, denied.get());
                } else {
                    Integer version = versions.get(topic);
                    allowed.put(topic, version != null ? version : store.topicVersion(name, topic));
                }
            }
            results.putAll(starter.startTopics(name, allowed, source));
        } catch (Exception e) {
            return topLevel(MirrorApi.START_MIRROR_TOPICS, MirrorErrors.SOURCE_CLUSTER_UNREACHABLE.code,
                    "Could not read topics from the source " + def.get().sourceBootstrap() + ": " + Failures.rootMessage(e));
        }
        return topicsResponse(MirrorApi.START_MIRROR_TOPICS, results);
    }

    private CompletableFuture<ApiMessage> setDesired(MirrorApi api, AuthorizableRequestContext ctx, TopicsRequest req,
                                                     AdminDeadline deadline, DesiredMirrorState desired) {
        return onThread(adminThread, api, deadline, () -> setDesiredNow(api, ctx, req, desired),
                answer -> new Outcome(answer, null))
                .thenCompose(o -> o.stopping() == null ? CompletableFuture.completedFuture(o.answer())
                        : awaitStopped(api, o.stopping()));
    }

    /** Sets the desired state of the matching topics (on the admin thread). */
    private Outcome setDesiredNow(MirrorApi api, AuthorizableRequestContext ctx, TopicsRequest req,
                                  DesiredMirrorState desired) throws Exception {
        String name = req.mirrorName();
        if (!authorization.allowedOnMirror(ctx, AclOperation.ALTER, name)) {
            return new Outcome(topLevel(api, MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code,
                    notAuthorized(name)), null);
        }
        if (store.get(name).isEmpty()) {
            return new Outcome(topLevel(api, MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code, "No cluster mirror named '"
                    + name + "'"), null);
        }
        List<String> patterns = req.patterns();
        Optional<String> bad = MirrorDefinition.validatePatterns(patterns);
        if (bad.isPresent()) {
            return new Outcome(topLevel(api, Errors.INVALID_REGULAR_EXPRESSION.code(), bad.get()), null);
        }
        Map<String, DesiredMirrorState> mirrorTopics = store.topics(name);
        Set<String> wanted = new LinkedHashSet<>(req.topics());
        for (String t : mirrorTopics.keySet()) {
            if (patterns.stream().anyMatch(p -> Pattern.matches(p, t))) {
                wanted.add(t);
            }
        }
        Map<String, TopicResult> results = new LinkedHashMap<>();
        List<String> changing = new ArrayList<>();
        for (String topic : wanted) {
            DesiredMirrorState current = mirrorTopics.get(topic);
            Optional<TopicResult> denied = topicDenied(ctx, topic);
            if (denied.isPresent()) {
                results.put(topic, denied.get());
            } else if (current == null) {
                results.put(topic, new TopicResult(MirrorErrors.TOPIC_NOT_IN_CLUSTER_MIRROR.code, "Topic '" + topic
                        + "' is not mirrored by cluster mirror '" + name + "'"));
            } else if (desired == DesiredMirrorState.MIRRORING && current != DesiredMirrorState.PAUSED
                    && current != DesiredMirrorState.MIRRORING) {
                results.put(topic, new TopicResult(MirrorErrors.MIRROR_TOPIC_NOT_PAUSED.code, "Topic '" + topic
                        + "' is " + current + ", not paused; start it again to mirror it"));
            } else if (desired == DesiredMirrorState.PAUSED && current == DesiredMirrorState.STOPPED) {
                results.put(topic, new TopicResult(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED.code, "Topic '" + topic
                        + "' is stopped (failed over)"));
            } else {
                changing.add(topic);
                results.put(topic, TopicResult.OK);
            }
        }
        MirrorStore.TopicsWritten written = store.setTopics(name, changing, desired); // few ZooKeeper writes
        if (written.failure().isPresent()) {
            if (written.written().isEmpty()) {
                throw written.failure().get(); // nothing changed: the whole request failed
            }
            // some transactions committed: those topics are set, and their answer must say so
            Exception failure = written.failure().get();
            for (String topic : written.notWritten()) {
                results.put(topic, new TopicResult(Errors.forException(failure).code(), "Could not record topic '"
                        + topic + "' as " + desired + " (" + Failures.rootMessage(failure) + "); the other topics "
                        + "were set; run the command again for this one"));
            }
        }
        if (desired == DesiredMirrorState.STOPPED) {
            return new Outcome(null, results);
        }
        return new Outcome(topicsResponse(api, results), null);
    }

    /**
     * Failover answers when the topics are writable, or says it is still in progress: at once when a partition's
     * failover has gone FAILED (with that partition's reason), else after {@value #STOP_WAIT_MS} ms.
     */
    private CompletableFuture<ApiMessage> awaitStopped(MirrorApi api, Map<String, TopicResult> results) {
        List<String> stopping = new ArrayList<>();
        results.forEach((t, r) -> {
            if (r.code() == Errors.NONE.code()) {
                stopping.add(t);
            }
        });
        // tested on the metadata thread at every image until it holds: from the states the image has decoded, the
        // records themselves parsed only for a FAILED partition (a failover of 1,000 partitions makes hundreds of
        // images)
        return metadata.whenApplied("topics " + stopping + " stopped", image ->
                stopping.stream().allMatch(t -> allStopped(image, t))
                || stopping.stream().anyMatch(t -> failedFailover(image, t).isPresent()), STOP_WAIT_MS)
                .handle((image, error) -> {
                    // timed out: answer with what the latest image shows
                    reportUnfinished(stopping, results, error == null ? image : metadata.image());
                    return topicsResponse(api, results);
                });
    }

    private void reportUnfinished(List<String> stopping, Map<String, TopicResult> results, MetadataImage last) {
        for (String t : stopping) {
            Map<Integer, MirrorPartitionRecord> states = partitionStates(last, t);
            if (states.values().stream().allMatch(r -> r.state() == MirrorPartitionState.STOPPED)) {
                continue;
            }
            String why = failedFailover(last, t).map(reason -> ": " + reason)
                    .orElse(" (a partition leader may be down)");
            results.put(t, new TopicResult(Errors.REQUEST_TIMED_OUT.code(), "Failover of '" + t
                    + "' is still in progress" + why + "; it is retried, describe the mirror to follow it"));
        }
    }

    private static boolean allStopped(MetadataImage image, String topic) {
        return image.topic(topic).map(ti -> ti.partitions().keySet().stream().allMatch(p -> {
            MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(new TopicPartition(topic, p));
            return mp != null && mp.state() == MirrorPartitionState.STOPPED;
        })).orElse(true);
    }

    private static Map<Integer, MirrorPartitionRecord> partitionStates(MetadataImage image,
                                                                      String topic) {
        Map<Integer, MirrorPartitionRecord> out = new TreeMap<>();
        image.topic(topic).ifPresent(ti -> ti.partitions().keySet().forEach(p -> {
            MirrorImage.MirrorPartition mp = image.mirrors().partitions()
                    .get(new TopicPartition(topic, p));
            out.put(p, mp == null ? MirrorPartitionRecord.initial(-1) : MirrorPartitionRecord.fromJson(mp.json()));
        }));
        return out;
    }

    /** The reason of the first partition of {@code topic} whose failover went FAILED, if any. */
    private static Optional<String> failedFailover(MetadataImage image, String topic) {
        Optional<TopicImage> t = image.topic(topic);
        if (t.isEmpty()) {
            return Optional.empty();
        }
        for (Integer p : t.get().partitions().keySet()) {
            MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(new TopicPartition(topic, p));
            if (mp == null || mp.state() != MirrorPartitionState.FAILED) {
                continue;
            }
            MirrorPartitionRecord r = MirrorPartitionRecord.fromJson(mp.json());
            if (r.previousState() == MirrorPartitionState.STOPPING) {
                return Optional.of("partition " + p + ": " + r.lastError().orElse("failed"));
            }
        }
        return Optional.empty();
    }

    /** KIP-1279: starting, stopping, pausing or resuming a topic also needs ALTER_CONFIGS on the topic. */
    private Optional<TopicResult> topicDenied(AuthorizableRequestContext ctx, String topic) {
        if (authorization.allowed(ctx, AclOperation.ALTER_CONFIGS, ResourceType.TOPIC, topic)) {
            return Optional.empty();
        }
        return Optional.of(new TopicResult(Errors.TOPIC_AUTHORIZATION_FAILED.code(), "Not authorized: "
                + "ALTER_CONFIGS on topic '" + topic + "' is needed"));
    }

    private static String notAuthorized(String mirror) {
        return "Not authorized: ALTER on cluster mirror '" + mirror + "' is needed";
    }

    /**
     * The answer of a topic API: a result per topic, and the first topic's error (if any) at the top. Each of the
     * four APIs has its own generated response and result classes, all of one shape.
     */
    private static ApiMessage topicsResponse(MirrorApi api, Map<String, TopicResult> results) {
        short first = results.values().stream().map(TopicResult::code).filter(c -> c != 0).findFirst().orElse((short) 0);
        String firstMessage = results.values().stream().filter(r -> r.code() != 0).map(TopicResult::message)
                .findFirst().orElse(null);
        return switch (api) {
            case START_MIRROR_TOPICS -> new StartMirrorTopicsResponseData().setErrorCode(first)
                    .setErrorMessage(firstMessage).setTopics(topicResults(results, (t, r) ->
                            new StartMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            case STOP_MIRROR_TOPICS -> new StopMirrorTopicsResponseData().setErrorCode(first)
                    .setErrorMessage(firstMessage).setTopics(topicResults(results, (t, r) ->
                            new StopMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            case PAUSE_MIRROR_TOPICS -> new PauseMirrorTopicsResponseData().setErrorCode(first)
                    .setErrorMessage(firstMessage).setTopics(topicResults(results, (t, r) ->
                            new PauseMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            case RESUME_MIRROR_TOPICS -> new ResumeMirrorTopicsResponseData().setErrorCode(first)
                    .setErrorMessage(firstMessage).setTopics(topicResults(results, (t, r) ->
                            new ResumeMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            default -> throw new IllegalArgumentException(api.name + " is not a topic API");
        };
    }

    private static <R> List<R> topicResults(Map<String, TopicResult> results, BiFunction<String, TopicResult, R> result) {
        List<R> out = new ArrayList<>();
        results.forEach((t, r) -> out.add(result.apply(t, r)));
        return out;
    }

    /** A request-level error answer: no topic results. */
    private static ApiMessage topLevel(MirrorApi api, short code, String message) {
        return api.errorResponse(code, message);
    }

}
