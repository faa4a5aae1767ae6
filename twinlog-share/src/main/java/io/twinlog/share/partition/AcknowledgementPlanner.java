package io.twinlog.share.partition;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.DeliveryCountOps;
import org.apache.kafka.server.share.fetch.InFlightBatch;
import org.apache.kafka.server.share.fetch.InFlightState;
import org.apache.kafka.server.share.fetch.RecordState;
import org.apache.kafka.server.share.persister.PersisterStateBatch;
import org.apache.kafka.server.util.timer.TimerTask;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.apache.kafka.server.share.fetch.InFlightState.EMPTY_MEMBER_ID;

/**
 * The record transitions of one {@link SharePartitionState} that end an acquisition: a member's acknowledgements
 * (checked, then started per batch or per offset with their target states), a member's release of everything it
 * holds, and an expired acquisition lock. Acknowledgements and releases are started as {@link Pending} transitions,
 * committed or rolled back once the write is answered; a lock expiry is applied at once. A RENEW acknowledgement
 * (KIP-1222) ends nothing: it is planned as a {@link Renewal}, applied only when the whole request is accepted.
 *
 * <p>Threading: no state of its own; every method but {@link #invalidAcknowledgement} runs under the state's write
 * lock.
 */
final class AcknowledgementPlanner {
    private final TopicIdPartition partition;
    private final InFlightCache cache;

    /** One pending transition: the in-memory state it changed and what to persist for it. */
    record Pending(InFlightState state, PersisterStateBatch batch) {
    }

    /**
     * An acquisition lock to restart (RENEW): a whole batch's ({@code offsetState} null) or one offset's. Nothing
     * is persisted for it, as in Kafka: acquisitions never are.
     */
    record Renewal(InFlightBatch batch, InFlightState offsetState, long first, long last) {
    }

    AcknowledgementPlanner(TopicIdPartition partition, InFlightCache cache) {
        this.partition = partition;
        this.cache = cache;
    }

    /** Why an acknowledgement batch is malformed (INVALID_REQUEST), checked before anything is applied. */
    static Optional<String> invalidAcknowledgement(ShareAcknowledgementBatch ack) {
        if (ack.lastOffset() < ack.firstOffset()) {
            return Optional.of("acknowledgement batch " + ack + " ends before it starts");
        }
        List<Byte> types = ack.acknowledgeTypes();
        if (types == null || types.isEmpty()
                || (types.size() != 1 && types.size() != ack.lastOffset() - ack.firstOffset() + 1)) {
            return Optional.of("acknowledgement batch " + ack + " needs one type or one per offset");
        }
        for (byte type : types) {
            if (type != 0 && type != AcknowledgeType.ACCEPT.id && type != AcknowledgeType.RELEASE.id
                    && type != AcknowledgeType.REJECT.id && type != AcknowledgeType.RENEW.id) {
                return Optional.of("acknowledge type " + type + " is not supported");
            }
        }
        return Optional.empty();
    }

    /** ACCEPT → ACKNOWLEDGED, RELEASE → AVAILABLE (ARCHIVED at the delivery limit), REJECT and GAP (0) → ARCHIVED. */
    private static RecordState targetState(byte type) {
        if (type == AcknowledgeType.ACCEPT.id) {
            return RecordState.ACKNOWLEDGED;
        }
        return type == AcknowledgeType.RELEASE.id ? RecordState.AVAILABLE : RecordState.ARCHIVED;
    }

