package io.twinlog.protocol;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A response the broker cannot write at the request's version must close the connection, never leave the client
 * waiting on a muted connection. The handler here answers ListOffsets with a leader epoch, a field that exists only
 * from version 4, so writing it at version 2 fails, as it did for librdkafka's ListOffsets v2 (issue 10).
 */
@Timeout(60)
class UnwritableResponseTest {
    private static final int READ_TIMEOUT_MS = 10_000;

    private SocketServer server;
    private RequestHandlerPool handlers;
    private final BrokerMetrics metrics = BrokerMetrics.unreported(1, Time.SYSTEM);

    @BeforeEach
    void start() throws IOException {
        ApiRegistry registry = ApiRegistry.builder()
                .add(ApiKeys.API_VERSIONS, request -> request.respond(new ApiVersionsResponse(
                        new ApiVersionsResponseData())))
                .add(ApiKeys.LIST_OFFSETS, UnwritableResponseTest::answerWithLeaderEpoch)
                .build();
        RequestChannel channel = new RequestChannel(16);
        handlers = new RequestHandlerPool(1, 1, channel, registry, metrics);
        BrokerConfig config = new BrokerConfig(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0"));
        server = new SocketServer(1, config.listeners().get(0), 1, 1 << 20, 600_000,
                SocketServer.SocketBuffers.OS_DEFAULT, channel, Time.SYSTEM,
                registry::isCustomApi, new ListenerChannels(config, ListenerChannels.newCredentialCache(),
                        v -> new ApiVersionsResponse(new ApiVersionsResponseData()), Time.SYSTEM),
                metrics, new RequestMetrics(metrics), ResponseThrottling.NONE);
        server.bind();
        handlers.start();
        server.startProcessing();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        handlers.close();
        metrics.close();
    }

    private static void answerWithLeaderEpoch(Request request) {
        ListOffsetsResponseData data = new ListOffsetsResponseData();
        ListOffsetsResponseData.ListOffsetsTopicResponse topic = new ListOffsetsResponseData.ListOffsetsTopicResponse()
                .setName("t");
        topic.partitions().add(new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(0)
                .setOffset(0).setTimestamp(-1).setLeaderEpoch(3));
        data.topics().add(topic);
        request.respond(new ListOffsetsResponse(data));
    }

    @Test
    void responseThatCannotBeWrittenClosesTheConnection() throws IOException {
        try (Socket socket = connect()) {
            send(socket, listOffsets((short) 2), 1);
            assertClosedByBroker(socket);
        }
    }

    @Test
    void sameResponseAtAVersionThatCarriesItIsAnswered() throws IOException {
        try (Socket socket = connect()) {
            send(socket, listOffsets((short) 4), 1);
            ListOffsetsResponse response = receive(socket, ApiKeys.LIST_OFFSETS, (short) 4);
            assertEquals(3, response.data().topics().get(0).partitions().get(0).leaderEpoch());
        }
    }

    @Test
    void otherConnectionsAreServedAfterAClosedOne() throws IOException {
        try (Socket broken = connect()) {
            send(broken, listOffsets((short) 1), 1);
            assertClosedByBroker(broken);
        }
        try (Socket socket = connect()) {
            send(socket, new ApiVersionsRequest.Builder().build((short) 3), 1);
            ApiVersionsResponse response = receive(socket, ApiKeys.API_VERSIONS, (short) 3);
            assertEquals(0, response.data().errorCode());
        }
    }

    private static ListOffsetsRequest listOffsets(short version) {
        ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic().setName("t");
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                .setTimestamp(ListOffsetsRequest.EARLIEST_TIMESTAMP));
        return ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(List.of(topic)).build(version);
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", server.boundPort()), 5_000);
        socket.setSoTimeout(READ_TIMEOUT_MS);
        return socket;
    }

    private static void send(Socket socket, AbstractRequest request, int correlationId) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "unwritable-test", correlationId);
        ByteBuffer payload = request.serializeWithHeader(header);
        ByteBuffer frame = ByteBuffer.allocate(4 + payload.remaining());
        frame.putInt(payload.remaining()).put(payload).flip();
        socket.getOutputStream().write(frame.array());
        socket.getOutputStream().flush();
    }

    @SuppressWarnings("unchecked")
    private static <T extends AbstractResponse> T receive(Socket socket, ApiKeys key, short version)
            throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        ResponseHeader.parse(buffer, key.responseHeaderVersion(version));
        return (T) AbstractResponse.parseResponse(key, new ByteBufferAccessor(buffer), version);
    }

    /** End of stream or a reset before the read timeout: closed. A timeout means the broker left us hanging. */
    private static void assertClosedByBroker(Socket socket) throws IOException {
        int next;
        try {
            next = socket.getInputStream().read();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("The connection was left open and unanswered for " + READ_TIMEOUT_MS + " ms");
        } catch (SocketException e) {
            return; // reset by the broker: closed
        }
        assertEquals(-1, next, "the broker answered instead of closing the connection");
    }
}
