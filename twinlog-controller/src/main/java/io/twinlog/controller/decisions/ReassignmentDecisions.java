package io.twinlog.controller.decisions;

import io.twinlog.controller.election.ReassignmentSteps;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.metadata.TopicAssignment.Reassignment;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.store.StateWrite;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Replica reassignment at the level of a topic's assignment record (pure): accepting or cancelling requests
 * (AlterPartitionReassignments) and moving accepted ones forward (reconciliation). The per-partition steps are
 * {@link ReassignmentSteps}; this class gathers them into one {@link AssignmentChange} per topic, which the
 * controller writes atomically with the affected partition states.
 */
public final class ReassignmentDecisions {
    private ReassignmentDecisions() {
    }

    /**
     * The outcome of a request for one topic: errors (or "nothing to do") for the partitions not accepted, the
     * accepted partitions, and the write that carries them out (present exactly when something was accepted).
     */
    public record RequestOutcome(Map<TopicPartition, ApiError> answers, List<TopicPartition> accepted,
                                 Optional<AssignmentChange> write) {
    }

    /** Why a target replica list cannot be accepted, or empty if it can. */
    public static Optional<String> validateTarget(List<Integer> target, Set<Integer> liveBrokers) {
        if (target.isEmpty()) {
            return Optional.of("The target replica list is empty");
        }
        if (new HashSet<>(target).size() != target.size()) {
            return Optional.of("Duplicate brokers in the target replicas " + target);
        }
        for (Integer b : target) {
            if (b == null || !liveBrokers.contains(b)) {
                return Optional.of("Broker " + b + " of the target replicas " + target + " is not a live broker");
            }
        }
        return Optional.empty();
    }

