package io.twinlog.share.partition;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * ShareFetch/ShareAcknowledge v2 on one share partition over a real log, an in-memory persister and a timer moved by
 * hand: KIP-1206's {@code record_limit} acquire mode (exactly {@code maxRecords}, a log batch split by offset) and
 * KIP-1222's RENEW acknowledgement (a holder's acquisition lock restarted, nothing else changed or persisted).
 */
@Timeout(60)
class RecordLimitAndRenewTest {
    private static final byte ACCEPT = AcknowledgeType.ACCEPT.id;
    private static final byte RELEASE = AcknowledgeType.RELEASE.id;
    private static final byte RENEW = AcknowledgeType.RENEW.id;
    private static final int LOCK_MS = 1_000;

    @TempDir
    File dir;
    private ShareTestLog log;
    private final InMemoryPersister persister = new InMemoryPersister();
    private final ManualTimer timer = new ManualTimer();
    private volatile boolean renewEnabled = true;
    private SharePartitionState state;

    @BeforeEach
    void start() throws Exception {
        log = new ShareTestLog(dir, "orders", 1);
        SharePartitionState.GroupSettings settings = new SharePartitionState.GroupSettings() {
            @Override
            public int recordLockDurationMs() {
                return LOCK_MS;
            }

            @Override
            public int deliveryCountLimit() {
                return 5;
            }

            @Override
            public int maxRecordLocks() {
                return 2000;
            }

            @Override
            public ShareGroupAutoOffsetResetStrategy autoOffsetReset() {
                return ShareGroupAutoOffsetResetStrategy.EARLIEST;
            }

            @Override
            public boolean renewAcknowledgeEnabled() {
                return renewEnabled;
            }
        };
        state = new SharePartitionState("g", log.partition, 1, SharePartitionLog.of(log.replica), persister, timer,
                timer.time, settings, new SharePartitionState.Listener() {
                    @Override
                    public void onAcquirable(SharePartitionState s) {
                    }

                    @Override
                    public void onFenced(SharePartitionState s) {
                    }
                });
    }

    @AfterEach
    void close() throws Exception {
        state.close();
        log.close();
    }

    private void initialize() throws Exception {
        state.maybeInitialize().get(10, TimeUnit.SECONDS);
    }

    private ShareAcquiredRecords fetch(String member, ShareAcquireMode mode, int maxRecords) throws IOException {
        Optional<SharePartitions.FetchLock> lock = state.tryFetchLock();
        if (lock.isEmpty()) {
            return ShareAcquiredRecords.empty();
        }
        try (SharePartitions.FetchLock held = lock.get()) {
            long offset = held.nextFetchOffset();
            // batchSize 2: a record limit must not cut by it, batch-optimized acquisition would
            return held.acquire(member, mode, 2, maxRecords, offset,
                    log.read(offset, 1 << 20, FetchIsolation.HIGH_WATERMARK));
        }
    }

    private CompletableFuture<Void> ack(String member, long first, long last, byte... types) {
        List<Byte> list = new ArrayList<>();
        for (byte type : types) {
            list.add(type);
        }
        return state.acknowledge(member, List.of(new ShareAcknowledgementBatch(first, last, list)));
    }

    private static Throwable failure(CompletableFuture<?> future) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    private static AcquiredRecords range(long first, long last, int deliveryCount) {
        return new AcquiredRecords().setFirstOffset(first).setLastOffset(last).setDeliveryCount((short) deliveryCount);
    }

    private void assertRecord(long offset, RecordState expected, int deliveryCount, String memberId) {
        InFlightState record = state.recordState(offset);
        assertEquals(expected, record.state(), "state of offset " + offset);
        assertEquals(deliveryCount, record.deliveryCount(), "delivery count of offset " + offset);
        assertEquals(memberId, record.memberId(), "holder of offset " + offset);
    }

