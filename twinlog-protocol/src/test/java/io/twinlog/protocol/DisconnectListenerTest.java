package io.twinlog.protocol;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Disconnect listeners (what Kafka's share session cache needs to release a vanished member's records) are told the
 * id a request's context carried, once, whether the client closed the connection or the broker did.
 */
@Timeout(60)
class DisconnectListenerTest {
    private static final short VERSION = 3;
    private static final String CLOSE_ME = "close-me";

    private final List<String> disconnected = new CopyOnWriteArrayList<>();
    private final AtomicReference<String> lastConnectionId = new AtomicReference<>();
    private LoopbackServer broker;

    @BeforeEach
    void start() throws IOException {
        broker = LoopbackServer.plaintext(7, 1, 1, ApiRegistry.builder().add(ApiKeys.API_VERSIONS, this::answer)
                .build());
        broker.server.addDisconnectListener(disconnected::add);
    }

    @AfterEach
    void stop() throws Exception {
        broker.close();
    }

    private void answer(Request request) {
        lastConnectionId.set(request.context().connectionId);
        if (request.clientId().equals(CLOSE_ME)) {
            request.closeConnection();
        } else {
            request.respond(new ApiVersionsResponse(new ApiVersionsResponseData()));
        }
    }

    @Test
    void aConnectionTheClientClosesIsReportedWithItsRequestsConnectionId() throws Exception {
        String id;
        try (Socket socket = broker.connect()) {
            Frames.send(socket, new ApiVersionsRequest.Builder().build(VERSION), "client", 1);
            Frames.receive(socket, ApiKeys.API_VERSIONS, VERSION);
            id = lastConnectionId.get();
            assertEquals(List.of(), disconnected, "nothing is reported while the connection is open");
        }
        Poll.until("the closed connection reported", List.of(id), () -> List.copyOf(disconnected));
    }

    @Test
    void aConnectionTheBrokerClosesIsReportedToo() throws Exception {
        try (Socket socket = broker.connect()) {
            Frames.send(socket, new ApiVersionsRequest.Builder().build(VERSION), CLOSE_ME, 1);
            Frames.assertClosedByBroker(socket);
            Poll.until("the connection the broker closed reported", List.of(lastConnectionId.get()),
                    () -> List.copyOf(disconnected));
        }
    }
}
