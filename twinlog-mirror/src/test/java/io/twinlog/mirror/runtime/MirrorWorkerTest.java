package io.twinlog.mirror.runtime;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.partition.MirrorPartitionMachine;
import io.twinlog.mirror.partition.MirrorSettings;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.UNKNOWN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One {@link MirrorWorker}'s event handling, driven by the test on its own thread as the manager's thread would:
 * passes, fetcher reports (handed to the manager's queue, which the test runs), the tick's housekeeping and the stop.
 * No ZooKeeper, no source: {@link FakeMirrorBroker}.
 */
@Timeout(60)
class MirrorWorkerTest {
    private static final TopicPartition ORDERS = new TopicPartition("orders", 0);
    private static final TopicPartition PAYMENTS = new TopicPartition("payments", 0);

    private final FakeMirrorBroker broker = new FakeMirrorBroker();
    private final BrokerMetrics brokerMetrics = BrokerMetrics.unreported(0, Time.SYSTEM);
    private final MirrorMetrics metrics = new MirrorMetrics(brokerMetrics, Time.SYSTEM);
    private final FailoverBarriers barriers = new FailoverBarriers(FakeMirrorBroker.BROKER, Time.SYSTEM);
    /** The manager thread's queue: what the worker handed back to it, run when the test says. */
    private final Queue<Runnable> managerThread = new ArrayDeque<>();
    private final Set<TopicPartition> passesQueued = new HashSet<>();
    private MirrorWorker worker;

    @BeforeEach
    void start() {
        broker.createMirror("m1", "source:9092");
        broker.createMirror("m2", "source-two:9092");
        MirrorWorkerServices services = new MirrorWorkerServices(FakeMirrorBroker.BROKER, broker, broker, broker,
                broker.sources(), broker.peer(), new MirrorPartitionMachine(MirrorSettings.defaults(60_000),
                new Random(1)), metrics, barriers, Runnable::run, Time.SYSTEM, managerThread::add,
                passesQueued::addAll, () -> false);
        worker = new MirrorWorker("m1", services);
    }

    @AfterEach
    void close() {
        worker.close();
        barriers.close();
        metrics.close();
        brokerMetrics.close();
    }

    private void mirroring(TopicPartition tp) {
        broker.storeRecord(tp, MirrorPartitionRecord.initial(5).transitionTo(EPOCH_FENCING, 5).withMinLeaderEpoch(5)
                .transitionTo(MIRRORING, 5));
    }

    /** m1's orders-0 MIRRORING here, passed once: fetched by m1's fetcher. */
    private void ordersMirroring() {
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);
        mirroring(ORDERS);
        pass(ORDERS);
    }

    private void pass(TopicPartition... tps) {
        Map<String, Collection<Integer>> byTopic = new HashMap<>();
        for (TopicPartition tp : tps) {
            byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        }
        worker.handlePass(broker.image(), byTopic);
        worker.flush();
    }

    private void runManagerThread() {
        Runnable r;
        while ((r = managerThread.poll()) != null) {
            r.run();
        }
    }

    @Test
    void aPassDefersItsRecordUntilTheFlush() {
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);

        worker.handlePass(broker.image(), Map.of("orders", List.of(0)));

        assertEquals(UNKNOWN, broker.state(ORDERS), "nothing written before the flush");
        assertEquals(Set.of(ORDERS), worker.flush());
        assertEquals(LOG_TRUNCATION, broker.state(ORDERS));
        assertEquals(Set.of(ORDERS), worker.ledPartitions());
    }

    @Test
    void mirroringPartitionsShareTheMirrorsOneFetcher() {
        broker.mirrorTopic("m1", "orders", 2, DesiredMirrorState.MIRRORING);
        TopicPartition second = new TopicPartition("orders", 1);
        mirroring(ORDERS);
        mirroring(second);

        pass(ORDERS, second);
        pass(ORDERS, second);

        assertEquals(1, broker.sources.size(), "one fetcher for the mirror");
        assertEquals(Set.of(ORDERS, second), broker.sources.get(0).fetched);
    }

    @Test
    void aFetcherReportIsDecidedOnTheManagerThread() {
        ordersMirroring();

        broker.sources.get(0).listener.onFailure(ORDERS, "source broker 1 unreachable", true);

        assertEquals(MIRRORING, broker.state(ORDERS), "handed to the manager's thread, not decided on the fetcher's");
        assertEquals(1, managerThread.size());
        runManagerThread();
        assertEquals(FAILED, broker.state(ORDERS));
        assertTrue(broker.record(ORDERS).orElseThrow().lastError().orElseThrow().contains("unreachable"));
    }

    @Test
    void aReportAboutAPartitionNoLongerLedHereIsDropped() {
        ordersMirroring();
        int writes = broker.stateWrites.get();

        broker.loseLeadership(ORDERS);
        broker.sources.get(0).listener.onFailure(ORDERS, "source broker 1 unreachable", true);
        runManagerThread();

        assertEquals(MIRRORING, broker.state(ORDERS));
        assertEquals(writes, broker.stateWrites.get(), "nothing written");
    }

    @Test
    void aTopicOfAnotherMirrorIsNotThisWorkers() {
        broker.mirrorTopic("m2", "payments", 1, DesiredMirrorState.MIRRORING);

        pass(PAYMENTS);

        assertEquals(UNKNOWN, broker.state(PAYMENTS));
        assertTrue(worker.ledPartitions().isEmpty() && broker.sources.isEmpty());
    }

    @Test
    void theTickForgetsPartitionsTheMirrorNoLongerHasAndStopsItsIdleFetcher() {
        ordersMirroring();
        FakeMirrorBroker.Source source = broker.sources.get(0);

        broker.unmirror("orders");
        worker.handleTick(broker.image());

        assertTrue(worker.ledPartitions().isEmpty());
        assertTrue(source.detached && source.shutDown, "detached, then closed on the closer (here: at once)");
    }

    @Test
    void theTickAppliesTheMirrorsBandwidthCapToItsFetcher() {
        broker.mirrorTopic("m1", "orders", 1, DesiredMirrorState.MIRRORING);
        mirroring(ORDERS);
        worker.beginTick();
        pass(ORDERS);

        worker.handleTick(broker.image());

        assertEquals(Long.MAX_VALUE, broker.sources.get(0).replicationQuota, "the definition's cap: unlimited");
    }

    @Test
    void aStoppedWorkerDoesNothingWithLateEvents() {
        ordersMirroring();
        FakeMirrorBroker.Source source = broker.sources.get(0);
        int writes = broker.stateWrites.get();

        worker.stop();
        source.listener.onFailure(ORDERS, "late", true);
        runManagerThread();
        pass(ORDERS);

        assertEquals(writes, broker.stateWrites.get(), "nothing written after the stop");
        assertEquals(1, broker.sources.size(), "and no fetcher started again");
        assertTrue(source.shutDown);
    }
}
