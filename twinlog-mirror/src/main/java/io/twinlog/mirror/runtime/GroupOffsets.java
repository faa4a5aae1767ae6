package io.twinlog.mirror.runtime;

import io.twinlog.mirror.groups.OffsetSyncPlan;
import io.twinlog.mirror.groups.OffsetSyncPlan.CommittedOffset;
import io.twinlog.mirror.groups.OffsetSyncPlan.DestinationGroup;
import io.twinlog.mirror.store.GroupSyncRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.UnknownMemberIdException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How {@link MirrorGroupOffsetSync} reads and writes one type of group through Kafka admin clients: consumer groups'
 * committed offsets (OffsetFetch, ConsumerGroupDescribe/DescribeGroups, OffsetCommit) or share groups' start offsets
 * (DescribeShareGroupOffsets, ShareGroupDescribe, AlterShareGroupOffsets). Everything else about a pass, and every
 * decision, is common to both. Stateless; every wait is bounded by {@code timeoutMs}.
 */
abstract sealed class GroupOffsets {
    /** One group's result of a batched admin call, waited for when asked. */
    @FunctionalInterface
    interface PerGroup<T> {
        T get(String groupId) throws ExecutionException, TimeoutException, InterruptedException;
    }

    final long timeoutMs;

    private GroupOffsets(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    static GroupOffsets of(GroupSyncRecord.Type type, long timeoutMs) {
        return switch (type) {
            case CONSUMER -> new ConsumerGroups(timeoutMs);
            case SHARE -> new ShareGroups(timeoutMs);
        };
    }

    abstract GroupSyncRecord.Type type();

    /** Reads the groups' offsets on the source, all of them: one request per coordinator. */
    abstract PerGroup<Map<TopicPartition, CommittedOffset>> readSource(Admin source, List<String> groups);

    /**
     * Describes the groups on the destination with their offsets there for the partitions each has source offsets
     * for.
     */
    abstract PerGroup<DestinationGroup> describeDestination(Admin destination, List<String> groups,
            Map<String, Map<TopicPartition, CommittedOffset>> sourceOffsets);

    /** Writes a group's offsets on the destination; fails as the group coordinator answered. */
    abstract void write(Admin destination, String groupId, Map<TopicPartition, CommittedOffset> offsets)
            throws ExecutionException, TimeoutException, InterruptedException;

    /**
     * True if {@code cause} of a failed write means the group gained members on the destination since it was
     * described: the coordinator refuses to overwrite the offsets of a group with members.
     */
    abstract boolean gainedMembers(Throwable cause);

    <T> T await(KafkaFuture<T> future) throws ExecutionException, TimeoutException, InterruptedException {
        return future.get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** Committed offsets; a classic group with members refuses the write with UNKNOWN_MEMBER_ID (generation -1). */
    static final class ConsumerGroups extends GroupOffsets {
        ConsumerGroups(long timeoutMs) {
            super(timeoutMs);
        }

        @Override
        GroupSyncRecord.Type type() {
            return GroupSyncRecord.Type.CONSUMER;
        }

        @Override
        PerGroup<Map<TopicPartition, CommittedOffset>> readSource(Admin source, List<String> groups) {
            Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
            groups.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec()));
            ListConsumerGroupOffsetsResult committed = source.listConsumerGroupOffsets(specs);
            return g -> toCommitted(await(committed.partitionsToOffsetAndMetadata(g)));
        }

        @Override
        PerGroup<DestinationGroup> describeDestination(Admin destination, List<String> groups,
                Map<String, Map<TopicPartition, CommittedOffset>> sourceOffsets) {
            Map<String, KafkaFuture<ConsumerGroupDescription>> described = destination.describeConsumerGroups(groups)
                    .describedGroups();
            Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
            groups.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec()
                    .topicPartitions(sourceOffsets.get(g).keySet())));
            ListConsumerGroupOffsetsResult committed = destination.listConsumerGroupOffsets(specs);
            return g -> {
                ConsumerGroupDescription d = await(described.get(g));
                return new DestinationGroup(d.groupState(), d.members().size(),
                        toCommitted(await(committed.partitionsToOffsetAndMetadata(g))));
            };
        }

        @Override
        void write(Admin destination, String groupId, Map<TopicPartition, CommittedOffset> offsets)
                throws ExecutionException, TimeoutException, InterruptedException {
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            offsets.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o.offset(), o.leaderEpoch(),
                    o.metadata())));
            await(destination.alterConsumerGroupOffsets(groupId, commit).all());
        }

        @Override
        boolean gainedMembers(Throwable cause) {
            return cause instanceof UnknownMemberIdException;
        }

        private static Map<TopicPartition, CommittedOffset> toCommitted(
                Map<TopicPartition, OffsetAndMetadata> offsets) {
            Map<TopicPartition, CommittedOffset> out = new HashMap<>();
            offsets.forEach((tp, o) -> {
                if (o != null) {
                    out.put(tp, new CommittedOffset(o.offset(), o.leaderEpoch(), o.metadata()));
                }
            });
            return out;
        }
    }

    /**
     * Share-partition start offsets (KIP-932). An AlterShareGroupOffsets to a group the destination does not know
     * creates it, empty (Kafka 4.4's coordinator); one with members is refused with GROUP_NOT_EMPTY.
     */
    static final class ShareGroups extends GroupOffsets {
        ShareGroups(long timeoutMs) {
            super(timeoutMs);
        }

        @Override
        GroupSyncRecord.Type type() {
            return GroupSyncRecord.Type.SHARE;
        }

        @Override
        PerGroup<Map<TopicPartition, CommittedOffset>> readSource(Admin source, List<String> groups) {
            Map<String, ListShareGroupOffsetsSpec> specs = new HashMap<>();
            groups.forEach(g -> specs.put(g, new ListShareGroupOffsetsSpec()));
            ListShareGroupOffsetsResult offsets = source.listShareGroupOffsets(specs);
            return g -> startOffsets(await(offsets.partitionsToOffsetInfo(g)));
        }

        @Override
        PerGroup<DestinationGroup> describeDestination(Admin destination, List<String> groups,
                Map<String, Map<TopicPartition, CommittedOffset>> sourceOffsets) {
            Map<String, KafkaFuture<ShareGroupDescription>> described = destination.describeShareGroups(groups)
                    .describedGroups();
            Map<String, ListShareGroupOffsetsSpec> specs = new HashMap<>();
            groups.forEach(g -> specs.put(g, new ListShareGroupOffsetsSpec()
                    .topicPartitions(sourceOffsets.get(g).keySet())));
            ListShareGroupOffsetsResult offsets = destination.listShareGroupOffsets(specs);
            return g -> {
                ShareGroupDescription d = await(described.get(g));
                return new DestinationGroup(d.groupState(), d.members().size(),
                        startOffsets(await(offsets.partitionsToOffsetInfo(g))));
            };
        }

        @Override
        void write(Admin destination, String groupId, Map<TopicPartition, CommittedOffset> offsets)
                throws ExecutionException, TimeoutException, InterruptedException {
            Map<TopicPartition, Long> startOffsets = new HashMap<>();
            offsets.forEach((tp, o) -> startOffsets.put(tp, o.offset()));
            await(destination.alterShareGroupOffsets(groupId, startOffsets).all());
        }

        @Override
        boolean gainedMembers(Throwable cause) {
            return cause instanceof GroupNotEmptyException;
        }

        private static Map<TopicPartition, CommittedOffset> startOffsets(
                Map<TopicPartition, SharePartitionOffsetInfo> offsets) {
            Map<TopicPartition, Long> out = new HashMap<>();
            offsets.forEach((tp, info) -> out.put(tp, info == null ? null : info.startOffset()));
            return OffsetSyncPlan.startOffsets(out);
        }
    }
}
