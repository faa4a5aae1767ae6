package io.twinlog.mirror.groups;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decides which consumer group offsets a mirror writes on its destination cluster, from what the source committed,
 * what the destination holds and which of the mirror's topics are still mirrored. Pure: no I/O, no clock; the
 * controller broker's sync shell gathers the inputs and performs the writes.
 *
 * <p>Share groups (KIP-932) are planned by the same rules, their share-partition start offsets taken as committed
 * offsets without epoch or metadata ({@link #startOffsets}): a consumer that joins the group on the destination
 * starts at the start offset as a consumer group's member starts at the committed offset. Writing only offsets that
 * differ (rule 5) matters more for them: every AlterShareGroupOffsets re-initializes the share partition with a new
 * state epoch.
 *
 * <p>The rules (docs/mirroring.md, "Consumer group offsets"):
 * <ol>
 *   <li>Only partitions of this mirror's topics that are not failed over: the topic's desired state is not
 *       STOPPED and none of its partitions is STOPPING or STOPPED ({@link #syncableTopics}). Once consumers may
 *       commit on the destination for a topic, the source's offsets for it are no longer the truth.</li>
 *   <li>Only groups without members on the destination: state EMPTY or DEAD (also what a group unknown there is
 *       described as) and no members. A group with members there is left alone — its consumers own its offsets — as
 *       KIP-1279 skips STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, ASSIGNING and RECONCILING groups. Any other
 *       state (UNKNOWN, NOT_READY) is also left alone: nothing proves the group idle.</li>
 *   <li>Each offset is clamped to what the destination holds: {@code max(logStartOffset, min(committed,
 *       highWatermark))}. KIP-1279 clamps to the log end offset; we use the high watermark because a consumer can
 *       only read below it: records between the high watermark and the log end are not yet on every in-sync replica
 *       and may be truncated by a leader change, so an offset past the high watermark can point beyond the log a
 *       consumer finds after failover (OFFSET_OUT_OF_RANGE, then a reset by policy — with {@code latest}, records
 *       skipped). The lower bound: records below the destination's log start are gone there; a consumer starting
 *       below it would be reset by policy too.</li>
 *   <li>The leader epoch is kept when the offset is not clamped: mirrored batches keep their source epochs, so the
 *       record before the offset has that epoch on the destination too, and the consumer's truncation check
 *       (OffsetsForLeaderEpoch) works there. A clamped offset gets no epoch: the epoch of the record before it on the
 *       destination is not known here, and a wrong one could make the consumer detect a false truncation; without
 *       one the consumer skips the check, which is safe because the offset is within the high watermark.</li>
 *   <li>The destination follows the source in both directions (an offset reset to an earlier position on the
 *       source is copied). Unlike MirrorMaker 2, which only moves a group forward because its offset translation is
 *       approximate, offsets here are identical on both clusters, and refusing to go back would make a consumer
 *       that fails over skip what the source group was set to re-read. Offsets already equal are not rewritten.</li>
 * </ol>
 * Offsets the source no longer has for a partition (deleted there) are left as they are on the destination.
 */
public final class OffsetSyncPlan {
    /** Destination group states in which no consumer runs there. */
    private static final Set<GroupState> IDLE_STATES = EnumSet.of(GroupState.EMPTY, GroupState.DEAD);

    private OffsetSyncPlan() {
    }

    /**
     * A committed offset: the next offset to consume, the leader epoch of the record before it (if the committer
     * knew it) and the committer's metadata string.
     */
    public record CommittedOffset(long offset, Optional<Integer> leaderEpoch, String metadata) {
        public CommittedOffset {
            Objects.requireNonNull(leaderEpoch);
            metadata = metadata == null ? "" : metadata;
        }
    }

    /** What the destination holds of one partition, as its leader answers ListOffsets. */
    public record DestinationPartition(long logStartOffset, long highWatermark) {
    }

    /** A group as the destination describes it, with its committed offsets there. */
    public record DestinationGroup(GroupState state, int memberCount, Map<TopicPartition, CommittedOffset> committed) {
        public DestinationGroup {
            committed = Map.copyOf(committed);
        }

        /** A group the destination does not know. */
        public static DestinationGroup absent() {
            return new DestinationGroup(GroupState.DEAD, 0, Map.of());
        }

        public boolean isIdle() {
            return memberCount == 0 && IDLE_STATES.contains(state);
        }
    }

    /** What happens to a group in this pass. */
    public enum Outcome {
        /** Its destination offsets are (made) equal to the clamped source offsets; {@code writes} may be empty. */
        SYNC,
        /** It has members, or is not known to be idle, on the destination. */
        SKIPPED_ACTIVE,
        /** None of its committed offsets is for a topic this mirror still syncs. */
        SKIPPED_NO_OFFSETS
    }

    /**
     * The decision for one group.
     *
     * @param writes         offsets to write on the destination (only those that differ from what it has)
     * @param offsetsSynced  partitions covered when the outcome is SYNC (written or already equal)
     * @param offsetsClamped of those, partitions whose offset was limited to what the destination holds
     * @param reason         why, for the log
     */
    public record GroupPlan(String groupId, Outcome outcome, Map<TopicPartition, CommittedOffset> writes,
                            int offsetsSynced, int offsetsClamped, String reason) {
        public GroupPlan {
            writes = Map.copyOf(writes);
        }
    }

    /**
     * Topics of {@code mirror} whose group offsets may be synced: its mirror topics whose desired state is not
     * STOPPED and none of whose partitions has reached STOPPING or STOPPED (a failover in progress stops the sync for
     * the whole topic) or is FAILED for good (waiting for the operator: the source topic deleted or created again,
     * whose groups' offsets are another topic's, or a source that diverged). PAUSED topics are synced: their
     * offsets are clamped to what the destination holds.
     */
    public static Set<String> syncableTopics(String mirror, MirrorImage mirrors) {
        Set<String> out = new HashSet<>();
        mirrors.topics().forEach((topic, t) -> {
            if (t.mirror().equals(mirror) && t.desired() != DesiredMirrorState.STOPPED) {
                out.add(topic);
            }
        });
        mirrors.partitions().forEach((tp, p) -> {
            if (p.state() == MirrorPartitionState.STOPPING || p.state() == MirrorPartitionState.STOPPED
                    || p.state() == MirrorPartitionState.FAILED && MirrorPartitionRecord.fromJson(p.json())
                    .retryAttempt() < 0) {
                out.remove(tp.topic());
            }
        });
        return out;
    }

    /**
     * The name each source topic of {@code mirror} has here, by source name: its own, or another for a prefixed
     * mirror's topic ({@code orders} → {@code west.orders}) or a failback into the original topic (decision 125).
     */
    public static Map<String, String> destinationTopics(String mirror, MirrorImage mirrors) {
        Map<String, String> out = new HashMap<>();
        mirrors.topics().forEach((topic, t) -> {
            if (t.mirror().equals(mirror)) {
                out.put(t.sourceName(topic), topic);
            }
        });
        return out;
    }

    /**
     * The source's offsets of the topics in {@code destinationOf}, on those topics' names here; offsets of other
     * source topics are left out (a source topic named like a renamed mirror topic here is another topic).
     */
    public static Map<TopicPartition, CommittedOffset> onDestinationTopics(Map<TopicPartition, CommittedOffset> source,
                                                                           Map<String, String> destinationOf) {
        Map<TopicPartition, CommittedOffset> out = new HashMap<>();
        source.forEach((tp, offset) -> {
            String destination = destinationOf.get(tp.topic());
            if (destination != null) {
                out.put(new TopicPartition(destination, tp.partition()), offset);
            }
        });
        return out;
    }

    /** The source's committed offsets that concern {@code syncableTopics}, in partition order. */
    public static Map<TopicPartition, CommittedOffset> relevantOffsets(Map<TopicPartition, CommittedOffset> source,
                                                                       Set<String> syncableTopics) {
        Map<TopicPartition, CommittedOffset> out = new TreeMap<>(
                (a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition())
                        : a.topic().compareTo(b.topic()));
        source.forEach((tp, offset) -> {
            if (syncableTopics.contains(tp.topic()) && offset.offset() >= 0) {
                out.put(tp, offset);
            }
        });
        return out;
    }

    /**
     * A share group's start offsets (share-partition start offsets, as DescribeShareGroupOffsets answers them) as
     * committed offsets: no leader epoch (AlterShareGroupOffsets takes none) and no metadata. Partitions without
     * one are left out: a start offset of -1 (initialized but not resolved yet: the first share fetch resolves it by
     * {@code share.auto.offset.reset}) or none (a partition the answer left out with an error).
     */
    public static Map<TopicPartition, CommittedOffset> startOffsets(Map<TopicPartition, Long> startOffsets) {
        Map<TopicPartition, CommittedOffset> out = new HashMap<>();
        startOffsets.forEach((tp, offset) -> {
            if (offset != null && offset >= 0) {
                out.put(tp, new CommittedOffset(offset, Optional.empty(), ""));
            }
        });
        return out;
    }

    /**
     * Plans one group.
     *
     * @param sourceOffsets         the group's committed offsets on the source
     * @param syncableTopics        from {@link #syncableTopics}
     * @param destination           the group on the destination ({@link DestinationGroup#absent()} if unknown there)
     * @param destinationPartitions what the destination holds; a partition missing here (not created yet, or its
     *                              leader did not answer) is not synced in this pass
     */
    public static GroupPlan planGroup(String groupId, Map<TopicPartition, CommittedOffset> sourceOffsets,
                                      Set<String> syncableTopics, DestinationGroup destination,
                                      Map<TopicPartition, DestinationPartition> destinationPartitions) {
        Map<TopicPartition, CommittedOffset> relevant = relevantOffsets(sourceOffsets, syncableTopics);
        if (relevant.isEmpty()) {
            return new GroupPlan(groupId, Outcome.SKIPPED_NO_OFFSETS, Map.of(), 0, 0,
                    "no committed offsets for topics this mirror syncs");
        }
        if (!destination.isIdle()) {
            return new GroupPlan(groupId, Outcome.SKIPPED_ACTIVE, Map.of(), 0, 0, "the group is " + destination.state()
                    + " with " + destination.memberCount() + " member(s) on the destination");
        }
        Map<TopicPartition, CommittedOffset> writes = new LinkedHashMap<>();
        int synced = 0;
        int clamped = 0;
        for (Map.Entry<TopicPartition, CommittedOffset> e : relevant.entrySet()) {
            DestinationPartition held = destinationPartitions.get(e.getKey());
            if (held == null || held.highWatermark() < 0 || held.logStartOffset() < 0) {
                continue;
            }
            CommittedOffset target = clamp(e.getValue(), held);
            synced++;
            if (target.offset() != e.getValue().offset()) {
                clamped++;
            }
            CommittedOffset current = destination.committed().get(e.getKey());
            if (current == null || current.offset() != target.offset()) {
                writes.put(e.getKey(), target);
            }
        }
        return new GroupPlan(groupId, Outcome.SYNC, writes, synced, clamped, synced == 0
                ? "none of its partitions is known on the destination yet"
                : synced + " partition(s), " + clamped + " clamped, " + writes.size() + " to write");
    }

    /**
     * The offset to write for a committed source offset: {@code max(logStartOffset, min(offset, highWatermark))},
     * with the source's leader epoch only when unchanged (see the class comment).
     */
    public static CommittedOffset clamp(CommittedOffset source, DestinationPartition held) {
        long target = Math.max(held.logStartOffset(), Math.min(source.offset(), held.highWatermark()));
        if (target == source.offset()) {
            return source;
        }
        return new CommittedOffset(target, Optional.empty(), source.metadata());
    }
}
