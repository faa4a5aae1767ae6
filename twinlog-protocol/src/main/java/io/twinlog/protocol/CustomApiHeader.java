package io.twinlog.protocol;

import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.utils.internals.ByteUtils;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The request header of a Twinlog API (an API key Apache Kafka does not define): Kafka's request header v2 —
 * api key, api version, correlation id, nullable client id, tagged fields — read by hand because kafka-clients
 * only parses headers of keys it knows. Responses use Kafka's response header v1 (correlation id, tagged fields).
 */
public record CustomApiHeader(short apiKey, short apiVersion, int correlationId, String clientId) {

    /** Reads the header and leaves the buffer at the start of the body. */
    public static CustomApiHeader parse(ByteBuffer buffer) {
        try {
            short apiKey = buffer.getShort();
            short apiVersion = buffer.getShort();
            int correlationId = buffer.getInt();
            short clientIdLength = buffer.getShort();
            String clientId = null;
            if (clientIdLength >= 0) {
                byte[] b = new byte[clientIdLength];
                buffer.get(b);
                clientId = new String(b, StandardCharsets.UTF_8);
            }
            int taggedFields = ByteUtils.readUnsignedVarint(buffer);
            for (int i = 0; i < taggedFields; i++) {
                ByteUtils.readUnsignedVarint(buffer); // tag
                int size = ByteUtils.readUnsignedVarint(buffer);
                buffer.position(buffer.position() + size);
            }
            return new CustomApiHeader(apiKey, apiVersion, correlationId, clientId);
        } catch (RuntimeException e) {
            // broad: a header of any malformed shape is the client's InvalidRequestException
            throw new InvalidRequestException("Malformed request header: " + e);
        }
    }

    /** Writes this header (request header v2) into {@code buffer}. */
    public void writeTo(ByteBuffer buffer) {
        buffer.putShort(apiKey).putShort(apiVersion).putInt(correlationId);
        if (clientId == null) {
            buffer.putShort((short) -1);
        } else {
            byte[] b = clientId.getBytes(StandardCharsets.UTF_8);
            buffer.putShort((short) b.length).put(b);
        }
        ByteUtils.writeUnsignedVarint(0, buffer);
    }

    public int sizeInBytes() {
        return 2 + 2 + 4 + 2 + (clientId == null ? 0 : clientId.getBytes(StandardCharsets.UTF_8).length) + 1;
    }

    /** A size-prefixed response frame: [size][correlation id][no tagged fields][body]. */
    public ByteBuffer responseFrame(ByteBuffer body) {
        ByteBuffer frame = ByteBuffer.allocate(4 + 4 + 1 + body.remaining());
        frame.putInt(4 + 1 + body.remaining()).putInt(correlationId);
        ByteUtils.writeUnsignedVarint(0, frame);
        frame.put(body.duplicate()).flip();
        return frame;
    }
}
