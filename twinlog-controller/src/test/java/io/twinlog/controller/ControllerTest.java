package io.twinlog.controller;

import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.decisions.IsrChangeResult;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.store.StaleStateException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The controller's behaviour (the shell: event queue, fenced writes, retries, answers) on the in-memory store,
 * without ZooKeeper: images are fed to its listener after every change, as the metadata watcher does.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ControllerTest {
    private static final long WAIT_MS = 10_000;
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);

    private final InMemoryControllerStore store = new InMemoryControllerStore();
    private Controller controller;

    @BeforeEach
    void startController() {
        store.registerBroker(0, 100);
        store.registerBroker(1, 101);
        store.registerBroker(2, 102);
        controller = new Controller(0, store, topic -> false, Time.SYSTEM);
        store.onChange(controller::onImage);
        controller.onImage(store.image());
        controller.start();
        waitUntil("broker 0 is the controller", controller::isActive, () -> "inactive");
    }

    @AfterEach
    void closeController() {
        controller.close();
    }

    @Test
    void aNewPartitionGetsItsInitialLeadership() {
        store.createTopic("orders", Map.of(0, List.of(1, 2, 0)));
        assertEquals(new PartitionState(1, 0, List.of(1, 2, 0), 0), awaitState(ORDERS_0, s -> true));
    }

    @Test
    void aRestartedBrokerLeavesTheIsrsAndLosesLeadership() {
        store.createTopic("orders", Map.of(0, List.of(2, 0, 1)));
        awaitState(ORDERS_0, s -> s.leader() == 2);

        store.registerBroker(2, 202); // same id, new registration: it may have lost its log

        PartitionState after = awaitState(ORDERS_0, s -> s.leader() != 2);
        assertEquals(new PartitionState(0, 1, List.of(0, 1), 1), after,
                "the next in-sync replica leads in a new epoch; the restarted broker must catch up to rejoin");
    }

    @Test
    void aRequestWhoseCallerGaveUpWhileItWaitedIsNotExecuted() throws Exception {
        store.createTopic("first", Map.of(0, List.of(0, 1)));
        store.createTopic("second", Map.of(0, List.of(0, 1)));
        TopicPartition first = new TopicPartition("first", 0);
        TopicPartition second = new TopicPartition("second", 0);
        awaitState(first, s -> true);
        awaitState(second, s -> true);

        CompletableFuture<Map<TopicPartition, ApiError>> ahead;
        CompletableFuture<Map<TopicPartition, ApiError>> givenUp;
        synchronized (store) {
            // the store's lock holds the controller's write of the first request: the second waits in the queue
            ahead = controller.alterReassignments(Map.of(first, Optional.of(List.of(1, 2))));
            givenUp = controller.alterReassignments(Map.of(second, Optional.of(List.of(1, 2))));
            // as the handler's orTimeout does when the client's timeout passes
            givenUp.completeExceptionally(new TimeoutException("the client's timeout passed"));
        }
        assertEquals(Errors.NONE, ahead.get(WAIT_MS, TimeUnit.MILLISECONDS).get(first).error());
        // a request queued after both has run, so the given-up one has had its turn
        controller.alterReassignments(Map.of()).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(List.of(0, 1), store.assignment("second").replicas().get(0), "the given-up reassignment "
                + "did not happen");
        assertTrue(store.assignment("second").reassigning().isEmpty());
    }

    @Test
    void aReassignmentIsAcceptedAdvancedAndCompleted() throws Exception {
        store.createTopic("orders", Map.of(0, List.of(0, 1)));
        PartitionState initial = awaitState(ORDERS_0, s -> true);

        Map<TopicPartition, ApiError> answer = controller.alterReassignments(
                Map.of(ORDERS_0, Optional.of(List.of(1, 2)))).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(Errors.NONE, answer.get(ORDERS_0).error());
        TopicAssignment during = store.assignment("orders");
        assertEquals(List.of(1, 2, 0), during.replicas().get(0), "target first, then the leaving replica");
        assertEquals(Optional.of(initial), store.state(ORDERS_0), "leadership untouched until 2 is in sync");

        // the leader (0) reports that broker 2 caught up
        Map<TopicPartition, IsrChangeResult> expanded = controller.alterPartition(0, 100, List.of(new IsrChange(
                ORDERS_0, initial.leaderEpoch(), initial.partitionEpoch(), List.of(0, 1, 2))))
                .get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(Errors.NONE, expanded.get(ORDERS_0).error());

        PartitionState done = awaitState(ORDERS_0, s -> s.leader() != 0);
        assertEquals(new PartitionState(1, initial.leaderEpoch() + 1, List.of(1, 2), initial.partitionEpoch() + 2),
                done, "the leaving leader hands over to a target replica in a new epoch");
        waitUntil("the reassignment is complete", () -> store.assignment("orders").reassigning().isEmpty(),
                () -> store.assignment("orders").toString());
        assertEquals(List.of(1, 2), store.assignment("orders").replicas().get(0));
    }

    @Test
    void aWriteThatLostARaceIsDecidedAgainAndRetried() {
        store.failNextWrite(new StaleStateException("state changed since it was read"));
        int before = store.writeAttempts();
        store.createTopic("orders", Map.of(0, List.of(0, 1)));
        assertEquals(0, awaitState(ORDERS_0, s -> true).leader());
        assertTrue(store.writeAttempts() >= before + 2, "the failed write was retried");
    }

    @Test
    void aRoundDecidedFromAnImageThatLagsItsOwnWritesLeavesThosePartitionsAlone() throws Exception {
        store.onChange(image -> { }); // the controller's own writes do not show in its images for now
        store.createTopic("orders", Map.of(0, List.of(1, 0)));
        MetadataImage lagging = store.image();
        controller.onImage(lagging);
        PartitionState initial = awaitState(ORDERS_0, s -> true);

        controller.onImage(lagging); // another change arrives before the write shows: a new round on old state
        drainEvents();
        assertEquals(0, store.staleWrites(), "the partition it had just written was decided again from its old "
                + "state, and the batch refused on its version");

        store.onChange(controller::onImage);
        store.registerBroker(2, 102); // the next image, now with the write
        drainEvents();
        assertEquals(Optional.of(initial), store.state(ORDERS_0));
        assertEquals(0, store.staleWrites());
    }

    @Test
    void aWriteThatFailedOnTheStoreIsRetriedLater() {
        store.failNextWrite(new IOException("ZooKeeper unreachable"));
        store.createTopic("orders", Map.of(0, List.of(1, 0)));
        assertEquals(1, awaitState(ORDERS_0, s -> true).leader());
    }

    @Test
    void aFailedAlterPartitionWriteAnswersTheCallerWithAnError() throws Exception {
        store.createTopic("orders", Map.of(0, List.of(0, 1)));
        PartitionState s = awaitState(ORDERS_0, x -> true);
        store.failNextWrite(new StaleStateException("state changed since it was read"));

        Map<TopicPartition, IsrChangeResult> r = controller.alterPartition(0, 100, List.of(new IsrChange(ORDERS_0,
                s.leaderEpoch(), s.partitionEpoch(), List.of(0)))).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(Errors.INVALID_UPDATE_VERSION, r.get(ORDERS_0).error());
    }

    @Test
    void anAlterPartitionWhoseFirstTransactionCommittedIsAnsweredSoForThosePartitions() throws Exception {
        TopicPartition orders1 = new TopicPartition("orders", 1);
        store.createTopic("orders", Map.of(0, List.of(0, 1), 1, List.of(0, 1)));
        PartitionState s0 = awaitState(ORDERS_0, x -> true);
        PartitionState s1 = awaitState(orders1, x -> true);
        store.statesPerTransaction(1);
        store.failNextWrite(null); // the first transaction goes through
        store.failNextWrite(new StaleStateException("state changed since it was read"));

        Map<TopicPartition, IsrChangeResult> r = controller.alterPartition(0, 100, List.of(
                new IsrChange(ORDERS_0, s0.leaderEpoch(), s0.partitionEpoch(), List.of(0)),
                new IsrChange(orders1, s1.leaderEpoch(), s1.partitionEpoch(), List.of(0))))
                .get(WAIT_MS, TimeUnit.MILLISECONDS);

        assertEquals(Errors.NONE, r.get(ORDERS_0).error(), "its transaction committed: it must not be called failed");
        assertEquals(List.of(0), store.state(ORDERS_0).orElseThrow().isr());
        assertEquals(Errors.INVALID_UPDATE_VERSION, r.get(orders1).error());
        assertEquals(List.of(0, 1), store.state(orders1).orElseThrow().isr());
    }

    @Test
    void anExceptionInATaskCompletesTheCallersFutureAndTheControllerGoesOn() throws Exception {
        store.createTopic("orders", Map.of(0, List.of(0, 1)));
        PartitionState s = awaitState(ORDERS_0, x -> true);

        // no ISR list at all: the decision throws inside the controller's event
        Map<TopicPartition, IsrChangeResult> failed = controller.alterPartition(0, 100, List.of(new IsrChange(
                ORDERS_0, s.leaderEpoch(), s.partitionEpoch(), null))).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(Errors.UNKNOWN_SERVER_ERROR, failed.get(ORDERS_0).error());

        Map<TopicPartition, IsrChangeResult> served = controller.alterPartition(0, 100, List.of(new IsrChange(
                ORDERS_0, s.leaderEpoch(), s.partitionEpoch(), List.of(0)))).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(Errors.NONE, served.get(ORDERS_0).error());
        assertEquals(List.of(0), awaitState(ORDERS_0, x -> x.isr().size() == 1).isr());
    }

    @Test
    void aDeposedControllerResignsOnItsNextWrite() throws Exception {
        store.createTopic("orders", Map.of(0, List.of(0, 1)));
        PartitionState s = awaitState(ORDERS_0, x -> true);
        store.onChange(image -> { }); // this controller does not hear of the move before it writes
        store.controllerMovesTo(1);

        Map<TopicPartition, IsrChangeResult> r = controller.alterPartition(0, 100, List.of(new IsrChange(ORDERS_0,
                s.leaderEpoch(), s.partitionEpoch(), List.of(0)))).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(Errors.INVALID_UPDATE_VERSION, r.get(ORDERS_0).error());
        assertFalse(controller.isActive(), "fenced by the controller epoch: no longer the controller");
        assertEquals(Optional.of(s), store.state(ORDERS_0), "nothing written by the deposed controller");
    }

    @Test
    void aLostSessionEndsTheControllershipAtOnceAndTheControllerCompetesAgain() {
        int before = store.controllerEpoch();
        controller.onSessionLost();
        assertFalse(controller.isActive(), "no longer acting as controller from the moment the session is lost");

        store.controllerNodeGone(); // ZooKeeper expires the old session's /controller
        waitUntil("the controllership claimed again", () -> controller.isActive() && store.controllerEpoch() > before,
                () -> "epoch " + store.controllerEpoch());
    }

    @Test
    void aControllerWhoseNodeIsGoneResignsAndClaimsANewEpoch() {
        int before = store.controllerEpoch();
        store.controllerNodeGone();
        waitUntil("a new controller epoch", () -> controller.isActive() && store.controllerEpoch() > before,
                () -> "epoch " + store.controllerEpoch());
    }

    @Test
    void aControllerElectedAfterADisconnectionWaitsForBrokersToRegisterAgain() throws Exception {
        store.createTopic("orders", Map.of(0, List.of(1, 2, 0)));
        PartitionState initial = awaitState(ORDERS_0, s -> true);
        long graceMs = 1_500;
        restartControllerAfterReconnection(graceMs);
        long activeSinceMs = System.currentTimeMillis();

        store.unregisterBroker(1); // its expired session's node is gone; its new registration comes a moment later
        drainEvents();
        assertEquals(Optional.of(initial), store.state(ORDERS_0), "leader 1 kept while it may be re-registering");
        store.registerBroker(1, 201);
        waitUntil("the grace is over", () -> System.currentTimeMillis() > activeSinceMs + graceMs + 100, () -> "");
        drainEvents();
        assertEquals(Optional.of(initial), store.state(ORDERS_0), "nothing to change: broker 1 came back in time");
    }

    @Test
    void aBrokerThatDoesNotRegisterAgainWithinTheGraceIsTreatedAsFailed() throws Exception {
        store.createTopic("orders", Map.of(0, List.of(1, 2, 0)));
        awaitState(ORDERS_0, s -> true);
        long graceMs = 1_500;
        restartControllerAfterReconnection(graceMs);
        long activeSinceMs = System.currentTimeMillis();

        store.unregisterBroker(1);
        PartitionState after = awaitState(ORDERS_0, s -> s.leader() != 1);
        assertTrue(System.currentTimeMillis() >= activeSinceMs + graceMs - 100, "moved only after the grace");
        assertEquals(new PartitionState(2, 1, List.of(2, 0), 1), after);
    }

    /** The controller replaced by one that has just come through a ZooKeeper reconnection. */
    private void restartControllerAfterReconnection(long graceMs) {
        controller.close();
        controller = new Controller(0, store, topic -> false, graceMs, Time.SYSTEM);
        store.onChange(controller::onImage);
        controller.onReconnected();
        controller.onImage(store.image());
        controller.start();
        waitUntil("broker 0 is the controller again", controller::isActive, () -> "inactive");
    }

    /**
     * Returns once every event queued before the call has run, and any round those queued: a request answers only
     * after the events ahead of it, and the second one after the rounds the first saw queued.
     */
    private void drainEvents() throws Exception {
        for (int i = 0; i < 2; i++) {
            controller.electLeaders(false, Set.of()).get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    private PartitionState awaitState(TopicPartition tp, Predicate<PartitionState> condition) {
        waitUntil("a state of " + tp + " that matches", () -> store.state(tp).filter(condition).isPresent(),
                () -> store.state(tp).toString());
        return store.state(tp).orElseThrow();
    }

    private static void waitUntil(String what, BooleanSupplier condition, Supplier<String> lastSeen) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out after " + WAIT_MS + " ms waiting for " + what
                        + "; last seen: " + lastSeen.get());
            }
            try {
                Thread.sleep(5); // poll interval, not a wait for state: the loop checks the condition
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }
}
