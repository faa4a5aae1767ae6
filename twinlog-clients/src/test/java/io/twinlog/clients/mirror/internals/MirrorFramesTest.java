package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessages;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Mirror API frames: request header v2 with the mirror key, response header v1, and what a wrong answer gives. */
@Timeout(10)
class MirrorFramesTest {

    @Test
    void aRequestCarriesKafkasHeaderV2WithTheMirrorKey() {
        Struct body = MirrorMessages.newStruct(MirrorApi.LIST_CLUSTER_MIRRORS.requestSchema(MirrorApi.LATEST_VERSION));
        body.set("include_topic_names", true);
        ByteBuffer frame = MirrorFrames.request(MirrorApi.LIST_CLUSTER_MIRRORS, MirrorApi.LATEST_VERSION, 42,
                "ops-console", body);

        RequestHeaderData header = new RequestHeaderData(new ByteBufferAccessor(frame), (short) 2);
        assertEquals(7002, header.requestApiKey());
        assertEquals(MirrorApi.LATEST_VERSION, header.requestApiVersion());
        assertEquals(42, header.correlationId());
        assertEquals("ops-console", header.clientId());
        Struct read = MirrorApi.LIST_CLUSTER_MIRRORS.requestSchema(MirrorApi.LATEST_VERSION).read(frame);
        assertEquals(Boolean.TRUE, read.get("include_topic_names"));
        assertFalse(frame.hasRemaining(), "nothing after the body");
    }

    @Test
    void aResponseIsReadAfterItsHeaderV1() throws Exception {
        Struct body = MirrorMessages.response(MirrorApi.DELETE_CLUSTER_MIRROR, (short) 7101, "No cluster mirror 'x'");
        Struct read = MirrorFrames.response(MirrorApi.DELETE_CLUSTER_MIRROR, MirrorApi.LATEST_VERSION, 7,
                responseFrame(7, body));
        assertEquals((short) 7101, read.getShort("error_code"));
        assertEquals("No cluster mirror 'x'", read.getString("error_message"));
    }

    @Test
    void anAnswerToAnotherRequestOrInAnotherShapeIsMalformed() {
        Struct body = MirrorMessages.response(MirrorApi.DELETE_CLUSTER_MIRROR, (short) 0, null);
        MirrorFrames.MalformedResponseException wrongRequest = assertThrows(
                MirrorFrames.MalformedResponseException.class,
                () -> MirrorFrames.response(MirrorApi.DELETE_CLUSTER_MIRROR, MirrorApi.LATEST_VERSION, 8,
                        responseFrame(7, body)));
        assertEquals("Response correlation id 7 does not match request 8", wrongRequest.getMessage());
        MirrorFrames.MalformedResponseException truncated = assertThrows(
                MirrorFrames.MalformedResponseException.class,
                () -> MirrorFrames.response(MirrorApi.LIST_CLUSTER_MIRRORS, MirrorApi.LATEST_VERSION, 7,
                        responseFrame(7, body)));
        assertTrue(truncated.getMessage().startsWith("Could not read the ListClusterMirrors response: "),
                truncated.getMessage());
    }

    private static ByteBuffer responseFrame(int correlationId, Struct body) {
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(correlationId);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buffer = ByteBuffer.allocate(header.size(cache, (short) 1) + body.sizeOf());
        header.write(new ByteBufferAccessor(buffer), cache, (short) 1);
        body.writeTo(buffer);
        buffer.flip();
        return buffer;
    }
}
