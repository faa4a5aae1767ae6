package io.twinlog.protocol;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.Socket;
import java.util.List;

import static io.twinlog.protocol.Frames.assertClosedByBroker;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A response the broker cannot write at the request's version must close the connection, never leave the client
 * waiting on a muted connection. The handler here answers ListOffsets with a leader epoch, a field that exists only
 * from version 4, so writing it at version 2 fails, as it did for librdkafka's ListOffsets v2 (issue 10).
 */
@Timeout(60)
class UnwritableResponseTest {
    private LoopbackServer broker;

    @BeforeEach
    void start() throws IOException {
        ApiRegistry registry = ApiRegistry.builder()
                .add(ApiKeys.API_VERSIONS, request -> request.respond(new ApiVersionsResponse(
                        new ApiVersionsResponseData())))
                .add(ApiKeys.LIST_OFFSETS, UnwritableResponseTest::answerWithLeaderEpoch)
                .build();
        broker = LoopbackServer.plaintext(1, 1, 1, registry);
    }

    @AfterEach
    void stop() throws Exception {
        broker.close();
    }

    private static void answerWithLeaderEpoch(Request request) {
        ListOffsetsResponseData data = new ListOffsetsResponseData();
        ListOffsetsResponseData.ListOffsetsTopicResponse topic = new ListOffsetsResponseData.ListOffsetsTopicResponse()
                .setName("t");
        topic.partitions().add(new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(0)
                .setOffset(0).setTimestamp(-1).setLeaderEpoch(3));
        data.topics().add(topic);
        request.respond(new ListOffsetsResponse(data));
    }

    @Test
    void responseThatCannotBeWrittenClosesTheConnection() throws IOException {
        try (Socket socket = broker.connect()) {
            send(socket, listOffsets((short) 2));
            assertClosedByBroker(socket);
        }
    }

    @Test
    void sameResponseAtAVersionThatCarriesItIsAnswered() throws IOException {
        try (Socket socket = broker.connect()) {
            send(socket, listOffsets((short) 4));
            ListOffsetsResponse response = Frames.<ListOffsetsResponse>receive(socket, ApiKeys.LIST_OFFSETS,
                    (short) 4).body();
            assertEquals(3, response.data().topics().get(0).partitions().get(0).leaderEpoch());
        }
    }

    @Test
    void otherConnectionsAreServedAfterAClosedOne() throws IOException {
        try (Socket broken = broker.connect()) {
            send(broken, listOffsets((short) 1));
            assertClosedByBroker(broken);
        }
        try (Socket socket = broker.connect()) {
            send(socket, new ApiVersionsRequest.Builder().build((short) 3));
            ApiVersionsResponse response = Frames.<ApiVersionsResponse>receive(socket, ApiKeys.API_VERSIONS,
                    (short) 3).body();
            assertEquals(0, response.data().errorCode());
        }
    }

    private static ListOffsetsRequest listOffsets(short version) {
        ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic().setName("t");
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                .setTimestamp(ListOffsetsRequest.EARLIEST_TIMESTAMP));
        return ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(List.of(topic)).build(version);
    }

    private static void send(Socket socket, AbstractRequest request) throws IOException {
        Frames.send(socket, request, "unwritable-test", 1);
    }
}
