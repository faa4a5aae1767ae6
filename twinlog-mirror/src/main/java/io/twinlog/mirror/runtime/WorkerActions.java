package io.twinlog.mirror.runtime;

import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.partition.MirrorAction;
import io.twinlog.mirror.partition.PeerLookup;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Runs the actions the state machine decides for one mirror's partitions: the fetcher's (add, remove), the calls
 * that wait on the peer or a long copy (the last-mirrored lookup, the comparison with the peer's log, the quarantine
 * copy before a cut) on the mirror's own threads, the cut itself, and a failover's log steps (queued for the end of
 * the pass, {@link FailoverBarriers}). Manager thread only.
 */
final class WorkerActions {
    private static final Logger log = LoggerFactory.getLogger(MirrorWorker.class);

    private final String mirror;
    private final MirrorWorkerServices services;
    private final MirrorSourceLink source;
    private final MirrorCallRouter calls;

    WorkerActions(String mirror, MirrorWorkerServices services, MirrorSourceLink source, MirrorCallRouter calls) {
        this.mirror = mirror;
        this.services = services;
        this.source = source;
        this.calls = calls;
    }

    /** The peer's last-mirrored records for one topic, or why they could not be had (a doubt: nothing is cut). */
    private record PeerAnswer(Map<Integer, LastMirrored> records, IOException failure) {
    }

    /** A comparison's result: where the logs first differ, or why they could not be compared. */
    private record CompareResult(OptionalLong firstDifference, IOException failure) {
        boolean matchedBelow(long upTo) {
            return firstDifference.isEmpty() || firstDifference.getAsLong() >= upTo;
        }
    }

    /**
     * Runs one action; returns the peer's answer as known afterwards. The peer lookup, the comparison and the
     * quarantine copy run on the mirror's own thread: the first pass that needs one starts it and stops
     * ({@link MirrorCallRouter.AwaitingCall}), and the pass its outcome brings finds it here.
     *
     * @param basis       the leadership and record version a call is asked on now
     * @param stillLed    whether the partition is still the one this pass ran for (a call's outcome is kept only then)
     * @param partitionCalls the partition's calls, pending or answered
     */
    PeerLookup execute(MirrorAction action, TopicPartition tp, MirrorLocalPartition partition, MirrorDefinition def,
                       PeerLookup peer, Supplier<PartitionCalls.Basis> basis, BooleanSupplier stillLed,
                       PartitionCalls partitionCalls) throws Exception {
        if (action instanceof MirrorAction.AddFetcher) {
            source.sourceFor(def, () -> calls.close(mirror)).addPartition(tp, sourceTopicOf(tp.topic()), partition);
        } else if (action instanceof MirrorAction.RemoveFetcher) {
            source.existing().ifPresent(f -> f.removePartition(tp));
        } else if (action instanceof MirrorAction.AskPeer) {
            String topic = tp.topic();
            // the peer knows the topic by its own name: the source's, for a renamed mirror topic
            String peerTopic = sourceTopicOf(topic);
            List<Integer> all = services.metadata().image().topic(topic)
                    .map(t -> List.copyOf(t.partitions().keySet())).orElse(List.of());
            String clusterId = services.metadata().image().clusterId();
            // mirroring keeps topic IDs: the peer's topic has this one's
            Uuid topicId = services.metadata().image().topic(topic).map(TopicImage::topicId).orElse(Uuid.ZERO_UUID);
            // one lookup per mirror and topic in flight, for all its partitions at once
            PeerAnswer answer = outcomeOf(tp, basis, stillLed, partitionCalls, new PartitionCalls.Key.AskPeer(),
                    "ask/" + topic, "asking the source for the last mirrored epochs of " + topic,
                    () -> askPeer(def, clusterId, peerTopic, topicId, all), outcome -> { });
            if (answer.failure() != null) {
                return PeerFailures.failed("asking the source for its last mirrored epoch", answer.failure());
            }
            // a failback (the source mirrored this log before) is counted once its point is written (flush)
            return new PeerLookup.Answered(Optional.ofNullable(answer.records().get(tp.partition())));
        } else if (action instanceof MirrorAction.ComparePeer compare) {
            Optional<LastMirrored> answer = peer instanceof PeerLookup.Answered a ? a.lastMirrored() : Optional.empty();
            MirrorCalls mirrorCalls = calls.callsFor(mirror);
            // the comparison of the call thread that runs it: each of the mirror's threads has its own connection
            CompareResult result = outcomeOf(tp, basis, stillLed, partitionCalls,
                    new PartitionCalls.Key.ComparePeer(compare.upTo()), "compare/" + tp + "/" + compare.upTo(),
                    "comparing " + tp + " with the source below offset " + compare.upTo(),
                    () -> compareWithPeer(mirrorCalls, def, new TopicPartition(sourceTopicOf(tp.topic()),
                            tp.partition()), partition, compare.upTo()),
                    outcome -> {
                        if (!outcome.isFailure()) { // counted once per comparison, not per pass that reads it
                            services.metrics().onReconciliation(mirror, outcome.value().failure() == null,
                                    outcome.value().matchedBelow(compare.upTo()));
                        }
                    });
            if (result.failure() != null) {
                return PeerFailures.failed("comparing this log with the source's", result.failure());
            }
            return new PeerLookup.Compared(answer, result.firstDifference());
        } else if (action instanceof MirrorAction.ApplyTruncationPoint point) {
            long end = partition.logEndOffset();
            // nothing is cut before it is kept: the copy of exactly this tail (from the point to this log end) has
            // been acknowledged, or the cut waits for it; a copy that failed throws, and the next pass copies again
            MirrorQuarantine.Copied copied = outcomeOf(tp, basis, stillLed, partitionCalls,
                    new PartitionCalls.Key.CopyToQuarantine(point.offset(), end), "copy/" + tp + "/" + point.offset()
                            + "/" + end, "copying offsets " + point.offset() + " to " + end + " of " + tp
                            + " to the quarantine",
                    () -> services.peer().copyToQuarantine(mirror, tp, partition, point.offset(), point.reason()),
                    outcome -> { });
            partition.applyTruncationPoint(point.id(), point.offset(), "mirror " + mirror + ": " + point.reason());
            services.metrics().onTruncation(mirror, end - point.offset(), copied.records());
            log.debug("[Mirror {} {}] truncation point {} at offset {} applied on the leader (log end was {}); every "
                    + "replica that must take part applies it next: {}", mirror, tp, point.id(), point.offset(),
                    end, point.reason());
        } else if (action instanceof MirrorAction.AbortOpenTransactions) {
            services.barriers().queueAbort(mirror, tp, partition);
        } else if (action instanceof MirrorAction.AppendProducerStateBarrier) {
            services.barriers().queueBarrier(mirror, tp, partition);
        } else {
            throw new IllegalArgumentException("Unknown mirror action " + action);
        }
        return peer;
    }

