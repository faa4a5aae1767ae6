package io.twinlog.clients.mirror;

import io.twinlog.clients.mirror.internals.MirrorNetworkClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Java admin client for Twinlog's cluster-mirror APIs, talking to the <em>destination</em> cluster. Any broker
 * answers these calls, so the client uses whichever bootstrap server accepts a connection and answers, moving on to
 * the next when one is down, drops the connection or does not answer in time.
 *
 * <p>Configured like Kafka's {@code Admin} client ({@link AdminClientConfig}): {@code bootstrap.servers},
 * {@code security.protocol}, {@code ssl.*}, {@code sasl.*}, {@code client.id}, {@code request.timeout.ms} (one
 * broker's answer), {@code default.api.timeout.ms} (the whole call), {@code socket.connection.setup.timeout.ms}.
 * Connections are Kafka's client channels, so TLS and SASL work as for any Kafka client.
 *
 * <p>Not thread-safe: one call at a time (calls are serialized by this object's monitor).
 */
public final class MirrorAdmin implements AutoCloseable {
    /** The ACL APIs' version Twinlog brokers serve (Kafka 4.4's latest; flexible, with the pattern type). */
    private static final short ACL_API_VERSION = 3;
    /**
     * Versions every broker a mirror may copy from serves: Kafka 2.4 to 4.4 and Twinlog (Metadata's cluster ID came
     * with v2, v9 is its first flexible version; a broker closes the connection on a version it does not serve, so
     * v12 would cut off sources before Kafka 3.1).
     */
    private static final short METADATA_VERSION = 9;
    private static final short API_VERSIONS_VERSION = 3;
    private final MirrorNetworkClient client;
    private final List<String> bootstrapServers;

    private MirrorAdmin(MirrorNetworkClient client, List<String> bootstrapServers) {
        this.client = client;
        this.bootstrapServers = bootstrapServers;
    }

    /**
     * A PLAINTEXT client whose calls end within {@code timeout} (also each broker's time to answer).
     *
     * @param bootstrapServers host:port[,host:port...] of the destination cluster (an empty host means localhost)
     * @throws IllegalArgumentException when the list is empty or an entry is malformed
     */
    public static MirrorAdmin create(String bootstrapServers, Duration timeout) {
        Map<String, Object> configs = new HashMap<>();
        configs.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        configs.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        configs.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        return create(configs);
    }

    /**
     * A client configured by Kafka admin client configs (as {@code Admin.create} takes them; unknown keys are
     * ignored).
     *
     * @throws IllegalArgumentException when bootstrap.servers is missing, empty or malformed
     * @throws org.apache.kafka.common.config.ConfigException when another config has an invalid value
     * @throws org.apache.kafka.common.KafkaException when the TLS or SASL settings cannot be loaded
     */
    public static MirrorAdmin create(Map<String, ?> configs) {
        Object bootstrap = configs.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
        if (bootstrap == null || bootstrap.toString().isBlank()) {
            throw new IllegalArgumentException("No bootstrap servers given");
        }
        AdminClientConfig config = new AdminClientConfig(configs);
        return new MirrorAdmin(new MirrorNetworkClient(config, Time.SYSTEM),
                config.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG));
    }

    /** {@link #create(Map)} from properties, e.g. a tool's {@code --command-config} file. */
    public static MirrorAdmin create(Properties configs) {
        Map<String, Object> map = new HashMap<>();
        configs.stringPropertyNames().forEach(k -> map.put(k, configs.getProperty(k)));
        return create(map);
    }

    /** Creates a mirror: {@code configs} holds the source's {@code bootstrap.servers}, client and mirror configs. */
    public synchronized void createClusterMirror(String name, Map<String, String> configs) throws IOException {
        checkError(send(MirrorApi.CREATE_CLUSTER_MIRROR, mirrorConfigsRequest(MirrorApi.CREATE_CLUSTER_MIRROR, name,
                configs)));
    }

    /** Changes a mirror's configs: a null value removes the key. */
    public synchronized void alterClusterMirror(String name, Map<String, String> changes) throws IOException {
        checkError(send(MirrorApi.ALTER_CLUSTER_MIRROR, mirrorConfigsRequest(MirrorApi.ALTER_CLUSTER_MIRROR, name,
                changes)));
    }

    /** A request of shape {mirror_name, configs[name, value]}, shared by create and alter. */
    private static Struct mirrorConfigsRequest(MirrorApi api, String name, Map<String, String> configs) {
        Struct req = MirrorMessages.newStruct(api.requestSchema(MirrorApi.LATEST_VERSION));
        req.set("mirror_name", name);
        List<Struct> cs = new ArrayList<>();
        configs.forEach((k, v) -> {
            Struct c = MirrorMessages.element(req, "configs");
            c.set("name", k);
            c.set("value", v);
            cs.add(c);
        });
        req.set("configs", cs.toArray());
        return req;
    }

    public synchronized void deleteClusterMirror(String name) throws IOException {
        Struct req = MirrorMessages.newStruct(MirrorApi.DELETE_CLUSTER_MIRROR.requestSchema(MirrorApi.LATEST_VERSION));
        req.set("mirror_name", name);
        checkError(send(MirrorApi.DELETE_CLUSTER_MIRROR, req));
    }

    /**
     * Starts mirroring topics (by name, and every source topic matching {@code patterns} but not
     * {@code excludePatterns}); the destination topics are created with the source's topic IDs.
     *
     * @return per-topic errors (empty when every topic started)
     * @throws MirrorException for a request-level error (unknown mirror, invalid regex, source unreachable)
     */
    public synchronized Map<String, MirrorException> startMirrorTopics(String mirror, List<String> topics,
                                                                       List<String> patterns,
                                                                       List<String> excludePatterns) throws IOException {
        return topicsCall(MirrorApi.START_MIRROR_TOPICS, mirror, topics, patterns, excludePatterns);
    }

    /** Fails over topics (names and regexes over the mirror's topics): they stop mirroring and become writable. */
    public synchronized Map<String, MirrorException> stopMirrorTopics(String mirror, List<String> topics,
                                                                      List<String> patterns) throws IOException {
        return topicsCall(MirrorApi.STOP_MIRROR_TOPICS, mirror, topics, patterns, List.of());
    }

    public synchronized Map<String, MirrorException> pauseMirrorTopics(String mirror, List<String> topics,
                                                                       List<String> patterns) throws IOException {
        return topicsCall(MirrorApi.PAUSE_MIRROR_TOPICS, mirror, topics, patterns, List.of());
    }

    public synchronized Map<String, MirrorException> resumeMirrorTopics(String mirror, List<String> topics,
                                                                        List<String> patterns) throws IOException {
        return topicsCall(MirrorApi.RESUME_MIRROR_TOPICS, mirror, topics, patterns, List.of());
    }

    private Map<String, MirrorException> topicsCall(MirrorApi api, String mirror, List<String> topics,
                                                    List<String> patterns, List<String> excludes) throws IOException {
        Struct req = MirrorMessages.newStruct(api.requestSchema(MirrorApi.LATEST_VERSION));
        req.set("mirror_name", mirror);
        req.set("topics", topics.toArray());
        req.set("patterns", patterns.toArray());
        req.set("exclude_patterns", excludes.toArray());
        Struct resp = send(api, req);
        Map<String, MirrorException> errors = new LinkedHashMap<>();
        Object[] results = resp.getArray("topics");
        if (results.length == 0) {
            checkError(resp);
        }
        for (Object o : results) {
            Struct t = (Struct) o;
            short code = t.getShort("error_code");
            if (code != 0) {
                errors.put(t.getString("name"), new MirrorException(code, t.getString("error_message")));
            }
        }
        return errors;
    }

    /** A partition's last mirrored epoch and offset as the asked cluster recorded them at failover (-1 if none). */
    public record LastMirrored(int epoch, long offset) {
    }

    /**
     * Asks this cluster (the one a failback will pull from) for the last mirrored epochs it recorded for the given
     * partitions, restricted to mirrors whose source is {@code requesterClusterId} (null: any).
     *
     * @throws MirrorException for a partition the cluster refused (CLUSTER_MIRROR_AUTHORIZATION_FAILED: the
     *         principal may not describe the cluster mirror that recorded it)
     */
    public synchronized Map<TopicPartition, LastMirrored> lastMirroredEpochs(
            String requesterClusterId, Map<String, List<Integer>> partitions) throws IOException {
        Struct req = MirrorMessages.newStruct(MirrorApi.LAST_MIRRORED_EPOCHS.requestSchema(MirrorApi.LATEST_VERSION));
        req.set("requester_cluster_id", requesterClusterId);
        List<Struct> topics = new ArrayList<>();
        partitions.forEach((topic, parts) -> {
            Struct t = MirrorMessages.element(req, "topics");
            t.set("topic_name", topic);
            t.set("topic_id", Uuid.ZERO_UUID);
            t.set("partitions", parts.toArray());
            topics.add(t);
        });
        req.set("topics", topics.toArray());
        Struct resp = checkError(send(MirrorApi.LAST_MIRRORED_EPOCHS, req));
        Map<TopicPartition, LastMirrored> out = new LinkedHashMap<>();
        for (Object o : resp.getArray("topics")) {
            Struct t = (Struct) o;
            for (Object p : t.getArray("partitions")) {
                Struct ps = (Struct) p;
                if (ps.getShort("error_code") != Errors.NONE.code()) {
                    throw new MirrorException(ps.getShort("error_code"), "LastMirroredEpochs refused for "
                            + t.getString("topic_name") + "-" + ps.getInt("partition_index"));
                }
                out.put(new TopicPartition(t.getString("topic_name"), ps.getInt("partition_index")),
                        new LastMirrored(ps.getInt("last_mirrored_epoch"), ps.getLong("last_mirrored_offset")));
            }
        }
        return out;
    }

    /**
     * The cluster's ID, from a Metadata request that names no topic (any broker answers it, Apache Kafka's too): who
     * is really at the address, before one trusts what it says it recorded.
     */
    public synchronized String clusterId() throws IOException {
        MetadataRequest request = new MetadataRequest.Builder(new MetadataRequestData().setTopics(List.of())
                .setAllowAutoTopicCreation(false)).build(METADATA_VERSION);
        MetadataResponse response = (MetadataResponse) client.send(request);
        if (response.clusterId() == null) {
            throw new IOException("The cluster at " + bootstrapServers + " did not say its cluster ID");
        }
        return response.clusterId();
    }

    /**
     * Whether the broker that answers advertises {@code api} at this client's version in its ApiVersions answer: an
     * Apache Kafka broker (or an older Twinlog) does not, and a mirror API sent to it only gets the connection
     * closed, which cannot be told apart from a network fault. Ask this first to know.
     */
    public synchronized boolean advertises(MirrorApi api) throws IOException {
        ApiVersionsResponse response = (ApiVersionsResponse) client.send(new ApiVersionsRequest.Builder()
                .build(API_VERSIONS_VERSION));
        if (response.data().errorCode() != Errors.NONE.code()) {
            throw new MirrorException(response.data().errorCode(), "ApiVersions refused");
        }
        ApiVersionsResponseData.ApiVersion advertised = response.data().apiKeys().find(api.id);
        return advertised != null && advertised.minVersion() <= MirrorApi.LATEST_VERSION
                && MirrorApi.LATEST_VERSION <= advertised.maxVersion();
    }

    /** One mirror in a listing. */
    public record MirrorListing(String name, String sourceBootstrap, String sourceClusterId, String state,
                                int topicCount, List<String> topics) {
    }

    public synchronized List<MirrorListing> listClusterMirrors(boolean includeTopics) throws IOException {
        Struct req = MirrorMessages.newStruct(MirrorApi.LIST_CLUSTER_MIRRORS.requestSchema(MirrorApi.LATEST_VERSION));
        req.set("include_topic_names", includeTopics);
        Struct resp = checkError(send(MirrorApi.LIST_CLUSTER_MIRRORS, req));
        List<MirrorListing> out = new ArrayList<>();
        for (Object o : resp.getArray("mirrors")) {
            Struct m = (Struct) o;
            List<String> topics = new ArrayList<>();
            for (Object t : m.getArray("topic_names")) {
                topics.add((String) t);
            }
            out.add(new MirrorListing(m.getString("mirror_name"), m.getString("source_bootstrap"),
                    m.getString("source_cluster_id"), m.getString("state"), m.getInt("topic_count"), topics));
        }
        return out;
    }

    /** A mirror's description; sensitive config values are null. {@code groups}: the groups it syncs, by ID. */
    public record MirrorDescription(String name, String state, String stateReason, String sourceBootstrap,
                                    String sourceClusterId, Map<String, String> configs, List<String> sensitiveConfigs,
                                    List<String> includePatterns, List<String> excludePatterns,
                                    Map<String, TopicDescription> topics, Map<String, GroupSyncDescription> groups) {
    }

    /**
     * A group whose offsets the mirror syncs from its source: when its destination offsets were last brought in line
     * with the source, how many partitions that covered, and how many of those were clamped to what the destination
     * holds (its consumers on the source are ahead of the mirrored data). {@code groupType}: CONSUMER (committed
     * offsets) or SHARE (share-partition start offsets).
     */
    public record GroupSyncDescription(String groupId, long lastSyncTimeMs, int offsetsSynced, int offsetsClamped,
                                       String groupType) {
    }

    /** A mirror topic and its partitions. */
    public record TopicDescription(String name, String desiredState, List<PartitionDescription> partitions) {
    }

    /**
     * One mirror partition as its destination leader last recorded it; {@code outOfSyncReplicas} are the destination
     * replicas outside the partition's ISR (a replica that cannot converge with its leader shows here);
     * {@code truncationOffset} is the latest partition-wide truncation point (-1: none) and
     * {@code truncationPendingReplicas} the replicas a LOG_TRUNCATION still waits for; {@code truncatedOffsets} the
     * offsets truncations removed from the leader's log so far (their records are in the quarantine topic);
     * {@code consistentFromOffset} the offset from which records are consistent with the other cluster even
     * through unclean elections (-1: none yet).
     */
    public record PartitionDescription(int partition, String state, long sourceLogEndOffset,
                                       long destinationLogEndOffset, long lag, int retryAttempt, String lastError,
                                       int lastMirroredEpoch, long lastMirroredOffset,
                                       List<Integer> outOfSyncReplicas, long truncationOffset,
                                       List<Integer> truncationPendingReplicas, long truncatedOffsets,
                                       long consistentFromOffset) {
    }

    /**
     * Describes the named mirrors (all when empty).
     *
     * @throws MirrorException UNKNOWN_CLUSTER_MIRROR if a named mirror does not exist
     */
    public synchronized Map<String, MirrorDescription> describeClusterMirrors(Collection<String> names) throws IOException {
        Struct req = MirrorMessages.newStruct(MirrorApi.DESCRIBE_CLUSTER_MIRRORS.requestSchema(MirrorApi.LATEST_VERSION));
        req.set("mirror_names", names.toArray());
        Struct resp = checkError(send(MirrorApi.DESCRIBE_CLUSTER_MIRRORS, req));
        Map<String, MirrorDescription> out = new LinkedHashMap<>();
        for (Object o : resp.getArray("mirrors")) {
            Struct m = checkError((Struct) o);
            Map<String, String> configs = new LinkedHashMap<>();
            List<String> sensitive = new ArrayList<>();
            for (Object c : m.getArray("configs")) {
                Struct cs = (Struct) c;
                configs.put(cs.getString("name"), cs.getString("value"));
                if ((Boolean) cs.get("sensitive")) {
                    sensitive.add(cs.getString("name"));
                }
            }
            Map<String, TopicDescription> topics = new LinkedHashMap<>();
            for (Object t : m.getArray("topics")) {
                Struct ts = (Struct) t;
                List<PartitionDescription> parts = new ArrayList<>();
                for (Object p : ts.getArray("partitions")) {
                    Struct ps = (Struct) p;
                    parts.add(new PartitionDescription(ps.getInt("partition_index"), ps.getString("state"),
                            ps.getLong("source_log_end_offset"), ps.getLong("destination_log_end_offset"),
                            ps.getLong("lag"), ps.getShort("retry_attempt"), ps.getString("last_error"),
                            ps.getInt("last_mirrored_epoch"), ps.getLong("last_mirrored_offset"),
                            Arrays.stream(ps.getArray("out_of_sync_replicas")).map(r -> (Integer) r).toList(),
                            ps.getLong("truncation_offset"),
                            Arrays.stream(ps.getArray("truncation_pending_replicas")).map(r -> (Integer) r).toList(),
                            ps.getLong("truncated_offsets"), ps.getLong("consistent_from_offset")));
                }
                topics.put(ts.getString("topic_name"), new TopicDescription(ts.getString("topic_name"),
                        ts.getString("desired_state"), parts));
            }
            Map<String, GroupSyncDescription> groups = new LinkedHashMap<>();
            for (Object g : m.getArray("groups")) {
                Struct gs = (Struct) g;
                groups.put(gs.getString("group_id"), new GroupSyncDescription(gs.getString("group_id"),
                        gs.getLong("last_sync_time_ms"), gs.getInt("offsets_synced"), gs.getInt("offsets_clamped"),
                        gs.getString("group_type")));
            }
            out.put(m.getString("mirror_name"), new MirrorDescription(m.getString("mirror_name"), m.getString("state"),
                    m.getString("state_reason"), m.getString("source_bootstrap"), m.getString("source_cluster_id"),
                    configs, sensitive, strings(m.getArray("include_patterns")), strings(m.getArray("exclude_patterns")),
                    topics, groups));
        }
        return out;
    }

    private static List<String> strings(Object[] array) {
        List<String> out = new ArrayList<>();
        for (Object o : array) {
            out.add((String) o);
        }
        return out;
    }

    /**
     * Creates ClusterMirror ACLs with Kafka's CreateAcls (resource type {@value ClusterMirrorResource#CODE}); needs
     * ALTER on the cluster, as every ACL change.
     *
     * @throws MirrorException with the first ACL the broker refused
     */
    public synchronized void createMirrorAcls(List<MirrorAcl> acls) throws IOException {
        CreateAclsRequestData data = new CreateAclsRequestData();
        for (MirrorAcl acl : acls) {
            data.creations().add(new CreateAclsRequestData.AclCreation()
                    .setResourceType(ClusterMirrorResource.CODE).setResourceName(acl.mirror())
                    .setResourcePatternType(acl.patternType().code()).setPrincipal(acl.principal())
                    .setHost(acl.host()).setOperation(acl.operation().code())
                    .setPermissionType(acl.permission().code()));
        }
        CreateAclsResponse response = (CreateAclsResponse) client.send(
                new CreateAclsRequest.Builder(data).build(ACL_API_VERSION));
        for (CreateAclsResponseData.AclCreationResult result : response.results()) {
            if (result.errorCode() != Errors.NONE.code()) {
                throw new MirrorException(result.errorCode(), result.errorMessage());
            }
        }
    }

    /**
     * The ClusterMirror ACLs, all of them or those that apply to the mirror named {@code mirror} (literal, prefixed
     * or wildcard ACLs matching it, as {@code kafka-acls --list} shows for a resource); needs DESCRIBE on the cluster.
     */
    public synchronized List<MirrorAcl> describeMirrorAcls(Optional<String> mirror) throws IOException {
        AclBindingFilter filter = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC,
                mirror.orElse(null), mirror.isPresent() ? PatternType.MATCH : PatternType.ANY),
                AccessControlEntryFilter.ANY);
        DescribeAclsRequest request = new DescribeAclsRequest.Builder(filter).build(ACL_API_VERSION);
        request.data().setResourceTypeFilter(ClusterMirrorResource.CODE);
        DescribeAclsResponse response = (DescribeAclsResponse) client.send(request);
        if (response.error().isFailure()) {
            throw new MirrorException(response.error().error().code(), response.error().message());
        }
        List<MirrorAcl> acls = new ArrayList<>();
        for (DescribeAclsResponseData.DescribeAclsResource resource : response.acls()) {
            if (resource.resourceType() != ClusterMirrorResource.CODE) {
                continue;
            }
            for (DescribeAclsResponseData.AclDescription acl : resource.acls()) {
                acls.add(new MirrorAcl(resource.resourceName(), PatternType.fromCode(resource.patternType()),
                        acl.principal(), acl.host(), AclOperation.fromCode(acl.operation()),
                        AclPermissionType.fromCode(acl.permissionType())));
            }
        }
        return acls;
    }

    /**
     * Deletes the ClusterMirror ACLs matching {@code acl}, where {@code null} principal, host or operation mean any;
     * needs ALTER on the cluster. Returns those deleted.
     */
    public synchronized List<MirrorAcl> deleteMirrorAcls(String mirror, PatternType patternType, String principal,
                                                         String host, AclOperation operation,
                                                         AclPermissionType permission) throws IOException {
        DeleteAclsRequestData data = new DeleteAclsRequestData();
        data.filters().add(new DeleteAclsRequestData.DeleteAclsFilter()
                .setResourceTypeFilter(ClusterMirrorResource.CODE).setResourceNameFilter(mirror)
                .setPatternTypeFilter(patternType.code()).setPrincipalFilter(principal).setHostFilter(host)
                .setOperation((operation == null ? AclOperation.ANY : operation).code())
                .setPermissionType(permission.code()));
        DeleteAclsResponse response = (DeleteAclsResponse) client.send(
                new DeleteAclsRequest.Builder(data).build(ACL_API_VERSION));
        List<MirrorAcl> deleted = new ArrayList<>();
        for (DeleteAclsResponseData.DeleteAclsFilterResult result : response.filterResults()) {
            if (result.errorCode() != Errors.NONE.code()) {
                throw new MirrorException(result.errorCode(), result.errorMessage());
            }
            for (DeleteAclsResponseData.DeleteAclsMatchingAcl acl : result.matchingAcls()) {
                deleted.add(new MirrorAcl(acl.resourceName(), PatternType.fromCode(acl.patternType()),
                        acl.principal(), acl.host(), AclOperation.fromCode(acl.operation()),
                        AclPermissionType.fromCode(acl.permissionType())));
            }
        }
        return deleted;
    }

    private static Struct checkError(Struct response) {
        short code = response.getShort("error_code");
        if (code != 0) {
            throw new MirrorException(code, response.getString("error_message"));
        }
        return response;
    }

    private Struct send(MirrorApi api, Struct request) throws IOException {
        return client.send(api, request);
    }

    /**
     * A broker refused or closed the connection (the cause of the {@link IOException} or
     * {@link UnreachableException} a call throws, when that is what happened on the last broker tried).
     */
    public static final class DisconnectedException extends IOException {
        public DisconnectedException(String message) {
            super(message);
        }
    }

    /** No broker of the cluster accepted a connection (as opposed to one that answered or closed it). */
    public static final class UnreachableException extends IOException {
        public UnreachableException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    @Override
    public synchronized void close() {
        client.close();
    }
}
