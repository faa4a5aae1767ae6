package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorMessages;
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
import org.apache.kafka.common.protocol.types.Struct;
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
        MirrorApiRegistration.add(registry, MirrorApi.CREATE_CLUSTER_MIRROR, apiThreads, this::create);
        MirrorApiRegistration.add(registry, MirrorApi.DELETE_CLUSTER_MIRROR, apiThreads, this::delete);
        MirrorApiRegistration.add(registry, MirrorApi.ALTER_CLUSTER_MIRROR, apiThreads, this::alter);
        MirrorApiRegistration.add(registry, MirrorApi.LIST_CLUSTER_MIRRORS, apiThreads, this::list);
        MirrorApiRegistration.add(registry, MirrorApi.DESCRIBE_CLUSTER_MIRRORS, apiThreads, this::describe);
        MirrorApiRegistration.add(registry, MirrorApi.LAST_MIRRORED_EPOCHS, apiThreads, this::lastMirroredEpochs);
    }

    private Struct create(AuthorizableRequestContext ctx, Struct req) throws Exception {
        String name = req.getString("mirror_name");
        if (!authorization.allowedOnMirror(ctx, AclOperation.CREATE, name)) {
            return denied(MirrorApi.CREATE_CLUSTER_MIRROR, AclOperation.CREATE, name);
        }
        Map<String, String> configs = new LinkedHashMap<>();
        for (Object o : req.getArray("configs")) {
            Struct c = (Struct) o;
            configs.put(c.getString("name"), c.getString("value"));
        }
        Optional<String> invalid = MirrorDefinition.validateName(name);
        if (invalid.isPresent()) {
            return error(MirrorApi.CREATE_CLUSTER_MIRROR, MirrorErrors.INVALID_CLUSTER_MIRROR_NAME.code, invalid.get());
        }
        Optional<Struct> aclSyncDenied = aclSyncDenied(ctx, MirrorApi.CREATE_CLUSTER_MIRROR, configs.keySet());
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
        return MirrorMessages.response(MirrorApi.CREATE_CLUSTER_MIRROR, Errors.NONE.code(), null);
    }

    /**
     * Changes a mirror's configs (null value: remove the key). The same rules as at creation apply; the brokers pick
     * the change up at their next step (a new source address restarts the mirror's fetcher).
     */
    private Struct alter(AuthorizableRequestContext ctx, Struct req) throws Exception {
        String name = req.getString("mirror_name");
        // KIP-1279: a mirror's configs are its config resource, changed with ALTER_CONFIGS on the mirror
        if (!authorization.allowedOnMirror(ctx, AclOperation.ALTER_CONFIGS, name)) {
            return denied(MirrorApi.ALTER_CLUSTER_MIRROR, AclOperation.ALTER_CONFIGS, name);
        }
        List<String> changed = new ArrayList<>();
        for (Object o : req.getArray("configs")) {
            changed.add(((Struct) o).getString("name"));
        }
        Optional<Struct> aclSyncDenied = aclSyncDenied(ctx, MirrorApi.ALTER_CLUSTER_MIRROR, changed);
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
            for (Object o : req.getArray("configs")) {
                Struct c = (Struct) o;
                if (c.getString("value") == null) {
                    configs.remove(c.getString("name"));
                } else {
                    configs.put(c.getString("name"), c.getString("value"));
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
                return MirrorMessages.response(MirrorApi.ALTER_CLUSTER_MIRROR, Errors.NONE.code(), null);
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

    private Struct delete(AuthorizableRequestContext ctx, Struct req) throws Exception {
        String name = req.getString("mirror_name");
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
        return MirrorMessages.response(MirrorApi.DELETE_CLUSTER_MIRROR, Errors.NONE.code(), null);
    }

    private Struct list(AuthorizableRequestContext ctx, Struct req) throws Exception {
        boolean includeTopics = (Boolean) req.get("include_topic_names");
        Struct response = MirrorMessages.response(MirrorApi.LIST_CLUSTER_MIRRORS, Errors.NONE.code(), null);
        List<Struct> mirrors = new ArrayList<>();
        for (MirrorDefinition m : store.list()) {
            if (!authorization.allowedOnMirror(ctx, AclOperation.DESCRIBE, m.name())) {
                continue; // KIP-1279: listed only with DESCRIBE on the mirror
            }
            Map<String, DesiredMirrorState> topics = store.topics(m.name());
            Struct s = MirrorMessages.element(response, "mirrors");
            s.set("mirror_name", m.name());
            s.set("source_bootstrap", m.sourceBootstrap());
            s.set("source_cluster_id", m.sourceClusterId().orElse(null));
            s.set("state", m.state().name());
            s.set("topic_count", topics.size());
            s.set("topic_names", includeTopics ? topics.keySet().toArray() : new Object[0]);
            mirrors.add(s);
        }
        response.set("mirrors", mirrors.toArray());
        return response;
    }

    private Struct describe(AuthorizableRequestContext ctx, Struct req) throws Exception {
        List<String> names = new ArrayList<>();
        for (Object o : req.getArray("mirror_names")) {
            names.add((String) o);
        }
        if (names.isEmpty()) {
            // all mirrors: those the principal may describe
            store.list().stream().map(MirrorDefinition::name)
                    .filter(name -> authorization.allowedOnMirror(ctx, AclOperation.DESCRIBE, name))
                    .forEach(names::add);
        }
        Struct response = MirrorMessages.response(MirrorApi.DESCRIBE_CLUSTER_MIRRORS, Errors.NONE.code(), null);
        List<Struct> mirrors = new ArrayList<>();
        for (String name : names) {
            Struct s = MirrorMessages.element(response, "mirrors");
            s.set("mirror_name", name);
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
                s.set("error_code", code);
                s.set("error_message", message);
                s.set("state", "");
                s.set("state_reason", null);
                s.set("source_bootstrap", "");
                s.set("source_cluster_id", null);
                s.set("configs", new Object[0]);
                s.set("include_patterns", new Object[0]);
                s.set("exclude_patterns", new Object[0]);
                s.set("topics", new Object[0]);
                s.set("groups", new Object[0]);
                mirrors.add(s);
                continue;
            }
            MirrorDefinition d = m.get();
            s.set("error_code", Errors.NONE.code());
            s.set("error_message", null);
            s.set("state", d.state().name());
            s.set("state_reason", d.stateReason().orElse(null));
            s.set("source_bootstrap", d.sourceBootstrap());
            s.set("source_cluster_id", d.sourceClusterId().orElse(null));
            List<Struct> configs = new ArrayList<>();
            d.configs().forEach((k, v) -> {
                Struct c = MirrorMessages.element(s, "configs");
                boolean sensitive = MirrorDefinition.isSensitive(k);
                c.set("name", k);
                c.set("value", sensitive ? null : v);
                c.set("sensitive", sensitive);
                configs.add(c);
            });
            s.set("configs", configs.toArray());
            s.set("include_patterns", d.includePatterns().toArray());
            s.set("exclude_patterns", d.excludePatterns().toArray());
            List<Struct> topics = new ArrayList<>();
            Map<String, DesiredMirrorState> desired = store.topics(name);
            Map<TopicPartition, MirrorProgress> progress = progress(desired.keySet());
            for (Map.Entry<String, DesiredMirrorState> t : desired.entrySet()) {
                Struct ts = MirrorMessages.element(s, "topics");
                ts.set("topic_name", t.getKey());
                Optional<TopicImage> ti = metadata.image().topic(t.getKey());
                ts.set("topic_id", ti.map(TopicImage::topicId)
                        .orElse(Uuid.ZERO_UUID));
                ts.set("desired_state", t.getValue().name());
                List<Struct> partitions = new ArrayList<>();
                if (ti.isPresent()) {
                    for (PartitionImage p : ti.get().partitions().values()) {
                        partitions.add(describePartition(ts, new TopicPartition(t.getKey(), p.partition()), p,
                                progress));
                    }
                }
                ts.set("partitions", partitions.toArray());
                topics.add(ts);
            }
            s.set("topics", topics.toArray());
            s.set("groups", describeGroups(s, name));
            mirrors.add(s);
        }
        response.set("mirrors", mirrors.toArray());
        return response;
    }

    /** The groups the mirror syncs, with their last sync, as the controller broker's group offset sync recorded it. */
    private Object[] describeGroups(Struct mirrorStruct, String name) throws Exception {
        List<Struct> groups = new ArrayList<>();
        for (GroupSyncRecord r : store.groupSyncs(name).values()) {
            Struct gs = MirrorMessages.element(mirrorStruct, "groups");
            gs.set("group_id", r.groupId());
            gs.set("last_sync_time_ms", r.lastSyncMs());
            gs.set("offsets_synced", r.offsetsSynced());
            gs.set("offsets_clamped", r.offsetsClamped());
            gs.set("group_type", r.type().name());
            groups.add(gs);
        }
        return groups.toArray();
    }

    /**
     * One partition's state and progress, as its destination leader last recorded them: the state record, and the
     * source high watermark and log end under {@code /mirror_progress} (at every state change, and at most every
     * 5 s while they move), so every broker answers the same, whichever replica it holds or how far it has got.
     */
    private Struct describePartition(Struct topicStruct, TopicPartition tp, PartitionImage image,
                                     Map<TopicPartition, MirrorProgress> recorded) {
        Struct ps = MirrorMessages.element(topicStruct, "partitions");
        MirrorImage.MirrorPartition mp = metadata.image().mirrors().partitions().get(tp);
        MirrorPartitionRecord rec = mp == null
                ? MirrorPartitionRecord.initial(-1)
                : MirrorPartitionRecord.fromJson(mp.json());
        MirrorProgress progress = recorded.getOrDefault(tp, rec.progress());
        ps.set("partition_index", tp.partition());
        ps.set("state", rec.state().name());
        ps.set("source_log_end_offset", progress.sourceHighWatermark());
        ps.set("destination_log_end_offset", progress.destinationLogEndOffset());
        ps.set("lag", progress.lag());
        ps.set("retry_attempt", (short) rec.retryAttempt());
        ps.set("last_error", rec.lastError().orElse(null));
        ps.set("last_mirrored_epoch", rec.lastMirroredEpoch());
        ps.set("last_mirrored_offset", rec.lastMirroredOffset());
        ps.set("out_of_sync_replicas", image.replicas().stream()
                .filter(r -> !image.isr().contains(r)).toArray());
        MirrorTruncation truncation = rec.truncation();
        ps.set("truncation_offset", truncation.isNone() ? -1L : truncation.latest().offset());
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
        ps.set("truncation_pending_replicas", pending.toArray());
        ps.set("truncated_offsets", truncation.removed());
        ps.set("consistent_from_offset", truncation.consistentFrom());
        return ps;
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
    private Struct lastMirroredEpochs(AuthorizableRequestContext ctx, Struct req) throws Exception {
        String requester = req.getString("requester_cluster_id");
        Map<String, String> mirrorSource = new HashMap<>();
        for (MirrorDefinition d : store.list()) {
            mirrorSource.put(d.name(), d.sourceClusterId().orElse(""));
        }
        MirrorImage mirrors = metadata.image().mirrors();
        Struct response = MirrorMessages.response(MirrorApi.LAST_MIRRORED_EPOCHS, Errors.NONE.code(), null);
        List<Struct> topics = new ArrayList<>();
        for (Object o : req.getArray("topics")) {
            Struct t = (Struct) o;
            String topic = t.getString("topic_name");
            Struct tr = MirrorMessages.element(response, "topics");
            tr.set("topic_name", topic);
            tr.set("topic_id", t.get("topic_id"));
            MirrorImage.MirrorTopic mt = mirrors.topics().get(topic);
            boolean related = mt != null && (requester == null || requester.equals(mirrorSource.get(mt.mirror())));
            // KIP-1279: the failback lookup needs DESCRIBE on the mirror that recorded the partitions; a topic no
            // mirror of the requester's recorded is answered -1/-1 alike for everyone (nothing to reveal, and a
            // chained mirror's unrelated record must not hold a failback)
            boolean allowed = !related || authorization.allowedOnMirror(ctx, AclOperation.DESCRIBE, mt.mirror());
            List<Struct> parts = new ArrayList<>();
            for (Object p : t.getArray("partitions")) {
                int partition = (Integer) p;
                Struct pr = MirrorMessages.element(tr, "partitions");
                pr.set("partition_index", partition);
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
                pr.set("error_code", error);
                pr.set("last_mirrored_epoch", lme);
                pr.set("last_mirrored_offset", lmo);
                parts.add(pr);
            }
            tr.set("partitions", parts.toArray());
            topics.add(tr);
        }
        response.set("topics", topics.toArray());
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
    private Optional<Struct> aclSyncDenied(AuthorizableRequestContext ctx, MirrorApi api, Collection<String> keys) {
        if (!keys.contains(MirrorDefinition.ACLS_INCLUDE)
                || authorization.allowedOnCluster(ctx, AclOperation.ALTER)) {
            return Optional.empty();
        }
        return Optional.of(error(api, Errors.CLUSTER_AUTHORIZATION_FAILED.code(), "Not authorized: "
                + MirrorDefinition.ACLS_INCLUDE + " creates ACLs on this cluster, which needs ALTER on the cluster"));
    }

    private static Struct denied(MirrorApi api, AclOperation operation, String mirror) {
        return error(api, MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code, "Not authorized: " + operation
                + " on cluster mirror '" + mirror + "' is needed");
    }

    private static Struct error(MirrorApi api, short code, String message) {
        return MirrorApiRegistration.errorResponse(api, code, message);
    }

}
