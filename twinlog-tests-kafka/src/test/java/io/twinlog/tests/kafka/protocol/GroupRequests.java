package io.twinlog.tests.kafka.protocol;

import io.twinlog.testkit.RawKafkaConnection;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.JoinGroupResponse;

import java.util.List;
import java.util.Map;

import static io.twinlog.tests.kafka.protocol.SideBySideClusters.TOPIC;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Representative requests of the consumer-group APIs. Each version uses a group of its own, so a member left by
 * one version (a classic join stays until its session times out) cannot change what another version sees.
 */
final class GroupRequests {
    private static final String UNKNOWN_MEMBER = "matrix-unknown-member";
    private static final short JOIN_VERSION_FOR_SETUP = 5;

    private GroupRequests() {
    }

    static String group(ApiKeys api, short version) {
        return "matrix-" + api.name.toLowerCase() + "-v" + version;
    }

    static void register(Map<ApiKeys, RepresentativeRequest> requests) {
        requests.put(ApiKeys.FIND_COORDINATOR, (target, version, connection) -> findCoordinator(version,
                group(ApiKeys.FIND_COORDINATOR, version)));
        requests.put(ApiKeys.JOIN_GROUP, (target, version, connection) ->
                join(group(ApiKeys.JOIN_GROUP, version), ""));
        requests.put(ApiKeys.SYNC_GROUP, (target, version, connection) -> new SyncGroupRequestData()
                .setGroupId(group(ApiKeys.SYNC_GROUP, version)).setGenerationId(1).setMemberId(UNKNOWN_MEMBER)
                .setProtocolType("consumer").setProtocolName("range"));
        requests.put(ApiKeys.HEARTBEAT, (target, version, connection) -> new HeartbeatRequestData()
                .setGroupId(group(ApiKeys.HEARTBEAT, version)).setGenerationId(1).setMemberId(UNKNOWN_MEMBER));
        requests.put(ApiKeys.LEAVE_GROUP, GroupRequests::leaveAfterJoining);
        requests.put(ApiKeys.CONSUMER_GROUP_HEARTBEAT, (target, version, connection) ->
                new ConsumerGroupHeartbeatRequestData().setGroupId(group(ApiKeys.CONSUMER_GROUP_HEARTBEAT, version))
                        .setMemberId(Uuid.randomUuid().toString()).setMemberEpoch(0).setRebalanceTimeoutMs(10_000)
                        .setSubscribedTopicNames(List.of(TOPIC)).setTopicPartitions(List.of()));
        requests.put(ApiKeys.OFFSET_COMMIT, (target, version, connection) -> offsetCommit(target, version));
        requests.put(ApiKeys.OFFSET_FETCH, (target, version, connection) -> offsetFetch(target, version));
        requests.put(ApiKeys.OFFSET_DELETE, (target, version, connection) -> {
            OffsetDeleteRequestData.OffsetDeleteRequestTopic topic =
                    new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(TOPIC);
            topic.partitions().add(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0));
            OffsetDeleteRequestData data = new OffsetDeleteRequestData()
                    .setGroupId(group(ApiKeys.OFFSET_DELETE, version));
            data.topics().add(topic);
            return data;
        });
        requests.put(ApiKeys.LIST_GROUPS, (target, version, connection) -> new ListGroupsRequestData());
        requests.put(ApiKeys.DESCRIBE_GROUPS, (target, version, connection) -> new DescribeGroupsRequestData()
                .setGroups(List.of(group(ApiKeys.DESCRIBE_GROUPS, version))));
        requests.put(ApiKeys.DELETE_GROUPS, (target, version, connection) -> new DeleteGroupsRequestData()
                .setGroupsNames(List.of(group(ApiKeys.DELETE_GROUPS, version))));
        requests.put(ApiKeys.CONSUMER_GROUP_DESCRIBE, (target, version, connection) ->
                new ConsumerGroupDescribeRequestData().setGroupIds(List.of(
                        group(ApiKeys.CONSUMER_GROUP_DESCRIBE, version))));
    }

    static FindCoordinatorRequestData findCoordinator(short version, String group) {
        FindCoordinatorRequestData data = new FindCoordinatorRequestData();
        if (version >= 4) {
            return data.setCoordinatorKeys(List.of(group)); // batched from v4
        }
        return data.setKey(group);
    }

    private static JoinGroupRequestData join(String group, String memberId) {
        JoinGroupRequestData data = new JoinGroupRequestData().setGroupId(group).setMemberId(memberId)
                .setSessionTimeoutMs(30_000).setRebalanceTimeoutMs(30_000).setProtocolType("consumer");
        data.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                .setMetadata(new byte[0]));
        return data;
    }

    /** Joins the version's group as one member (two rounds from v4: the broker assigns the id), then leaves. */
    private static LeaveGroupRequestData leaveAfterJoining(SideBySideClusters.Target target, short version,
                                                           RawKafkaConnection connection) throws Exception {
        String group = group(ApiKeys.LEAVE_GROUP, version);
        JoinGroupResponse first = (JoinGroupResponse) ProtocolExchange.exchange(connection, ProtocolExchange.request(
                ApiKeys.JOIN_GROUP, JOIN_VERSION_FOR_SETUP, join(group, "")));
        assertEquals(Errors.MEMBER_ID_REQUIRED, first.error(), "first join on " + target);
        String memberId = first.data().memberId();
        JoinGroupResponse joined = (JoinGroupResponse) ProtocolExchange.exchange(connection, ProtocolExchange.request(
                ApiKeys.JOIN_GROUP, JOIN_VERSION_FOR_SETUP, join(group, memberId)));
        assertEquals(Errors.NONE, joined.error(), "second join on " + target);
        if (version >= 3) {
            return new LeaveGroupRequestData().setGroupId(group).setMembers(List.of(
                    new LeaveGroupRequestData.MemberIdentity().setMemberId(memberId)));
        }
        return new LeaveGroupRequestData().setGroupId(group).setMemberId(memberId);
    }

    private static OffsetCommitRequestData offsetCommit(SideBySideClusters.Target target, short version) {
        OffsetCommitRequestData.OffsetCommitRequestTopic topic = new OffsetCommitRequestData.OffsetCommitRequestTopic()
                .setName(TOPIC).setTopicId(target.topicId());
        topic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                .setCommittedOffset(0).setCommittedMetadata(""));
        OffsetCommitRequestData data = new OffsetCommitRequestData().setGroupId(group(ApiKeys.OFFSET_COMMIT, version))
                .setGenerationIdOrMemberEpoch(-1).setMemberId("");
        data.topics().add(topic);
        return data;
    }

    private static OffsetFetchRequestData offsetFetch(SideBySideClusters.Target target, short version) {
        String group = group(ApiKeys.OFFSET_FETCH, version);
        if (version >= 8) {
            return new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup()
                    .setGroupId(group).setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics()
                            .setName(TOPIC).setTopicId(target.topicId()).setPartitionIndexes(List.of(0))))));
        }
        return new OffsetFetchRequestData().setGroupId(group).setTopics(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestTopic().setName(TOPIC).setPartitionIndexes(List.of(0))));
    }
}
