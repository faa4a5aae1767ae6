package io.twinlog.share.partition;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.InFlightState;
import org.apache.kafka.server.share.fetch.RecordState;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One share partition over a real log, a persister kept in memory and a timer moved by hand: the record state rules
 * of KIP-932 as Kafka's {@code SharePartition} applies them.
 */
@Timeout(60)
class SharePartitionStateTest {
    static final byte ACCEPT = AcknowledgeType.ACCEPT.id;
    static final byte RELEASE = AcknowledgeType.RELEASE.id;
    static final byte REJECT = AcknowledgeType.REJECT.id;
    private static final String GROUP = "g";
    private static final int LEADER_EPOCH = 3;

    @TempDir
    File dir;
    private ShareTestLog log;
    private final InMemoryPersister persister = new InMemoryPersister();
    private final ManualTimer timer = new ManualTimer();
    private final TestSettings settings = new TestSettings();
    private final AtomicInteger wakeups = new AtomicInteger();
    private final AtomicInteger fenced = new AtomicInteger();
    private SharePartitionState state;

    /** Group settings a test changes at will (Kafka's defaults, earliest reset so tests see what they produce). */
    static final class TestSettings implements SharePartitionState.GroupSettings {
        volatile int lockMs = 30_000;
        volatile int deliveryLimit = 5;
        volatile int maxLocks = 2000;
        volatile ShareGroupAutoOffsetResetStrategy reset = ShareGroupAutoOffsetResetStrategy.EARLIEST;

        @Override
        public int recordLockDurationMs() {
            return lockMs;
        }

        @Override
        public int deliveryCountLimit() {
            return deliveryLimit;
        }

        @Override
        public int maxRecordLocks() {
            return maxLocks;
        }

        @Override
        public ShareGroupAutoOffsetResetStrategy autoOffsetReset() {
            return reset;
        }
    }

    @BeforeEach
    void openLog() throws IOException {
        log = new ShareTestLog(dir, "orders", LEADER_EPOCH);
    }

    @AfterEach
    void close() throws Exception {
        if (state != null) {
            state.close();
        }
        log.close();
    }

    private SharePartitionState start() throws Exception {
        state = new SharePartitionState(GROUP, log.partition, LEADER_EPOCH, SharePartitionLog.of(log.replica),
                persister, timer, timer.time, settings, new SharePartitionState.Listener() {
                    @Override
                    public void onAcquirable(SharePartitionState s) {
                        wakeups.incrementAndGet();
                    }

                    @Override
                    public void onFenced(SharePartitionState s) {
                        fenced.incrementAndGet();
                    }
                });
        state.maybeInitialize().get(10, TimeUnit.SECONDS);
        return state;
    }

    /** A ShareFetch: takes the fetch lock, reads from the next fetch offset, acquires. */
    static ShareAcquiredRecords fetch(SharePartitionState state, ShareTestLog log, String member, int maxRecords,
                                      FetchIsolation isolation) throws IOException {
        Optional<SharePartitions.FetchLock> lock = state.tryFetchLock();
        if (lock.isEmpty()) {
            return ShareAcquiredRecords.empty();
        }
        try (SharePartitions.FetchLock held = lock.get()) {
            long offset = held.nextFetchOffset();
            return held.acquire(member, 500, maxRecords, offset, log.read(offset, 1 << 20, isolation));
        }
    }

    private ShareAcquiredRecords fetch(String member, int maxRecords) throws IOException {
        return fetch(state, log, member, maxRecords, FetchIsolation.HIGH_WATERMARK);
    }

    static CompletableFuture<Void> ack(SharePartitionState state, String member, long first, long last, byte type) {
        return state.acknowledge(member, List.of(new ShareAcknowledgementBatch(first, last, List.of(type))));
    }

    private void ack(String member, long first, long last, byte type) throws Exception {
        ack(state, member, first, last, type).get(10, TimeUnit.SECONDS);
    }

