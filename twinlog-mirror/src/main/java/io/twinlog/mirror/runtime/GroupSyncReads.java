package io.twinlog.mirror.runtime;

import io.twinlog.mirror.groups.GroupSelection;
import io.twinlog.mirror.groups.OffsetSyncPlan.CommittedOffset;
import io.twinlog.mirror.groups.OffsetSyncPlan.DestinationPartition;
import io.twinlog.mirror.store.GroupSyncRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The group offset sync's reads of the two clusters that are the same for both types of group: which source groups a
 * mirror selects, and what the destination holds of the partitions concerned; and how groups are batched per request.
 * Every admin call is bounded by {@link MirrorGroupOffsetSync#TIMEOUT_MS}.
 */
final class GroupSyncReads {
    private static final Logger log = LoggerFactory.getLogger(MirrorGroupOffsetSync.class);
    /** Groups per describe or offset-read request. */
    static final int GROUPS_PER_REQUEST = 100;
    /** Groups synced in one pass of a mirror, at most (the first by name). */
    static final int MAX_GROUPS_PER_PASS = 10_000;

    private GroupSyncReads() {
    }

    /**
     * The source's groups selected by the mirror's patterns, with their type ({@link GroupSelection#typeOf}:
     * consumer and share groups), at most {@value #MAX_GROUPS_PER_PASS}. Listed without a type filter, which sources
     * before ListGroups v5 do not support.
     */
    static Map<String, GroupSyncRecord.Type> selectedGroups(MirrorDefinition mirror, GroupSelection selection,
                                                            Admin source) throws Exception {
        Map<String, GroupSyncRecord.Type> out = new TreeMap<>();
        for (GroupListing g : source.listGroups().all().get(MirrorGroupOffsetSync.TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            Optional<GroupSyncRecord.Type> type = GroupSelection.typeOf(g);
            if (type.isPresent() && selection.matches(g.groupId())) {
                out.put(g.groupId(), type.get());
            }
        }
        if (out.size() > MAX_GROUPS_PER_PASS) {
            log.warn("[Mirror {}] {} source groups match {}; syncing the first {} by name", mirror.name(), out.size(),
                    mirror.groupIncludePatterns(), MAX_GROUPS_PER_PASS);
            Map<String, GroupSyncRecord.Type> capped = new TreeMap<>();
            for (Map.Entry<String, GroupSyncRecord.Type> g : out.entrySet()) {
                if (capped.size() == MAX_GROUPS_PER_PASS) {
                    break;
                }
                capped.put(g.getKey(), g.getValue());
            }
            return capped;
        }
        return out;
    }

    /** Log start offset and high watermark of every partition concerned; partitions that fail are left out. */
    static Map<TopicPartition, DestinationPartition> destinationPartitions(
            Admin destination, Map<String, Map<TopicPartition, CommittedOffset>> sourceOffsets) throws Exception {
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        sourceOffsets.values().forEach(offsets -> offsets.keySet().forEach(tp -> {
            earliest.put(tp, OffsetSpec.earliest());
            latest.put(tp, OffsetSpec.latest());
        }));
        ListOffsetsOptions readUncommitted = new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED);
        ListOffsetsResult starts = destination.listOffsets(earliest, readUncommitted);
        ListOffsetsResult highWatermarks = destination.listOffsets(latest, readUncommitted);
        Map<TopicPartition, DestinationPartition> out = new HashMap<>();
        for (TopicPartition tp : earliest.keySet()) {
            Optional<Long> start = offset(starts.partitionResult(tp));
            Optional<Long> hw = offset(highWatermarks.partitionResult(tp));
            if (start.isPresent() && hw.isPresent()) {
                out.put(tp, new DestinationPartition(start.get(), hw.get()));
            } else {
                log.debug("No offsets for {} on this cluster this time; its group offsets wait", tp);
            }
        }
        return out;
    }

    private static Optional<Long> offset(KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo> future)
            throws InterruptedException {
        try {
            return Optional.of(future.get(MirrorGroupOffsetSync.TIMEOUT_MS, TimeUnit.MILLISECONDS).offset());
        } catch (ExecutionException | TimeoutException e) {
            return Optional.empty(); // leader unknown, or not there yet: left for the next pass
        }
    }

    /** {@code groups} by name, {@value #GROUPS_PER_REQUEST} per batch. */
    static List<List<String>> batches(Set<String> groups) {
        List<List<String>> out = new ArrayList<>();
        List<String> current = new ArrayList<>();
        for (String g : new TreeSet<>(groups)) {
            current.add(g);
            if (current.size() == GROUPS_PER_REQUEST) {
                out.add(current);
                current = new ArrayList<>();
            }
        }
        if (!current.isEmpty()) {
            out.add(current);
        }
        return out;
    }
}
