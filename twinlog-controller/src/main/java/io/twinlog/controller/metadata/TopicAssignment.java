package io.twinlog.controller.metadata;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.controller.zk.Json;
import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
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

    /**
     * The record as stored at {@code /brokers/topics/<topic>}, partitions in numeric order:
     * {@code {"version":1,"topicId":"...","partitions":{"0":[1,2]},"reassigning":{"0":{"target":[2,3],
     * "original":[1,2]}}}}, where {@code reassigning} is absent when no reassignment is in progress.
     */
    @JsonPropertyOrder({"version", "topicId", "partitions", "reassigning"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Document(@JsonProperty("version") int version, @JsonProperty("topicId") String topicId,
                           @JsonProperty("partitions") Map<Integer, List<Integer>> partitions,
                           @JsonProperty("reassigning") Map<Integer, ReassignmentDocument> reassigning) {
    }

    /** One reassignment in {@link Document#reassigning()}. */
    @JsonPropertyOrder({"target", "original"})
    public record ReassignmentDocument(@JsonProperty("target") List<Integer> target,
                                       @JsonProperty("original") List<Integer> original) {
    }

    public Document toJson() {
        Map<Integer, ReassignmentDocument> moving = new TreeMap<>();
        reassigning.forEach((p, r) -> moving.put(p, new ReassignmentDocument(r.target(), r.original())));
        return new Document(1, topicId.toString(), new TreeMap<>(replicas), moving.isEmpty() ? null : moving);
    }

    /** @param path where the record was read, for the error if it is corrupt */
    public static TopicAssignment fromJson(byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        Map<Integer, List<Integer>> replicas = new TreeMap<>();
        if (d.partitions() != null) {
            d.partitions().forEach((p, r) -> replicas.put(p, List.copyOf(r)));
        }
        Map<Integer, Reassignment> reassigning = new TreeMap<>();
        if (d.reassigning() != null) {
            d.reassigning().forEach((p, r) -> reassigning.put(p,
                    new Reassignment(List.copyOf(r.target()), List.copyOf(r.original()))));
        }
        return new TopicAssignment(Uuid.fromString(d.topicId()), replicas, reassigning);
    }
}
