package io.twinlog.tests.groups;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaRequests;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Bad group requests get Kafka's error codes, sent raw so each code is seen as the wire carries it: member id
 * required, unknown member, illegal generation, rebalance in progress, not coordinator, unknown group, offsets for
 * an unknown topic, and client writes to {@code __consumer_offsets}.
 */
@Timeout(300)
class GroupErrorsTest {
    private static final String GROUP = "errors";
    private static final short JOIN_V = 9;

    @Test
    void badGroupRequestsGetKafkasErrorCodes() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(2).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("t", 2, (short) 2))).all().get();
            FindCoordinatorResponse found = Waits.waitFor("a coordinator for the group", () -> {
                try (RawKafkaConnection any = RawKafkaConnection.to(cluster.bootstrapServers())) {
                    return any.<FindCoordinatorResponse>send(new FindCoordinatorRequest.Builder(
                            new FindCoordinatorRequestData().setKeyType((byte) 0)
                                    .setCoordinatorKeys(List.of(GROUP))).build((short) 6));
                }
            }, r -> r.coordinators().get(0).errorCode() == Errors.NONE.code());
            int coordinator = found.coordinators().get(0).nodeId();
            int other = coordinator == 0 ? 1 : 0;

            try (RawKafkaConnection conn = RawKafkaConnection.to(cluster.broker(coordinator).bootstrapServers());
                 RawKafkaConnection conn2 = RawKafkaConnection.to(cluster.broker(coordinator).bootstrapServers());
                 RawKafkaConnection elsewhere = RawKafkaConnection.to(cluster.broker(other).bootstrapServers())) {
                // the coordinator loads its partition right after the election: until then clients are told
                // NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS and retry, as they do with Kafka
                JoinGroupResponse first = Waits.waitFor("the coordinator loaded", () -> conn.send(join("")),
                        r -> r.error() != Errors.NOT_COORDINATOR && r.error() != Errors.COORDINATOR_LOAD_IN_PROGRESS);
                assertEquals(Errors.MEMBER_ID_REQUIRED, first.error());
                String member = first.data().memberId();
                JoinGroupResponse joined = conn.send(join(member));
                assertEquals(Errors.NONE, joined.error());
                int generation = joined.data().generationId();
                SyncGroupResponse synced = conn.send(new SyncGroupRequest.Builder(new SyncGroupRequestData()
                        .setGroupId(GROUP).setMemberId(member).setGenerationId(generation)
                        .setProtocolType("consumer").setProtocolName("range")).build((short) 5));
                assertEquals(Errors.NONE, synced.error());

                assertEquals(Errors.NONE, heartbeat(conn, member, generation));
                assertEquals(Errors.UNKNOWN_MEMBER_ID, heartbeat(conn, "nobody", generation));
                assertEquals(Errors.ILLEGAL_GENERATION, heartbeat(conn, member, generation + 7));
                assertEquals(Errors.NOT_COORDINATOR, heartbeat(elsewhere, member, generation));

                // a second member joins: the first is told to rejoin through its heartbeat
                String second = conn2.<JoinGroupResponse>send(join("")).data().memberId();
                CompletableFuture<JoinGroupResponse> secondJoin = CompletableFuture.supplyAsync(() -> {
                    try {
                        return conn2.send(join(second));
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                Waits.waitUntil("REBALANCE_IN_PROGRESS for the first member",
                        () -> heartbeat(conn, member, generation) == Errors.REBALANCE_IN_PROGRESS);
                JoinGroupResponse rejoined = conn.send(join(member));
                assertEquals(Errors.NONE, rejoined.error());
                assertEquals(Errors.NONE, secondJoin.get(30, TimeUnit.SECONDS).error());
                assertEquals(generation + 1, rejoined.data().generationId());

                OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId(GROUP).setMemberId(member)
                        .setGenerationIdOrMemberEpoch(rejoined.data().generationId());
                commit.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("no-such-topic")
                        .setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                                .setPartitionIndex(0).setCommittedOffset(5))));
                OffsetCommitResponse committed = conn.send(OffsetCommitRequest.Builder.forTopicNames(commit)
                        .build((short) 9));
                assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(),
                        committed.data().topics().get(0).partitions().get(0).errorCode());

                DescribeGroupsResponse described = conn.send(new DescribeGroupsRequest.Builder(
                        new DescribeGroupsRequestData().setGroups(List.of("never-created"))).build((short) 6));
                assertEquals(Errors.GROUP_ID_NOT_FOUND.code(), described.data().groups().get(0).errorCode());
                DeleteGroupsResponse deleted = conn.send(new DeleteGroupsRequest.Builder(new DeleteGroupsRequestData()
                        .setGroupsNames(List.of("never-created", GROUP))).build((short) 2));
                assertEquals(Errors.GROUP_ID_NOT_FOUND, deleted.get("never-created"));
                assertEquals(Errors.NON_EMPTY_GROUP, deleted.get(GROUP));

                Uuid offsetsTopicId = admin.describeTopics(List.of(Topic.GROUP_METADATA_TOPIC_NAME)).allTopicNames()
                        .get().get(Topic.GROUP_METADATA_TOPIC_NAME).topicId();
                int leaderOfZero = admin.describeTopics(List.of(Topic.GROUP_METADATA_TOPIC_NAME)).allTopicNames()
                        .get().get(Topic.GROUP_METADATA_TOPIC_NAME).partitions().get(0).leader().id();
                try (RawKafkaConnection leader = RawKafkaConnection.to(cluster.broker(leaderOfZero).bootstrapServers())) {
                    ProduceResponse produced = leader.send(KafkaRequests.produce((short) 12,
                            Topic.GROUP_METADATA_TOPIC_NAME, offsetsTopicId, 0, (short) 1,
                            KafkaRequests.records(1, "forged")));
                    assertEquals(Errors.INVALID_TOPIC_EXCEPTION.code(),
                            KafkaRequests.onlyPartition(produced).errorCode());
                }
            }
        }
    }

    private static JoinGroupRequest join(String memberId) {
        JoinGroupRequestData data = new JoinGroupRequestData().setGroupId(GROUP).setMemberId(memberId)
                .setProtocolType("consumer").setSessionTimeoutMs(30_000).setRebalanceTimeoutMs(30_000);
        data.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                .setMetadata(new byte[0]));
        return new JoinGroupRequest.Builder(data).build(JOIN_V);
    }

    private static Errors heartbeat(RawKafkaConnection conn, String member, int generation) throws Exception {
        HeartbeatResponse r = conn.send(new HeartbeatRequest.Builder(new HeartbeatRequestData().setGroupId(GROUP)
                .setMemberId(member).setGenerationId(generation)).build((short) 4));
        return r.error();
    }
}
