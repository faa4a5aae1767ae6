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
import io.twinlog.controller.store.ControllerEpoch;
import io.twinlog.controller.store.ControllerStore;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The cluster controller: exactly one broker holds it at a time (ephemeral {@code /controller}, epoch claimed in
 * {@code /controller_epoch}), and only it writes partition leadership.
 *
 * <p>Threading: one event queue ({@link ControllerEventLoop}, on Kafka's {@code KafkaEventQueue}) runs everything —
 * election attempts, reconciliation after metadata changes, AlterPartition, ElectLeaders and reassignment requests —
 * so decisions never race each other. A task that throws is logged with its stack trace and its caller is answered with an
 * error; nothing waits out a timeout for an answer that will not come.
 *
 * <p>This class is the shell: the decisions are pure functions in {@code io.twinlog.controller.decisions}
 * ({@link Reconciliation}, {@link IsrChangeDecisions}, {@link ElectionDecisions}, {@link ReassignmentDecisions})
 * over the latest metadata image it was given ({@link #onImage}); {@link ControllerWrites} writes their results
 * through the {@link ControllerStore}, fenced by the controller epoch and the versions read, and logs what changed.
 *
 * <p>Reconciliation is level-triggered: after any metadata change the controller recomputes every partition's
 * desired leadership from the current image. A write that loses a version race is simply redone from the next
 * image.
 */
public final class Controller implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Controller.class);
    private static final long ELECTION_RETRY_DELAY_MS = 1_000;
    private static final long HOUSEKEEPING_INTERVAL_MS = 30_000;

    private final int brokerId;
    private final ControllerStore store;
    private final Predicate<String> uncleanElectionEnabled;
    private final Time time;
    private final ControllerEventLoop events;
    private final ControllerWrites writes;
    private final String logPrefix;
    private volatile MetadataImage image = MetadataImage.EMPTY;
    /** Set once by {@link #enableMetrics} before the controller starts; null in tests without metrics. */
    private volatile ControllerMetrics metrics;
    private volatile Optional<ControllerEpoch> epoch = Optional.empty();
    /** Broker epochs at the last complete reconciliation, to notice restarts (event thread only). */
    private Map<Integer, Long> knownBrokerEpochs = new HashMap<>();
    /** Partition states written and not yet shown by the image: left alone until they are. */
    private final UnseenWrites unseenWrites = new UnseenWrites();
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
        this.logPrefix = "[Controller broker=" + brokerId + "] ";
        this.events = new ControllerEventLoop(brokerId, time, logPrefix);
        this.writes = new ControllerWrites(store, () -> epoch.orElseThrow(), () -> image, () -> metrics,
                unseenWrites, logPrefix, new ControllerWrites.Outcomes() {
                    @Override
                    public void resign(String reason) {
                        resignLocally(reason);
                    }

                    @Override
                    public void decideAgainAfter(long delayMs) {
                        schedule("reconcile-retry", delayMs, Controller.this::scheduleReconcile);
                    }
                });
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
            // broad: whatever failed the claim (ZooKeeper unreachable, ...) is logged with its stack trace and retried
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
        Set<TopicPartition> leftAlone = new HashSet<>(unseenWrites.stillUnseen(current));
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
            // broad: ZooKeeper unreachable or any other failure: logged with its stack trace; a session loss resigns,
            // and the next image asks again
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

    /** Writes fenced through {@link ControllerWrites}; returns the partitions whose change committed. */
    private Set<TopicPartition> write(List<StateChange> changes) {
        return writes.writeStates(changes);
    }

    private boolean writeAssignment(AssignmentChange change) {
        return writes.writeAssignment(change);
    }

    private void resignLocally(String reason) {
        if (epoch.isPresent()) {
            log.info("{}No longer the controller (epoch {}): {}", logPrefix, epoch.get().epoch(), reason);
            epoch = Optional.empty();
            unseenWrites.clear();
        }
    }

    private <T> void submit(String name, CompletableFuture<T> result, Function<ApiError, T> errorAnswer,
                            Runnable task) {
        events.submit(name, result, errorAnswer, task);
    }

    private void run(String name, Runnable task) {
        events.run(name, task);
    }

    private void schedule(String tag, long delayMs, Runnable task) {
        events.schedule(tag, delayMs, task);
    }

    @Override
    public void close() {
        closed = true;
        try {
            events.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (epoch.isPresent()) {
            try {
                store.resign(brokerId);
            } catch (Exception e) {
                // broad: closing goes on whatever failed; the node is ephemeral and goes with the session anyway
                log.warn("{}Could not release /controller", logPrefix, e);
            }
        }
    }
}