    @Test
    void aRecordLimitAcquiresExactlyMaxRecordsSplittingALogBatchByOffset() throws Exception {
        log.append(10);
        initialize();

        ShareAcquiredRecords first = fetch("a", ShareAcquireMode.RECORD_LIMIT, 3);
        assertEquals(List.of(range(0, 2, 1)), first.acquiredRecords());
        assertEquals(3, first.count());
        assertEquals(10, state.endOffset(), "the log batch is cached whole");
        assertRecord(2, RecordState.ACQUIRED, 1, "a");
        assertRecord(3, RecordState.AVAILABLE, 0, InFlightState.EMPTY_MEMBER_ID);

        ShareAcquiredRecords second = fetch("b", ShareAcquireMode.RECORD_LIMIT, 4);
        assertEquals(List.of(range(3, 6, 1)), second.acquiredRecords(), "the rest of the batch, offset by offset");
        assertEquals(List.of(range(7, 9, 1)), fetch("c", ShareAcquireMode.RECORD_LIMIT, 100).acquiredRecords());

        // each offset has its own lock: a's three return, the others stay
        ack("b", 3, 6, ACCEPT).get(10, TimeUnit.SECONDS);
        timer.advance(LOCK_MS);
        assertRecord(0, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
        assertRecord(7, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
        assertEquals(List.of(range(0, 1, 2)), fetch("d", ShareAcquireMode.RECORD_LIMIT, 2).acquiredRecords());
        assertRecord(2, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
    }

    @Test
    void aRecordLimitAcrossLogBatchesIsOneRangeAndBatchOptimizedStillTakesWholeBatches() throws Exception {
        log.append(4);
        log.append(4);
        log.append(4);
        initialize();

        ShareAcquiredRecords limited = fetch("a", ShareAcquireMode.RECORD_LIMIT, 6);
        assertEquals(List.of(range(0, 5, 1)), limited.acquiredRecords(), "not cut by the batch size of 2");
        assertEquals(6, limited.count());
        assertEquals(8, state.endOffset(), "the second log batch is cached whole, the third not read into it");

        // Kafka's default mode rounds up to whole log batches: 6-7 (cached) and all of 8-11 for maxRecords 3
        ShareAcquiredRecords optimized = fetch("b", ShareAcquireMode.BATCH_OPTIMIZED, 3);
        assertEquals(6, optimized.count());
        assertEquals(12, state.endOffset());

        // a released whole batch is split when a record limit takes part of it again
        ack("a", 0, 3, RELEASE).get(10, TimeUnit.SECONDS);
        assertEquals(List.of(range(0, 1, 2)), fetch("c", ShareAcquireMode.RECORD_LIMIT, 2).acquiredRecords());
        assertRecord(2, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
    }

    @Test
    void aRenewRestartsTheHoldersLockWithoutChangingOrPersistingAnything() throws Exception {
        log.append(5);
        initialize();
        fetch("a", ShareAcquireMode.BATCH_OPTIMIZED, 100);
        int writes = persister.writes.get();

        timer.advance(800);
        ack("a", 0, 4, RENEW).get(10, TimeUnit.SECONDS);
        timer.advance(800); // 1,600 ms after the acquisition, 800 after the renewal
        assertRecord(0, RecordState.ACQUIRED, 1, "a");
        assertEquals(writes, persister.writes.get(), "a renewal is not persisted");

        // per offset too: 1 and 3 renewed again while 2 is accepted in the same batch
        ack("a", 1, 3, RENEW, ACCEPT, RENEW).get(10, TimeUnit.SECONDS);
        assertRecord(2, RecordState.ACKNOWLEDGED, 1, InFlightState.EMPTY_MEMBER_ID);
        timer.advance(200); // the first renewal's lock is over: 0 and 4 return, 1 and 3 are held
        assertRecord(0, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
        assertRecord(4, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
        assertRecord(1, RecordState.ACQUIRED, 1, "a");
        timer.advance(800);
        assertRecord(3, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
    }

    @Test
    void onlyTheHolderMayRenewAndOnlyAcquiredRecords() throws Exception {
        log.append(5);
        initialize();
        fetch("a", ShareAcquireMode.RECORD_LIMIT, 3);

        assertInstanceOf(InvalidRecordStateException.class, failure(ack("b", 0, 2, RENEW)), "not b's records");
        assertInstanceOf(InvalidRecordStateException.class, failure(ack("a", 3, 4, RENEW)), "AVAILABLE records");
        assertInstanceOf(InvalidRecordStateException.class, failure(ack("a", 4, 7, RENEW)), "past the end offset");
        // a request refused part way renews nothing: 0-2 still expire on the acquisition's lock
        timer.advance(500);
        assertInstanceOf(InvalidRecordStateException.class, failure(state.acknowledge("a", List.of(
                new ShareAcknowledgementBatch(0, 2, List.of(RENEW)),
                new ShareAcknowledgementBatch(3, 3, List.of(ACCEPT))))));
        timer.advance(500);
        assertRecord(0, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
        assertInstanceOf(InvalidRecordStateException.class, failure(ack("a", 0, 2, RENEW)), "the lock expired");
    }

    @Test
    void recordsOfAThrottledAnswerReturnAsIfNeverDelivered() throws Exception {
        log.append(4);
        log.append(4);
        initialize();
        ShareAcquiredRecords acquired = fetch("a", ShareAcquireMode.BATCH_OPTIMIZED, 100);
        ack("a", 6, 7, ACCEPT).get(10, TimeUnit.SECONDS);

        // the answer of 0-7 was throttled away: 0-5 (whole batch, then per offset) come back, 6-7 stay accepted
        state.returnUndelivered("a", acquired.acquiredRecords());
        assertRecord(0, RecordState.AVAILABLE, 0, InFlightState.EMPTY_MEMBER_ID);
        assertRecord(5, RecordState.AVAILABLE, 0, InFlightState.EMPTY_MEMBER_ID);
        assertRecord(6, RecordState.ACKNOWLEDGED, 1, InFlightState.EMPTY_MEMBER_ID);
        assertEquals(0, timer.size(), "no lock left");
        assertEquals(List.of(range(0, 5, 1)), fetch("b", ShareAcquireMode.BATCH_OPTIMIZED, 100).acquiredRecords(),
                "delivered as the first time");
        state.returnUndelivered("a", List.of(range(0, 5, 1)));
        assertRecord(0, RecordState.ACQUIRED, 1, "b");
    }

    @Test
    void aGroupWithRenewalsSwitchedOffRefusesThem() throws Exception {
        log.append(5);
        initialize();
        fetch("a", ShareAcquireMode.BATCH_OPTIMIZED, 100);
        renewEnabled = false;

        Throwable refused = failure(ack("a", 0, 4, RENEW));
        assertInstanceOf(InvalidRecordStateException.class, refused);
        assertEquals("Renewing acquisition locks is not enabled for the group.", refused.getMessage());
        timer.advance(LOCK_MS);
        assertRecord(0, RecordState.AVAILABLE, 1, InFlightState.EMPTY_MEMBER_ID);
    }
}
