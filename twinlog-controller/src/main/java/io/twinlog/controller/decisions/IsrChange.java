package io.twinlog.controller.decisions;

import org.apache.kafka.common.TopicPartition;

import java.util.List;

/** One partition of an AlterPartition request: the leader's proposed ISR, in the epochs it was proposed in. */
public record IsrChange(TopicPartition partition, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
}
