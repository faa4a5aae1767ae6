package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.AlterClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirror;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorConfig;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorGroup;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorPartition;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData.LastMirroredEpochsTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsPartitionResult;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsTopicResult;
import io.twinlog.clients.mirror.message.ListClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData.ListedMirror;
import io.twinlog.common.Failures;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.MirrorTopicConfigs;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.fetcher.SourceChannels;
import io.twinlog.mirror.runtime.SourceClusters;
import io.twinlog.mirror.store.GroupSyncRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorStore;
import io.twinlog.mirror.store.MirrorTruncation;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ApiMessage;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Handlers of the cluster-mirror definition APIs (create, delete, list, describe), answered by any broker from
 * the definitions in ZooKeeper. Operating errors get their own codes ({@link MirrorErrors}) and a message;
 * credentials given at creation are never sent back. They read ZooKeeper (and create asks the source for its cluster
 * ID), so they run on this broker's mirror API threads, never on a request thread.
 */
public final class MirrorApiHandlers implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorApiHandlers.class);
    private static final int SOURCE_TIMEOUT_MS = 10_000;
    /** Two: a create waiting on an unreachable source does not hold a describe behind it. */
    private static final int API_THREADS = 2;

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final ExecutorService apiThreads;
    private final BrokerAuthorization authorization;

    public MirrorApiHandlers(MirrorStore store, MetadataWatcher metadata, BrokerAuthorization authorization,
                             int brokerId) {
        this.store = store;
        this.authorization = authorization;
        this.metadata = metadata;
        AtomicInteger count = new AtomicInteger();
        this.apiThreads = Executors.newFixedThreadPool(API_THREADS, r -> {
            Thread t = new Thread(r, "twinlog-mirror-api-" + brokerId + "-" + count.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
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
        String name = req.mirrorName();
        if (!authorization.allowedOnMirror(ctx, AclOperation.CREATE, name)) {
            return denied(MirrorApi.CREATE_CLUSTER_MIRROR, AclOperation.CREATE, name);
        }
        Map<String, String> configs = new LinkedHashMap<>();
        req.configs().forEach(c -> configs.put(c.name(), c.value()));
        Optional<String> invalid = MirrorDefinition.validateName(name);
        if (invalid.isPresent()) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, MirrorErrors.INVALID_CLUSTER_MIRROR_NAME.code, invalid.get());
        }
        Optional<ApiMessage> aclSyncDenied = aclSyncDenied(ctx, MirrorApi.CREATE_CLUSTER_MIRROR, configs.keySet());
        if (aclSyncDenied.isPresent()) {
            return aclSyncDenied.get();
        }
        String bootstrap = configs.get(MirrorDefinition.BOOTSTRAP_SERVERS);
        if (bootstrap == null || bootstrap.isBlank()) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, Errors.INVALID_CONFIG.code(),
                    "The mirror needs the source's bootstrap.servers");
        }
        MirrorDefinition draft = new MirrorDefinition(name, configs, Optional.empty(), MirrorDefinition.State.ACTIVE,
                Optional.empty());
        Optional<String> badRegex = MirrorDefinition.validatePatterns(draft.allPatterns());
        if (badRegex.isPresent()) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, Errors.INVALID_REGULAR_EXPRESSION.code(), badRegex.get());
        }
        Optional<String> badSetting = draft.validateSettings();
        if (badSetting.isPresent()) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, Errors.INVALID_CONFIG.code(), badSetting.get());
        }
        Optional<String> badClientConfigs = SourceChannels.validate(draft.sourceClientConfigs());
        if (badClientConfigs.isPresent()) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, Errors.INVALID_CONFIG.code(), badClientConfigs.get());
        }
        if (store.exists(name)) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, MirrorErrors.CLUSTER_MIRROR_ALREADY_EXISTS.code,
                    "Cluster mirror '" + name + "' already exists");
        }
        MirrorDefinition definition = draft;
        try {
            definition = draft.withSourceClusterId(SourceClusters.clusterId(draft, SOURCE_TIMEOUT_MS));
        } catch (Exception e) {
            // The mirror may be set up before its source is reachable; the ID is recorded at first contact.
            log.info("Cluster mirror {}: source {} not reachable at creation ({}); its cluster ID will be recorded "
                    + "at first contact", name, bootstrap, e.toString());
            definition = draft.withState(MirrorDefinition.State.ACTIVE,
                    Optional.of("Source not reachable yet: " + Failures.rootMessage(e)));
        }
        try {
            store.create(definition);
        } catch (MirrorStore.MirrorExistsException e) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, MirrorErrors.CLUSTER_MIRROR_ALREADY_EXISTS.code, e.getMessage());
        }
        return new CreateClusterMirrorResponseData();
    }

    /**
     * Changes a mirror's configs (null value: remove the key). The same rules as at creation apply; the brokers pick
     * the change up at their next step (a new source address restarts the mirror's fetcher).
     */
    private ApiMessage alter(AuthorizableRequestContext ctx, AlterClusterMirrorRequestData req) throws Exception {
        String name = req.mirrorName();
        // KIP-1279: a mirror's configs are its config resource, changed with ALTER_CONFIGS on the mirror
        if (!authorization.allowedOnMirror(ctx, AclOperation.ALTER_CONFIGS, name)) {
            return denied(MirrorApi.ALTER_CLUSTER_MIRROR, AclOperation.ALTER_CONFIGS, name);
        }
        List<String> changed = req.configs().stream().map(AlterClusterMirrorRequestData.AlterableMirrorConfig::name)
                .toList();
        Optional<ApiMessage> aclSyncDenied = aclSyncDenied(ctx, MirrorApi.ALTER_CLUSTER_MIRROR, changed);
        if (aclSyncDenied.isPresent()) {
            return aclSyncDenied.get();
        }
        for (int attempt = 0; attempt < 5; attempt++) {
            Optional<MirrorDefinition> current;
            try {
                current = store.get(name);
            } catch (MirrorStore.UnreadableMirrorException e) {
                return error(MirrorApi.ALTER_CLUSTER_MIRROR, Errors.INVALID_CONFIG.code(), e.getMessage());
            }
            if (current.isEmpty()) {
                return error(MirrorApi.ALTER_CLUSTER_MIRROR, MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code,
                        "No cluster mirror named '" + name + "'");
            }
            Map<String, String> configs = new TreeMap<>(current.get().configs());
            for (AlterClusterMirrorRequestData.AlterableMirrorConfig c : req.configs()) {
                if (c.value() == null) {
                    configs.remove(c.name());
                } else {
                    configs.put(c.name(), c.value());
                }
            }
            String bootstrap = configs.get(MirrorDefinition.BOOTSTRAP_SERVERS);
            if (bootstrap == null || bootstrap.isBlank()) {
                return error(MirrorApi.ALTER_CLUSTER_MIRROR, Errors.INVALID_CONFIG.code(),
                        "The mirror needs the source's bootstrap.servers");
            }
            MirrorDefinition next = new MirrorDefinition(name, configs, current.get().sourceClusterId(),
                    current.get().state(), current.get().stateReason());
            Optional<String> badRegex = MirrorDefinition.validatePatterns(next.allPatterns());
            if (badRegex.isPresent()) {
                return error(MirrorApi.ALTER_CLUSTER_MIRROR, Errors.INVALID_REGULAR_EXPRESSION.code(), badRegex.get());
            }
            Optional<String> badSetting = next.validateSettings();
            if (badSetting.isPresent()) {
                return error(MirrorApi.ALTER_CLUSTER_MIRROR, Errors.INVALID_CONFIG.code(), badSetting.get());
            }
            Optional<String> badClientConfigs = SourceChannels.validate(next.sourceClientConfigs());
            if (badClientConfigs.isPresent()) {
                return error(MirrorApi.ALTER_CLUSTER_MIRROR, Errors.INVALID_CONFIG.code(), badClientConfigs.get());
            }
            if (store.update(current.get(), next)) {
                log.info("Cluster mirror {}: configs changed to {}", name, redacted(configs));
                return new AlterClusterMirrorResponseData();
            }
        }
        return error(MirrorApi.ALTER_CLUSTER_MIRROR, Errors.CONCURRENT_TRANSACTIONS.code(),
                "The mirror changed concurrently; retry");
    }

    private static Map<String, String> redacted(Map<String, String> configs) {
        Map<String, String> out = new TreeMap<>();
        configs.forEach((k, v) -> out.put(k, MirrorDefinition.isSensitive(k) ? "[hidden]" : v));
        return out;
    }

    private ApiMessage delete(AuthorizableRequestContext ctx, DeleteClusterMirrorRequestData req) throws Exception {
        String name = req.mirrorName();
        if (!authorization.allowedOnMirror(ctx, AclOperation.DELETE, name)) {
            return denied(MirrorApi.DELETE_CLUSTER_MIRROR, AclOperation.DELETE, name);
        }
        if (!store.exists(name)) {
            return error(MirrorApi.DELETE_CLUSTER_MIRROR, MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code,
                    "No cluster mirror named '" + name + "'");
        }
        List<String> active = new ArrayList<>();
        store.topics(name).forEach((topic, desired) -> {
            if (desired != DesiredMirrorState.STOPPED) {
                active.add(topic);
            }
        });
        if (!active.isEmpty()) {
            return error(MirrorApi.DELETE_CLUSTER_MIRROR, MirrorErrors.CLUSTER_MIRROR_NOT_EMPTY.code,
                    "Cluster mirror '" + name + "' still mirrors " + active + "; stop them first");
        }
        store.delete(name);
        return new DeleteClusterMirrorResponseData();
    }

    private ApiMessage list(AuthorizableRequestContext ctx, ListClusterMirrorsRequestData req) throws Exception {
        ListClusterMirrorsResponseData response = new ListClusterMirrorsResponseData();
        for (MirrorDefinition m : store.list()) {
            if (!authorization.allowedOnMirror(ctx, AclOperation.DESCRIBE, m.name())) {
                continue; // KIP-1279: listed only with DESCRIBE on the mirror
            }
            Map<String, DesiredMirrorState> topics = store.topics(m.name());
            response.mirrors().add(new ListedMirror().setMirrorName(m.name()).setSourceBootstrap(m.sourceBootstrap())
                    .setSourceClusterId(m.sourceClusterId().orElse(null)).setState(m.state().name())
                    .setTopicCount(topics.size())
                    .setTopicNames(req.includeTopicNames() ? new ArrayList<>(topics.keySet()) : new ArrayList<>()));
        }
        return response;
    }

    private ApiMessage describe(AuthorizableRequestContext ctx, DescribeClusterMirrorsRequestData req)
            throws Exception {
        List<String> names = new ArrayList<>(req.mirrorNames());
        if (names.isEmpty()) {
            // all mirrors: those the principal may describe
            store.list().stream().map(MirrorDefinition::name)
                    .filter(name -> authorization.allowedOnMirror(ctx, AclOperation.DESCRIBE, name))
                    .forEach(names::add);
        }
        DescribeClusterMirrorsResponseData response = new DescribeClusterMirrorsResponseData();
        for (String name : names) {
            DescribedMirror s = new DescribedMirror().setMirrorName(name);
            response.mirrors().add(s);
            boolean allowed = authorization.allowedOnMirror(ctx, AclOperation.DESCRIBE, name);
            Optional<MirrorDefinition> m = Optional.empty();
            short code = MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code;
            String message = "Not authorized to describe cluster mirror '" + name + "'";
            if (allowed) {
                try {
                    m = store.get(name);
                    code = MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code;
                    message = "No cluster mirror named '" + name + "'";
                } catch (MirrorStore.UnreadableMirrorException e) {
                    code = Errors.INVALID_CONFIG.code();
                    message = e.getMessage();
                }
            }
            if (m.isEmpty()) {
                // state and source_bootstrap are not nullable: empty, as every array
                s.setErrorCode(code).setErrorMessage(message).setState("").setStateReason(null)
                        .setSourceBootstrap("").setSourceClusterId(null);
                continue;
            }
            MirrorDefinition d = m.get();
            s.setErrorCode(Errors.NONE.code()).setErrorMessage(null).setState(d.state().name())
                    .setStateReason(d.stateReason().orElse(null)).setSourceBootstrap(d.sourceBootstrap())
                    .setSourceClusterId(d.sourceClusterId().orElse(null));
            d.configs().forEach((k, v) -> {
                boolean sensitive = MirrorDefinition.isSensitive(k);
                s.configs().add(new DescribedMirrorConfig().setName(k).setValue(sensitive ? null : v)
                        .setSensitive(sensitive));
            });
            s.setIncludePatterns(new ArrayList<>(d.includePatterns()));
            s.setExcludePatterns(new ArrayList<>(d.excludePatterns()));
            Map<String, DesiredMirrorState> desired = store.topics(name);
            Map<TopicPartition, MirrorProgress> progress = progress(desired.keySet());
            for (Map.Entry<String, DesiredMirrorState> t : desired.entrySet()) {
                Optional<TopicImage> ti = metadata.image().topic(t.getKey());
                DescribedMirrorTopic ts = new DescribedMirrorTopic().setTopicName(t.getKey())
                        .setTopicId(ti.map(TopicImage::topicId).orElse(Uuid.ZERO_UUID))
                        .setDesiredState(t.getValue().name());
                if (ti.isPresent()) {
                    for (PartitionImage p : ti.get().partitions().values()) {
                        ts.partitions().add(describePartition(new TopicPartition(t.getKey(), p.partition()), p,
                                progress));
                    }
                }
                s.topics().add(ts);
            }
            s.setGroups(describeGroups(name));
        }
        return response;
    }

    /** The groups the mirror syncs, with their last sync, as the controller broker's group offset sync recorded it. */
    private List<DescribedMirrorGroup> describeGroups(String name) throws Exception {
        List<DescribedMirrorGroup> groups = new ArrayList<>();
        for (GroupSyncRecord r : store.groupSyncs(name).values()) {
            groups.add(new DescribedMirrorGroup().setGroupId(r.groupId()).setLastSyncTimeMs(r.lastSyncMs())
                    .setOffsetsSynced(r.offsetsSynced()).setOffsetsClamped(r.offsetsClamped())
                    .setGroupType(r.type().name()));
        }
        return groups;
    }

    /**
     * One partition's state and progress, as its destination leader last recorded them: the state record, and the
     * source high watermark and log end under {@code /mirror_progress} (at every state change, and at most every
     * 5 s while they move), so every broker answers the same, whichever replica it holds or how far it has got.
     */
    private DescribedMirrorPartition describePartition(TopicPartition tp, PartitionImage image,
                                                       Map<TopicPartition, MirrorProgress> recorded) {
        MirrorImage.MirrorPartition mp = metadata.image().mirrors().partitions().get(tp);
        MirrorPartitionRecord rec = mp == null
                ? MirrorPartitionRecord.initial(-1)
                : MirrorPartitionRecord.fromJson(mp.json());
        MirrorProgress progress = recorded.getOrDefault(tp, rec.progress());
        MirrorTruncation truncation = rec.truncation();
        DescribedMirrorPartition ps = new DescribedMirrorPartition().setPartitionIndex(tp.partition())
                .setState(rec.state().name()).setSourceLogEndOffset(progress.sourceHighWatermark())
                .setDestinationLogEndOffset(progress.destinationLogEndOffset()).setLag(progress.lag())
                .setRetryAttempt((short) rec.retryAttempt()).setLastError(rec.lastError().orElse(null))
                .setLastMirroredEpoch(rec.lastMirroredEpoch()).setLastMirroredOffset(rec.lastMirroredOffset())
                .setOutOfSyncReplicas(image.replicas().stream().filter(r -> !image.isr().contains(r))
                        .collect(Collectors.toCollection(ArrayList::new)))
                .setTruncationOffset(truncation.isNone() ? -1L : truncation.latest().offset());
        List<Integer> pending = new ArrayList<>();
        if (truncation.pending()) {
            // the replicas LOG_TRUNCATION waits for: the ISR, or every replica with the topic's flag (decision 38)
            boolean everyReplica = MirrorTopicConfigs.supportsUncleanLeaderElection(
                    metadata.image().topicConfig(tp.topic()));
            Map<Integer, Long> applied = metadata.image().mirrors().truncationsApplied(tp);
            for (int r : everyReplica ? image.replicas() : image.isr()) {
                if (!Long.valueOf(truncation.latest().id()).equals(applied.get(r))) {
                    pending.add(r);
                }
            }
        }
        return ps.setTruncationPendingReplicas(pending).setTruncatedOffsets(truncation.removed())
                .setConsistentFromOffset(truncation.consistentFrom());
    }

    /**
     * The progress the leaders of these topics' partitions last recorded under {@code /mirror_progress}, in a few
     * ZooKeeper round trips; a partition without a node (or all, if the read fails) answers with its state record's.
     */
    private Map<TopicPartition, MirrorProgress> progress(Collection<String> topics) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (String topic : topics) {
            metadata.image().topic(topic).ifPresent(t -> t.partitions().keySet()
                    .forEach(p -> partitions.add(new TopicPartition(topic, p))));
        }
        try {
            return store.progressAll(partitions);
        } catch (Exception e) {
            log.warn("Could not read the progress of {} mirror partitions; answering with their state records'",
                    partitions.size(), e);
            return Map.of();
        }
    }

    /**
     * LastMirroredEpochs: for each asked partition, the last mirrored epoch and offset this cluster recorded when it
     * failed the partition over — only from mirrors whose source is the requesting cluster (the failback relation),
     * or from any mirror when the requester does not say who it is. -1/-1 when there is none.
     */
    private ApiMessage lastMirroredEpochs(AuthorizableRequestContext ctx, LastMirroredEpochsRequestData req)
            throws Exception {
        String requester = req.requesterClusterId();
        Map<String, String> mirrorSource = new HashMap<>();
        for (MirrorDefinition d : store.list()) {
            mirrorSource.put(d.name(), d.sourceClusterId().orElse(""));
        }
        MirrorImage mirrors = metadata.image().mirrors();
        LastMirroredEpochsResponseData response = new LastMirroredEpochsResponseData();
        for (LastMirroredEpochsTopic t : req.topics()) {
            String topic = t.topicName();
            LastMirroredEpochsTopicResult tr = new LastMirroredEpochsTopicResult().setTopicName(topic)
                    .setTopicId(t.topicId());
            response.topics().add(tr);
            MirrorImage.MirrorTopic mt = mirrors.topics().get(topic);
            boolean related = mt != null && (requester == null || requester.equals(mirrorSource.get(mt.mirror())));
            // KIP-1279: the failback lookup needs DESCRIBE on the mirror that recorded the partitions; a topic no
            // mirror of the requester's recorded is answered -1/-1 alike for everyone (nothing to reveal, and a
            // chained mirror's unrelated record must not hold a failback)
            boolean allowed = !related || authorization.allowedOnMirror(ctx, AclOperation.DESCRIBE, mt.mirror());
            for (int partition : t.partitions()) {
                short error = allowed ? Errors.NONE.code() : MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code;
                int lme = -1;
                long lmo = -1L;
                MirrorImage.MirrorPartition mp = related && allowed
                        ? mirrors.partitions().get(new TopicPartition(topic, partition)) : null;
                if (mp != null) {
                    MirrorPartitionRecord rec =
                            MirrorPartitionRecord.fromJson(mp.json());
                    Optional<MirrorErrors> notFailedOver = notFailedOver(rec);
                    if (notFailedOver.isPresent()) {
                        error = notFailedOver.get().code;
                    } else {
                        lme = rec.lastMirroredEpoch();
                        lmo = rec.lastMirroredOffset();
                    }
                }
                tr.partitions().add(new LastMirroredEpochsPartitionResult().setPartitionIndex(partition)
                        .setErrorCode(error).setLastMirroredEpoch(lme).setLastMirroredOffset(lmo));
            }
        }
        return response;
    }

    /**
     * Why a partition's record cannot answer what was last mirrored, if it cannot: its last mirrored point is
     * recorded when its failover completes (STOPPED), so a record still mirroring, paused or failing over has no
     * answer yet, and -1/-1 from it would read as "nothing mirrored" and cut the requester's failback to 0 (issue 25,
     * point 2). The requester takes the error as a doubt: it waits, cuts nothing and asks again. This broker's image
     * may also lag ZooKeeper (cut off from it): a record not yet STOPPED there is answered the same way.
     */
    static Optional<MirrorErrors> notFailedOver(MirrorPartitionRecord rec) {
        MirrorPartitionState state = rec.state() == MirrorPartitionState.FAILED ? rec.previousState() : rec.state();
        return switch (state) {
            case STOPPED -> Optional.empty();
            case STOPPING -> Optional.of(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED);
            default -> Optional.of(MirrorErrors.INVALID_MIRROR_STATE);
        };
    }

    /**
     * ACL sync creates ACLs on this cluster with the broker's own rights, so setting or changing
     * {@code mirror.acls.include} needs what creating ACLs needs: ALTER on the cluster (decision 50). Without it,
     * CREATE on a mirror would let a principal copy any ACL from a cluster it controls.
     */
    private Optional<ApiMessage> aclSyncDenied(AuthorizableRequestContext ctx, MirrorApi api, Collection<String> keys) {
        if (!keys.contains(MirrorDefinition.ACLS_INCLUDE)
                || authorization.allowedOnCluster(ctx, AclOperation.ALTER)) {
            return Optional.empty();
        }
        return Optional.of(error(api, Errors.CLUSTER_AUTHORIZATION_FAILED.code(), "Not authorized: "
                + MirrorDefinition.ACLS_INCLUDE + " creates ACLs on this cluster, which needs ALTER on the cluster"));
    }

    private static ApiMessage denied(MirrorApi api, AclOperation operation, String mirror) {
        return error(api, MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code, "Not authorized: " + operation
                + " on cluster mirror '" + mirror + "' is needed");
    }

    private static ApiMessage error(MirrorApi api, short code, String message) {
        return api.errorResponse(code, message);
    }

}
