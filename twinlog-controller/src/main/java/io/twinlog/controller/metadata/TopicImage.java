package io.twinlog.controller.metadata;

import org.apache.kafka.common.Uuid;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A topic: name, topic ID, its partitions by index (0..n-1), reassignments in progress, and the ZooKeeper version
 * of its assignment record (for the controller's conditional writes). Immutable.
 */
public record TopicImage(String name, Uuid topicId, SortedMap<Integer, PartitionImage> partitions,
                         Map<Integer, TopicAssignment.Reassignment> reassigning, int assignmentVersion) {

    public TopicAssignment assignment() {
        Map<Integer, List<Integer>> replicas = new TreeMap<>();
        partitions.forEach((p, image) -> replicas.put(p, image.replicas()));
        return new TopicAssignment(topicId, replicas, reassigning);
    }
}
