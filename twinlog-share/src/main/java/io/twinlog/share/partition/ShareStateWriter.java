package io.twinlog.share.partition;

import io.twinlog.share.partition.AcknowledgementPlanner.Pending;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.share.persister.GroupTopicPartitionData;
import org.apache.kafka.server.share.persister.PartitionErrorData;
import org.apache.kafka.server.share.persister.PartitionFactory;
import org.apache.kafka.server.share.persister.PartitionStateBatchData;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.share.persister.PersisterStateBatch;
import org.apache.kafka.server.share.persister.TopicData;
import org.apache.kafka.server.share.persister.WriteShareGroupStateParameters;
import org.apache.kafka.server.share.persister.WriteShareGroupStateResult;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import static io.twinlog.share.partition.SharePartitionState.log;

/**
 * Persisting of one {@link SharePartitionState}: writes its changes with {@code Persister.writeState} (the changed
 * ranges, adjacent one-offset changes joined, with the SPSO, the state epoch and the leader epoch), commits pending
 * transitions when the write succeeds and rolls them back when it fails, and maps the persister's errors as Kafka
 * does ({@link FencedByPersister}, for a state or leader epoch the share coordinator has moved past, fences the
 * state).
 *
 * <p>Threading: takes the state's lock as the steps need it: the read lock to build a write (it carries the SPSO),
 * the write lock to commit or roll back when the write is answered (on the persister's thread); the listener and
 * {@link SharePartitionState#fence} are called outside it.
 */
final class ShareStateWriter {
    private final String groupId;
    private final TopicIdPartition partition;
    private final int leaderEpoch;
    private final Persister persister;
    private final ReentrantReadWriteLock lock;
    private final InFlightCache cache;
    private final SharePartitionState state;
    private final SharePartitionState.Listener listener;
    private final String logPrefix;

    ShareStateWriter(Persister persister, ReentrantReadWriteLock lock, InFlightCache cache, SharePartitionState state,
                     SharePartitionState.Listener listener, String logPrefix) {
        this.groupId = state.groupId();
        this.partition = state.partition();
        this.leaderEpoch = state.leaderEpoch();
        this.persister = persister;
        this.lock = lock;
        this.cache = cache;
        this.state = state;
        this.listener = listener;
        this.logPrefix = logPrefix;
    }

    /** Writes the pending transitions, then commits them (or rolls them back), moves the SPSO and wakes fetches. */
    CompletableFuture<Void> persist(List<Pending> pending, String what) {
        if (pending.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        writeState(coalesce(pending)).whenComplete((ignored, error) -> {
            lock.writeLock().lock();
            try {
                for (Pending p : pending) {
                    p.state().completeStateTransition(error == null);
                }
                cache.markMayHaveAvailable();
                if (state.isActiveUnderLock()) {
                    cache.advanceStartOffset();
                }
            } finally {
                lock.writeLock().unlock();
            }
            if (error != null) {
                done.completeExceptionally(onWriteFailed(error, what));
            } else {
                done.complete(null);
            }
            listener.onAcquirable(state);
        });
        return done;
    }

    /** Writes changes already made in memory (a lock expiry): best effort, a failure is logged (or fences). */
    void writeApplied(List<PersisterStateBatch> batches, String what) {
        writeState(batches).whenComplete((ignored, error) -> {
            if (error != null) {
                onWriteFailed(error, what);
            }
        });
    }

    /** A failed write: logged; a fenced state epoch or leader epoch fences the state. Returns the caller's error. */
    private ApiException onWriteFailed(Throwable error, String what) {
        ApiException failure = error instanceof ApiException api ? api : persisterException(unwrap(error));
        if (failure instanceof FencedByPersister) {
            log.info("{}the share coordinator fenced the {} ({}): dropping this state to load it again", logPrefix,
                    what, failure.getMessage());
            state.fence("the share coordinator answered " + failure.getMessage());
            return new NotLeaderOrFollowerException("The share partition state of " + partition + " was fenced: "
                    + failure.getMessage());
        }
        log.warn("{}could not persist the {}: {}", logPrefix, what, failure.toString(), failure);
        return failure;
    }

    private CompletableFuture<Void> writeState(List<PersisterStateBatch> batches) {
        WriteShareGroupStateParameters parameters;
        lock.readLock().lock();
        try {
            parameters = new WriteShareGroupStateParameters.Builder()
                    .setGroupTopicPartitionData(new GroupTopicPartitionData.Builder<PartitionStateBatchData>()
                            .setGroupId(groupId)
                            .setTopicsData(List.of(new TopicData<>(partition.topicId(), List.of(
                                    PartitionFactory.newPartitionStateBatchData(partition.partition(),
                                            cache.stateEpoch(), cache.startOffset(), cache.deliveryCompleteCount(),
                                            leaderEpoch, batches)))))
                            .build())
                    .build();
        } finally {
            lock.readLock().unlock();
        }
        CompletableFuture<WriteShareGroupStateResult> write;
        try {
            write = persister.writeState(parameters);
        } catch (RuntimeException e) {
            // broad: a failure of any kind is the write's answer, through the future
            write = CompletableFuture.failedFuture(e);
        }
        return write.thenApply(result -> {
            List<TopicData<PartitionErrorData>> topics = result == null ? null : result.topicsData();
            if (topics == null || topics.size() != 1 || topics.get(0).partitions().size() != 1) {
                throw new UnknownServerException("the persister answered for other partitions: " + topics);
            }
            PartitionErrorData data = topics.get(0).partitions().get(0);
            if (data.errorCode() != Errors.NONE.code()) {
                throw persisterException(Errors.forCode(data.errorCode()), data.errorMessage());
            }
            return null;
        });
    }

    /** Joins adjacent one-offset ranges with the same state and delivery count: fewer state batches to write. */
    private static List<PersisterStateBatch> coalesce(List<Pending> pending) {
        List<PersisterStateBatch> batches = new ArrayList<>();
        for (Pending p : pending) {
            PersisterStateBatch b = p.batch();
            if (!batches.isEmpty()) {
                PersisterStateBatch previous = batches.get(batches.size() - 1);
                if (previous.lastOffset() + 1 == b.firstOffset() && previous.deliveryState() == b.deliveryState()
                        && previous.deliveryCount() == b.deliveryCount()) {
                    batches.set(batches.size() - 1, new PersisterStateBatch(previous.firstOffset(), b.lastOffset(),
                            b.deliveryState(), b.deliveryCount()));
                    continue;
                }
            }
            batches.add(b);
        }
        return batches;
    }

    /** The persister told this leader its view is stale (the state epoch or leader epoch moved on). */
    private static final class FencedByPersister extends ApiException {
        FencedByPersister(String message) {
            super(message);
        }
    }

    /** Kafka's mapping of persister errors to what the share fetch path answers. */
    static ApiException persisterException(Errors error, String message) {
        String text = error.name() + (message == null || message.isEmpty() ? "" : ": " + message);
        switch (error) {
            case FENCED_STATE_EPOCH:
            case FENCED_LEADER_EPOCH:
                return new FencedByPersister(text);
            case NOT_COORDINATOR:
            case COORDINATOR_NOT_AVAILABLE:
            case COORDINATOR_LOAD_IN_PROGRESS:
                return new CoordinatorNotAvailableException(text);
            default:
                ApiException exception = error.exception(message);
                return exception == null ? new UnknownServerException(text) : exception;
        }
    }

    static ApiException persisterException(Throwable error) {
        if (error instanceof ApiException api) {
            return api;
        }
        return new UnknownServerException("The share state persister failed: " + error);
    }

    static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
