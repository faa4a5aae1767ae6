package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData.AlterableMirrorConfig;
import io.twinlog.clients.mirror.message.AlterClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirror;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.SkippedMirrorTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData;
import io.twinlog.common.Failures;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.runtime.SourceClusters;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorStore;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Handlers of the cluster-mirror definition APIs (create, alter, delete, list, describe) and of LastMirroredEpochs,
 * answered by any broker from the definitions in ZooKeeper. Each handler is the flow of its request: ask
 * {@link MirrorRequestAuthorizer} and {@link MirrorRequestValidator} in the order that decides which error wins, read
 * and write {@link MirrorStore}, read one {@link MirrorMetadataView}, build the answer ({@link MirrorDescriptions},
 * {@link LastMirroredEpochsAnswer}). Operating errors get their own codes ({@link MirrorErrors}) and a message;
 * credentials given at creation are never sent back. They read ZooKeeper (and create asks the source for its
 * cluster ID), so they run on this broker's mirror API threads, never on a request thread.
 */
public final class MirrorApiHandlers implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorApiHandlers.class);
    private static final int SOURCE_TIMEOUT_MS = 10_000;
    /** Two: a create waiting on an unreachable source does not hold a describe behind it. */
    private static final int API_THREADS = 2;
    /** Alters read, change and write the definition version-checked; a few lost races, then the client retries. */
    private static final int ALTER_ATTEMPTS = 5;

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final ExecutorService apiThreads;
    private final MirrorRequestAuthorizer authorizer;
    private final Time time;

    /** @param time the clock describe's RPO is measured on (the destination's, as the mirrored-up-to times) */
    public MirrorApiHandlers(MirrorStore store, MetadataWatcher metadata, BrokerAuthorization authorization,
                             int brokerId, Time time) {
        this.store = store;
        this.time = time;
        this.authorizer = MirrorRequestAuthorizer.of(authorization);
        this.metadata = metadata;
        AtomicInteger count = new AtomicInteger();
        this.apiThreads = Executors.newFixedThreadPool(API_THREADS, r -> {
            Thread t = new Thread(r, "twinlog-mirror-api-" + brokerId + "-" + count.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
    }

    /** The mirror API threads, for the other read-only mirror handlers (the failover preview reads logs). */
    public Executor apiThreads() {
        return apiThreads;
    }

    @Override
    public void close() {
        apiThreads.shutdownNow();
    }

    /** Registers the handlers in the broker's API registry. */
    public void register(ApiRegistry.Builder registry) {
        MirrorApiRegistration.add(registry, MirrorApi.CREATE_CLUSTER_MIRROR, CreateClusterMirrorRequestData::new,
                apiThreads, this::create);
        MirrorApiRegistration.add(registry, MirrorApi.DELETE_CLUSTER_MIRROR, DeleteClusterMirrorRequestData::new,
                apiThreads, this::delete);
        MirrorApiRegistration.add(registry, MirrorApi.ALTER_CLUSTER_MIRROR, AlterClusterMirrorRequestData::new,
                apiThreads, this::alter);
        MirrorApiRegistration.add(registry, MirrorApi.LIST_CLUSTER_MIRRORS, ListClusterMirrorsRequestData::new,
                apiThreads, this::list);
        MirrorApiRegistration.add(registry, MirrorApi.DESCRIBE_CLUSTER_MIRRORS, DescribeClusterMirrorsRequestData::new,
                apiThreads, this::describe);
        MirrorApiRegistration.add(registry, MirrorApi.LAST_MIRRORED_EPOCHS, LastMirroredEpochsRequestData::new,
                apiThreads, this::lastMirroredEpochs);
    }

    private ApiMessage create(AuthorizableRequestContext ctx, CreateClusterMirrorRequestData req) throws Exception {
        MirrorApi api = MirrorApi.CREATE_CLUSTER_MIRROR;
        String name = req.mirrorName();
        Map<String, String> configs = new LinkedHashMap<>();
        req.configs().forEach(c -> configs.put(c.name(), c.value()));
        Optional<MirrorApiError> refused = authorizer.mirrorDenied(ctx, AclOperation.CREATE, name)
                .or(() -> MirrorRequestValidator.name(name))
                .or(() -> authorizer.aclSyncDenied(ctx, configs.keySet()))
                .or(() -> MirrorRequestValidator.sourceBootstrap(configs));
        if (refused.isPresent()) {
            return refused.get().answer(api);
        }
        MirrorDefinition draft = new MirrorDefinition(name, configs, Optional.empty(), MirrorDefinition.State.ACTIVE,
                Optional.empty());
        refused = MirrorRequestValidator.definition(draft);
        if (refused.isPresent()) {
            return refused.get().answer(api);
        }
        if (store.exists(name)) {
            return alreadyExists(api, "Cluster mirror '" + name + "' already exists");
        }
        MirrorDefinition definition;
        try {
            definition = draft.withSourceClusterId(SourceClusters.clusterId(draft, SOURCE_TIMEOUT_MS));
        } catch (Exception e) {
            // broad: whatever keeps the source from answering (network, TLS, SASL, a timeout), the mirror may be set
            // up before its source is reachable; the ID is recorded at first contact and the reason is its state's
            log.info("Cluster mirror {}: source {} not reachable at creation ({}); its cluster ID will be recorded "
                    + "at first contact", name, draft.sourceBootstrap(), e.toString());
            definition = draft.withState(MirrorDefinition.State.ACTIVE,
                    Optional.of("Source not reachable yet: " + Failures.rootMessage(e)));
        }
        try {
            store.create(definition);
        } catch (MirrorStore.MirrorExistsException e) {
            return alreadyExists(api, e.getMessage());
        }
        return new CreateClusterMirrorResponseData();
    }

    private static ApiMessage alreadyExists(MirrorApi api, String message) {
        return MirrorApiError.of(MirrorErrors.CLUSTER_MIRROR_ALREADY_EXISTS, message).answer(api);
    }

    /**
     * Changes a mirror's configs (null value: remove the key). The same rules as at creation apply; the brokers pick
     * the change up at their next step (a new source address restarts the mirror's fetcher).
     */
    private ApiMessage alter(AuthorizableRequestContext ctx, AlterClusterMirrorRequestData req) throws Exception {
        MirrorApi api = MirrorApi.ALTER_CLUSTER_MIRROR;
        String name = req.mirrorName();
        List<String> changed = req.configs().stream().map(AlterableMirrorConfig::name).toList();
        // KIP-1279: a mirror's configs are its config resource, changed with ALTER_CONFIGS on the mirror
        Optional<MirrorApiError> refused = authorizer.mirrorDenied(ctx, AclOperation.ALTER_CONFIGS, name)
                .or(() -> authorizer.aclSyncDenied(ctx, changed));
        if (refused.isPresent()) {
            return refused.get().answer(api);
        }
        for (int attempt = 0; attempt < ALTER_ATTEMPTS; attempt++) {
            Optional<MirrorDefinition> current;
            try {
                current = store.get(name);
            } catch (MirrorStore.UnreadableMirrorException e) {
                return MirrorApiError.of(Errors.INVALID_CONFIG, e.getMessage()).answer(api);
            }
            if (current.isEmpty()) {
                return unknownMirror(api, name);
            }
            Map<String, String> configs = MirrorRequestValidator.altered(current.get().configs(), req.configs());
            MirrorDefinition next = new MirrorDefinition(name, configs, current.get().sourceClusterId(),
                    current.get().state(), current.get().stateReason());
            refused = MirrorRequestValidator.sourceBootstrap(configs)
                    .or(() -> MirrorRequestValidator.definition(next));
            if (refused.isPresent()) {
                return refused.get().answer(api);
            }
            if (!next.sameTopicNames(current.get())) {
                refused = MirrorRequestValidator.prefixChangeRefused(name, store.topics(name));
                if (refused.isPresent()) {
                    return refused.get().answer(api);
                }
            }
            if (store.update(current.get(), next)) {
                log.info("Cluster mirror {}: configs changed to {}", name, redacted(configs));
                return new AlterClusterMirrorResponseData();
            }
        }
        return MirrorApiError.of(Errors.CONCURRENT_TRANSACTIONS, "The mirror changed concurrently; retry").answer(api);
    }

    private static Map<String, String> redacted(Map<String, String> configs) {
        Map<String, String> out = new TreeMap<>();
        configs.forEach((k, v) -> out.put(k, MirrorDefinition.isSensitive(k) ? "[hidden]" : v));
        return out;
    }

    private static ApiMessage unknownMirror(MirrorApi api, String name) {
        return MirrorApiError.of(MirrorErrors.UNKNOWN_CLUSTER_MIRROR, "No cluster mirror named '" + name + "'")
                .answer(api);
    }

    private ApiMessage delete(AuthorizableRequestContext ctx, DeleteClusterMirrorRequestData req) throws Exception {
        MirrorApi api = MirrorApi.DELETE_CLUSTER_MIRROR;
        String name = req.mirrorName();
        Optional<MirrorApiError> denied = authorizer.mirrorDenied(ctx, AclOperation.DELETE, name);
        if (denied.isPresent()) {
            return denied.get().answer(api);
        }
        if (!store.exists(name)) {
            return unknownMirror(api, name);
        }
        List<String> active = new ArrayList<>();
        store.topics(name).forEach((topic, desired) -> {
            if (desired != DesiredMirrorState.STOPPED) {
                active.add(topic);
            }
        });
        if (!active.isEmpty()) {
            return MirrorApiError.of(MirrorErrors.CLUSTER_MIRROR_NOT_EMPTY, "Cluster mirror '" + name
                    + "' still mirrors " + active + "; stop them first").answer(api);
        }
        store.delete(name);
        return new DeleteClusterMirrorResponseData();
    }

    private ApiMessage list(AuthorizableRequestContext ctx, ListClusterMirrorsRequestData req) throws Exception {
        ListClusterMirrorsResponseData response = new ListClusterMirrorsResponseData();
        for (MirrorDefinition m : store.list()) {
            if (authorizer.mayDescribe(ctx, m.name())) { // KIP-1279: listed only with DESCRIBE on the mirror
                response.mirrors().add(MirrorDescriptions.listed(m, store.topics(m.name()), req.includeTopicNames()));
            }
        }
        return response;
    }

    private ApiMessage describe(AuthorizableRequestContext ctx, DescribeClusterMirrorsRequestData req)
            throws Exception {
        List<String> names = new ArrayList<>(req.mirrorNames());
        if (names.isEmpty()) {
            // all mirrors: those the principal may describe
            store.list().stream().map(MirrorDefinition::name).filter(name -> authorizer.mayDescribe(ctx, name))
                    .forEach(names::add);
        }
        DescribeClusterMirrorsResponseData response = new DescribeClusterMirrorsResponseData();
        for (String name : names) {
            Optional<MirrorApiError> denied = authorizer.describeDenied(ctx, name);
            if (denied.isPresent()) {
                response.mirrors().add(MirrorDescriptions.refused(name, denied.get()));
                continue;
            }
            Optional<MirrorDefinition> mirror;
            try {
                mirror = store.get(name);
            } catch (MirrorStore.UnreadableMirrorException e) {
                response.mirrors().add(MirrorDescriptions.refused(name,
                        MirrorApiError.of(Errors.INVALID_CONFIG, e.getMessage())));
                continue;
            }
            if (mirror.isEmpty()) {
                response.mirrors().add(MirrorDescriptions.refused(name, MirrorApiError.of(
                        MirrorErrors.UNKNOWN_CLUSTER_MIRROR, "No cluster mirror named '" + name + "'")));
                continue;
            }
            Map<String, DesiredMirrorState> desired = store.topics(name);
            MirrorMetadataView view = MirrorMetadataView.of(metadata.image());
            Map<TopicPartition, MirrorProgress> progress = progress(view.partitionsOf(desired.keySet()));
            DescribedMirror described = MirrorDescriptions.described(mirror.get(), desired, view, progress,
                    store.groupSyncs(name).values(), time.milliseconds());
            store.skippedTopics(name).forEach((topic, why) -> described.skippedTopics().add(
                    new SkippedMirrorTopic().setTopicName(topic).setReason(why)));
            response.mirrors().add(described);
        }
        return response;
    }

    /**
     * The progress the leaders of these partitions last recorded under {@code /mirror_progress}, in a few ZooKeeper
     * round trips; a partition without a node (or all, if the read fails) answers with its state record's.
     */
    private Map<TopicPartition, MirrorProgress> progress(Collection<TopicPartition> partitions) {
        try {
            return store.progressAll(partitions);
        } catch (Exception e) {
            // broad: progress is an extra over the state records, so any failure to read it (ZooKeeper, a corrupt
            // node) degrades the answer to the records' progress instead of failing the describe; logged in full
            log.warn("Could not read the progress of {} mirror partitions; answering with their state records'",
                    partitions.size(), e);
            return Map.of();
        }
    }

    /** LastMirroredEpochs, the failback lookup: see {@link LastMirroredEpochsAnswer}. */
    private ApiMessage lastMirroredEpochs(AuthorizableRequestContext ctx, LastMirroredEpochsRequestData req)
            throws Exception {
        Map<String, String> mirrorSources = new HashMap<>();
        for (MirrorDefinition d : store.list()) {
            mirrorSources.put(d.name(), d.sourceClusterId().orElse(""));
        }
        return LastMirroredEpochsAnswer.of(req, mirrorSources, MirrorMetadataView.of(metadata.image()),
                mirror -> authorizer.mayDescribe(ctx, mirror));
    }
}
