package io.twinlog.protocol.client;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersionCollection;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The broker's client on the shared transport, against a fake broker on a loopback socket: versions negotiated
 * with ApiVersions on a new connection (asked again at the version an UNSUPPORTED_VERSION answer names), each
 * request at the newest version both serve, an API the broker does not serve refused without closing the
 * connection, and a broker that closes it an {@link IOException}.
 */
@Timeout(60)
class InterBrokerClientTest {
    private static final short LATEST_API_VERSIONS = ApiKeys.API_VERSIONS.latestVersion();

    private final ServerSocket server = newServer();
    private final InterBrokerClient client = new InterBrokerClient("test-client", 10_000, 1 << 16, Time.SYSTEM);
    private final Node broker = new Node(1, "127.0.0.1", server.getLocalPort());
    /** Each request the fake broker read: its key and version. */
    private final List<String> requests = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() throws IOException {
        client.close();
        server.close();
    }

    @Test
    void versionsAreNegotiatedOnceAndEachRequestGoesAtTheNewestBothServe() throws Exception {
        serve(LATEST_API_VERSIONS, (short) 9, 2);
        MetadataResponse first = client.send(broker, new MetadataRequest.Builder(List.of(), false));
        InterBrokerClient.Exchange<MetadataResponse> second = client.exchange(broker,
                new MetadataRequest.Builder(List.of(), false));
        assertEquals("cluster-a", first.clusterId());
        assertEquals(9, second.version());
        assertEquals(List.of("API_VERSIONS v" + ApiKeys.API_VERSIONS.latestVersion(), "METADATA v9", "METADATA v9"),
                requests);
    }

    @Test
    void aBrokerThatDoesNotServeTheNewestApiVersionsIsAskedAgainAtTheVersionItNames() throws Exception {
        serve(2, (short) 9, 1);
        client.send(broker, new MetadataRequest.Builder(List.of(), false));
        assertEquals(List.of("API_VERSIONS v" + ApiKeys.API_VERSIONS.latestVersion(), "API_VERSIONS v2",
                "METADATA v9"), requests);
    }

    @Test
    void anApiTheBrokerDoesNotServeIsRefusedAndTheConnectionStays() throws Exception {
        serve(LATEST_API_VERSIONS, (short) 9, 1);
        assertThrows(UnsupportedApiVersionException.class, () -> client.send(broker,
                new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData())));
        client.send(broker, new MetadataRequest.Builder(List.of(), false));
        assertEquals(List.of("API_VERSIONS v" + ApiKeys.API_VERSIONS.latestVersion(), "METADATA v9"), requests);
    }

    @Test
    void aBrokerThatClosesTheConnectionIsAnIOException() throws Exception {
        serve(LATEST_API_VERSIONS, (short) 9, 0); // answers ApiVersions, then closes on the first request
        assertThrows(IOException.class, () -> client.send(broker, new MetadataRequest.Builder(List.of(), false)));
    }

    /**
     * A fake broker on one connection: answers ApiVersions (UNSUPPORTED_VERSION above {@code maxApiVersions}),
     * then {@code metadataAnswers} Metadata requests, then closes.
     */
    private void serve(int maxApiVersions, short maxMetadata, int metadataAnswers) {
        Thread t = new Thread(() -> {
            try (Socket socket = server.accept()) {
                DataInputStream in = new DataInputStream(socket.getInputStream());
                DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                int answered = 0;
                while (true) {
                    byte[] bytes = new byte[in.readInt()];
                    in.readFully(bytes);
                    RequestHeader header = RequestHeader.parse(ByteBuffer.wrap(bytes));
                    requests.add(header.apiKey() + " v" + header.apiVersion());
                    AbstractResponse response;
                    short version = header.apiVersion();
                    if (header.apiKey() == ApiKeys.API_VERSIONS) {
                        response = apiVersions(maxApiVersions, maxMetadata, version);
                        if (version > maxApiVersions) {
                            version = 0; // a broker answers an unsupported ApiVersions at v0
                        }
                    } else if (answered++ < metadataAnswers) {
                        response = new MetadataResponse(new MetadataResponseData().setClusterId("cluster-a"), version);
                    } else {
                        return;
                    }
                    ResponseHeader responseHeader = new ResponseHeader(header.correlationId(),
                            header.apiKey().responseHeaderVersion(version));
                    ByteBuffer payload = RequestUtils.serialize(responseHeader.data(), responseHeader.headerVersion(),
                            response.data(), version);
                    out.writeInt(payload.remaining());
                    out.write(payload.array(), payload.arrayOffset() + payload.position(), payload.remaining());
                    out.flush();
                }
            } catch (IOException e) {
                // the client closed the connection: the fake broker's session ends
            }
        }, "fake-broker");
        t.setDaemon(true);
        t.start();
    }

    private static ApiVersionsResponse apiVersions(int maxApiVersions, short maxMetadata, short asked) {
        ApiVersionCollection keys = new ApiVersionCollection();
        keys.add(new ApiVersion().setApiKey(ApiKeys.API_VERSIONS.id).setMinVersion((short) 0)
                .setMaxVersion((short) maxApiVersions));
        if (asked > maxApiVersions) {
            return new ApiVersionsResponse(new ApiVersionsResponseData()
                    .setErrorCode(Errors.UNSUPPORTED_VERSION.code()).setApiKeys(keys));
        }
        keys.add(new ApiVersion().setApiKey(ApiKeys.METADATA.id).setMinVersion((short) 0).setMaxVersion(maxMetadata));
        return new ApiVersionsResponse(new ApiVersionsResponseData().setApiKeys(keys));
    }

    private static ServerSocket newServer() {
        try {
            return new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
