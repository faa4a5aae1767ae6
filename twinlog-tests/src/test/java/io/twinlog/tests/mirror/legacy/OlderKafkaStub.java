package io.twinlog.tests.mirror.legacy;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A broker that speaks the protocol versions of Apache Kafka 2.8 (Fetch up to v12, by topic name; Metadata up to
 * v11; ListOffsets up to v6) and holds one topic, {@value #TOPIC}, with one partition of {@value #RECORDS} records
 * in one batch of leader epoch {@value #LEADER_EPOCH}. As Kafka does, it answers an ApiVersions request above its
 * range with its ranges at v0, and closes the connection on any other request it does not serve.
 *
 * <p>Only for the fast checks of what Twinlog sends to an older source; the real 2.8 and 3.9 brokers run in the
 * compatibility tests.
 */
public final class OlderKafkaStub implements AutoCloseable {
    public static final String TOPIC = "orders";
    public static final Uuid TOPIC_ID = Uuid.fromString("7uEDqPyuRNKPmqTCzb6XCg");
    public static final String CLUSTER_ID = "kafka-28-cluster";
    public static final int LEADER_EPOCH = 3;
    public static final int RECORDS = 3;
    private static final int NODE_ID = 1;
    private static final Map<ApiKeys, Short> MAX_VERSIONS = Map.of(ApiKeys.API_VERSIONS, (short) 3,
            ApiKeys.METADATA, (short) 11, ApiKeys.FETCH, (short) 12, ApiKeys.LIST_OFFSETS, (short) 6);

    private final ServerSocket server;
    private final Thread acceptor;
    private final MemoryRecords records;
    private final AtomicInteger connections = new AtomicInteger();
    private volatile boolean closed;

    public OlderKafkaStub() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        SimpleRecord[] simple = new SimpleRecord[RECORDS];
        for (int i = 0; i < RECORDS; i++) {
            simple[i] = new SimpleRecord(1_000L + i, null, ("record-" + i).getBytes());
        }
        records = MemoryRecords.withRecords(0L, Compression.NONE, LEADER_EPOCH, simple);
        acceptor = new Thread(this::accept, "older-kafka-stub");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The CRC of the one batch the stub holds. */
    public long batchChecksum() {
        return records.batches().iterator().next().checksum();
    }

    /** Connections accepted so far (a client that keeps its connection after a refused request opens one). */
    public int connections() {
        return connections.get();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket socket = server.accept();
                connections.incrementAndGet();
                Thread t = new Thread(() -> serve(socket), "older-kafka-stub-connection");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket socket) {
        try (socket; DataInputStream in = new DataInputStream(socket.getInputStream());
             DataOutputStream out = new DataOutputStream(socket.getOutputStream())) {
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                ByteBuffer buffer = ByteBuffer.wrap(frame);
                RequestHeader header = RequestHeader.parse(buffer);
                Short max = MAX_VERSIONS.get(header.apiKey());
                if (header.apiKey() == ApiKeys.API_VERSIONS && header.apiVersion() > max) {
                    // Kafka's answer to a newer client: its ranges, at v0, with UNSUPPORTED_VERSION
                    write(out, header, (short) 0, apiVersions(Errors.UNSUPPORTED_VERSION));
                    continue;
                }
                if (max == null || header.apiVersion() > max) {
                    return; // an older Kafka closes the connection on a request it cannot parse
                }
                AbstractRequest request = AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(),
                        new ByteBufferAccessor(buffer)).request;
                ApiMessage response = switch (header.apiKey()) {
                    case API_VERSIONS -> apiVersions(Errors.NONE);
                    case METADATA -> metadata();
                    case FETCH -> fetch((FetchRequest) request);
                    default -> null;
                };
                if (response == null) {
                    return;
                }
                write(out, header, header.apiVersion(), response);
            }
        } catch (IOException e) {
            // the client went away
        }
    }

    private static void write(DataOutputStream out, RequestHeader header, short version, ApiMessage body)
            throws IOException {
        ResponseHeader responseHeader = new ResponseHeader(header.correlationId(),
                header.apiKey().responseHeaderVersion(version));
        ByteBuffer bytes = RequestUtils.serialize(responseHeader.data(), responseHeader.headerVersion(), body,
                version);
        out.writeInt(bytes.remaining());
        out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
        out.flush();
    }

    private static ApiVersionsResponseData apiVersions(Errors error) {
        ApiVersionsResponseData data = new ApiVersionsResponseData().setErrorCode(error.code());
        MAX_VERSIONS.forEach((key, max) -> data.apiKeys().add(new ApiVersionsResponseData.ApiVersion()
                .setApiKey(key.id).setMinVersion((short) 0).setMaxVersion(max)));
        return data;
    }

    private MetadataResponseData metadata() {
        MetadataResponseData data = new MetadataResponseData().setClusterId(CLUSTER_ID).setControllerId(NODE_ID);
        data.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(NODE_ID)
                .setHost("127.0.0.1").setPort(port()));
        MetadataResponseData.MetadataResponseTopic topic = new MetadataResponseData.MetadataResponseTopic()
                .setName(TOPIC).setTopicId(TOPIC_ID);
        topic.partitions().add(new MetadataResponseData.MetadataResponsePartition().setPartitionIndex(0)
                .setLeaderId(NODE_ID).setLeaderEpoch(LEADER_EPOCH).setReplicaNodes(List.of(NODE_ID))
                .setIsrNodes(List.of(NODE_ID)));
        data.topics().add(topic);
        return data;
    }

    /** Every partition asked for gets the whole batch (or OFFSET_OUT_OF_RANGE past it), by topic name as v12 is. */
    private FetchResponseData fetch(FetchRequest request) {
        FetchResponseData data = new FetchResponseData();
        for (FetchRequestData.FetchTopic t : request.data().topics()) {
            FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse()
                    .setTopic(t.topic());
            for (FetchRequestData.FetchPartition p : t.partitions()) {
                FetchResponseData.PartitionData partition = new FetchResponseData.PartitionData()
                        .setPartitionIndex(p.partition()).setHighWatermark(RECORDS).setLastStableOffset(RECORDS)
                        .setLogStartOffset(0);
                if (!TOPIC.equals(t.topic()) || p.partition() != 0) {
                    partition.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                } else if (p.fetchOffset() > RECORDS) {
                    partition.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
                } else {
                    partition.setRecords(p.fetchOffset() < RECORDS ? records : MemoryRecords.EMPTY);
                }
                topic.partitions().add(partition);
            }
            data.responses().add(topic);
        }
        return data;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
    }
}
