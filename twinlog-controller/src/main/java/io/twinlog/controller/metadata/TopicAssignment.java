package io.twinlog.controller.metadata;

import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The record at {@code /brokers/topics/<topic>}: topic ID, replicas per partition, and reassignments in progress
 * (target and original replicas per partition), so a reassignment survives a controller failover.
 */
public record TopicAssignment(Uuid topicId, Map<Integer, List<Integer>> replicas, Map<Integer, Reassignment> reassigning) {

    /** A reassignment in progress: replicas move from {@code original} to {@code target}. */
    public record Reassignment(List<Integer> target, List<Integer> original) {
        public List<Integer> adding() {
            List<Integer> out = new ArrayList<>(target);
            out.removeAll(original);
            return out;
        }

        public List<Integer> removing() {
            List<Integer> out = new ArrayList<>(original);
            out.removeAll(target);
            return out;
        }
    }

    public TopicAssignment {
        replicas = Map.copyOf(replicas);
        reassigning = Map.copyOf(reassigning);
    }

    public static TopicAssignment of(Uuid topicId, Map<Integer, List<Integer>> replicas) {
        return new TopicAssignment(topicId, replicas, Map.of());
    }

    public TopicAssignment withReplicas(Map<Integer, List<Integer>> newReplicas) {
        return new TopicAssignment(topicId, newReplicas, reassigning);
    }

    public TopicAssignment withReassigning(Map<Integer, Reassignment> newReassigning) {
        return new TopicAssignment(topicId, replicas, newReassigning);
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("topicId", topicId.toString());
        Map<String, Object> parts = new LinkedHashMap<>();
        new TreeMap<>(replicas).forEach((p, r) -> parts.put(Integer.toString(p), r));
        m.put("partitions", parts);
        if (!reassigning.isEmpty()) {
            Map<String, Object> ra = new LinkedHashMap<>();
            new TreeMap<>(reassigning).forEach((p, r) -> {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("target", r.target());
                e.put("original", r.original());
                ra.put(Integer.toString(p), e);
            });
            m.put("reassigning", ra);
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    public static TopicAssignment fromJson(Map<String, Object> json) {
        Map<Integer, List<Integer>> replicas = new TreeMap<>();
        ((Map<String, Object>) json.getOrDefault("partitions", Map.of()))
                .forEach((p, r) -> replicas.put(Integer.parseInt(p), ints(r)));
        Map<Integer, Reassignment> reassigning = new TreeMap<>();
        ((Map<String, Object>) json.getOrDefault("reassigning", Map.of())).forEach((p, r) -> {
            Map<String, Object> e = (Map<String, Object>) r;
            reassigning.put(Integer.parseInt(p), new Reassignment(ints(e.get("target")), ints(e.get("original"))));
        });
        return new TopicAssignment(Uuid.fromString((String) json.get("topicId")), replicas, reassigning);
    }

    @SuppressWarnings("unchecked")
    private static List<Integer> ints(Object o) {
        List<Integer> out = new ArrayList<>();
        for (Object x : (List<Object>) o) {
            out.add(((Number) x).intValue());
        }
        return List.copyOf(out);
    }
}
