package io.twinlog.controller.metadata;

import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/** A topic: name, topic ID and its partitions by index (0..n-1). Immutable. */
public record TopicImage(String name, Uuid topicId, SortedMap<Integer, PartitionImage> partitions) {

    /** The assignment record stored at /brokers/topics/&lt;topic&gt;. */
    public static Map<String, Object> assignmentJson(Uuid topicId, Map<Integer, List<Integer>> assignment) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("topicId", topicId.toString());
        Map<String, Object> parts = new LinkedHashMap<>();
        assignment.forEach((p, replicas) -> parts.put(Integer.toString(p), replicas));
        m.put("partitions", parts);
        return m;
    }

    @SuppressWarnings("unchecked")
    public static Map<Integer, List<Integer>> assignmentFromJson(Map<String, Object> json) {
        Map<Integer, List<Integer>> out = new java.util.TreeMap<>();
        Map<String, Object> parts = (Map<String, Object>) json.getOrDefault("partitions", Map.of());
        parts.forEach((p, replicas) -> {
            List<Integer> r = new ArrayList<>();
            for (Object o : (List<Object>) replicas) {
                r.add(((Number) o).intValue());
            }
            out.put(Integer.parseInt(p), List.copyOf(r));
        });
        return out;
    }
}
