package io.twinlog.clients.mirror;

import org.apache.kafka.common.protocol.types.Struct;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Java admin client for Twinlog's cluster-mirror APIs, talking to the <em>destination</em> cluster. Any broker
 * answers these calls, so the client uses the first bootstrap server that accepts a connection.
 *
 * <p>Not thread-safe: one call at a time (calls are serialized by this object's monitor).
 */
public final class MirrorAdmin implements AutoCloseable {
    private final List<InetSocketAddress> bootstrap;
    private final int timeoutMs;
    private final String clientId;
    private Socket socket;
    private DataInputStream in;
    private OutputStream out;
    private int correlationId;
    private int nextBootstrap;

    private MirrorAdmin(List<InetSocketAddress> bootstrap, Duration timeout, String clientId) {
        this.bootstrap = bootstrap;
        this.timeoutMs = (int) timeout.toMillis();
        this.clientId = clientId;
    }

    /** @param bootstrapServers host:port[,host:port...] of the destination cluster */
    public static MirrorAdmin create(String bootstrapServers, Duration timeout) {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (String hp : bootstrapServers.split(",")) {
            String s = hp.trim();
            if (s.isEmpty()) {
                continue;
            }
            int colon = s.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("Bootstrap server '" + s + "' has no port");
            }
            String host = s.substring(0, colon).isEmpty() ? "127.0.0.1" : s.substring(0, colon);
            addresses.add(InetSocketAddress.createUnresolved(host, Integer.parseInt(s.substring(colon + 1))));
        }
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("No bootstrap servers given");
        }
        return new MirrorAdmin(addresses, timeout, "twinlog-mirror-admin");
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
     */
    public synchronized Map<org.apache.kafka.common.TopicPartition, LastMirrored> lastMirroredEpochs(
            String requesterClusterId, Map<String, List<Integer>> partitions) throws IOException {
        Struct req = MirrorMessages.newStruct(MirrorApi.LAST_MIRRORED_EPOCHS.requestSchema(MirrorApi.LATEST_VERSION));
        req.set("requester_cluster_id", requesterClusterId);
        List<Struct> topics = new ArrayList<>();
        partitions.forEach((topic, parts) -> {
            Struct t = MirrorMessages.element(req, "topics");
            t.set("topic_name", topic);
            t.set("topic_id", org.apache.kafka.common.Uuid.ZERO_UUID);
            t.set("partitions", parts.toArray());
            topics.add(t);
        });
        req.set("topics", topics.toArray());
        Struct resp = checkError(send(MirrorApi.LAST_MIRRORED_EPOCHS, req));
        Map<org.apache.kafka.common.TopicPartition, LastMirrored> out = new LinkedHashMap<>();
        for (Object o : resp.getArray("topics")) {
            Struct t = (Struct) o;
            for (Object p : t.getArray("partitions")) {
                Struct ps = (Struct) p;
                out.put(new org.apache.kafka.common.TopicPartition(t.getString("topic_name"), ps.getInt("partition_index")),
                        new LastMirrored(ps.getInt("last_mirrored_epoch"), ps.getLong("last_mirrored_offset")));
            }
        }
        return out;
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
     * A consumer group whose offsets the mirror syncs from its source: when its destination offsets were last
     * brought in line with the source, how many partitions that covered, and how many of those were clamped to
     * what the destination holds (its consumers on the source are ahead of the mirrored data).
     */
    public record GroupSyncDescription(String groupId, long lastSyncTimeMs, int offsetsSynced, int offsetsClamped) {
    }

    /** A mirror topic and its partitions. */
    public record TopicDescription(String name, String desiredState, List<PartitionDescription> partitions) {
    }

    /**
     * One mirror partition as its destination leader last recorded it; {@code outOfSyncReplicas} are the destination
     * replicas outside the partition's ISR (a replica that cannot converge with its leader shows here).
     */
    public record PartitionDescription(int partition, String state, long sourceLogEndOffset,
                                       long destinationLogEndOffset, long lag, int retryAttempt, String lastError,
                                       int lastMirroredEpoch, long lastMirroredOffset,
                                       List<Integer> outOfSyncReplicas) {
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
                            Arrays.stream(ps.getArray("out_of_sync_replicas")).map(r -> (Integer) r).toList()));
                }
                topics.put(ts.getString("topic_name"), new TopicDescription(ts.getString("topic_name"),
                        ts.getString("desired_state"), parts));
            }
            Map<String, GroupSyncDescription> groups = new LinkedHashMap<>();
            for (Object g : m.getArray("groups")) {
                Struct gs = (Struct) g;
                groups.put(gs.getString("group_id"), new GroupSyncDescription(gs.getString("group_id"),
                        gs.getLong("last_sync_time_ms"), gs.getInt("offsets_synced"), gs.getInt("offsets_clamped")));
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

    private static Struct checkError(Struct response) {
        short code = response.getShort("error_code");
        if (code != 0) {
            throw new MirrorException(code, response.getString("error_message"));
        }
        return response;
    }

    /**
     * Sends on the current connection; if that broker went away, once more on another bootstrap server (any broker
     * answers these calls).
     */
    private Struct send(MirrorApi api, Struct request) throws IOException {
        try {
            return sendOnce(api, request);
        } catch (IOException first) {
            return sendOnce(api, request);
        }
    }

    private Struct sendOnce(MirrorApi api, Struct request) throws IOException {
        ensureConnected();
        int corr = ++correlationId;
        byte[] client = clientId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = MirrorMessages.encode(request);
        int headerSize = 2 + 2 + 4 + 2 + client.length + 1;
        ByteBuffer frame = ByteBuffer.allocate(4 + headerSize + body.remaining());
        frame.putInt(headerSize + body.remaining()).putShort(api.id).putShort(MirrorApi.LATEST_VERSION).putInt(corr)
                .putShort((short) client.length).put(client).put((byte) 0).put(body).flip();
        try {
            out.write(frame.array(), 0, frame.limit());
            out.flush();
            int size = in.readInt();
            byte[] bytes = new byte[size];
            in.readFully(bytes);
            ByteBuffer resp = ByteBuffer.wrap(bytes);
            int respCorr = resp.getInt();
            if (respCorr != corr) {
                throw new IOException("Response correlation id " + respCorr + " does not match request " + corr);
            }
            org.apache.kafka.common.utils.internals.ByteUtils.readUnsignedVarint(resp); // no tagged fields expected
            return MirrorMessages.decode(api.responseSchema(MirrorApi.LATEST_VERSION), resp);
        } catch (IOException e) {
            closeQuietly();
            throw new IOException(api.name + " failed: the broker closed the connection or could not be reached ("
                    + e.getMessage() + "); is it a Twinlog broker of this version?", e);
        }
    }

    private void ensureConnected() throws IOException {
        if (socket != null && socket.isConnected() && !socket.isClosed()) {
            return;
        }
        IOException last = null;
        java.util.List<InetSocketAddress> order = new ArrayList<>(bootstrap);
        java.util.Collections.rotate(order, -(nextBootstrap++ % order.size())); // a dead broker is not retried first
        for (InetSocketAddress a : order) {
            try {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(a.getHostString(), a.getPort()), timeoutMs);
                s.setSoTimeout(timeoutMs);
                socket = s;
                in = new DataInputStream(s.getInputStream());
                out = s.getOutputStream();
                return;
            } catch (IOException e) {
                last = e;
            }
        }
        throw new UnreachableException("Could not connect to any of " + bootstrap + ": "
                + (last == null ? "no address" : last.getMessage()), last);
    }

    /** No broker of the cluster accepted a connection (as opposed to one that answered or closed it). */
    public static final class UnreachableException extends IOException {
        public UnreachableException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private void closeQuietly() {
        try {
            if (socket != null) {
                socket.close();
            }
        } catch (IOException ignored) {
            // closing after a failure
        }
        socket = null;
    }

    @Override
    public synchronized void close() {
        closeQuietly();
    }
}