    /**
     * Starts the transitions of one acknowledgement batch into {@code pending} and plans its renewals into
     * {@code renewals}; offsets below the SPSO are skipped. The error when a record of it is not ACQUIRED by
     * {@code memberId}, or is renewed while the group's {@code share.renew.acknowledge.enable} is false (the caller
     * rolls back all of the request).
     */
    Optional<ApiException> acknowledge(String memberId, ShareAcknowledgementBatch ack, int deliveryLimit,
                                       boolean renewEnabled, List<Pending> pending, List<Renewal> renewals) {
        long startOffset = cache.startOffset();
        long endOffset = cache.endOffset();
        if (ack.lastOffset() < startOffset) {
            return Optional.empty();
        }
        long lo = Math.max(ack.firstOffset(), startOffset);
        if (ack.lastOffset() >= endOffset) {
            return Optional.of(new InvalidRecordStateException("offsets " + lo + "-" + ack.lastOffset()
                    + " were not all acquired (end offset " + endOffset + ")"));
        }
        List<Byte> types = ack.acknowledgeTypes();
        long covered = lo;
        for (InFlightBatch batch : cache.covering(lo, ack.lastOffset())) {
            long first = Math.max(lo, batch.firstOffset());
            long last = Math.min(ack.lastOffset(), batch.lastOffset());
            if (first > covered) {
                break;
            }
            if (batch.offsetState() == null) {
                if (batch.batchState() != RecordState.ACQUIRED || !memberId.equals(batch.batchMemberId())
                        || batch.batchHasOngoingStateTransition()) {
                    return Optional.of(notAcquired(memberId, batch.firstOffset(), batch.lastOffset()));
                }
                if (first == batch.firstOffset() && last == batch.lastOffset()
                        && sameType(types, ack.firstOffset(), first, last)) {
                    byte type = typeAt(types, ack.firstOffset(), first);
                    if (type == AcknowledgeType.RENEW.id) {
                        if (!renewEnabled) {
                            return Optional.of(renewDisabled());
                        }
                        renewals.add(new Renewal(batch, null, first, last));
                        covered = last + 1;
                        continue;
                    }
                    InFlightState state = batch.startBatchStateTransition(targetState(type), DeliveryCountOps.NO_OP,
                            deliveryLimit, EMPTY_MEMBER_ID, false);
                    if (state == null) {
                        return Optional.of(notAcquired(memberId, first, last));
                    }
                    pending.add(new Pending(state, new PersisterStateBatch(first, last, state.state().id(),
                            (short) state.deliveryCount())));
                    covered = last + 1;
                    continue;
                }
                batch.maybeInitializeOffsetStateUpdate();
            }
            for (long offset = first; offset <= last; offset++) {
                InFlightState state = batch.offsetState().get(offset);
                if (state.state() != RecordState.ACQUIRED || !memberId.equals(state.memberId())
                        || state.hasOngoingStateTransition()) {
                    return Optional.of(notAcquired(memberId, offset, offset));
                }
                byte type = typeAt(types, ack.firstOffset(), offset);
                if (type == AcknowledgeType.RENEW.id) {
                    if (!renewEnabled) {
                        return Optional.of(renewDisabled());
                    }
                    renewals.add(new Renewal(batch, state, offset, offset));
                    continue;
                }
                InFlightState updated = state.startStateTransition(targetState(type), DeliveryCountOps.NO_OP,
                        deliveryLimit, EMPTY_MEMBER_ID, false);
                if (updated == null) {
                    return Optional.of(notAcquired(memberId, offset, offset));
                }
                addPending(pending, updated, offset);
            }
            covered = last + 1;
        }
        if (covered <= ack.lastOffset()) {
            return Optional.of(new InvalidRecordStateException("offsets " + covered + "-" + ack.lastOffset()
                    + " are not in flight"));
        }
        return Optional.empty();
    }

    /** Adds a one-offset change ({@link ShareStateWriter} joins neighbours before the write). */
    private static void addPending(List<Pending> pending, InFlightState state, long offset) {
        PersisterStateBatch batch = new PersisterStateBatch(offset, offset, state.state().id(),
                (short) state.deliveryCount());
        pending.add(new Pending(state, batch));
    }

    private static byte typeAt(List<Byte> types, long ackFirst, long offset) {
        return types.size() == 1 ? types.get(0) : types.get((int) (offset - ackFirst));
    }

    private static boolean sameType(List<Byte> types, long ackFirst, long first, long last) {
        if (types.size() == 1) {
            return true;
        }
        byte type = typeAt(types, ackFirst, first);
        for (long offset = first + 1; offset <= last; offset++) {
            if (typeAt(types, ackFirst, offset) != type) {
                return false;
            }
        }
        return true;
    }

    /** As Kafka: a renewal the group's configs do not allow is an invalid record state. */
    private static InvalidRecordStateException renewDisabled() {
        return new InvalidRecordStateException("Renewing acquisition locks is not enabled for the group.");
    }

    private InvalidRecordStateException notAcquired(String memberId, long first, long last) {
        return new InvalidRecordStateException("offsets " + first + "-" + last + " of " + partition
                + " are not acquired by member " + memberId);
    }

    /**
     * Starts into {@code pending} the return of every record at or above the SPSO that {@code memberId} holds:
     * AVAILABLE again, ARCHIVED at the delivery limit.
     */
    void release(String memberId, int deliveryLimit, List<Pending> pending) {
        long startOffset = cache.startOffset();
        for (InFlightBatch batch : cache.all()) {
            if (batch.offsetState() == null) {
                if (batch.batchState() == RecordState.ACQUIRED && memberId.equals(batch.batchMemberId())
                        && !batch.batchHasOngoingStateTransition()) {
                    if (batch.firstOffset() >= startOffset) {
                        InFlightState state = batch.startBatchStateTransition(RecordState.AVAILABLE,
                                DeliveryCountOps.NO_OP, deliveryLimit, EMPTY_MEMBER_ID, false);
                        if (state != null) {
                            pending.add(new Pending(state, new PersisterStateBatch(batch.firstOffset(),
                                    batch.lastOffset(), state.state().id(), (short) state.deliveryCount())));
                        }
                        continue;
                    }
                    batch.maybeInitializeOffsetStateUpdate();
                } else {
                    continue;
                }
            }
            for (Map.Entry<Long, InFlightState> e : batch.offsetState().tailMap(startOffset).entrySet()) {
                InFlightState state = e.getValue();
                if (state.state() == RecordState.ACQUIRED && memberId.equals(state.memberId())
                        && !state.hasOngoingStateTransition()) {
                    InFlightState updated = state.startStateTransition(RecordState.AVAILABLE,
                            DeliveryCountOps.NO_OP, deliveryLimit, EMPTY_MEMBER_ID, false);
                    if (updated != null) {
                        addPending(pending, updated, e.getKey());
                    }
                }
            }
        }
    }

