package io.twinlog.server.mirror;

import io.twinlog.mirror.partition.EpochHistory;
import io.twinlog.mirror.partition.PartitionView;
import io.twinlog.mirror.partition.TimeCut;
import io.twinlog.mirror.runtime.LocalPartitions;
import io.twinlog.mirror.runtime.MirrorLocalPartition;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.common.mirror.TruncationPoints;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.OffsetResultHolder;
import org.apache.kafka.storage.internals.log.UnifiedLog;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;

/** This broker's replicated partitions, as the mirror runtime acts on them. */
public final class BrokerMirrorPartitions implements LocalPartitions {
    private final ReplicaManager replicaManager;

    public BrokerMirrorPartitions(ReplicaManager replicaManager) {
        this.replicaManager = replicaManager;
    }

    @Override
    public Optional<MirrorLocalPartition> partition(TopicPartition tp) {
        return replicaManager.partition(tp).map(ReplicaPartition::new);
    }

    @Override
    public void watchHighWatermarks(Consumer<TopicPartition> listener) {
        replicaManager.addHighWatermarkListener((tp, highWatermark) -> listener.accept(tp));
    }

    /** One replicated partition; appends wake the delayed fetches and produces waiting on it. */
    private final class ReplicaPartition implements MirrorLocalPartition {
        private final Partition partition;

        ReplicaPartition(Partition partition) {
            this.partition = partition;
        }

        @Override
        public boolean isLeader() {
            return partition.isLeader();
        }

        @Override
        public int leaderEpoch() {
            return partition.leaderEpoch();
        }

        @Override
        public long logEndOffset() {
            return partition.log().logEndOffset();
        }

        @Override
        public long logStartOffset() {
            return partition.log().logStartOffset();
        }

        @Override
        public Optional<Integer> latestEpoch() {
            return partition.log().latestEpoch();
        }

        @Override
        public void appendMirrored(MemoryRecords records) throws IOException {
            partition.appendMirroredRecords(records);
            replicaManager.completeDelayedRequests(partition.topicPartition());
        }

        @Override
        public void truncateFullyAndStartAt(long offset, String reason) {
            partition.truncateFullyAndStartAt(offset, reason);
        }

        @Override
        public PartitionView view() throws IOException {
            List<EpochHistory.Entry> epochs = new ArrayList<>();
            for (EpochEntry e : partition.log().leaderEpochCache().epochEntries()) {
                epochs.add(new EpochHistory.Entry(e.epoch(), e.startOffset()));
            }
            return new PartitionView(partition.leaderEpoch(), partition.log().logEndOffset(),
                    partition.log().highWatermark(), new EpochHistory(epochs),
                    partition.latestProducerStateBarrier(), partition.replicas(), partition.isr(),
                    partition.followerLogEndOffsets(), partition.effectiveMinIsr(), false, Map.of());
        }

        @Override
        public void applyTruncationPoint(long id, long offset, String reason) throws IOException {
            // the leader applied every earlier point before it began to lead: only this one is new to it
            partition.applyTruncationPoints(new TruncationPoints(List.of(new TruncationPoints.Point(id, offset)),
                    reason));
        }

        @Override
        public Records read(long offset, int maxBytes) throws IOException {
            return partition.log().read(offset, maxBytes, FetchIsolation.LOG_END, true).records;
        }

        /**
         * The log's time index: Kafka's search for the first record after {@code atMs} reads only the segment that
         * holds it, and no batch before that record's has a max timestamp after {@code atMs}; with none, the last
         * batch (the newest kept one's timestamp is read from it); with an error or a pending (remote) answer, the
         * log start ({@link TimeCut#searchStart}: starting at the last batch then could miss the cut).
         */
        @Override
        public long timeSearchStart(long atMs) throws IOException {
            UnifiedLog log = partition.log();
            OffsetResultHolder found;
            try {
                found = log.fetchOffsetByTimestamp(atMs + 1, Optional.empty());
            } catch (ApiException e) {
                // a segment rolled or deleted under the search: read from the log start instead (the same cut)
                return log.logStartOffset();
            }
            boolean answered = found.maybeOffsetsError().isEmpty() && found.futureHolderOpt().isEmpty();
            OptionalLong indexed = found.timestampAndOffsetOpt().map(t -> OptionalLong.of(t.offset))
                    .orElse(OptionalLong.empty());
            return TimeCut.searchStart(answered, indexed, log.logStartOffset(), log.logEndOffset());
        }

        @Override
        public List<Long> abortOpenTransactions(long nowMs) throws IOException {
            return partition.abortOpenTransactions(nowMs);
        }

        @Override
        public long appendProducerStateBarrier(long nowMs) throws IOException {
            return partition.appendProducerStateBarrier(nowMs);
        }
    }
}
