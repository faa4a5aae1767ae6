package io.twinlog.controller;

import io.twinlog.controller.election.EligibleReplicas;
import io.twinlog.controller.election.EpochBumps;
import io.twinlog.controller.election.PartitionChanges;
import io.twinlog.controller.election.ReassignmentSteps;
import io.twinlog.controller.metadata.TopicAssignment;
import org.apache.kafka.common.requests.ApiError;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.ControllerZkClient;
import io.twinlog.controller.zk.ControllerZkClient.ControllerEpoch;
import io.twinlog.controller.zk.ControllerZkClient.StateWrite;
import io.twinlog.controller.zk.MetadataWatcher;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.queue.EventQueue;
import org.apache.kafka.queue.KafkaEventQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The cluster controller: exactly one broker holds it at a time (ephemeral {@code /controller}, epoch claimed in
 * {@code /controller_epoch}), and only it writes partition leadership.
 *
 * <p>Threading: one event queue (Kafka's {@link KafkaEventQueue}) runs everything — election attempts,
 * reconciliation after metadata changes, AlterPartition, ElectLeaders and reassignment requests — so decisions
 * never race each other. A task that throws is logged with its stack trace and its caller is answered with an
 * error; nothing waits out a timeout for an answer that will not come. Decisions come from
 * {@link PartitionChanges} (pure); this class reads the metadata image, applies them, and writes the results with
 * {@link ControllerZkClient}, fenced by the controller epoch.
 *
 * <p>Reconciliation is level-triggered: after any metadata change the controller recomputes every partition's
 * desired leadership from the current image (new partitions get their initial leader, partitions led or
 * replicated by departed brokers get a new leader / smaller ISR, offline partitions whose replicas returned get a
 * leader). A write that loses a version race is simply redone from the next image.
 */
public final class Controller implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Controller.class);
    private static final long RETRY_DELAY_MS = 200;

    private final int brokerId;
    private final MetadataWatcher watcher;
    private final ControllerZkClient zkClient;
    private final Predicate<String> uncleanElectionEnabled;
    private final Time time = Time.SYSTEM;
    private final KafkaEventQueue queue;
    private final String logPrefix;
    private Optional<ControllerEpoch> epoch = Optional.empty();
    private Map<Integer, Long> knownBrokerEpochs = new HashMap<>();
    private boolean reconcileScheduled;
    private volatile boolean closed;

    /**
     * @param uncleanElectionEnabled whether a topic allows unclean leader election (its config, or the broker
     *                               default), read at each decision so a dynamic change takes effect
     */
    public Controller(int brokerId, MetadataWatcher watcher, ControllerZkClient zkClient,
                      Predicate<String> uncleanElectionEnabled) {
        this.brokerId = brokerId;
        this.watcher = watcher;
        this.zkClient = zkClient;
        this.uncleanElectionEnabled = uncleanElectionEnabled;
        this.queue = new KafkaEventQueue(time, new LogContext("[Controller broker=" + brokerId + "] "),
                "twinlog-controller-" + brokerId + "-");
        this.logPrefix = "[Controller broker=" + brokerId + "] ";
    }

    public void start() {
        watcher.addListener((previous, next) -> onImage(next));
        run("elect", this::maybeElect);
    }

    /** True while this broker holds the controllership. */
    public boolean isActive() {
        return epoch.isPresent();
    }

    private void onImage(MetadataImage image) {
        if (closed) {
            return;
        }
        run("metadata change", () -> {
            if (image.controllerId() == -1 && epoch.isEmpty()) {
                maybeElect();
            } else if (epoch.isPresent() && image.controllerId() != brokerId && image.controllerId() != -1) {
                resignLocally("another broker (" + image.controllerId() + ") holds /controller");
            }
            scheduleReconcile();
        });
    }

    private void maybeElect() {
        if (closed || epoch.isPresent()) {
            return;
        }
        try {
            Optional<ControllerEpoch> claimed = zkClient.tryClaim(brokerId);
            if (claimed.isPresent()) {
                epoch = claimed;
                knownBrokerEpochs = new HashMap<>();
                log.info("{}Became the controller with controller epoch {}", logPrefix, claimed.get().epoch());
                scheduleReconcile();
            }
        } catch (Exception e) {
            log.warn("{}Controller election attempt failed: {}; retrying", logPrefix, e.toString());
            schedule("elect", 1_000, this::maybeElect);
        }
    }

    private void scheduleReconcile() {
        if (!reconcileScheduled && epoch.isPresent()) {
            reconcileScheduled = true;
            run("reconcile", this::reconcile);
        }
    }

    private void reconcile() {
        reconcileScheduled = false;
        if (epoch.isEmpty() || closed) {
            return;
        }
        MetadataImage image = watcher.image();
        if (image.controllerId() != -1 && image.controllerId() != brokerId) {
            resignLocally("the image shows broker " + image.controllerId() + " as controller");
            return;
        }
        Set<Integer> live = new HashSet<>();
        Set<Integer> shuttingDown = new HashSet<>();
        Set<Integer> bounced = new HashSet<>();
        Map<Integer, Long> epochs = new HashMap<>();
        for (BrokerRegistration b : image.brokers().values()) {
            live.add(b.id());
            epochs.put(b.id(), b.brokerEpoch());
            if (b.shuttingDown()) {
                shuttingDown.add(b.id());
            }
            Long known = knownBrokerEpochs.get(b.id());
            if (known != null && known != b.brokerEpoch()) {
                bounced.add(b.id());
            }
        }
        // A broker that restarted between two images (same id, new registration) may have lost its log: treat it
        // as failed for this round, so it leaves the ISRs and must catch up again before rejoining.
        Set<Integer> available = new HashSet<>(live);
        available.removeAll(bounced);
        List<StateWrite> writes = new ArrayList<>();
        for (TopicImage topic : image.topics().values()) {
            boolean unclean = uncleanElectionEnabled.test(topic.name());
            for (PartitionImage p : topic.partitions().values()) {
                TopicPartition tp = new TopicPartition(topic.name(), p.partition());
                // replicas in a failed log dir count as on a dead broker
                Set<Integer> eligible = EligibleReplicas.of(available, image.brokers(),
                        new TopicIdPartition(topic.topicId(), tp));
                if (p.state() == null) {
                    PartitionState initial = PartitionChanges.initial(p.replicas(), eligible);
                    writes.add(new StateWrite(tp, initial, -1));
                    continue;
                }
                io.twinlog.controller.metadata.MirrorImage.MirrorPartition mirror = image.mirrors().partitions().get(tp);
                if (mirror != null && mirror.minLeaderEpoch() > p.state().leaderEpoch()) {
                    Optional<PartitionState> bumped = EpochBumps.bump(p.state(), mirror.minLeaderEpoch());
                    if (bumped.isPresent()) {
                        log.info("{}Leader epoch of mirror partition {}: {} -> {} (leader {} unchanged; mirror state {})",
                                logPrefix, tp, p.state().leaderEpoch(), bumped.get().leaderEpoch(), p.leader(),
                                mirror.state());
                        writes.add(new StateWrite(tp, bumped.get(), p.stateVersion()));
                        continue;
                    }
                }
                PartitionChanges.onBrokersChanged(p.state(), p.replicas(), eligible, shuttingDown, unclean)
                        .ifPresent(next -> {
                            logChange(tp, p.state(), next, changeReason(bounced, available, eligible),
                                    unclean && next.isr().size() == 1 && !p.state().isr().contains(next.leader()));
                            writes.add(new StateWrite(tp, next, p.stateVersion()));
                        });
            }
        }
        if (!write(writes)) {
            return;
        }
        Set<String> touched = new HashSet<>();
        writes.forEach(w -> touched.add(w.partition().topic()));
        for (TopicImage topic : image.topics().values()) {
            if (!topic.reassigning().isEmpty() && !touched.contains(topic.name())
                    && !advanceReassignments(topic, available)) {
                return;
            }
        }
        knownBrokerEpochs = epochs;
        if (!bounced.isEmpty()) {
            scheduleReconcile(); // second round: the restarted brokers count as live again
        }
    }

    private static String changeReason(Set<Integer> bounced, Set<Integer> available, Set<Integer> eligible) {
        if (eligible != available) {
            Set<Integer> offline = new HashSet<>(available);
            offline.removeAll(eligible);
            return "replicas on brokers " + offline + " are in a failed log dir";
        }
        return bounced.isEmpty() ? "broker change" : "brokers " + bounced + " restarted";
    }

    /** Moves each reassigning partition of a topic one step forward; false if the write failed. */
    private boolean advanceReassignments(TopicImage topic, Set<Integer> live) {
        Map<Integer, List<Integer>> replicas = new HashMap<>();
        topic.partitions().forEach((p, pi) -> replicas.put(p, pi.replicas()));
        Map<Integer, TopicAssignment.Reassignment> remaining = new HashMap<>(topic.reassigning());
        List<StateWrite> states = new ArrayList<>();
        boolean changed = false;
        for (Map.Entry<Integer, TopicAssignment.Reassignment> e : topic.reassigning().entrySet()) {
            PartitionImage p = topic.partitions().get(e.getKey());
            if (p == null || p.state() == null) {
                remaining.remove(e.getKey());
                changed = true;
                continue;
            }
            Optional<ReassignmentSteps.Step> step = ReassignmentSteps.next(p.replicas(), p.state(), e.getValue(), live);
            if (step.isEmpty()) {
                continue;
            }
            changed = true;
            TopicPartition tp = new TopicPartition(topic.name(), e.getKey());
            replicas.put(e.getKey(), step.get().replicas());
            step.get().state().ifPresent(st -> states.add(new StateWrite(tp, st, p.stateVersion())));
            if (step.get().completed()) {
                remaining.remove(e.getKey());
                log.info("{}Reassignment of {} complete: replicas {} -> {}, leader {} ISR {}", logPrefix, tp,
                        e.getValue().original(), step.get().replicas(),
                        step.get().state().map(PartitionState::leader).orElse(p.leader()),
                        step.get().state().map(PartitionState::isr).orElse(p.isr()));
            } else {
                log.info("{}Reassignment of {}: replicas now {} while {} catch up", logPrefix, tp,
                        step.get().replicas(), e.getValue().adding());
            }
        }
        if (!changed) {
            return true;
        }
        TopicAssignment next = new TopicAssignment(topic.topicId(), replicas, remaining);
        return writeAssignment(topic, next, states);
    }

    private boolean writeAssignment(TopicImage topic, TopicAssignment next, List<StateWrite> states) {
        try {
            zkClient.writeAssignment(epoch.orElseThrow(), topic.name(), next, topic.assignmentVersion(), states);
            return true;
        } catch (ControllerZkClient.ControllerMovedException e) {
            resignLocally(e.getMessage());
        } catch (ControllerZkClient.StaleStateException e) {
            log.info("{}{}; deciding again from fresh metadata", logPrefix, e.getMessage());
            schedule("reconcile-retry", RETRY_DELAY_MS, this::scheduleReconcile);
        } catch (Exception e) {
            log.warn("{}Could not write the assignment of {}: {}; retrying", logPrefix, topic.name(), e.toString());
            schedule("reconcile-retry", RETRY_DELAY_MS * 5, this::scheduleReconcile);
        }
        return false;
    }

    /**
     * Starts (target present) or cancels (target empty) replica reassignments. Validated here; carried out step by
     * step by reconciliation, so a controller failover resumes them.
     */
    public CompletableFuture<Map<TopicPartition, ApiError>> alterReassignments(
            Map<TopicPartition, Optional<List<Integer>>> requests) {
        CompletableFuture<Map<TopicPartition, ApiError>> result = new CompletableFuture<>();
        submit("alter reassignments", result, error -> {
            Map<TopicPartition, ApiError> out = new HashMap<>();
            requests.keySet().forEach(tp -> out.put(tp, error));
            return out;
        }, () -> {
            Map<TopicPartition, ApiError> out = new HashMap<>();
            if (epoch.isEmpty()) {
                requests.keySet().forEach(tp -> out.put(tp, new ApiError(Errors.NOT_CONTROLLER, null)));
                result.complete(out);
                return;
            }
            MetadataImage image = watcher.image();
            Map<String, Map<TopicPartition, Optional<List<Integer>>>> byTopic = new HashMap<>();
            requests.forEach((tp, target) -> byTopic.computeIfAbsent(tp.topic(), t -> new HashMap<>()).put(tp, target));
            for (Map.Entry<String, Map<TopicPartition, Optional<List<Integer>>>> t : byTopic.entrySet()) {
                Optional<TopicImage> topic = image.topic(t.getKey());
                if (topic.isEmpty()) {
                    t.getValue().keySet().forEach(tp -> out.put(tp, new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                            "Topic '" + tp.topic() + "' does not exist.")));
                    continue;
                }
                Map<Integer, TopicAssignment.Reassignment> reassigning = new HashMap<>(topic.get().reassigning());
                Map<Integer, List<Integer>> replicas = new HashMap<>();
                topic.get().partitions().forEach((p, pi) -> replicas.put(p, pi.replicas()));
                List<StateWrite> states = new ArrayList<>();
                List<TopicPartition> accepted = new ArrayList<>();
                for (Map.Entry<TopicPartition, Optional<List<Integer>>> e : t.getValue().entrySet()) {
                    TopicPartition tp = e.getKey();
                    PartitionImage p = topic.get().partitions().get(tp.partition());
                    if (p == null || p.state() == null) {
                        out.put(tp, new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unknown partition " + tp));
                        continue;
                    }
                    TopicAssignment.Reassignment ongoing = reassigning.get(tp.partition());
                    if (e.getValue().isEmpty()) {
                        if (ongoing == null) {
                            out.put(tp, new ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS,
                                    "No reassignment of " + tp + " is in progress"));
                            continue;
                        }
                        ReassignmentSteps.Step step = ReassignmentSteps.cancel(p.state(), ongoing, image.brokers().keySet());
                        replicas.put(tp.partition(), step.replicas());
                        step.state().ifPresent(st -> states.add(new StateWrite(tp, st, p.stateVersion())));
                        reassigning.remove(tp.partition());
                        log.info("{}Reassignment of {} cancelled: back to replicas {}", logPrefix, tp, step.replicas());
                        accepted.add(tp);
                        continue;
                    }
                    List<Integer> target = e.getValue().get();
                    Optional<String> invalid = validateTarget(target, image.brokers().keySet());
                    if (invalid.isPresent()) {
                        out.put(tp, new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, invalid.get()));
                        continue;
                    }
                    List<Integer> original = ongoing != null ? ongoing.original() : p.replicas();
                    if (target.equals(p.replicas()) && ongoing == null) {
                        out.put(tp, ApiError.NONE); // already there
                        continue;
                    }
                    TopicAssignment.Reassignment reassignment = new TopicAssignment.Reassignment(List.copyOf(target),
                            original);
                    reassigning.put(tp.partition(), reassignment);
                    // the adding replicas join in the same write, as in Kafka: a ListPartitionReassignments right
                    // after this answer shows the full replica set, and the new replicas start fetching at once
                    replicas.put(tp.partition(), ReassignmentSteps.replicasDuringMove(reassignment));
                    log.info("{}Reassignment of {} requested: {} -> {}", logPrefix, tp, original, target);
                    accepted.add(tp);
                }
                if (accepted.isEmpty()) {
                    continue;
                }
                TopicAssignment next = new TopicAssignment(topic.get().topicId(), replicas, reassigning);
                boolean ok = writeAssignment(topic.get(), next, states);
                accepted.forEach(tp -> out.put(tp, ok ? ApiError.NONE
                        : new ApiError(Errors.REQUEST_TIMED_OUT, "Topic changed concurrently; retry")));
            }
            scheduleReconcile();
            result.complete(out);
        });
        return result;
    }

    private static Optional<String> validateTarget(List<Integer> target, Set<Integer> liveBrokers) {
        if (target.isEmpty()) {
            return Optional.of("The target replica list is empty");
        }
        if (new HashSet<>(target).size() != target.size()) {
            return Optional.of("Duplicate brokers in the target replicas " + target);
        }
        for (Integer b : target) {
            if (!liveBrokers.contains(b)) {
                return Optional.of("Broker " + b + " of the target replicas " + target + " is not a live broker");
            }
        }
        return Optional.empty();
    }

    private void logChange(TopicPartition tp, PartitionState from, PartitionState to, String reason, boolean unclean) {
        if (from.leader() != to.leader()) {
            if (unclean) {
                log.warn("{}UNCLEAN leader election for {}: leader {} -> {} in epoch {} (no in-sync replica was "
                        + "alive; records not on broker {} are lost), ISR {} -> {} ({})", logPrefix, tp, from.leader(),
                        to.leader(), to.leaderEpoch(), to.leader(), from.isr(), to.isr(), reason);
            } else {
                log.info("{}Leader of {}: {} -> {} in epoch {}, ISR {} -> {} ({})", logPrefix, tp, from.leader(),
                        to.leader(), to.leaderEpoch(), from.isr(), to.isr(), reason);
            }
        } else {
            log.info("{}ISR of {}: {} -> {} (leader {} epoch {}, {})", logPrefix, tp, from.isr(), to.isr(),
                    to.leader(), to.leaderEpoch(), reason);
        }
    }

    /** Writes fenced; on a lost race re-reconciles from the next image; on a lost controllership resigns. */
    private boolean write(List<StateWrite> writes) {
        if (writes.isEmpty()) {
            return true;
        }
        try {
            for (StateWrite w : writes) {
                if (w.expectedVersion() < 0) {
                    zkClient.ensurePartitionNode(w.partition());
                }
            }
            zkClient.writeStates(epoch.orElseThrow(), writes);
            for (StateWrite w : writes) {
                if (w.expectedVersion() < 0) {
                    log.info("{}Initial leadership of {}: leader {} epoch {} ISR {}", logPrefix, w.partition(),
                            w.state().leader(), w.state().leaderEpoch(), w.state().isr());
                }
            }
            return true;
        } catch (ControllerZkClient.ControllerMovedException e) {
            resignLocally(e.getMessage());
            return false;
        } catch (ControllerZkClient.StaleStateException e) {
            log.info("{}{}; deciding again from fresh metadata", logPrefix, e.getMessage());
            schedule("reconcile-retry", RETRY_DELAY_MS, this::scheduleReconcile);
            return false;
        } catch (Exception e) {
            log.warn("{}Could not write partition states: {}; retrying", logPrefix, e.toString());
            schedule("reconcile-retry", RETRY_DELAY_MS * 5, this::scheduleReconcile);
            return false;
        }
    }

    private void resignLocally(String reason) {
        if (epoch.isPresent()) {
            log.info("{}No longer the controller (epoch {}): {}", logPrefix, epoch.get().epoch(), reason);
            epoch = Optional.empty();
        }
    }

    /** One partition of an AlterPartition request. */
    public record IsrChange(TopicPartition partition, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
    }

    /** The answer for one partition: an error, or the state now in force. */
    public record IsrChangeResult(Errors error, Optional<PartitionState> state) {
    }

    /** Handles AlterPartition from a leader; completes after the new ISR is durable in ZooKeeper. */
    public CompletableFuture<Map<TopicPartition, IsrChangeResult>> alterPartition(int fromBroker, long brokerEpoch,
                                                                                   List<IsrChange> changes) {
        CompletableFuture<Map<TopicPartition, IsrChangeResult>> result = new CompletableFuture<>();
        submit("AlterPartition from broker " + fromBroker, result, error -> {
            Map<TopicPartition, IsrChangeResult> out = new HashMap<>();
            changes.forEach(c -> out.put(c.partition(), new IsrChangeResult(error.error(), Optional.empty())));
            return out;
        }, () -> {
            Map<TopicPartition, IsrChangeResult> out = new HashMap<>();
            if (epoch.isEmpty()) {
                changes.forEach(c -> out.put(c.partition(), new IsrChangeResult(Errors.NOT_CONTROLLER, Optional.empty())));
                result.complete(out);
                return;
            }
            MetadataImage image = watcher.image();
            BrokerRegistration sender = image.brokers().get(fromBroker);
            if (sender == null || (brokerEpoch >= 0 && sender.brokerEpoch() != brokerEpoch)) {
                changes.forEach(c -> out.put(c.partition(), new IsrChangeResult(Errors.STALE_BROKER_EPOCH, Optional.empty())));
                result.complete(out);
                return;
            }
            Set<Integer> live = new HashSet<>();
            image.brokers().values().stream().filter(b -> !b.shuttingDown()).forEach(b -> live.add(b.id()));
            List<StateWrite> writes = new ArrayList<>();
            for (IsrChange c : changes) {
                Optional<PartitionImage> p = image.partition(c.partition());
                if (p.isEmpty() || p.get().state() == null) {
                    out.put(c.partition(), new IsrChangeResult(Errors.UNKNOWN_TOPIC_OR_PARTITION, Optional.empty()));
                    continue;
                }
                // a replica in a failed log dir cannot join the ISR
                Set<Integer> eligible = EligibleReplicas.of(live, image.brokers(), topicIdPartition(image, c.partition()));
                PartitionChanges.AlterResult r = PartitionChanges.alterIsr(p.get().state(), p.get().replicas(),
                        eligible, fromBroker, c.leaderEpoch(), c.partitionEpoch(), c.newIsr());
                if (r.error() != Errors.NONE) {
                    out.put(c.partition(), new IsrChangeResult(r.error(), Optional.of(p.get().state())));
                    continue;
                }
                PartitionState next = r.newState().orElseThrow();
                if (!next.equals(p.get().state())) {
                    logChange(c.partition(), p.get().state(), next, "AlterPartition from leader " + fromBroker, false);
                    writes.add(new StateWrite(c.partition(), next, p.get().stateVersion()));
                }
                out.put(c.partition(), new IsrChangeResult(Errors.NONE, Optional.of(next)));
            }
            if (!write(writes)) {
                writes.forEach(w -> out.put(w.partition(), new IsrChangeResult(Errors.INVALID_UPDATE_VERSION, Optional.empty())));
            }
            result.complete(out);
        });
        return result;
    }

    /** Handles an operator's ElectLeaders request (PREFERRED or UNCLEAN) for the given partitions. */
    public CompletableFuture<Map<TopicPartition, PartitionChanges.ElectionResult>> electLeaders(
            boolean unclean, Set<TopicPartition> partitions) {
        CompletableFuture<Map<TopicPartition, PartitionChanges.ElectionResult>> result = new CompletableFuture<>();
        submit((unclean ? "UNCLEAN" : "PREFERRED") + " election", result, error -> {
            Map<TopicPartition, PartitionChanges.ElectionResult> out = new HashMap<>();
            partitions.forEach(tp -> out.put(tp, new PartitionChanges.ElectionResult(error.error(), error.message(),
                    Optional.empty())));
            return out;
        }, () -> {
            Map<TopicPartition, PartitionChanges.ElectionResult> out = new HashMap<>();
            if (epoch.isEmpty()) {
                partitions.forEach(tp -> out.put(tp, new PartitionChanges.ElectionResult(Errors.NOT_CONTROLLER,
                        "Broker " + brokerId + " is not the controller", Optional.empty())));
                result.complete(out);
                return;
            }
            MetadataImage image = watcher.image();
            Set<Integer> live = new HashSet<>(image.brokers().keySet());
            Set<Integer> shuttingDown = new HashSet<>();
            image.brokers().values().stream().filter(BrokerRegistration::shuttingDown).forEach(b -> shuttingDown.add(b.id()));
            List<StateWrite> writes = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                Optional<PartitionImage> p = image.partition(tp);
                if (p.isEmpty() || p.get().state() == null) {
                    out.put(tp, new PartitionChanges.ElectionResult(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                            "Unknown partition " + tp, Optional.empty()));
                    continue;
                }
                Set<Integer> eligible = EligibleReplicas.of(live, image.brokers(), topicIdPartition(image, tp));
                PartitionChanges.ElectionResult r = unclean
                        ? PartitionChanges.electUnclean(p.get().state(), p.get().replicas(), eligible, shuttingDown)
                        : PartitionChanges.electPreferred(p.get().state(), p.get().replicas(), eligible, shuttingDown);
                r.newState().ifPresent(next -> {
                    logChange(tp, p.get().state(), next, (unclean ? "UNCLEAN" : "PREFERRED") + " election requested",
                            unclean && !p.get().state().isr().contains(next.leader()));
                    writes.add(new StateWrite(tp, next, p.get().stateVersion()));
                });
                out.put(tp, r);
            }
            if (!write(writes)) {
                writes.forEach(w -> out.put(w.partition(), new PartitionChanges.ElectionResult(
                        Errors.REQUEST_TIMED_OUT, "The partition changed during the election; retry", Optional.empty())));
            }
            result.complete(out);
        });
        return result;
    }

    /** The partition with its topic ID (the partition is known to be in the image). */
    private static TopicIdPartition topicIdPartition(MetadataImage image, TopicPartition tp) {
        return new TopicIdPartition(image.topic(tp.topic()).orElseThrow().topicId(), tp);
    }

    /**
     * Runs a request on the event queue. Its caller always gets an answer: NOT_CONTROLLER once the controller is
     * closing, UNKNOWN_SERVER_ERROR (logged with its stack trace) if the task throws.
     */
    private <T> void submit(String name, CompletableFuture<T> result, Function<ApiError, T> errorAnswer,
                            Runnable task) {
        queue.append(new ControllerEvent(name, task) {
            @Override
            public void handleException(Throwable e) {
                super.handleException(e);
                ApiError error = e instanceof RejectedExecutionException
                        ? new ApiError(Errors.NOT_CONTROLLER, "Broker " + brokerId + " is shutting down")
                        : new ApiError(Errors.UNKNOWN_SERVER_ERROR, "The controller failed: " + e);
                result.complete(errorAnswer.apply(error));
            }
        });
    }

    private void run(String name, Runnable task) {
        queue.append(new ControllerEvent(name, task));
    }

    /** Runs {@code task} after {@code delayMs}; a second scheduling under the same tag keeps the earlier deadline. */
    private void schedule(String tag, long delayMs, Runnable task) {
        queue.scheduleDeferred(tag, new EventQueue.EarliestDeadlineFunction(time.nanoseconds()
                + TimeUnit.MILLISECONDS.toNanos(delayMs)), new ControllerEvent(tag, task));
    }

    /** One controller task; a failure is logged with its stack trace, never dropped. */
    private class ControllerEvent implements EventQueue.Event {
        private final String name;
        private final Runnable task;

        ControllerEvent(String name, Runnable task) {
            this.name = name;
            this.task = task;
        }

        @Override
        public void run() {
            task.run();
        }

        @Override
        public void handleException(Throwable e) {
            if (e instanceof RejectedExecutionException) {
                log.debug("{}{} dropped: the controller is closing", logPrefix, name);
            } else {
                log.error("{}{} failed", logPrefix, name, e);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        queue.beginShutdown("controller closing");
        try {
            queue.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (epoch.isPresent()) {
            try {
                zkClient.resign(brokerId);
            } catch (Exception e) {
                log.warn("{}Could not release /controller: {}", logPrefix, e.toString());
            }
        }
    }
}
