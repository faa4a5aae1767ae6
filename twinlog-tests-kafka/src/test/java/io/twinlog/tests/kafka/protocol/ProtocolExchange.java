package io.twinlog.tests.kafka.protocol;

import io.twinlog.testkit.RawKafkaConnection;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.IOException;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Sends one request message at an explicit version and parses the answer with kafka-clients at that version,
 * strictly: the correlation id must match and the response must use every byte of its frame.
 */
final class ProtocolExchange {
    static final String CLIENT_ID = "twinlog-version-matrix";
    private static int nextCorrelationId = 1;

    private ProtocolExchange() {
    }

    /** The request as kafka-clients would put it on the wire (it refuses fields the version does not carry). */
    static AbstractRequest request(ApiKeys key, short version, ApiMessage data) {
        ByteBuffer body = MessageUtil.toByteBufferAccessor(data, version).buffer();
        return AbstractRequest.parseRequest(key, version, new ByteBufferAccessor(body)).request;
    }

    static AbstractResponse exchange(RawKafkaConnection connection, AbstractRequest request) throws IOException {
        int correlationId = nextCorrelationId();
        ApiKeys key = request.apiKey();
        short version = request.version();
        connection.writeFrame(request.serializeWithHeader(new RequestHeader(key, version, CLIENT_ID, correlationId)));
        ByteBuffer frame = connection.readFrame();
        ResponseHeader header = ResponseHeader.parse(frame, key.responseHeaderVersion(version));
        assertEquals(correlationId, header.correlationId(), "correlation id of the " + key + " v" + version + " answer");
        AbstractResponse response = AbstractResponse.parseResponse(key, new ByteBufferAccessor(frame), version);
        assertEquals(0, frame.remaining(), key + " v" + version + " response has bytes its schema does not read");
        return response;
    }

    private static synchronized int nextCorrelationId() {
        return nextCorrelationId++;
    }
}
