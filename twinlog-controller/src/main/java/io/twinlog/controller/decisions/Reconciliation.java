package io.twinlog.controller.decisions;

import io.twinlog.controller.election.EligibleReplicas;
import io.twinlog.controller.election.EpochBumps;
import io.twinlog.controller.election.PartitionChanges;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * One reconciliation round (pure): every partition's desired leadership recomputed from the image. The controller
 * writes {@link #stateChanges()} first, in one fenced batch; only if that succeeded does it write
 * {@link #reassignmentSteps()}, one topic at a time (each is based on state versions the first batch did not touch).
 *
 * <p>A topic whose deletion is marked is left alone. Per partition, the first rule that applies wins:
 * <ol>
 *   <li>no state yet: initial leadership ({@link PartitionChanges#initial}) among the available brokers;</li>
 *   <li>a mirror partition whose record asks for a higher leader epoch: the epoch is raised, leader unchanged
 *       ({@link EpochBumps});</li>
 *   <li>otherwise leader and ISR follow the brokers ({@link PartitionChanges#onBrokersChanged}); a broker that
 *       restarted since the last round counts as failed for this one (see {@link ClusterView}).</li>
 * </ol>
 * Topics with reassignments in progress, none of whose partitions changed in the first batch, move one step
 * ({@link ReassignmentDecisions#advance}).
 */
public record Reconciliation(List<StateChange> stateChanges, List<AssignmentChange> reassignmentSteps) {

    public Reconciliation {
        stateChanges = List.copyOf(stateChanges);
        reassignmentSteps = List.copyOf(reassignmentSteps);
    }

    /**
     * @param uncleanElectionAllowed per topic name, whether an out-of-sync replica may lead when no ISR member is
     *                               available
     */
    public static Reconciliation decide(MetadataImage image, ClusterView cluster,
                                        Predicate<String> uncleanElectionAllowed) {
        return decide(image, cluster, uncleanElectionAllowed, Set.of());
    }

    /**
     * @param inFlight partitions whose state the controller has written but the image does not show yet: left
     *                 alone (decided again once the image has them), as is the reassignment of their topics
     */
    public static Reconciliation decide(MetadataImage image, ClusterView cluster,
                                        Predicate<String> uncleanElectionAllowed, Set<TopicPartition> inFlight) {
        Set<Integer> available = cluster.available();
        Optional<String> restarted = cluster.restarted().isEmpty() ? Optional.empty()
                : Optional.of("brokers " + cluster.restarted() + " restarted");
        List<StateChange> changes = new ArrayList<>();
        for (TopicImage topic : image.topics().values()) {
            if (image.deletionMarked(topic.name(), topic.topicId())) {
                continue; // being deleted: its nodes go one by one, and a state written now would outlive them
            }
            boolean unclean = uncleanElectionAllowed.test(topic.name());
            for (PartitionImage p : topic.partitions().values()) {
                TopicPartition tp = new TopicPartition(topic.name(), p.partition());
                if (inFlight.contains(tp)) {
                    continue;
                }
                // replicas in a failed log dir, or lost with a disk, count as on a dead broker
                TopicIdPartition id = new TopicIdPartition(topic.topicId(), tp);
                Set<Integer> eligible = EligibleReplicas.of(available, image.brokers(), id, p.state());
                Set<Integer> lost = Set.of(); // the common case: no copy
                if (eligible != available) {
                    lost = EligibleReplicas.lost(image.brokers(), id, p.state());
                    lost.retainAll(available);
                }
                String reason = eligible != available
                        ? reason(available, eligible, lost)
                        : restarted.orElseGet(() -> brokersReason(p.replicas(), eligible, cluster.shuttingDown()));
                partitionChange(tp, p, image.mirrors().partitions().get(tp), eligible, lost,
                        cluster.shuttingDown(), unclean, reason)
                        .ifPresent(changes::add);
            }
        }
        Set<String> touched = new HashSet<>();
        changes.forEach(c -> touched.add(c.partition().topic()));
        inFlight.forEach(tp -> touched.add(tp.topic()));
        List<AssignmentChange> steps = new ArrayList<>();
        for (TopicImage topic : image.topics().values()) {
            if (!topic.reassigning().isEmpty() && !touched.contains(topic.name())) {
                ReassignmentDecisions.advance(topic, available).ifPresent(steps::add);
            }
        }
        return new Reconciliation(changes, steps);
    }

    /**
     * Why the brokers changed a partition's leadership or ISR, in its own replicas: "replicas [0] unavailable",
     * "replicas [2] in controlled shutdown", or "replicas [0, 1, 2] all available" (a leader elected as one came back).
     */
    static String brokersReason(List<Integer> replicas, Set<Integer> eligible, Set<Integer> shuttingDown) {
        List<Integer> unavailable = replicas.stream().filter(r -> !eligible.contains(r)).toList();
        List<Integer> leaving = replicas.stream().filter(r -> eligible.contains(r) && shuttingDown.contains(r))
                .toList();
        List<String> parts = new ArrayList<>();
        if (!unavailable.isEmpty()) {
            parts.add("replicas " + unavailable + " unavailable");
        }
        if (!leaving.isEmpty()) {
            parts.add("replicas " + leaving + " in controlled shutdown");
        }
        return parts.isEmpty() ? "replicas " + replicas + " all available" : String.join(", ", parts);
    }

    private static String reason(Set<Integer> available, Set<Integer> eligible, Set<Integer> lost) {
        Set<Integer> offline = new TreeSet<>(available);
        offline.removeAll(eligible);
        offline.removeAll(lost);
        List<String> parts = new ArrayList<>();
        if (!offline.isEmpty()) {
            parts.add("replicas on brokers " + offline + " are in a failed log dir");
        }
        if (!lost.isEmpty()) {
            parts.add("brokers " + lost + " started without their log of it while in its ISR (a lost disk?): "
                    + "they rejoin once caught up");
        }
        return String.join(", ", parts);
    }

    private static Optional<StateChange> partitionChange(TopicPartition tp, PartitionImage p,
                                                         MirrorImage.MirrorPartition mirror, Set<Integer> eligible,
                                                         Set<Integer> lost, Set<Integer> shuttingDown,
                                                         boolean unclean, String reason) {
        if (p.state() == null) {
            return Optional.of(StateChange.initial(tp, PartitionChanges.initial(p.replicas(), eligible)));
        }
        if (mirror != null && eligible.contains(p.state().leader())) {
            // only under a leader that may lead: one that is gone, or lost its log, is replaced below, and a raised
            // epoch with it would pass for a new leadership of it
            Optional<PartitionState> bumped = EpochBumps.bump(p.state(), mirror.minLeaderEpoch());
            if (bumped.isPresent()) {
                return Optional.of(new StateChange(tp, StateChange.Kind.MIRROR_EPOCH_BUMP, Optional.of(p.state()),
                        bumped.get(), p.stateVersion(), "mirror state " + mirror.state()));
            }
        }
        return PartitionChanges.onBrokersChanged(p.state(), p.replicas(), eligible, shuttingDown, unclean, lost)
                .map(next -> StateChange.leadership(tp, p.state(), next, p.stateVersion(), reason));
    }
}
