package io.twinlog.testkit;

import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A blocking, one-request-at-a-time Kafka protocol connection for tests that must send exactly what they choose:
 * hand-built requests (duplicate sequences, corrupt batches) and raw bytes (malformed frames).
 */
public final class RawKafkaConnection implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int correlationId;

    public RawKafkaConnection(String host, int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress(host, port), 5_000);
        socket.setSoTimeout(15_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    public static RawKafkaConnection to(String bootstrap) throws IOException {
        String first = bootstrap.split(",")[0];
        int colon = first.lastIndexOf(':');
        return new RawKafkaConnection(first.substring(0, colon), Integer.parseInt(first.substring(colon + 1)));
    }

    /** Sends a typed request at the given version and parses the typed response. */
    @SuppressWarnings("unchecked")
    public <T extends AbstractResponse> T send(AbstractRequest request) throws IOException {
        ApiKeys key = request.apiKey();
        short version = request.version();
        RequestHeader header = new RequestHeader(key, version, "raw-test-client", ++correlationId);
        ByteBuffer body = request.serializeWithHeader(header);
        writeFrame(body);
        ByteBuffer response = readFrame();
        ResponseHeader.parse(response, key.responseHeaderVersion(version));
        return (T) AbstractResponse.parseResponse(key, new ByteBufferAccessor(response), version);
    }

    /**
     * Logs in with SASL/PLAIN as Kafka clients do (SaslHandshake v1, then SaslAuthenticate), on a SASL_PLAINTEXT
     * listener, before any other request.
     *
     * @throws IOException when the broker refuses the mechanism or the credentials
     */
    public void authenticatePlain(String user, String password) throws IOException {
        SaslHandshakeResponse handshake = send(new SaslHandshakeRequest.Builder(
                new SaslHandshakeRequestData().setMechanism("PLAIN")).build((short) 1));
        if (handshake.error() != Errors.NONE) {
            throw new IOException("SaslHandshake refused: " + handshake.error() + " " + handshake.enabledMechanisms());
        }
        byte[] token = ("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8);
        SaslAuthenticateResponse login = send(new SaslAuthenticateRequest.Builder(
                new SaslAuthenticateRequestData().setAuthBytes(token)).build((short) 2));
        if (login.error() != Errors.NONE) {
            throw new IOException("SaslAuthenticate refused: " + login.error() + " " + login.errorMessage());
        }
    }

    /** Writes bytes as they are (the caller builds the size prefix, or not). */
    public void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    public void writeFrame(ByteBuffer payload) throws IOException {
        ByteBuffer frame = ByteBuffer.allocate(4 + payload.remaining());
        frame.putInt(payload.remaining()).put(payload.duplicate()).flip();
        writeRaw(frame.array());
    }

    /** Reads one size-prefixed frame; EOFException if the broker closed the connection. */
    public ByteBuffer readFrame() throws IOException {
        int size = in.readInt();
        byte[] b = new byte[size];
        in.readFully(b);
        return ByteBuffer.wrap(b);
    }

    /**
     * How long a read waits for the broker before it fails with {@link SocketTimeoutException} (15 s at
     * first): fuzz tests shorten it for requests the broker may rightly leave unanswered (acks=0, long polls).
     */
    public void readTimeout(Duration timeout) throws SocketException {
        socket.setSoTimeout(Math.toIntExact(timeout.toMillis()));
    }

    /** True when the broker has closed this connection (read returns end of stream). */
    public boolean isClosedByBroker() throws IOException {
        try {
            socket.setSoTimeout(10_000);
            int b = in.read();
            return b == -1;
        } catch (EOFException e) {
            return true;
        } catch (SocketException e) {
            return true; // connection reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
