package io.twinlog.protocol.client;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListOffsetsResponse;

import java.util.List;

/**
 * ListOffsets for one partition, as fetchers ask it when the leader cannot serve their next offset (its earliest and
 * latest offsets decide between restarting at the log start and truncating).
 */
public final class SinglePartitionOffsets {
    private SinglePartitionOffsets() {
    }

    /** The request's only topic: {@code tp} at {@code timestamp}, with the leader epoch the asker knows (or -1). */
    public static List<ListOffsetsRequestData.ListOffsetsTopic> target(TopicPartition tp, long timestamp,
                                                                       int currentLeaderEpoch) {
        ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic()
                .setName(tp.topic());
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(tp.partition())
                .setTimestamp(timestamp).setCurrentLeaderEpoch(currentLeaderEpoch));
        return List.of(topic);
    }

    /** The answered offset, or -1 if the partition's answer is an error. */
    public static long offset(ListOffsetsResponse response) {
        for (ListOffsetsResponseData.ListOffsetsTopicResponse t : response.data().topics()) {
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse p : t.partitions()) {
                if (p.errorCode() == Errors.NONE.code()) {
                    return p.offset();
                }
            }
        }
        return -1L;
    }
}