    /** The name the source gives mirror topic {@code topic} (its own, unless the mirror renamed it). */
    private String sourceTopicOf(String topic) {
        return services.metadata().image().mirrors().sourceTopicOf(topic);
    }

    /** On the mirror's thread: asks the peer about every partition of {@code topic}; an I/O failure is the answer. */
    private PeerAnswer askPeer(MirrorDefinition def, String localClusterId, String topic, Uuid topicId,
                               List<Integer> partitions) {
        try {
            return new PeerAnswer(services.peer().lastMirrored(def, localClusterId, topic, topicId, partitions), null);
        } catch (IOException e) {
            return new PeerAnswer(Map.of(), e);
        }
    }

    /** On the mirror's thread: an I/O failure of the comparison is its result. */
    private CompareResult compareWithPeer(MirrorCalls mirrorCalls, MirrorDefinition def, TopicPartition tp,
                                          MirrorLocalPartition partition, long upTo) {
        try {
            return new CompareResult(services.peer().firstDifference(mirrorCalls, def, tp, partition, upTo), null);
        } catch (IOException e) {
            return new CompareResult(OptionalLong.empty(), e);
        }
    }

    /**
     * The outcome of a call of this partition on the current leadership and record, or the call started on the
     * mirror's thread and the pass ended ({@link MirrorCallRouter#outcomeOf}).
     */
    private <T> T outcomeOf(TopicPartition tp, Supplier<PartitionCalls.Basis> basis, BooleanSupplier stillLed,
                            PartitionCalls partitionCalls, PartitionCalls.Key key, String sharedKey, String what,
                            Callable<T> work, Consumer<MirrorCalls.Outcome<T>> onAccepted) throws Exception {
        return calls.outcomeOf(tp, mirror, partitionCalls, basis.get(), key, sharedKey, what, work, onAccepted,
                stillLed, () -> services.queuePasses().accept(Set.of(tp)));
    }
}
