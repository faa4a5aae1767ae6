package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
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
    private static final short VERSION = 0;

    @Test
    void aRequestCarriesKafkasHeaderV2WithTheMirrorKey() {
        ListClusterMirrorsRequestData body = new ListClusterMirrorsRequestData().setIncludeTopicNames(true);
        ByteBuffer frame = MirrorFrames.request(VERSION, 42, "ops-console", body);

        ByteBufferAccessor readable = new ByteBufferAccessor(frame);
        RequestHeaderData header = new RequestHeaderData(readable, (short) 2);
        assertEquals(7002, header.requestApiKey());
        assertEquals(VERSION, header.requestApiVersion());
        assertEquals(42, header.correlationId());
        assertEquals("ops-console", header.clientId());
        assertEquals(body, new ListClusterMirrorsRequestData(readable, VERSION));
        assertFalse(frame.hasRemaining(), "nothing after the body");
    }

    @Test
    void aResponseIsReadAfterItsHeaderV1() throws Exception {
        ApiMessage body = MirrorApi.DELETE_CLUSTER_MIRROR.errorResponse((short) 7101, "No cluster mirror 'x'");
        DeleteClusterMirrorResponseData read = MirrorFrames.response(MirrorApi.DELETE_CLUSTER_MIRROR, VERSION, 7,
                responseFrame(7, body), DeleteClusterMirrorResponseData::new);
        assertEquals((short) 7101, read.errorCode());
        assertEquals("No cluster mirror 'x'", read.errorMessage());
    }

    @Test
    void anAnswerToAnotherRequestOrInAnotherShapeIsMalformed() {
        ApiMessage body = MirrorApi.DELETE_CLUSTER_MIRROR.errorResponse((short) 0, null);
        MirrorFrames.MalformedResponseException wrongRequest = assertThrows(
                MirrorFrames.MalformedResponseException.class,
                () -> MirrorFrames.response(MirrorApi.DELETE_CLUSTER_MIRROR, VERSION, 8, responseFrame(7, body),
                        DeleteClusterMirrorResponseData::new));
        assertEquals("Response correlation id 7 does not match request 8", wrongRequest.getMessage());
        MirrorFrames.MalformedResponseException truncated = assertThrows(
                MirrorFrames.MalformedResponseException.class,
                () -> MirrorFrames.response(MirrorApi.LIST_CLUSTER_MIRRORS, VERSION, 7, responseFrame(7, body),
                        ListClusterMirrorsResponseData::new));
        assertTrue(truncated.getMessage().startsWith("Could not read the ListClusterMirrors response: "),
                truncated.getMessage());
    }

    private static ByteBuffer responseFrame(int correlationId, ApiMessage body) {
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(correlationId);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buffer = ByteBuffer.allocate(header.size(cache, (short) 1) + body.size(cache, VERSION));
        ByteBufferAccessor writable = new ByteBufferAccessor(buffer);
        header.write(writable, cache, (short) 1);
        body.write(writable, cache, VERSION);
        buffer.flip();
        return buffer;
    }
}