    private static Throwable failure(CompletableFuture<?> future) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    private static AcquiredRecords range(long first, long last, int deliveryCount) {
        return new AcquiredRecords().setFirstOffset(first).setLastOffset(last).setDeliveryCount((short) deliveryCount);
    }

    private void assertRecord(long offset, RecordState expected, int deliveryCount) {
        InFlightState record = state.recordState(offset);
        assertEquals(expected, record == null ? null : record.state(), "state of offset " + offset);
        assertEquals(deliveryCount, record.deliveryCount(), "delivery count of offset " + offset);
    }

    @Test
    void acceptReleaseAndRejectMoveTheStartOffsetAndReleasedRecordsAreDeliveredAgain() throws Exception {
        log.append(5);
        log.append(5);
        start();

        ShareAcquiredRecords first = fetch("a", 100);
        assertEquals(List.of(range(0, 9, 1)), first.acquiredRecords());
        assertEquals(10, first.count());
        assertEquals(0, fetch("b", 100).count(), "everything is acquired");

        state.acknowledge("a", List.of(new ShareAcknowledgementBatch(0, 3, List.of(ACCEPT)),
                new ShareAcknowledgementBatch(4, 5, List.of(RELEASE)),
                new ShareAcknowledgementBatch(6, 9, List.of(REJECT)))).get(10, TimeUnit.SECONDS);
        assertEquals(4, state.startOffset(), "0-3 accepted: the start offset stops at the released 4");
        assertRecord(4, RecordState.AVAILABLE, 1);
        assertRecord(6, RecordState.ARCHIVED, 1);

        assertEquals(List.of(range(4, 5, 2)), fetch("b", 100).acquiredRecords(), "released: delivered again");
        ack("b", 4, 5, ACCEPT);
        assertEquals(10, state.startOffset());
        assertEquals(10, state.endOffset());
        InMemoryPersister.Stored stored = persister.stored(GROUP, log.partition.topicId(), 0);
        assertEquals(RecordState.ACKNOWLEDGED.id, stored.records.get(5L)[0]);
        assertTrue(wakeups.get() >= 2, "every persisted acknowledgement wakes waiting fetches");
    }

    /**
     * The start offset a write carries is the one before it (it moves once the write is answered, as Kafka's does),
     * so the records it acknowledges must be in its delivery-complete count: the lag computed from the persisted
     * state (end - start - complete) is 0 once everything is acknowledged, not one acknowledgement round behind.
     */
    @Test
    void theWriteThatAcknowledgesRecordsCountsThemAsDeliveryComplete() throws Exception {
        log.append(5);
        log.append(5);
        start();
        assertEquals(10, fetch("a", 100).count());

        ack("a", 0, 9, ACCEPT);

        InMemoryPersister.Stored stored = persister.stored(GROUP, log.partition.topicId(), 0);
        assertEquals(10, stored.deliveryCompleteCount);
        assertEquals(0, 10 - stored.startOffset - stored.deliveryCompleteCount, "lag from the persisted state");
        assertEquals(10, state.startOffset(), "in memory the start offset moved past them");
    }

    @Test
    void perOffsetAcknowledgementsSplitABatch() throws Exception {
        log.append(4);
        start();
        fetch("a", 100);
        state.acknowledge("a", List.of(new ShareAcknowledgementBatch(0, 3,
                List.of(ACCEPT, RELEASE, REJECT, (byte) 0)))).get(10, TimeUnit.SECONDS);
        assertRecord(0, RecordState.ACKNOWLEDGED, 1);
        assertRecord(1, RecordState.AVAILABLE, 1);
        assertRecord(2, RecordState.ARCHIVED, 1);
        assertRecord(3, RecordState.ARCHIVED, 1); // a gap (type 0): the client saw no record there
        assertEquals(1, state.startOffset());
        assertEquals(List.of(range(1, 1, 2)), fetch("b", 100).acquiredRecords());
    }

