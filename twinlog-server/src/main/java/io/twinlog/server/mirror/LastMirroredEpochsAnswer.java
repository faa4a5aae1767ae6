package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData.LastMirroredEpochsTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsPartitionResult;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsTopicResult;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The LastMirroredEpochs answer (the failback lookup, mirroring.md): for each asked partition, the last mirrored
 * epoch and offset this cluster recorded when it failed the partition over — only from mirrors whose source is the
 * requesting cluster (the failback relation), or from any mirror when the requester does not say who it is; -1/-1
 * when there is none. A topic this cluster does not have under that name and ID is an error, not -1/-1
 * ({@link #unknownTopic}). Pure: built from the mirrors' sources, one {@link MirrorMetadataView} and the principal's
 * DESCRIBE rights.
 */
final class LastMirroredEpochsAnswer {
    private LastMirroredEpochsAnswer() {
    }

    /**
     * @param mirrorSources each mirror's source cluster ID, "" while the mirror has not reached its source
     * @param mayDescribe   whether the principal may DESCRIBE the named mirror
     */
    static LastMirroredEpochsResponseData of(LastMirroredEpochsRequestData request, Map<String, String> mirrorSources,
                                             MirrorMetadataView view, Predicate<String> mayDescribe) {
        String requester = request.requesterClusterId();
        LastMirroredEpochsResponseData response = new LastMirroredEpochsResponseData();
        for (LastMirroredEpochsTopic t : request.topics()) {
            String topic = t.topicName();
            LastMirroredEpochsTopicResult result = new LastMirroredEpochsTopicResult().setTopicName(topic)
                    .setTopicId(t.topicId());
            response.topics().add(result);
            Optional<Errors> unknown = unknownTopic(t, view);
            if (unknown.isPresent()) {
                t.partitions().forEach(p -> result.partitions().add(new LastMirroredEpochsPartitionResult()
                        .setPartitionIndex(p).setErrorCode(unknown.get().code()).setLastMirroredEpoch(-1)
                        .setLastMirroredOffset(-1L)));
                continue;
            }
            Optional<String> mirror = view.mirrorOf(topic);
            boolean related = mirror.isPresent()
                    && (requester == null || requester.equals(mirrorSources.get(mirror.get())));
            // KIP-1279: the failback lookup needs DESCRIBE on the mirror that recorded the partitions; a topic no
            // mirror of the requester's recorded is answered -1/-1 alike for everyone (nothing to reveal, and a
            // chained mirror's unrelated record must not hold a failback)
            boolean allowed = !related || mayDescribe.test(mirror.get());
            for (int partition : t.partitions()) {
                short error = allowed ? Errors.NONE.code() : MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code;
                int lastMirroredEpoch = -1;
                long lastMirroredOffset = -1L;
                Optional<MirrorPartitionRecord> record = related && allowed
                        ? view.recorded(new TopicPartition(topic, partition)) : Optional.empty();
                if (record.isPresent()) {
                    Optional<MirrorErrors> notFailedOver = notFailedOver(record.get());
                    if (notFailedOver.isPresent()) {
                        error = notFailedOver.get().code;
                    } else {
                        lastMirroredEpoch = record.get().lastMirroredEpoch();
                        lastMirroredOffset = record.get().lastMirroredOffset();
                    }
                }
                result.partitions().add(new LastMirroredEpochsPartitionResult().setPartitionIndex(partition)
                        .setErrorCode(error).setLastMirroredEpoch(lastMirroredEpoch)
                        .setLastMirroredOffset(lastMirroredOffset));
            }
        }
        return response;
    }

    /**
     * Why the asked topic is not one this cluster can answer for, if it is not: no topic of that name here
     * (UNKNOWN_TOPIC_ID when the request names an ID, UNKNOWN_TOPIC_OR_PARTITION when it does not), or one with
     * another ID than the one asked (UNKNOWN_TOPIC_ID). -1/-1 ("no record") would cut the requester's failback to 0
     * on a name mismatch (a mirror topic node that lost its source name): the requester takes the error as a doubt
     * and cuts nothing (decision 125).
     */
    static Optional<Errors> unknownTopic(LastMirroredEpochsTopic asked, MirrorMetadataView view) {
        Uuid here = view.topicId(asked.topicName());
        boolean idAsked = !Uuid.ZERO_UUID.equals(asked.topicId());
        if (Uuid.ZERO_UUID.equals(here)) {
            return Optional.of(idAsked ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        return idAsked && !here.equals(asked.topicId()) ? Optional.of(Errors.UNKNOWN_TOPIC_ID) : Optional.empty();
    }

    /**
     * Why a partition's record cannot answer what was last mirrored, if it cannot: its last mirrored point is
     * recorded when its failover completes (STOPPED), so a record still mirroring, paused or failing over has no
     * answer yet, and -1/-1 from it would read as "nothing mirrored" and cut the requester's failback to 0 (issue 25,
     * point 2). The requester takes the error as a doubt: it waits, cuts nothing and asks again. This broker's image
     * may also lag ZooKeeper (cut off from it): a record not yet STOPPED there is answered the same way.
     */
    static Optional<MirrorErrors> notFailedOver(MirrorPartitionRecord record) {
        MirrorPartitionState state = record.state() == MirrorPartitionState.FAILED ? record.previousState()
                : record.state();
        return switch (state) {
            case STOPPED -> Optional.empty();
            case STOPPING -> Optional.of(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED);
            default -> Optional.of(MirrorErrors.INVALID_MIRROR_STATE);
        };
    }
}