    /**
     * Starts (target present) or cancels (target empty) reassignments of one topic's partitions. A started one
     * writes the target replicas in at once (replicas = target then the leaving ones, as Kafka lists them), so
     * the new replicas start fetching; a cancelled one goes back to its original replicas.
     *
     * @param topic    the topic as the image shows it, empty if it does not exist
     * @param requests per partition of this topic: the target replicas, or empty to cancel
     */
    public static RequestOutcome onRequest(String topicName, Optional<TopicImage> topic,
                                           Map<TopicPartition, Optional<List<Integer>>> requests,
                                           Set<Integer> liveBrokers) {
        Map<TopicPartition, ApiError> answers = new HashMap<>();
        if (topic.isEmpty()) {
            requests.keySet().forEach(tp -> answers.put(tp, new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                    "Topic '" + topicName + "' does not exist.")));
            return new RequestOutcome(answers, List.of(), Optional.empty());
        }
        TopicImage t = topic.get();
        Map<Integer, Reassignment> reassigning = new HashMap<>(t.reassigning());
        Map<Integer, List<Integer>> replicas = replicasOf(t);
        List<StateWrite> states = new ArrayList<>();
        List<TopicPartition> accepted = new ArrayList<>();
        List<String> events = new ArrayList<>();
        for (Map.Entry<TopicPartition, Optional<List<Integer>>> e : requests.entrySet()) {
            TopicPartition tp = e.getKey();
            PartitionImage p = t.partitions().get(tp.partition());
            if (p == null || p.state() == null) {
                answers.put(tp, new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unknown partition " + tp));
                continue;
            }
            Reassignment ongoing = reassigning.get(tp.partition());
            if (e.getValue().isEmpty()) {
                if (ongoing == null) {
                    answers.put(tp, new ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS,
                            "No reassignment of " + tp + " is in progress"));
                    continue;
                }
                ReassignmentSteps.Step step = ReassignmentSteps.cancel(p.state(), ongoing, liveBrokers);
                replicas.put(tp.partition(), step.replicas());
                step.state().ifPresent(st -> states.add(new StateWrite(tp, st, p.stateVersion())));
                reassigning.remove(tp.partition());
                events.add("Reassignment of " + tp + " cancelled: back to replicas " + step.replicas());
                accepted.add(tp);
                continue;
            }
            List<Integer> target = e.getValue().get();
            Optional<String> invalid = validateTarget(target, liveBrokers);
            if (invalid.isPresent()) {
                answers.put(tp, new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, invalid.get()));
                continue;
            }
            if (target.equals(p.replicas()) && ongoing == null) {
                answers.put(tp, ApiError.NONE); // already there
                continue;
            }
            List<Integer> original = ongoing != null ? ongoing.original() : p.replicas();
            Reassignment reassignment = new Reassignment(List.copyOf(target), original);
            reassigning.put(tp.partition(), reassignment);
            // the adding replicas join in the same write, as in Kafka: a ListPartitionReassignments right after
            // this answer shows the full replica set, and the new replicas start fetching at once
            replicas.put(tp.partition(), ReassignmentSteps.replicasDuringMove(reassignment));
            events.add("Reassignment of " + tp + " requested: " + original + " -> " + target);
            accepted.add(tp);
        }
        if (accepted.isEmpty()) {
            return new RequestOutcome(answers, List.of(), Optional.empty());
        }
        AssignmentChange write = new AssignmentChange(t.name(), new TopicAssignment(t.topicId(), replicas,
                reassigning), t.assignmentVersion(), states, events);
        return new RequestOutcome(answers, accepted, Optional.of(write));
    }

    /**
     * Moves each reassigning partition of a topic one step forward (reconciliation); empty when every one of them
     * is still waiting for its new replicas to catch up. A partition that vanished (or has no state) leaves the
     * reassignment list.
     *
     * @param available brokers that may lead (live, not just restarted)
     */
    public static Optional<AssignmentChange> advance(TopicImage topic, Set<Integer> available) {
        Map<Integer, List<Integer>> replicas = replicasOf(topic);
        Map<Integer, Reassignment> remaining = new HashMap<>(topic.reassigning());
        List<StateWrite> states = new ArrayList<>();
        List<String> events = new ArrayList<>();
        boolean changed = false;
        for (Map.Entry<Integer, Reassignment> e : topic.reassigning().entrySet()) {
            PartitionImage p = topic.partitions().get(e.getKey());
            if (p == null || p.state() == null) {
                remaining.remove(e.getKey());
                changed = true;
                continue;
            }
            Optional<ReassignmentSteps.Step> step = ReassignmentSteps.next(p.replicas(), p.state(), e.getValue(),
                    available);
            if (step.isEmpty()) {
                continue;
            }
            changed = true;
            TopicPartition tp = new TopicPartition(topic.name(), e.getKey());
            ReassignmentSteps.Step s = step.get();
            replicas.put(e.getKey(), s.replicas());
            s.state().ifPresent(st -> states.add(new StateWrite(tp, st, p.stateVersion())));
            if (s.completed()) {
                remaining.remove(e.getKey());
                events.add("Reassignment of " + tp + " complete: replicas " + e.getValue().original() + " -> "
                        + s.replicas() + ", leader " + s.state().map(PartitionState::leader).orElse(p.leader())
                        + " ISR " + s.state().map(PartitionState::isr).orElse(p.isr()));
            } else {
                events.add("Reassignment of " + tp + ": replicas now " + s.replicas() + " while "
                        + e.getValue().adding() + " catch up");
            }
        }
        if (!changed) {
            return Optional.empty();
        }
        return Optional.of(new AssignmentChange(topic.name(), new TopicAssignment(topic.topicId(), replicas,
                remaining), topic.assignmentVersion(), states, events));
    }

    private static Map<Integer, List<Integer>> replicasOf(TopicImage topic) {
        Map<Integer, List<Integer>> replicas = new HashMap<>();
        topic.partitions().forEach((p, image) -> replicas.put(p, image.replicas()));
        return replicas;
    }
}
