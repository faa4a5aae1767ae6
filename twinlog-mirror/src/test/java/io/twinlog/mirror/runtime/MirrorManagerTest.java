package io.twinlog.mirror.runtime;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The mirror manager and its workers on their real threads, without ZooKeeper or a source cluster: the broker's
 * records, metadata image, partitions, sources and peer are {@link FakeMirrorBroker}'s. What the manager does: start
 * a worker per mirror with topics in the image, hand each its passes and its fetcher's reports, stop it when its
 * mirror is gone; each partition runs the real state machine.
 */
@Timeout(60)
class MirrorManagerTest {
    private static final long WAIT_MS = 20_000;
    private static final TopicPartition ORDERS = new TopicPartition("orders", 0);
    private static final TopicPartition PAYMENTS = new TopicPartition("payments", 0);

    private final FakeMirrorBroker broker = new FakeMirrorBroker();
    private final BrokerMetrics brokerMetrics = BrokerMetrics.unreported(0, Time.SYSTEM);
    private final MirrorMetrics metrics = new MirrorMetrics(brokerMetrics, Time.SYSTEM);
    private MirrorManager manager;

    @AfterEach
    void close() {
        if (manager != null) {
            manager.close();
        }
        metrics.close();
        brokerMetrics.close();
    }

    private void startManager() {
        manager = new MirrorManager(FakeMirrorBroker.BROKER, broker, broker, broker, broker.sources(), broker.peer(),
                metrics, 60_000, Time.SYSTEM);
        manager.start();
    }

    /** A record of a partition already mirroring under this broker's leader epoch. */
    private void mirroring(TopicPartition tp) {
        broker.storeRecord(tp, MirrorPartitionRecord.initial(5).transitionTo(EPOCH_FENCING, 5).withMinLeaderEpoch(5)
                .transitionTo(MIRRORING, 5));
    }