    @Test
    void onlyTheAcquiringMemberMayAcknowledgeAndAnInvalidRequestChangesNothing() throws Exception {
        log.append(5);
        start();
        fetch("a", 100);
        assertInstanceOf(InvalidRecordStateException.class, failure(ack(state, "b", 0, 4, ACCEPT)));
        // valid for 0-1, invalid for 5 (never acquired): the whole request is refused, 0-1 stay acquired
        Throwable invalid = failure(state.acknowledge("a", List.of(new ShareAcknowledgementBatch(0, 1,
                List.of(ACCEPT)), new ShareAcknowledgementBatch(5, 5, List.of(ACCEPT)))));
        assertInstanceOf(InvalidRecordStateException.class, invalid);
        assertRecord(0, RecordState.ACQUIRED, 1);
        assertInstanceOf(InvalidRequestException.class, failure(ack(state, "a", 0, 4, (byte) 5)),
                "no acknowledge type 5 (RENEW, 4, is v2's: RecordLimitAndRenewTest)");
        ack("a", 0, 4, ACCEPT);
        ack("a", 0, 4, ACCEPT); // below the start offset now: done with, nothing to change
        assertEquals(5, state.startOffset());
    }

    @Test
    void anExpiredLockRedeliversWithDeliveryCountTwoAndTheFormerHolderCannotAcknowledge() throws Exception {
        log.append(5);
        start();
        fetch("a", 100);
        timer.advance(29_999);
        assertRecord(0, RecordState.ACQUIRED, 1);
        int before = wakeups.get();
        timer.advance(1);
        assertRecord(0, RecordState.AVAILABLE, 1);
        assertTrue(wakeups.get() > before, "an expiry wakes waiting fetches");

        assertEquals(List.of(range(0, 4, 2)), fetch("b", 100).acquiredRecords());
        assertInstanceOf(InvalidRecordStateException.class, failure(ack(state, "a", 0, 4, ACCEPT)));
        ack("b", 0, 4, ACCEPT);
        assertEquals(5, state.startOffset());
    }

    @Test
    void theDeliveryLimitArchivesRecordsOnExpiryAndOnRelease() throws Exception {
        settings.deliveryLimit = 2;
        log.append(2);
        log.append(2);
        start();
        fetch("a", 100);
        timer.advance(30_000);
        assertEquals(List.of(range(0, 3, 2)), fetch("a", 100).acquiredRecords());
        ack("a", 2, 3, RELEASE); // splits the batch: 2-3 reach the limit on release
        assertRecord(2, RecordState.ARCHIVED, 2);
        timer.advance(30_000); // 0-1 expire at the limit: archived, so the start offset passes all four
        assertEquals(4, state.startOffset(), "archived records are done with");
        assertEquals(4, persister.stored(GROUP, log.partition.topicId(), 0).startOffset, "persisted with the expiry");
        assertEquals(0, fetch("b", 100).count());
    }

    @Test
    void noMoreThanTheRecordLockLimitIsInFlight() throws Exception {
        settings.maxLocks = 5;
        log.append(3);
        log.append(3);
        log.append(3);
        start();
        // whole log batches: 0-2 (3 < 5), 3-5 (6 >= 5 after it): 6 records, then the limit stops the third batch
        assertEquals(List.of(range(0, 5, 1)), fetch("a", 100).acquiredRecords());
        assertTrue(state.tryFetchLock().isEmpty(), "nothing available and the in-flight limit reached");
        ack("a", 0, 2, ACCEPT);
        assertEquals(List.of(range(6, 8, 1)), fetch("a", 100).acquiredRecords());
    }

    @Test
    void maxRecordsIsSoftAtLogBatchBoundariesAndBatchSizeCutsInFlightBatches() throws Exception {
        for (int i = 0; i < 4; i++) {
            log.append(2);
        }
        start();
        Optional<SharePartitions.FetchLock> lock = state.tryFetchLock();
        ShareAcquiredRecords acquired;
        try (SharePartitions.FetchLock held = lock.orElseThrow()) {
            acquired = held.acquire("a", 2, 3, 0, log.read(0, 1 << 20, FetchIsolation.HIGH_WATERMARK));
        }
        assertEquals(4, acquired.count(), "3 asked, the second log batch is taken whole");
        ack("a", 0, 1, ACCEPT); // exactly the first in-flight batch (batch size 2)
        assertEquals(2, state.startOffset());
    }

