package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessages;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * Request and response bodies of the mirror APIs, framed with Kafka's own header messages: every mirror API version
 * is flexible, so requests carry request header v2 and responses response header v1 (both with tagged fields).
 * The size prefix is added by the sender ({@code ByteBufferSend.sizePrefixed}).
 *
 * <p>Kafka's {@code NetworkClient} cannot carry these requests: it knows APIs only as its {@code ApiKeys} enum
 * (header, version negotiation and response parsing all go through it), and the mirror APIs use keys of their own.
 */
public final class MirrorFrames {
    static final short REQUEST_HEADER_VERSION = 2;
    static final short RESPONSE_HEADER_VERSION = 1;

    private MirrorFrames() {
    }

    /** Header and body of one request, ready to send (without the size prefix). */
    public static ByteBuffer request(MirrorApi api, short version, int correlationId, String clientId, Struct body) {
        RequestHeaderData header = new RequestHeaderData()
                .setRequestApiKey(api.id)
                .setRequestApiVersion(version)
                .setCorrelationId(correlationId)
                .setClientId(clientId);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int headerSize = header.size(cache, REQUEST_HEADER_VERSION);
        ByteBuffer buffer = ByteBuffer.allocate(headerSize + body.sizeOf());
        header.write(new ByteBufferAccessor(buffer), cache, REQUEST_HEADER_VERSION);
        body.writeTo(buffer);
        buffer.flip();
        return buffer;
    }

    /**
     * The body of a response to the request with {@code correlationId}.
     *
     * @throws MalformedResponseException when the correlation id differs or the body does not parse: the peer
     *         speaks another protocol or version, so the connection must not be used again
     */
    public static Struct response(MirrorApi api, short version, int correlationId, ByteBuffer payload)
            throws MalformedResponseException {
        try {
            ResponseHeader header = ResponseHeader.parse(payload, RESPONSE_HEADER_VERSION);
            if (header.correlationId() != correlationId) {
                throw new MalformedResponseException("Response correlation id " + header.correlationId()
                        + " does not match request " + correlationId);
            }
            return MirrorMessages.decode(api.responseSchema(version), payload);
        } catch (SchemaException | IllegalArgumentException | BufferUnderflowException e) {
            throw new MalformedResponseException("Could not read the " + api.name + " response: " + e.getMessage());
        }
    }

    /**
     * The body of the response to a Kafka API request (the ACL APIs, which carry ClusterMirror ACLs), sent at
     * {@code version} with {@code correlationId}.
     *
     * @throws MalformedResponseException as {@link #response(MirrorApi, short, int, ByteBuffer)}
     */
    public static AbstractResponse kafkaResponse(ApiKeys api, short version, int correlationId, ByteBuffer payload)
            throws MalformedResponseException {
        try {
            ResponseHeader header = ResponseHeader.parse(payload, api.responseHeaderVersion(version));
            if (header.correlationId() != correlationId) {
                throw new MalformedResponseException("Response correlation id " + header.correlationId()
                        + " does not match request " + correlationId);
            }
            return AbstractResponse.parseResponse(api, new ByteBufferAccessor(payload), version);
        } catch (SchemaException | IllegalArgumentException | BufferUnderflowException e) {
            throw new MalformedResponseException("Could not read the " + api.name + " response: " + e.getMessage());
        }
    }

    /** A response that is not a mirror API response of the expected version. */
    public static final class MalformedResponseException extends IOException {
        MalformedResponseException(String message) {
            super(message);
        }
    }
}