    /**
     * The lock {@code task} on {@code [first, last]} expired: the records still ACQUIRED under it become AVAILABLE,
     * or ARCHIVED at the delivery limit or below the SPSO; those with a transition in flight are left to it (its
     * rollback sees the expiry). Applied at once; returns the ranges changed, to persist.
     */
    List<PersisterStateBatch> expire(long first, long last, TimerTask task, int deliveryLimit) {
        List<PersisterStateBatch> writes = new ArrayList<>();
        long startOffset = cache.startOffset();
        for (InFlightBatch batch : cache.covering(first, last)) {
            if (batch.offsetState() == null) {
                if (batch.batchAcquisitionLockTimeoutTask() == task && batch.batchState() == RecordState.ACQUIRED
                        && !batch.batchHasOngoingStateTransition()) {
                    RecordState target = batch.lastOffset() < startOffset ? RecordState.ARCHIVED
                            : RecordState.AVAILABLE;
                    InFlightState state = batch.tryUpdateBatchState(target, DeliveryCountOps.NO_OP,
                            deliveryLimit, EMPTY_MEMBER_ID, false);
                    if (state != null) {
                        state.cancelAndClearAcquisitionLockTimeoutTask();
                        writes.add(new PersisterStateBatch(batch.firstOffset(), batch.lastOffset(),
                                state.state().id(), (short) state.deliveryCount()));
                    }
                }
                continue;
            }
            for (Map.Entry<Long, InFlightState> e : batch.offsetState().subMap(first, true, last, true).entrySet()) {
                InFlightState state = e.getValue();
                if (state.acquisitionLockTimeoutTask() == task && state.state() == RecordState.ACQUIRED
                        && !state.hasOngoingStateTransition()) {
                    RecordState target = e.getKey() < startOffset ? RecordState.ARCHIVED : RecordState.AVAILABLE;
                    InFlightState updated = state.tryUpdateState(target, DeliveryCountOps.NO_OP, deliveryLimit,
                            EMPTY_MEMBER_ID, false);
                    if (updated != null) {
                        updated.cancelAndClearAcquisitionLockTimeoutTask();
                        writes.add(new PersisterStateBatch(e.getKey(), e.getKey(), updated.state().id(),
                                (short) updated.deliveryCount()));
                    }
                }
            }
        }
        return writes;
    }

    /**
     * Records of {@code [first, last]} that {@code memberId} acquired but never received (the fetch's answer was
     * throttled away): AVAILABLE again with the delivery taken back (Kafka's {@code DeliveryCountOps.DECREASE}),
     * their locks cancelled. Applied at once and not persisted, as acquisitions are not; whether any returned.
     */
    boolean undeliver(String memberId, long first, long last, int deliveryLimit) {
        boolean any = false;
        for (InFlightBatch batch : cache.covering(first, last)) {
            if (batch.offsetState() == null) {
                if (batch.batchState() != RecordState.ACQUIRED || !memberId.equals(batch.batchMemberId())
                        || batch.batchHasOngoingStateTransition()) {
                    continue;
                }
                if (batch.firstOffset() >= first && batch.lastOffset() <= last) {
                    InFlightState state = batch.tryUpdateBatchState(RecordState.AVAILABLE, DeliveryCountOps.DECREASE,
                            deliveryLimit, EMPTY_MEMBER_ID, false);
                    if (state != null) {
                        state.cancelAndClearAcquisitionLockTimeoutTask();
                        any = true;
                    }
                    continue;
                }
                batch.maybeInitializeOffsetStateUpdate();
            }
            for (InFlightState state : batch.offsetState().subMap(first, true, last, true).values()) {
                if (state.state() == RecordState.ACQUIRED && memberId.equals(state.memberId())
                        && !state.hasOngoingStateTransition()) {
                    InFlightState updated = state.tryUpdateState(RecordState.AVAILABLE, DeliveryCountOps.DECREASE,
                            deliveryLimit, EMPTY_MEMBER_ID, false);
                    if (updated != null) {
                        updated.cancelAndClearAcquisitionLockTimeoutTask();
                        any = true;
                    }
                }
            }
        }
        return any;
    }

    /** Rolls back started transitions: a request refused part way (nothing of it is applied). */
    static void rollback(List<Pending> pending) {
        for (Pending p : pending) {
            p.state().completeStateTransition(false);
        }
    }
}
