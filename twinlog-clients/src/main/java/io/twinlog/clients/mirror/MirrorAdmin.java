package io.twinlog.clients.mirror;

import io.twinlog.clients.mirror.internals.MirrorAclMessages;
import io.twinlog.clients.mirror.internals.MirrorDescriptions;
import io.twinlog.clients.mirror.internals.MirrorNetworkClient;
import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData.AlterableMirrorConfig;
import io.twinlog.clients.mirror.message.AlterClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorRequestData.CreatableMirrorConfig;
import io.twinlog.clients.mirror.message.CreateClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData.LastMirroredEpochsTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsPartitionResult;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsTopicResult;
import io.twinlog.clients.mirror.message.ListClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData.ListedMirror;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.PreviewMirrorFailoverRequestData;
import io.twinlog.clients.mirror.message.PreviewMirrorFailoverResponseData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.ToIntFunction;

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
     * @throws ConfigException when another config has an invalid value
     * @throws KafkaException when the TLS or SASL settings cannot be loaded
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
        CreateClusterMirrorRequestData request = new CreateClusterMirrorRequestData().setMirrorName(name);
        configs.forEach((k, v) -> request.configs().add(new CreatableMirrorConfig().setName(k).setValue(v)));
        CreateClusterMirrorResponseData response = client.send(request, CreateClusterMirrorResponseData::new);
        checkError(response.errorCode(), response.errorMessage());
    }

    /** Changes a mirror's configs: a null value removes the key. */
    public synchronized void alterClusterMirror(String name, Map<String, String> changes) throws IOException {
        AlterClusterMirrorRequestData request = new AlterClusterMirrorRequestData().setMirrorName(name);
        changes.forEach((k, v) -> request.configs().add(new AlterableMirrorConfig().setName(k).setValue(v)));
        AlterClusterMirrorResponseData response = client.send(request, AlterClusterMirrorResponseData::new);
        checkError(response.errorCode(), response.errorMessage());
    }

    public synchronized void deleteClusterMirror(String name) throws IOException {
        DeleteClusterMirrorResponseData response = client.send(new DeleteClusterMirrorRequestData().setMirrorName(name),
                DeleteClusterMirrorResponseData::new);
        checkError(response.errorCode(), response.errorMessage());
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
        StartMirrorTopicsResponseData response = client.send(new StartMirrorTopicsRequestData().setMirrorName(mirror)
                .setTopics(topics).setPatterns(patterns).setExcludePatterns(excludePatterns),
                StartMirrorTopicsResponseData::new);
        return topicErrors(response.errorCode(), response.errorMessage(), response.topics(),
                StartMirrorTopicsResponseData.MirrorTopicResult::name,
                StartMirrorTopicsResponseData.MirrorTopicResult::errorCode,
                StartMirrorTopicsResponseData.MirrorTopicResult::errorMessage);
    }

    /**
     * Fails over topics (names and regexes over the mirror's topics): they stop mirroring and become writable. Sent
     * as version 0, which every broker serves.
     */
    public synchronized Map<String, MirrorException> stopMirrorTopics(String mirror, List<String> topics,
                                                                      List<String> patterns) throws IOException {
        StopMirrorTopicsResponseData response = client.send(new StopMirrorTopicsRequestData().setMirrorName(mirror)
                .setTopics(topics).setPatterns(patterns), (short) 0, StopMirrorTopicsResponseData::new);
        return stopErrors(response);
    }

    /** What one partition's failover to a point in time kept and quarantined (-1: not known or none). */
    public record PointInTimeResult(String topic, int partition, String reach, long keptOffset, long keptTimestamp,
                                    long quarantinedFrom, long quarantinedTo, long quarantinedRecords) {
    }

    /** The answer to a failover to a point in time: per-topic errors, and per partition what it did. */
    public record PointInTimeStopResult(Map<String, MirrorException> errors, List<PointInTimeResult> partitions) {
    }

    /**
     * Fails over topics to the point in time {@code atMs}: each partition keeps what it mirrored up to its last batch
     * at or before that time, waiting for it up to {@code timeoutMs} while its source answers (StopMirrorTopics
     * version 1: a broker that does not serve it closes the connection, so it is never taken for a plain stop).
     */
    public synchronized PointInTimeStopResult stopMirrorTopicsAt(String mirror, List<String> topics,
                                                                 List<String> patterns, long atMs, long timeoutMs)
            throws IOException {
        if (!advertisesVersion(MirrorApi.STOP_MIRROR_TOPICS, (short) 1)) {
            throw new MirrorException(Errors.UNSUPPORTED_VERSION.code(), "The broker does not serve a failover to a "
                    + "point in time (StopMirrorTopics version 1); nothing was stopped");
        }
        StopMirrorTopicsResponseData response = client.send(new StopMirrorTopicsRequestData().setMirrorName(mirror)
                .setTopics(topics).setPatterns(patterns).setStopAtMs(atMs).setStopTimeoutMs(timeoutMs), (short) 1,
                StopMirrorTopicsResponseData::new);
        List<PointInTimeResult> partitions = new ArrayList<>();
        for (StopMirrorTopicsResponseData.MirrorTopicResult t : response.topics()) {
            for (StopMirrorTopicsResponseData.PointInTimeResult p : t.partitions()) {
                partitions.add(new PointInTimeResult(t.name(), p.partitionIndex(), p.reach(), p.keptOffset(),
                        p.keptTimestamp(), p.quarantinedFrom(), p.quarantinedTo(), p.quarantinedRecords()));
            }
        }
        return new PointInTimeStopResult(stopErrors(response), partitions);
    }

    /**
     * What a failover of one partition would keep and quarantine now, as its leader read it (-1: not known); an
     * {@code errorCode} other than 0 (NOT_LEADER_OR_FOLLOWER: the broker asked does not lead it) and nothing else.
     */
    public record FailoverPreview(String topic, int partition, short errorCode, long logEndOffset, long keptOffset,
                                  long keptTimestamp, long quarantinedRecords, long mirroredUpToMs, long nowMs) {
    }

    /**
     * What a failover of {@code partitions} to {@code atMs} (-1: a plain failover) would keep now, answered by the
     * broker this client reaches for the partitions it leads (PreviewMirrorFailover: nothing is changed). Ask each
     * partition's leader (a client bootstrapped on it) for the whole picture.
     */
    public synchronized List<FailoverPreview> previewMirrorFailover(String mirror, long atMs,
                                                                    Map<String, List<Integer>> partitions)
            throws IOException {
        PreviewMirrorFailoverRequestData request = new PreviewMirrorFailoverRequestData().setMirrorName(mirror)
                .setStopAtMs(atMs);
        partitions.forEach((topic, parts) -> request.topics().add(new PreviewMirrorFailoverRequestData.PreviewTopic()
                .setName(topic).setPartitions(parts)));
        PreviewMirrorFailoverResponseData response = client.send(request, PreviewMirrorFailoverResponseData::new);
        checkError(response.errorCode(), response.errorMessage());
        List<FailoverPreview> out = new ArrayList<>();
        for (PreviewMirrorFailoverResponseData.PreviewTopicResult t : response.topics()) {
            for (PreviewMirrorFailoverResponseData.PreviewPartitionResult p : t.partitions()) {
                out.add(new FailoverPreview(t.name(), p.partitionIndex(), p.errorCode(), p.logEndOffset(),
                        p.keptOffset(), p.keptTimestamp(), p.quarantinedRecords(), p.mirroredUpToMs(), p.nowMs()));
            }
        }
        return out;
    }

    private static Map<String, MirrorException> stopErrors(StopMirrorTopicsResponseData response) {
        return topicErrors(response.errorCode(), response.errorMessage(), response.topics(),
                StopMirrorTopicsResponseData.MirrorTopicResult::name,
                StopMirrorTopicsResponseData.MirrorTopicResult::errorCode,
                StopMirrorTopicsResponseData.MirrorTopicResult::errorMessage);
    }

    public synchronized Map<String, MirrorException> pauseMirrorTopics(String mirror, List<String> topics,
                                                                       List<String> patterns) throws IOException {
        PauseMirrorTopicsResponseData response = client.send(new PauseMirrorTopicsRequestData().setMirrorName(mirror)
                .setTopics(topics).setPatterns(patterns), PauseMirrorTopicsResponseData::new);
        return topicErrors(response.errorCode(), response.errorMessage(), response.topics(),
                PauseMirrorTopicsResponseData.MirrorTopicResult::name,
                PauseMirrorTopicsResponseData.MirrorTopicResult::errorCode,
                PauseMirrorTopicsResponseData.MirrorTopicResult::errorMessage);
    }

    public synchronized Map<String, MirrorException> resumeMirrorTopics(String mirror, List<String> topics,
                                                                        List<String> patterns) throws IOException {
        ResumeMirrorTopicsResponseData response = client.send(new ResumeMirrorTopicsRequestData()
                .setMirrorName(mirror).setTopics(topics).setPatterns(patterns), ResumeMirrorTopicsResponseData::new);
        return topicErrors(response.errorCode(), response.errorMessage(), response.topics(),
                ResumeMirrorTopicsResponseData.MirrorTopicResult::name,
                ResumeMirrorTopicsResponseData.MirrorTopicResult::errorCode,
                ResumeMirrorTopicsResponseData.MirrorTopicResult::errorMessage);
    }

    /**
     * The per-topic errors of a topic API's answer (each of the four has its own generated result class, of one
     * shape); an answer with no topic result is checked for a request-level error instead.
     */
    private static <T> Map<String, MirrorException> topicErrors(short errorCode, String errorMessage, List<T> results,
                                                                Function<T, String> name, ToIntFunction<T> code,
                                                                Function<T, String> message) {
        if (results.isEmpty()) {
            checkError(errorCode, errorMessage);
        }
        Map<String, MirrorException> errors = new LinkedHashMap<>();
        for (T result : results) {
            short topicCode = (short) code.applyAsInt(result);
            if (topicCode != Errors.NONE.code()) {
                errors.put(name.apply(result), new MirrorException(topicCode, message.apply(result)));
            }
        }
        return errors;
    }

    /** A partition's last mirrored epoch and offset as the asked cluster recorded them at failover (-1 if none). */
    public record LastMirrored(int epoch, long offset) {
    }

    /**
     * Asks this cluster (the one a failback will pull from) for the last mirrored epochs it recorded for the given
     * partitions, restricted to mirrors whose source is {@code requesterClusterId} (null: any). A topic with an ID in
     * {@code topicIds} that the cluster lacks under that name is refused (UNKNOWN_TOPIC_ID), never "none recorded".
     *
     * @throws MirrorException for a partition the cluster refused (CLUSTER_MIRROR_AUTHORIZATION_FAILED: the
     *         principal may not describe the cluster mirror that recorded it)
     */
    public synchronized Map<TopicPartition, LastMirrored> lastMirroredEpochs(String requesterClusterId,
            Map<String, List<Integer>> partitions, Map<String, Uuid> topicIds) throws IOException {
        LastMirroredEpochsRequestData request = new LastMirroredEpochsRequestData()
                .setRequesterClusterId(requesterClusterId);
        partitions.forEach((topic, parts) -> request.topics().add(new LastMirroredEpochsTopic().setTopicName(topic)
                .setTopicId(topicIds.getOrDefault(topic, Uuid.ZERO_UUID)).setPartitions(parts)));
        LastMirroredEpochsResponseData response = client.send(request, LastMirroredEpochsResponseData::new);
        checkError(response.errorCode(), response.errorMessage());
        Map<TopicPartition, LastMirrored> out = new LinkedHashMap<>();
        for (LastMirroredEpochsTopicResult t : response.topics()) {
            for (LastMirroredEpochsPartitionResult p : t.partitions()) {
                if (p.errorCode() != Errors.NONE.code()) {
                    throw new MirrorException(p.errorCode(), "LastMirroredEpochs refused for "
                            + t.topicName() + "-" + p.partitionIndex());
                }
                out.put(new TopicPartition(t.topicName(), p.partitionIndex()),
                        new LastMirrored(p.lastMirroredEpoch(), p.lastMirroredOffset()));
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
        return advertisesVersion(api, api.latestVersion());
    }

    /** Whether the broker that answers advertises {@code version} of {@code api} in its ApiVersions answer. */
    public synchronized boolean advertisesVersion(MirrorApi api, short version) throws IOException {
        ApiVersionsResponse response = (ApiVersionsResponse) client.send(new ApiVersionsRequest.Builder()
                .build(API_VERSIONS_VERSION));
        if (response.data().errorCode() != Errors.NONE.code()) {
            throw new MirrorException(response.data().errorCode(), "ApiVersions refused");
        }
        ApiVersionsResponseData.ApiVersion advertised = response.data().apiKeys().find(api.id);
        return advertised != null && advertised.minVersion() <= version && version <= advertised.maxVersion();
    }

    /** One mirror in a listing. */
    public record MirrorListing(String name, String sourceBootstrap, String sourceClusterId, String state,
                                int topicCount, List<String> topics) {
    }

    public synchronized List<MirrorListing> listClusterMirrors(boolean includeTopics) throws IOException {
        ListClusterMirrorsResponseData response = client.send(new ListClusterMirrorsRequestData()
                .setIncludeTopicNames(includeTopics), ListClusterMirrorsResponseData::new);
        checkError(response.errorCode(), response.errorMessage());
        List<MirrorListing> out = new ArrayList<>();
        for (ListedMirror m : response.mirrors()) {
            out.add(new MirrorListing(m.mirrorName(), m.sourceBootstrap(), m.sourceClusterId(), m.state(),
                    m.topicCount(), m.topicNames()));
        }
        return out;
    }

    /**
     * A mirror's description; sensitive config values are null. {@code groups}: the groups it syncs, by ID;
     * {@code skippedTopics}: the source topics its patterns selected but did not start, with why (a loop, a failback
     * into a topic of another name).
     */
    public record MirrorDescription(String name, String state, String stateReason, String sourceBootstrap,
                                    String sourceClusterId, Map<String, String> configs, List<String> sensitiveConfigs,
                                    List<String> includePatterns, List<String> excludePatterns,
                                    Map<String, TopicDescription> topics, Map<String, GroupSyncDescription> groups,
                                    Map<String, String> skippedTopics) {
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

    /** A mirror topic and its partitions; {@code sourceTopic}: its name on the source (its own unless renamed). */
    public record TopicDescription(String name, String desiredState, List<PartitionDescription> partitions,
                                   String sourceTopic) {
    }

    /**
     * One mirror partition as its destination leader last recorded it; {@code outOfSyncReplicas} are the destination
     * replicas outside the partition's ISR (a replica that cannot converge with its leader shows here);
     * {@code truncationOffset} is the latest partition-wide truncation point (-1: none) and
     * {@code truncationPendingReplicas} the replicas a LOG_TRUNCATION still waits for; {@code truncatedOffsets} the
     * offsets truncations removed from the leader's log so far (their records are in the quarantine topic);
     * {@code consistentFromOffset} the offset from which records are consistent with the other cluster even
     * through unclean elections (-1: none yet); {@code newestMirroredTimestamp} the max timestamp of the last batch
     * it holds from the source, {@code mirroredUpToMs} the time (destination clock) up to which it holds everything
     * the source had (the newest mirrored timestamp, or when its last fetch found it caught up, that fetch's time),
     * and {@code rpoMs} the answering broker's time minus that: what a failover now could lose (each -1: unknown, or
     * a broker that does not say).
     */
    public record PartitionDescription(int partition, String state, long sourceLogEndOffset,
                                       long destinationLogEndOffset, long lag, int retryAttempt, String lastError,
                                       int lastMirroredEpoch, long lastMirroredOffset,
                                       List<Integer> outOfSyncReplicas, long truncationOffset,
                                       List<Integer> truncationPendingReplicas, long truncatedOffsets,
                                       long consistentFromOffset, long newestMirroredTimestamp,
                                       long mirroredUpToMs, long rpoMs) {
    }

    /**
     * Describes the named mirrors (all when empty).
     *
     * @throws MirrorException UNKNOWN_CLUSTER_MIRROR if a named mirror does not exist
     */
    public synchronized Map<String, MirrorDescription> describeClusterMirrors(Collection<String> names) throws IOException {
        return MirrorDescriptions.from(client.send(new DescribeClusterMirrorsRequestData()
                .setMirrorNames(new ArrayList<>(names)), DescribeClusterMirrorsResponseData::new));
    }

    /**
     * Creates ClusterMirror ACLs with Kafka's CreateAcls (resource type {@value ClusterMirrorResource#CODE}); needs
     * ALTER on the cluster, as every ACL change.
     *
     * @throws MirrorException with the first ACL the broker refused
     */
    public synchronized void createMirrorAcls(List<MirrorAcl> acls) throws IOException {
        MirrorAclMessages.checkCreated((CreateAclsResponse) client.send(MirrorAclMessages.createRequest(acls)));
    }

    /**
     * The ClusterMirror ACLs, all of them or those that apply to the mirror named {@code mirror} (literal, prefixed
     * or wildcard ACLs matching it, as {@code kafka-acls --list} shows for a resource); needs DESCRIBE on the cluster.
     */
    public synchronized List<MirrorAcl> describeMirrorAcls(Optional<String> mirror) throws IOException {
        return MirrorAclMessages.described((DescribeAclsResponse) client.send(
                MirrorAclMessages.describeRequest(mirror)));
    }

    /**
     * Deletes the ClusterMirror ACLs matching {@code acl}, where {@code null} principal, host or operation mean any;
     * needs ALTER on the cluster. Returns those deleted.
     */
    public synchronized List<MirrorAcl> deleteMirrorAcls(String mirror, PatternType patternType, String principal,
                                                         String host, AclOperation operation,
                                                         AclPermissionType permission) throws IOException {
        return MirrorAclMessages.deleted((DeleteAclsResponse) client.send(MirrorAclMessages.deleteRequest(mirror,
                patternType, principal, host, operation, permission)));
    }

    private static void checkError(short errorCode, String errorMessage) {
        if (errorCode != Errors.NONE.code()) {
            throw new MirrorException(errorCode, errorMessage);
        }
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