    /** m1 mirrors orders from {@code bootstrap}, its partition MIRRORING here and fetched. */
    private void ordersMirroring(String bootstrap) {
        broker.createMirror("m1", bootstrap);
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);
        mirroring(ORDERS);
        startManager();
        await("orders-0 fetched", () -> broker.sources.size(), n -> n == 1);
    }

    /** m1 mirrors orders from one source, m2 payments from another; both partitions MIRRORING here. */
    private void twoMirrorsMirroring() {
        broker.createMirror("m1", "source-one:9092");
        broker.createMirror("m2", "source-two:9092");
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);
        broker.mirrorTopic("m2", "payments", 1, DesiredMirrorState.MIRRORING);
        mirroring(ORDERS);
        mirroring(PAYMENTS);
        startManager();
    }

    @Test
    void aNewMirrorTopicIsTruncatedFencedAndMirroredByItsMirrorsFetcher() {
        broker.createMirror("m1", "source:9092");
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);
        startManager();

        await("orders-0 truncated (an empty log: point 0) and waiting for its epoch to be raised",
                () -> broker.state(ORDERS), s -> s == EPOCH_FENCING);
        int minLeaderEpoch = broker.record(ORDERS).orElseThrow().minLeaderEpoch();
        assertTrue(broker.partitions.get(ORDERS).appliedTruncation > 0, "the leader applied the truncation point");
        broker.raiseLeaderEpoch(ORDERS, minLeaderEpoch); // the controller's part

        await("orders-0 fetched by m1's source", () -> broker.sourcesOf("m1").stream()
                .filter(s -> s.fetched.contains(ORDERS)).count(), n -> n == 1L);
        assertEquals(MIRRORING, broker.state(ORDERS));
        assertEquals(Set.of("m1"), manager.workerNames());
    }

    @Test
    void aPartitionThisBrokerDoesNotLeadGetsNoRecordAndNoFetcher() {
        broker.createMirror("m1", "source:9092");
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);
        broker.loseLeadership(ORDERS);
        broker.mirrorTopic("m1", "payments", 1, DesiredMirrorState.MIRRORING);
        startManager();

        // both topics are passed by the same tick: once payments-0 is written, orders-0 was passed over too
        await("payments-0 written", () -> broker.state(PAYMENTS), s -> s != MirrorPartitionState.UNKNOWN);
        assertEquals(MirrorPartitionState.UNKNOWN, broker.state(ORDERS), "a follower writes nothing");
        assertTrue(broker.sources.stream().noneMatch(s -> s.fetched.contains(ORDERS)), "nor fetches");
    }

    @Test
    void eachMirrorHasItsOwnWorkerAndFetcher() {
        twoMirrorsMirroring();

        await("each partition fetched by its own mirror's source", () -> broker.sources.stream()
                .map(s -> s.mirror + "=" + s.bootstrap + s.fetched).sorted().toList(),
                l -> l.equals(List.of("m1=source-one:9092[orders-0]", "m2=source-two:9092[payments-0]")));
        assertEquals(Set.of("m1", "m2"), manager.workerNames());
    }

    @Test
    void aMirrorGoneFromTheMetadataStopsItsWorkerAndItsFetcherAndTheOtherGoesOn() {
        twoMirrorsMirroring();
        await("both fetched", () -> broker.sources.size(), n -> n == 2);
        FakeMirrorBroker.Source m2 = broker.sourcesOf("m2").get(0);

        broker.unmirror("payments");

        await("m2's worker stopped", () -> manager.workerNames(), names -> names.equals(Set.of("m1")));
        await("m2's fetcher detached and closed", () -> m2.detached && m2.shutDown, done -> done);
        FakeMirrorBroker.Source m1 = broker.sourcesOf("m1").get(0);
        assertTrue(m1.fetched.contains(ORDERS) && !m1.detached, "m1 goes on");
    }

    @Test
    void aFetcherFailureIsAnEventThatFailsThePartitionWithItsReason() {
        ordersMirroring("source:9092");

        broker.sources.get(0).listener.onFailure(ORDERS, "source broker 1 unreachable", true);

        await("orders-0 FAILED", () -> broker.record(ORDERS).orElseThrow(), r -> r.state() == FAILED);
        assertTrue(broker.record(ORDERS).orElseThrow().lastError().orElseThrow()
                .contains("source broker 1 unreachable"), broker.record(ORDERS).toString());
    }

    @Test
    void aPartitionNoLongerLedLeavesTheFetcherWhichThenStops() {
        ordersMirroring("source:9092");
        FakeMirrorBroker.Source source = broker.sources.get(0);

        broker.loseLeadership(ORDERS);

        await("orders-0 no longer fetched and the fetcher stopped", () -> !source.fetched.contains(ORDERS)
                && source.detached && source.shutDown, done -> done);
        assertEquals(Set.of("m1"), manager.workerNames(), "the mirror still has topics: its worker stays");
    }

    @Test
    void newSourceConfigsRestartTheMirrorsFetcher() {
        ordersMirroring("old-source:9092");
        FakeMirrorBroker.Source old = broker.sources.get(0);

        broker.alterMirror("m1", "new-source:9092");

        await("orders-0 fetched from the new address", () -> broker.sourcesOf("m1").stream()
                .filter(s -> s.bootstrap.equals("new-source:9092") && s.fetched.contains(ORDERS)).count(),
                n -> n == 1L);
        await("the old fetcher closed", () -> old.detached && old.shutDown, done -> done);
    }

    @Test
    void aFailoverAppendsItsBarrierAndEndsStoppedWithoutAFetcher() {
        ordersMirroring("source:9092");
        FakeMirrorBroker.Source source = broker.sources.get(0);

        broker.setDesired("orders", DesiredMirrorState.STOPPED);

        await("orders-0 STOPPED", () -> broker.state(ORDERS), s -> s == STOPPED);
        assertEquals(1, broker.partitions.get(ORDERS).barriersAppended.get(), "one producer-state barrier");
        await("the failed-over mirror's fetcher stopped", () -> source.detached && source.shutDown, done -> done);
    }

    @Test
    void aRecordChangedMeanwhileIsReadAgainAndDecidedAgain() {
        broker.createMirror("m1", "source:9092");
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);
        broker.refuseNextWrites.set(2);
        startManager();

        await("orders-0 written once the store takes its writes", () -> broker.state(ORDERS),
                s -> s != MirrorPartitionState.UNKNOWN);
        assertEquals(0, broker.refuseNextWrites.get(), "both refusals were met, and decided again after each");
    }

    /** Polls {@code value} until {@code done}, failing with what was last seen after {@value #WAIT_MS} ms. */
    static <T> void await(String what, Supplier<T> value, Predicate<T> done) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        T last = value.get();
        while (!done.test(last)) {
            if (System.nanoTime() > deadline) {
                fail("waited " + WAIT_MS + " ms for " + what + "; last seen: " + last);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // between polls; the deadline bounds the wait
            last = value.get();
        }
    }
}
