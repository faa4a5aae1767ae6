package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessageReader;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * Request and response bodies of the mirror APIs (their generated message classes), framed with Kafka's own header
 * messages: every mirror API version is flexible, so requests carry request header v2 and responses response header
 * v1 (both with tagged fields), as the generated {@code ApiMessageType} says. The size prefix is added by the sender
 * ({@code ByteBufferSend.sizePrefixed}).
 *
 * <p>Kafka's {@code NetworkClient} cannot carry these requests: it knows APIs only as its {@code ApiKeys} enum
 * (header, version negotiation and response parsing all go through it), and the mirror APIs use keys of their own.
 */
public final class MirrorFrames {
    private MirrorFrames() {
    }

    /** Header and body of one request, ready to send (without the size prefix). */
    public static ByteBuffer request(short version, int correlationId, String clientId, ApiMessage body) {
        MirrorApi api = MirrorApi.of(body);
        short headerVersion = api.requestHeaderVersion(version);
        RequestHeaderData header = new RequestHeaderData()
                .setRequestApiKey(api.id)
                .setRequestApiVersion(version)
                .setCorrelationId(correlationId)
                .setClientId(clientId);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buffer = ByteBuffer.allocate(header.size(cache, headerVersion) + body.size(cache, version));
        ByteBufferAccessor accessor = new ByteBufferAccessor(buffer);
        header.write(accessor, cache, headerVersion);
        body.write(accessor, cache, version);
        buffer.flip();
        return buffer;
    }

    /**
     * The body of a response to the request with {@code correlationId}.
     *
     * @throws MalformedResponseException when the correlation id differs or the body does not parse: the peer
     *         speaks another protocol or version, so the connection must not be used again
     */
    public static <R extends ApiMessage> R response(MirrorApi api, short version, int correlationId, ByteBuffer payload,
                                                    MirrorMessageReader<R> reader)
            throws MalformedResponseException {
        ResponseHeader header;
        try {
            header = ResponseHeader.parse(payload, api.responseHeaderVersion(version));
        } catch (SchemaException | IllegalArgumentException | BufferUnderflowException e) {
            throw new MalformedResponseException("Could not read the " + api.name + " response: " + e.getMessage());
        }
        if (header.correlationId() != correlationId) {
            throw new MalformedResponseException("Response correlation id " + header.correlationId()
                    + " does not match request " + correlationId);
        }
        try {
            return reader.read(new ByteBufferAccessor(payload), version);
        } catch (RuntimeException e) {
            // broad: the generated readers report a malformed body with plain RuntimeExceptions ("non-nullable
            // field ... was serialized as null") besides BufferUnderflowException; each becomes this error
            throw new MalformedResponseException("Could not read the " + api.name + " response: " + e.getMessage());
        }
    }

    /**
     * The body of the response to a Kafka API request (the ACL APIs, which carry ClusterMirror ACLs), sent at
     * {@code version} with {@code correlationId}.
     *
     * @throws MalformedResponseException as {@link #response(MirrorApi, short, int, ByteBuffer, MirrorMessageReader)}
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