    @Test
    void readCommittedArchivesAbortedTransactionsAndNoMarkerIsDelivered() throws Exception {
        log.appendTransactional(7, 0, 3);   // 0-2, aborted
        log.endTransaction(7, false);       // 3
        log.append(2);                      // 4-5
        log.appendTransactional(8, 0, 2);   // 6-7, committed
        log.endTransaction(8, true);        // 8
        start();

        ShareAcquiredRecords acquired = fetch(state, log, "a", 100, FetchIsolation.TXN_COMMITTED);
        assertEquals(List.of(range(4, 7, 1)), acquired.acquiredRecords());
        assertEquals(4, state.startOffset(), "the aborted records and the marker are archived and passed");
        assertNull(state.recordState(0), "archived below the start offset: dropped from the cache");
        ack("a", 4, 7, ACCEPT);
        assertEquals(9, state.startOffset(), "the commit marker is passed too");
    }

    @Test
    void readUncommittedDeliversAbortedRecordsButNotMarkers() throws Exception {
        log.appendTransactional(7, 0, 3);
        log.endTransaction(7, false);
        log.append(1);
        start();
        assertEquals(List.of(range(0, 2, 1), range(4, 4, 1)), fetch("a", 100).acquiredRecords());
    }

    @Test
    void theLogStartPassingTheStartOffsetArchivesTheRecordsBelowIt() throws Exception {
        log.append(10);
        start();
        fetch("a", 100);
        log.deleteRecordsBelow(5);
        assertTrue(state.tryFetchLock().map(l -> {
            l.close();
            return true;
        }).orElse(false));
        assertEquals(5, state.startOffset());
        ack("a", 0, 9, ACCEPT); // 0-4 are below the start offset: skipped
        assertEquals(10, state.startOffset());
    }

    @Test
    void aFailedWriteRollsTheAcknowledgementBack() throws Exception {
        log.append(5);
        start();
        fetch("a", 100);
        persister.failWrites(Errors.COORDINATOR_NOT_AVAILABLE);
        assertInstanceOf(CoordinatorNotAvailableException.class, failure(ack(state, "a", 0, 4, ACCEPT)));
        assertRecord(0, RecordState.ACQUIRED, 1);
        persister.failWrites(new IllegalStateException("share coordinator unreachable"));
        assertInstanceOf(UnknownServerException.class, failure(ack(state, "a", 0, 4, ACCEPT)));
        assertRecord(0, RecordState.ACQUIRED, 1);
        assertEquals(0, state.startOffset());
        persister.failWrites((RuntimeException) null);
        persister.failWrites(Errors.NONE);
        ack("a", 0, 4, ACCEPT);
        assertEquals(5, state.startOffset());
    }

    @Test
    void aLockThatExpiresWhileTheWriteIsInFlightMakesTheRolledBackRecordsAvailable() throws Exception {
        log.append(5);
        start();
        fetch("a", 100);
        persister.holdWrites();
        CompletableFuture<Void> accept = ack(state, "a", 0, 4, ACCEPT);
        timer.advance(30_000); // the expiry leaves the records to the transition in flight
        assertRecord(0, RecordState.ACKNOWLEDGED, 1);
        persister.failWrites(Errors.UNKNOWN_SERVER_ERROR);
        persister.releaseHeldWrites();
        failure(accept);
        assertRecord(0, RecordState.AVAILABLE, 1);
        persister.failWrites(Errors.NONE);
        assertEquals(List.of(range(0, 4, 2)), fetch("b", 100).acquiredRecords());
    }

