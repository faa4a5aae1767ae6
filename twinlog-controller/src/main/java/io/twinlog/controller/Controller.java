package io.twinlog.controller;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.decisions.AssignmentChange;
import io.twinlog.controller.decisions.ClusterView;
import io.twinlog.controller.decisions.ControllerResult;
import io.twinlog.controller.decisions.ElectionDecisions;
import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.decisions.IsrChangeDecisions;
import io.twinlog.controller.decisions.IsrChangeResult;
import io.twinlog.controller.decisions.ReassignmentDecisions;
import io.twinlog.controller.decisions.Reconciliation;
import io.twinlog.controller.decisions.ReregistrationGrace;
import io.twinlog.controller.decisions.StateChange;
import io.twinlog.controller.election.PartitionChanges.ElectionResult;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.store.ControllerEpoch;
import io.twinlog.controller.store.ControllerMovedException;
import io.twinlog.controller.store.ControllerStore;
import io.twinlog.controller.store.StaleStateException;
import io.twinlog.controller.store.StateWrite;
import io.twinlog.controller.store.StateWriteResult;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.queue.EventQueue;
import org.apache.kafka.queue.KafkaEventQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The cluster controller: exactly one broker holds it at a time (ephemeral {@code /controller}, epoch claimed in
 * {@code /controller_epoch}), and only it writes partition leadership.
 *
 * <p>Threading: one event queue (Kafka's {@link KafkaEventQueue}) runs everything — election attempts,
 * reconciliation after metadata changes, AlterPartition, ElectLeaders and reassignment requests — so decisions
 * never race each other. A task that throws is logged with its stack trace and its caller is answered with an
 * error; nothing waits out a timeout for an answer that will not come.
 *
 * <p>This class is the shell: the decisions are pure functions in {@code io.twinlog.controller.decisions}
 * ({@link Reconciliation}, {@link IsrChangeDecisions}, {@link ElectionDecisions}, {@link ReassignmentDecisions})
 * over the latest metadata image it was given ({@link #onImage}); it writes their results through the
 * {@link ControllerStore}, fenced by the controller epoch and the versions read, and logs what changed.
 *
 * <p>Reconciliation is level-triggered: after any metadata change the controller recomputes every partition's
 * desired leadership from the current image. A write that loses a version race is simply redone from the next
 * image.
 */
public final class Controller implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Controller.class);
    private static final long RETRY_DELAY_MS = 200;
    private static final long ELECTION_RETRY_DELAY_MS = 1_000;
    private static final long HOUSEKEEPING_INTERVAL_MS = 30_000;

    private final int brokerId;
    private final ControllerStore store;
    private final Predicate<String> uncleanElectionEnabled;
    private final Time time;
    private final KafkaEventQueue queue;
    private final String logPrefix;
    private volatile MetadataImage image = MetadataImage.EMPTY;
    /** Set once by {@link #enableMetrics} before the controller starts; null in tests without metrics. */
    private volatile ControllerMetrics metrics;
    private volatile Optional<ControllerEpoch> epoch = Optional.empty();
    /** Broker epochs at the last complete reconciliation, to notice restarts (event thread only). */
    private Map<Integer, Long> knownBrokerEpochs = new HashMap<>();
    /**
     * Partition states this controller wrote that its image does not show yet, with the version each write made.
     * A round decided from an image that lags its own writes would decide those partitions again from their old
     * state and fail the whole batch on their versions (then retry after {@value #RETRY_DELAY_MS} ms): a failover
     * of a thousand mirror partitions lost about a second to that. They wait for the image instead.
     */
    private final Map<TopicPartition, UnseenWrite> unseenWrites = new HashMap<>();
    private boolean reconcileScheduled;
    /**
     * How long a controller that has just come through a ZooKeeper disconnection waits for brokers named in
     * partition states to register again before it moves leadership or ISR membership away from them (0: never).
     */
    private final long reregistrationGraceMs;
    /** When this broker's ZooKeeper connection was last re-established (-1: never); any thread writes. */
    private volatile long reconnectedAtMs = -1;
    /** When this controllership began (event thread). */
    private long activeSinceMs;
    /** Brokers the current grace waits for, to log the wait once (event thread). */
    private Set<Integer> awaitedBrokers = Set.of();
    /** ZooKeeper sessions lost so far; a claim made before the latest loss is void (any thread increments). */
    private final AtomicInteger sessionLosses = new AtomicInteger();
    /** {@link #sessionLosses} when the current epoch was claimed (event thread writes). */
    private volatile int claimedAfterLosses;
    private volatile boolean started;
    private volatile boolean closed;
    /** Completes work a crashed broker left half done (topic deletions); set before {@link #start}. */
    private volatile Housekeeping housekeeping = () -> { };

    /** Work only the controller does, at its takeover and every {@value #HOUSEKEEPING_INTERVAL_MS} ms after. */
    @FunctionalInterface
    public interface Housekeeping {
        void run() throws Exception;
    }

    /**
     * @param uncleanElectionEnabled whether a topic allows unclean leader election (its config, or the broker
     *                               default), read at each decision so a dynamic change takes effect
     */
    public Controller(int brokerId, ControllerStore store, Predicate<String> uncleanElectionEnabled, Time time) {
        this(brokerId, store, uncleanElectionEnabled, 0, time);
    }

    /**
     * @param reregistrationGraceMs after a ZooKeeper reconnection, how long to wait for brokers to register again on
     *                              their new sessions before treating the missing ones as failed (the broker's
     *                              session timeout: what a re-registration can take)
     */
    public Controller(int brokerId, ControllerStore store, Predicate<String> uncleanElectionEnabled,
                      long reregistrationGraceMs, Time time) {
        this.brokerId = brokerId;
        this.reregistrationGraceMs = reregistrationGraceMs;
        this.store = store;
        this.uncleanElectionEnabled = uncleanElectionEnabled;
        this.time = time;
        this.queue = new KafkaEventQueue(time, new LogContext("[Controller broker=" + brokerId + "] "),
                "twinlog-controller-" + brokerId + "-");
        this.logPrefix = "[Controller broker=" + brokerId + "] ";
    }

    /** Reports Kafka's controller metrics in {@code brokerMetrics}. */
    public void enableMetrics(BrokerMetrics brokerMetrics) {
        metrics = new ControllerMetrics(brokerMetrics, this::isActive, () -> image);
    }

    /**
     * Sets what the controller completes of the work a crashed broker left half done, on its event thread when it
     * takes over and every {@value #HOUSEKEEPING_INTERVAL_MS} ms while it holds the controllership (Kafka's
     * controller resumes {@code /admin/delete_topics} at failover); a failure is logged and tried at the next round.
     */
    public void setHousekeeping(Housekeeping task) {
        housekeeping = task;
    }

    /** Starts competing for the controllership, deciding from the latest image given to {@link #onImage}. */
    public void start() {
        started = true;
        run("elect", this::maybeElect);
    }

    /** True while this broker holds the controllership (false from the moment its ZooKeeper session is lost). */
    public boolean isActive() {
        return epoch.isPresent() && claimedAfterLosses == sessionLosses.get();
    }

    /**
     * This broker's ZooKeeper session expired: its ephemeral {@code /controller} is gone or about to go, and
     * another broker may claim the controllership, so this one stops acting as controller at once
     * ({@link #isActive} turns false on the caller's thread) and resigns on its event thread.
     */
    public void onSessionLost() {
        int loss = sessionLosses.incrementAndGet();
        run("session lost", () -> {
            if (epoch.isPresent() && claimedAfterLosses < loss) {
                resignLocally("its ZooKeeper session was lost");
            }
        });
    }

    /** This broker's ZooKeeper connection was re-established (same session or a new one). */
    public void onReconnected() {
        reconnectedAtMs = time.milliseconds();
        run("reconnected", this::scheduleReconcile);
    }

    /**
     * A new metadata image (the metadata thread's listener; tests feed images directly). Kept as the input of
     * every later decision; once started, also a trigger for an election attempt or a reconciliation.
     */
    public void onImage(MetadataImage next) {
        image = next;
        if (closed || !started) {
            return;
        }
        run("metadata change", () -> {
            MetadataImage current = image;
            if (epoch.isEmpty() && (current.controllerId() == -1 || current.controllerId() == brokerId)) {
                // no controller, or our own node of this session without an epoch: claim (again)
                maybeElect();
            } else if (epoch.isPresent() && current.controllerId() != brokerId && current.controllerId() != -1) {
                resignLocally("another broker (" + current.controllerId() + ") holds /controller");
            } else if (epoch.isPresent() && current.controllerId() == -1) {
                resignIfNotHolder();
                maybeElect(); // after a resignation: compete again, with a new epoch
            }
            scheduleReconcile();
        });
    }

    private void maybeElect() {
        if (closed || epoch.isPresent()) {
            return;
        }
        try {
            int losses = sessionLosses.get();
            Optional<ControllerEpoch> claimed = store.tryClaim(brokerId);
            if (claimed.isPresent()) {
                claimedAfterLosses = losses;
                epoch = claimed;
                activeSinceMs = time.milliseconds();
                awaitedBrokers = Set.of();
                knownBrokerEpochs = new HashMap<>();
                log.info("{}Became the controller with controller epoch {}", logPrefix, claimed.get().epoch());
                scheduleReconcile();
                int claimedEpoch = claimed.get().epoch();
                run("housekeeping", () -> housekeeping(claimedEpoch));
            }
        } catch (Exception e) {
            log.warn("{}Controller election attempt failed; retrying in {} ms", logPrefix, ELECTION_RETRY_DELAY_MS, e);
            schedule("elect", ELECTION_RETRY_DELAY_MS, this::maybeElect);
        }
    }

    /** One round of {@link #housekeeping} while this controllership (of {@code claimedEpoch}) lasts. */
    private void housekeeping(int claimedEpoch) {
        if (closed || epoch.isEmpty() || epoch.get().epoch() != claimedEpoch) {
            return; // resigned: the next controller does it
        }
        try {
            housekeeping.run();
        } catch (Throwable e) { // an Error too: skipping the next round would stop housekeeping until an election
            log.warn("{}Housekeeping failed; trying again in {} ms", logPrefix, HOUSEKEEPING_INTERVAL_MS, e);
        } finally {
            schedule("housekeeping", HOUSEKEEPING_INTERVAL_MS, () -> housekeeping(claimedEpoch));
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
        MetadataImage current = image;
        if (current.controllerId() != -1 && current.controllerId() != brokerId) {
            resignLocally("the image shows broker " + current.controllerId() + " as controller");
            return;
        }
        ClusterView cluster = ClusterView.of(current.brokers(), knownBrokerEpochs);
        unseenWrites.entrySet().removeIf(w -> w.getValue().shownOrGone(current, w.getKey()));
        Set<TopicPartition> leftAlone = new HashSet<>(unseenWrites.keySet());
        leftAlone.addAll(awaitingReregistration(current));
        Reconciliation decision = Reconciliation.decide(current, cluster, uncleanElectionEnabled, leftAlone);
        Set<TopicPartition> written = write(decision.stateChanges());
        if (written.size() < decision.stateChanges().size()) {
            return; // the rest is decided again once the failure is handled
        }
        for (AssignmentChange step : decision.reassignmentSteps()) {
            if (!writeAssignment(step)) {
                return;
            }
        }
        knownBrokerEpochs = cluster.brokerEpochs();
        if (!cluster.restarted().isEmpty()) {
            scheduleReconcile(); // second round: the restarted brokers count as live again
        }
    }

    /**
     * The partitions to leave alone while brokers may still be registering again after a ZooKeeper outage: those
     * whose leader or an ISR member is not registered, during the grace ({@link ReregistrationGrace}). Every broker's
     * session expires in an outage longer than the session timeout, and the new sessions' registrations arrive one
     * by one; deciding on each absence would move every leadership to whichever broker registered first, or leave
     * partitions without a leader, for brokers that are alive and serving. Schedules a round at the grace's end.
     */
    private Set<TopicPartition> awaitingReregistration(MetadataImage current) {
        long now = time.milliseconds();
        long graceLeftMs = ReregistrationGrace.remainingMs(reregistrationGraceMs, reconnectedAtMs, activeSinceMs, now);
        if (graceLeftMs <= 0) {
            awaitedBrokers = Set.of();
            return Set.of();
        }
        ReregistrationGrace.Awaiting awaiting = ReregistrationGrace.awaiting(current);
        if (awaiting.brokers().isEmpty()) {
            return Set.of();
        }
        if (!awaiting.brokers().equals(awaitedBrokers)) {
            awaitedBrokers = awaiting.brokers();
            log.info("{}Brokers {} are named in {} partition states but not registered; waiting up to {} ms for them "
                    + "to register again after the ZooKeeper reconnection before moving leadership or ISR membership "
                    + "away from them", logPrefix, awaiting.brokers(), awaiting.partitions().size(), graceLeftMs);
        }
        schedule("reregistration-grace", graceLeftMs, this::scheduleReconcile);
        return awaiting.partitions();
    }

    /** /controller shows no holder while this broker thinks it is active: ask ZooKeeper, resign if not the holder. */
    private void resignIfNotHolder() {
        try {
            if (!store.holdsControllership(brokerId)) {
                resignLocally("/controller is absent or not held by this broker's session");
            }
        } catch (Exception e) {
            // ZooKeeper unreachable: a session loss resigns, and the next image asks again
            log.warn("{}Could not check whether this broker still holds /controller", logPrefix, e);
        }
    }

    /**
     * Starts (target present) or cancels (target empty) replica reassignments. Validated here; carried out step by
     * step by reconciliation, so a controller failover resumes them.
     */
    public CompletableFuture<Map<TopicPartition, ApiError>> alterReassignments(
            Map<TopicPartition, Optional<List<Integer>>> requests) {
        CompletableFuture<Map<TopicPartition, ApiError>> result = new CompletableFuture<>();
        submit("alter reassignments", result, error -> answerAll(requests.keySet(), error), () -> {
            if (epoch.isEmpty()) {
                result.complete(answerAll(requests.keySet(), new ApiError(Errors.NOT_CONTROLLER, null)));
                return;
            }
            MetadataImage current = image;
            Set<Integer> live = current.brokers().keySet();
            Map<String, Map<TopicPartition, Optional<List<Integer>>>> byTopic = new HashMap<>();
            requests.forEach((tp, target) -> byTopic.computeIfAbsent(tp.topic(), t -> new HashMap<>()).put(tp, target));
            Map<TopicPartition, ApiError> out = new HashMap<>();
            for (Map.Entry<String, Map<TopicPartition, Optional<List<Integer>>>> t : byTopic.entrySet()) {
                ReassignmentDecisions.RequestOutcome outcome = ReassignmentDecisions.onRequest(t.getKey(),
                        current.topic(t.getKey()), t.getValue(), live);
                out.putAll(outcome.answers());
                if (outcome.write().isPresent()) {
                    boolean ok = writeAssignment(outcome.write().get());
                    outcome.accepted().forEach(tp -> out.put(tp, ok ? ApiError.NONE
                            : new ApiError(Errors.REQUEST_TIMED_OUT, "Topic changed concurrently; retry")));
                }
            }
            scheduleReconcile();
            result.complete(out);
        });
        return result;
    }

    private static <T> Map<TopicPartition, T> answerAll(Set<TopicPartition> partitions, T answer) {
        Map<TopicPartition, T> out = new HashMap<>();
        partitions.forEach(tp -> out.put(tp, answer));
        return out;
    }

    /** Handles AlterPartition from a leader; completes after the new ISRs are durable. One event per batch. */
    public CompletableFuture<Map<TopicPartition, IsrChangeResult>> alterPartition(int fromBroker, long brokerEpoch,
                                                                                   List<IsrChange> changes) {
        CompletableFuture<Map<TopicPartition, IsrChangeResult>> result = new CompletableFuture<>();
        Set<TopicPartition> partitions = changes.stream().map(IsrChange::partition)
                .collect(Collectors.toSet());
        submit("AlterPartition from broker " + fromBroker, result,
                error -> answerAll(partitions, IsrChangeResult.error(error.error())), () -> {
                    if (epoch.isEmpty()) {
                        result.complete(answerAll(partitions, IsrChangeResult.error(Errors.NOT_CONTROLLER)));
                        return;
                    }
                    ControllerResult<Map<TopicPartition, IsrChangeResult>> decision =
                            IsrChangeDecisions.decide(image, fromBroker, brokerEpoch, changes);
                    Map<TopicPartition, IsrChangeResult> out = new HashMap<>(decision.response());
                    Set<TopicPartition> written = write(decision.changes());
                    decision.changes().stream().filter(c -> !written.contains(c.partition()))
                            .forEach(c -> out.put(c.partition(), IsrChangeResult.error(Errors.INVALID_UPDATE_VERSION)));
                    result.complete(out);
                });
        return result;
    }

    /** Handles an operator's ElectLeaders request (PREFERRED or UNCLEAN) for the given partitions. */
    public CompletableFuture<Map<TopicPartition, ElectionResult>> electLeaders(boolean unclean,
                                                                               Set<TopicPartition> partitions) {
        CompletableFuture<Map<TopicPartition, ElectionResult>> result = new CompletableFuture<>();
        submit((unclean ? "UNCLEAN" : "PREFERRED") + " election", result, error -> answerAll(partitions,
                new ElectionResult(error.error(), error.message(), Optional.empty())), () -> {
                    if (epoch.isEmpty()) {
                        result.complete(answerAll(partitions, new ElectionResult(Errors.NOT_CONTROLLER,
                                "Broker " + brokerId + " is not the controller", Optional.empty())));
                        return;
                    }
                    ControllerResult<Map<TopicPartition, ElectionResult>> decision =
                            ElectionDecisions.decide(image, unclean, partitions);
                    Map<TopicPartition, ElectionResult> out = new HashMap<>(decision.response());
                    Set<TopicPartition> written = write(decision.changes());
                    decision.changes().stream().filter(c -> !written.contains(c.partition()))
                            .forEach(c -> out.put(c.partition(), new ElectionResult(Errors.REQUEST_TIMED_OUT,
                                    "The partition changed during the election; retry", Optional.empty())));
                    result.complete(out);
                });
        return result;
    }

    /**
     * Writes fenced, then records and logs each change that committed; returns the partitions whose change did. A
     * write split into several transactions may commit in part: the committed changes are done (never reported as
     * failed), and for the rest this arranges what follows (resign, or decide again from fresh metadata).
     */
    private Set<TopicPartition> write(List<StateChange> changes) {
        if (changes.isEmpty()) {
            return Set.of();
        }
        long startNanos = System.nanoTime();
        StateWriteResult result = store.writeStates(epoch.orElseThrow(),
                changes.stream().map(StateChange::write).toList());
        Set<TopicPartition> committed = result.committed().stream().map(StateWrite::partition)
                .collect(Collectors.toSet());
        List<StateChange> done = changes.stream().filter(c -> committed.contains(c.partition())).toList();
        if (!done.isEmpty()) {
            recordElections(done, System.nanoTime() - startNanos);
            MetadataImage decidedFrom = image;
            for (StateChange c : done) {
                decidedFrom.topic(c.partition().topic()).ifPresent(t -> unseenWrites.put(c.partition(),
                        new UnseenWrite(t.topicId(), c.expectedVersion() == StateWrite.CREATE ? 0
                                : c.expectedVersion() + 1)));
            }
            done.forEach(this::logChange);
        }
        result.worstFailure().ifPresent(failure -> onStatesNotWritten(result, failure));
        return committed;
    }

    /** A lost controllership resigns; a lost version race decides again soon; any other failure later. */
    private void onStatesNotWritten(StateWriteResult result, StateWriteResult.Batch failure) {
        switch (failure.outcome()) {
            case FENCED -> resignLocally(failure.reason());
            case STALE -> {
                log.info("{}Partition states: {}; deciding the rest again from fresh metadata", logPrefix,
                        result.summary());
                schedule("reconcile-retry", RETRY_DELAY_MS, this::scheduleReconcile);
            }
            default -> {
                log.warn("{}Could not write partition states: {}; retrying in {} ms", logPrefix, result.summary(),
                        RETRY_DELAY_MS * 5, failure.cause().orElse(null));
                schedule("reconcile-retry", RETRY_DELAY_MS * 5, this::scheduleReconcile);
            }
        }
    }

    /**
     * Kafka's election metrics for one written batch of states: one timed event for the batch when it moved at least
     * one leadership to a new leader (as Kafka times a controller event that elects), and one unclean election per
     * partition elected uncleanly. A partition left without a leader is not an election.
     */
    private void recordElections(List<StateChange> changes, long elapsedNanos) {
        ControllerMetrics m = metrics;
        if (m == null) {
            return;
        }
        boolean elected = false;
        for (StateChange c : changes) {
            boolean newLeader = c.kind() == StateChange.Kind.LEADERSHIP && c.next().leader() != PartitionState.NO_LEADER
                    && c.previous().map(from -> from.leader() != c.next().leader()).orElse(false);
            if (newLeader) {
                elected = true;
                if (c.unclean()) {
                    m.uncleanElection();
                }
            }
        }
        if (elected) {
            m.electionEvent(elapsedNanos);
        }
    }

    private boolean writeAssignment(AssignmentChange change) {
        boolean written = writeFenced("the assignment of " + change.topic(), () -> store.writeAssignment(
                epoch.orElseThrow(), change.topic(), change.next(), change.expectedVersion(), change.states()));
        if (written) {
            change.events().forEach(event -> log.info("{}{}", logPrefix, event));
        }
        return written;
    }

    /** A store write that may throw. */
    private interface StoreWrite {
        void run() throws Exception;
    }

    /**
     * Runs a fenced write. A lost controllership resigns; a lost version race reconciles again from fresh
     * metadata; any other failure (ZooKeeper unreachable) is logged with its stack trace and retried later.
     */
    private boolean writeFenced(String what, StoreWrite write) {
        try {
            write.run();
            return true;
        } catch (ControllerMovedException e) {
            resignLocally(e.getMessage());
        } catch (StaleStateException e) {
            log.info("{}{}; deciding again from fresh metadata", logPrefix, e.getMessage());
            schedule("reconcile-retry", RETRY_DELAY_MS, this::scheduleReconcile);
        } catch (Exception e) {
            log.warn("{}Could not write {}; retrying in {} ms", logPrefix, what, RETRY_DELAY_MS * 5, e);
            schedule("reconcile-retry", RETRY_DELAY_MS * 5, this::scheduleReconcile);
        }
        return false;
    }

    private void logChange(StateChange c) {
        PartitionState to = c.next();
        switch (c.kind()) {
            case INITIAL -> log.info("{}Initial leadership of {}: leader {} epoch {} ISR {}", logPrefix, c.partition(),
                    to.leader(), to.leaderEpoch(), to.isr());
            case MIRROR_EPOCH_BUMP -> log.info("{}Leader epoch of mirror partition {}: {} -> {} (leader {} unchanged; "
                    + "{})", logPrefix, c.partition(), c.previous().map(PartitionState::leaderEpoch).orElse(-1),
                    to.leaderEpoch(), to.leader(), c.reason());
            case LEADERSHIP -> {
                PartitionState from = c.previous().orElseThrow();
                if (from.leader() == to.leader()) {
                    log.info("{}ISR of {}: {} -> {} (leader {} epoch {}, {})", logPrefix, c.partition(), from.isr(),
                            to.isr(), to.leader(), to.leaderEpoch(), c.reason());
                } else if (c.unclean()) {
                    log.warn("{}UNCLEAN leader election for {}: leader {} -> {} in epoch {} (no in-sync replica was "
                            + "alive; records not on broker {} are lost), ISR {} -> {} ({})", logPrefix,
                            c.partition(), from.leader(), to.leader(), to.leaderEpoch(), to.leader(), from.isr(),
                            to.isr(), c.reason());
                } else {
                    log.info("{}Leader of {}: {} -> {} in epoch {}, ISR {} -> {} ({})", logPrefix, c.partition(),
                            from.leader(), to.leader(), to.leaderEpoch(), from.isr(), to.isr(), c.reason());
                }
            }
        }
    }

    /** A state this controller wrote, of the topic with this ID (a topic deleted and created again is another). */
    private record UnseenWrite(Uuid topicId, int version) {
        boolean shownOrGone(MetadataImage image, TopicPartition tp) {
            return image.topic(tp.topic()).filter(t -> t.topicId().equals(topicId))
                    .flatMap(t -> Optional.ofNullable(t.partitions().get(tp.partition())))
                    .map(p -> p.stateVersion() >= version).orElse(true);
        }
    }

    private void resignLocally(String reason) {
        if (epoch.isPresent()) {
            log.info("{}No longer the controller (epoch {}): {}", logPrefix, epoch.get().epoch(), reason);
            epoch = Optional.empty();
            unseenWrites.clear();
        }
    }

    /**
     * Runs a request on the event queue. Its caller always gets an answer: NOT_CONTROLLER once the controller is
     * closing, UNKNOWN_SERVER_ERROR (logged with its stack trace) if the task throws. A request already answered
     * when its turn comes (timed out) is not run.
     */
    private <T> void submit(String name, CompletableFuture<T> result, Function<ApiError, T> errorAnswer,
                            Runnable task) {
        Runnable unlessAnswered = () -> {
            if (result.isDone()) {
                // its caller gave up (the handler's timeout completed it) while it waited in the queue: an election
                // or a reassignment its client was told had timed out must not happen later (issue 25, point 7)
                log.info("{}{} not executed: its caller stopped waiting for it", logPrefix, name);
                return;
            }
            task.run();
        };
        queue.append(new ControllerEvent(name, unlessAnswered) {
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
                store.resign(brokerId);
            } catch (Exception e) {
                log.warn("{}Could not release /controller", logPrefix, e);
            }
        }
    }
}
