package io.twinlog.tests.share;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A share group on the hosted group coordinator (KIP-932), with Kafka's persister initializing its partitions on the
 * hosted share coordinator: refused while share.version is 0; at 1, a member that joins by ShareGroupHeartbeat is
 * assigned both partitions of its topic once they are initialized, and the Admin client and
 * {@code kafka-share-groups.sh} list and describe the group, its member and its start offsets; once it left, the
 * tool resets and deletes the group's start offsets and deletes the group.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ShareGroupAdminTest {
    private static final String GROUP = "shares";
    private static final String TOPIC = "orders";

    @Test
    void aMemberJoinsByHeartbeatAndTheToolsSeeTheGroup() throws Exception {
        File workDir = TestDirectories.create("share-tools");
        try (TestCluster cluster = TestCluster.builder().brokers(1)
                .brokerProperty("share.coordinator.state.topic.replication.factor", "1")
                .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3").build().start();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100))) {
            zk.start();
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get();
            }
            String memberId = Uuid.randomUuid().toString();

            // an operator switches share groups off (they are on by default, decision 106), then on again
            zk.create().forPath("/feature", "{\"version\":1,\"features\":{\"share.version\":0}}"
                    .getBytes(StandardCharsets.UTF_8));
            Waits.waitUntil("share.version 0: no share groups", () -> heartbeat(cluster, memberId, 0).errorCode()
                    == Errors.UNSUPPORTED_VERSION.code());

            zk.setData().forPath("/feature", "{\"version\":1,\"features\":{\"share.version\":1}}"
                    .getBytes(StandardCharsets.UTF_8));
            // as a share consumer does first: FindCoordinator for the group (which creates __consumer_offsets)
            Waits.waitUntil("the group coordinator is found", () -> findGroupCoordinator(cluster) == Errors.NONE);
            ShareGroupHeartbeatResponseData joined = Waits.waitFor("the member joined",
                    () -> heartbeat(cluster, memberId, 0), r -> r.errorCode() == Errors.NONE.code());
            int epoch = joined.memberEpoch();
            // partitions are assigned once the coordinator has initialized their state through the persister
            ShareGroupHeartbeatResponseData assigned = Waits.waitFor("both partitions assigned",
                    () -> heartbeat(cluster, memberId, epoch), r -> r.errorCode() == Errors.NONE.code()
                            && r.assignment() != null && r.assignment().topicPartitions().stream()
                            .mapToInt(t -> t.partitions().size()).sum() == 2);
            assertTrue(assigned.memberEpoch() >= epoch);

            // a new client: a connection keeps the APIs its broker advertised when it was opened (decision 102)
            try (Admin admin = cluster.admin()) {
                Collection<GroupListing> listed = admin.listGroups(ListGroupsOptions.forShareGroups()).all().get();
                assertEquals(List.of(GROUP), listed.stream().map(GroupListing::groupId).toList());
                assertEquals(Optional.of(GroupType.SHARE), listed.iterator().next().type());
                ShareGroupDescription described = admin.describeShareGroups(List.of(GROUP)).describedGroups()
                        .get(GROUP).get();
                assertEquals(GroupState.STABLE, described.groupState());
                assertEquals(List.of(memberId), described.members().stream().map(m -> m.consumerId()).toList());
                assertEquals(2, described.members().iterator().next().assignment().topicPartitions().size());
            }

            ToolResult list = shareGroups(workDir, cluster, "--list");
            list.assertSuccess();
            assertEquals(List.of(GROUP), list.stdoutLines().stream().map(String::strip).filter(l -> !l.isEmpty())
                    .toList());
            ToolResult members = shareGroups(workDir, cluster, "--describe", "--group", GROUP, "--members");
            members.assertSuccess();
            assertTrue(members.stdout().contains(memberId), members.all());
            ToolResult offsets = shareGroups(workDir, cluster, "--describe", "--group", GROUP);
            offsets.assertSuccess();
            assertEquals(2, offsets.stdoutLines().stream().filter(l -> l.startsWith(GROUP + " ")
                    && l.contains(" " + TOPIC + " ")).count(), offsets.all());

            // the member leaves: the empty group's start offsets are reset and deleted, then the group itself,
            // its share partitions' state deleted through the persister
            assertEquals(Errors.NONE.code(), heartbeat(cluster, memberId, -1).errorCode());
            shareGroups(workDir, cluster, "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest",
                    "--execute").assertSuccess();
            try (Admin admin = cluster.admin()) {
                Map<TopicPartition, SharePartitionOffsetInfo> reset = admin.listShareGroupOffsets(
                        Map.of(GROUP, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(GROUP).get();
                assertEquals(Map.of(new TopicPartition(TOPIC, 0), 0L, new TopicPartition(TOPIC, 1), 0L),
                        reset.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                                e -> e.getValue().startOffset())));
            }
            shareGroups(workDir, cluster, "--delete-offsets", "--group", GROUP, "--topic", TOPIC).assertSuccess();
            shareGroups(workDir, cluster, "--delete", "--group", GROUP).assertSuccess();
            ToolResult none = shareGroups(workDir, cluster, "--list");
            none.assertSuccess();
            assertTrue(none.stdoutLines().stream().noneMatch(l -> l.strip().equals(GROUP)), none.all());
        } finally {
            TestDirectories.delete(workDir);
        }
    }

    private static ShareGroupHeartbeatResponseData heartbeat(TestCluster cluster, String memberId, int epoch)
            throws Exception {
        try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
            ShareGroupHeartbeatResponse response = connection.send(new ShareGroupHeartbeatRequest.Builder(
                    new ShareGroupHeartbeatRequestData().setGroupId(GROUP).setMemberId(memberId)
                            .setMemberEpoch(epoch).setSubscribedTopicNames(epoch == 0 ? List.of(TOPIC) : null))
                    .build());
            return response.data();
        }
    }

    private static Errors findGroupCoordinator(TestCluster cluster) throws Exception {
        try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
            FindCoordinatorResponse response = connection.send(new FindCoordinatorRequest.Builder(
                    new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType.GROUP.id())
                            .setCoordinatorKeys(List.of(GROUP))).build());
            return Errors.forCode(response.data().coordinators().get(0).errorCode());
        }
    }

    private static ToolResult shareGroups(File workDir, TestCluster cluster, String... args) throws Exception {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = cluster.bootstrapServers();
        System.arraycopy(args, 0, all, 2, args.length);
        return KafkaTools.run(workDir, Duration.ofSeconds(60),
                "org.apache.kafka.tools.consumer.group.ShareGroupCommand", null, all);
    }
}