    @Test
    void aFencedStateEpochFencesTheState() throws Exception {
        log.append(5);
        start();
        fetch("a", 100);
        persister.resetStartOffset(GROUP, log.partition.topicId(), 0, 3); // AlterShareGroupOffsets elsewhere
        assertInstanceOf(NotLeaderOrFollowerException.class, failure(ack(state, "a", 0, 4, ACCEPT)));
        assertEquals(SharePartitionState.Status.FENCED, state.status());
        assertEquals(1, fenced.get());
        assertEquals(0, timer.size(), "a fenced state holds no lock");
        assertTrue(state.tryFetchLock().isEmpty());
    }

    @Test
    void aFailedLoadFencesTheState() throws Exception {
        persister.failReads(Errors.COORDINATOR_LOAD_IN_PROGRESS);
        assertInstanceOf(CoordinatorNotAvailableException.class, assertThrows(ExecutionException.class,
                this::start).getCause());
        assertEquals(1, fenced.get());
    }

    @Test
    void autoOffsetResetLatestIsTheDefaultEarliestAndByDuration() throws Exception {
        long old = System.currentTimeMillis() - TimeUnit.DAYS.toMillis(2);
        log.append(5, old);
        log.append(5);
        settings.reset = ShareGroupAutoOffsetResetStrategy.LATEST;
        assertEquals(10, start().startOffset());
        state.close();
        settings.reset = ShareGroupAutoOffsetResetStrategy.fromString("by_duration:PT1H");
        assertEquals(5, start().startOffset());
        state.close();
        log.deleteRecordsBelow(3);
        settings.reset = ShareGroupAutoOffsetResetStrategy.EARLIEST;
        assertEquals(3, start().startOffset(), "earliest is the log start");
    }

    @Test
    void byDurationWithNoRecordThatRecentStartsAtTheEnd() throws Exception {
        log.append(5, System.currentTimeMillis() - TimeUnit.DAYS.toMillis(2));
        settings.reset = ShareGroupAutoOffsetResetStrategy.fromString("by_duration:PT1H");
        assertEquals(5, start().startOffset());
    }

    @Test
    void thePersistedStateIsLoadedAndItsGapsAreAvailable() throws Exception {
        log.append(10);
        InMemoryPersister.Stored stored = persister.stored(GROUP, log.partition.topicId(), 0);
        stored.startOffset = 0;
        stored.records.put(2L, new short[] {RecordState.ACKNOWLEDGED.id, 1});
        stored.records.put(3L, new short[] {RecordState.ACKNOWLEDGED.id, 1});
        stored.records.put(6L, new short[] {RecordState.AVAILABLE.id, 3});
        start();
        assertEquals(0, state.startOffset());
        assertEquals(7, state.endOffset());
        assertEquals(List.of(range(0, 1, 1), range(4, 5, 1), range(6, 6, 4), range(7, 9, 1)),
                fetch("a", 100).acquiredRecords());
    }

    @Test
    void aStartOffsetPastTheLogEndIsClampedToIt() throws Exception {
        log.append(10);
        InMemoryPersister.Stored stored = persister.stored(GROUP, log.partition.topicId(), 0);
        stored.startOffset = 50; // a failback cut the log below the synced start offset
        stored.records.put(55L, new short[] {RecordState.ACKNOWLEDGED.id, 1});
        start();
        assertEquals(10, state.startOffset());
        assertEquals(10, state.endOffset());
        log.append(2);
        assertEquals(List.of(range(10, 11, 1)), fetch("a", 100).acquiredRecords());
        assertNull(state.recordState(55));
    }

    @Test
    void releasingAMembersRecordsLeavesTheOthers() throws Exception {
        log.append(5);
        start();
        fetch("a", 100);
        log.append(5);
        fetch("b", 100);
        state.releaseAcquiredRecords("a").get(10, TimeUnit.SECONDS);
        assertRecord(0, RecordState.AVAILABLE, 1);
        assertRecord(5, RecordState.ACQUIRED, 1);
        assertEquals(1, timer.size(), "a's lock was cancelled, b's stays");
        assertEquals(List.of(range(0, 4, 2)), fetch("c", 100).acquiredRecords());
    }
}
