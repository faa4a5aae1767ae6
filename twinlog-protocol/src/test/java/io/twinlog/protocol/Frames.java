package io.twinlog.protocol;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Kafka request and response frames written and read over a blocking socket (plain or TLS), for tests. */
final class Frames {
    private Frames() {
    }

    /** A response with the correlation id its header carried. */
    record Answer<T extends AbstractResponse>(int correlationId, T body) {
    }

    static void send(Socket socket, AbstractRequest request, String clientId, int correlationId) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), clientId, correlationId);
        ByteBuffer payload = request.serializeWithHeader(header);
        ByteBuffer frame = ByteBuffer.allocate(4 + payload.remaining());
        frame.putInt(payload.remaining()).put(payload).flip();
        socket.getOutputStream().write(frame.array());
        socket.getOutputStream().flush();
    }

    @SuppressWarnings("unchecked")
    static <T extends AbstractResponse> Answer<T> receive(Socket socket, ApiKeys key, short version)
            throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        ResponseHeader header = ResponseHeader.parse(buffer, key.responseHeaderVersion(version));
        return new Answer<>(header.correlationId(),
                (T) AbstractResponse.parseResponse(key, new ByteBufferAccessor(buffer), version));
    }

    /** End of stream or a reset before the read timeout: closed. A timeout means the broker left us hanging. */
    static void assertClosedByBroker(Socket socket) throws IOException {
        int next;
        try {
            next = socket.getInputStream().read();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("The connection was left open and unanswered for " + socket.getSoTimeout()
                    + " ms");
        } catch (SocketException e) {
            return; // reset by the broker: closed
        }
        assertEquals(-1, next, "the broker answered instead of closing the connection");
    }
}
