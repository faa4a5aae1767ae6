package io.twinlog.mirror.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.controller.zk.Json;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The durable state of one mirror partition, written by its destination leader before a state takes effect
 * ({@code /mirror_states/<topic>/<partition>}), so a new leader after a broker kill resumes where the old one was.
 *
 * @param writerLeaderEpoch  leader epoch of the broker that wrote it: a write from an older epoch is refused
 * @param minLeaderEpoch     EPOCH_FENCING: the controller raises the partition's leader epoch to at least this
 * @param lastMirroredEpoch  LME: epoch of the last mirrored batch, recorded at failover (-1 if none)
 * @param lastMirroredOffset LMO: the log end offset at failover (-1 if none)
 * @param retryAttempt       FAILED: retries so far; -1 means not retriable. LOG_TRUNCATION: how many times the
 *                           source could not be asked (with {@code lastError}, the last reason)
 * @param previousState      FAILED: the state to retry
 * @param progress           the source high watermark and destination log end the leader last recorded
 * @param truncation         the latest partition-wide truncation point ({@link MirrorTruncation#NONE} if none yet)
 * @param reconcileRequests  how many times an operator asked this partition's leader to compare its log with the
 *                           source's again (a start of the topic while it mirrors; issue 12 point 4c)
 * @param pointInTime        the failover to a point in time this partition carries out or carried out last
 *                           ({@link PointInTimeOutcome#NONE}: a plain failover, or none)
 */
public record MirrorPartitionRecord(MirrorPartitionState state, int writerLeaderEpoch, int minLeaderEpoch,
                                    int lastMirroredEpoch, long lastMirroredOffset, int retryAttempt,
                                    Optional<String> lastError, MirrorPartitionState previousState,
                                    MirrorProgress progress, MirrorTruncation truncation, int reconcileRequests,
                                    PointInTimeOutcome pointInTime) {

    /** A record of no failover to a point in time. */
    public MirrorPartitionRecord(MirrorPartitionState state, int writerLeaderEpoch, int minLeaderEpoch,
                                 int lastMirroredEpoch, long lastMirroredOffset, int retryAttempt,
                                 Optional<String> lastError, MirrorPartitionState previousState,
                                 MirrorProgress progress, MirrorTruncation truncation, int reconcileRequests) {
        this(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch, lastMirroredOffset, retryAttempt, lastError,
                previousState, progress, truncation, reconcileRequests, PointInTimeOutcome.NONE);
    }

    public static MirrorPartitionRecord initial(int writerLeaderEpoch) {
        return new MirrorPartitionRecord(MirrorPartitionState.UNKNOWN, writerLeaderEpoch, -1, -1, -1L, 0,
                Optional.empty(), MirrorPartitionState.UNKNOWN, MirrorProgress.UNKNOWN, MirrorTruncation.NONE, 0);
    }

    public MirrorPartitionRecord transitionTo(MirrorPartitionState next, int leaderEpoch) {
        return new MirrorPartitionRecord(next, leaderEpoch, minLeaderEpoch, lastMirroredEpoch, lastMirroredOffset,
                next == MirrorPartitionState.FAILED ? retryAttempt : 0,
                next == MirrorPartitionState.FAILED ? lastError : Optional.empty(),
                next == MirrorPartitionState.FAILED ? previousState : state, progress, truncation, reconcileRequests,
                pointInTime);
    }

    public MirrorPartitionRecord failed(String reason, boolean retriable, int leaderEpoch) {
        return new MirrorPartitionRecord(MirrorPartitionState.FAILED, leaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retriable ? Math.max(0, retryAttempt) + 1 : -1, Optional.of(reason),
                state == MirrorPartitionState.FAILED ? previousState : state, progress, truncation, reconcileRequests,
                pointInTime);
    }

    /**
     * The same state with {@code reason} as its error and one more attempt: a step that waits on something that
     * may pass (LOG_TRUNCATION when the source cannot be asked) and retries without leaving its state.
     */
    public MirrorPartitionRecord withError(String reason) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, Math.max(0, retryAttempt) + 1, Optional.of(reason), previousState, progress,
                truncation, reconcileRequests, pointInTime);
    }

    /** The same state without an error (a step that had to wait succeeded). */
    public MirrorPartitionRecord withoutError() {
        if (lastError.isEmpty() && retryAttempt == 0) {
            return this;
        }
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, 0, Optional.empty(), previousState, progress, truncation, reconcileRequests,
                pointInTime);
    }

    /**
     * An operator's start of a partition FAILED for good: retriable again from attempt 0 (its leader retries the
     * step that failed after the first backoff), everything else kept.
     */
    public MirrorPartitionRecord restartedByOperator() {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, 0, lastError, previousState, progress, truncation, reconcileRequests, pointInTime);
    }

    /** The operator asks the leader to compare this partition's log with the source's again (and repair it). */
    public MirrorPartitionRecord withReconcileRequested() {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retryAttempt, lastError, previousState, progress, truncation,
                reconcileRequests + 1, pointInTime);
    }

    /** A FAILED record that its retry (or the operator's start) takes to {@code previous} rather than its state. */
    public MirrorPartitionRecord withPreviousState(MirrorPartitionState previous) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retryAttempt, lastError, previous, progress, truncation, reconcileRequests,
                pointInTime);
    }

    public MirrorPartitionRecord withMinLeaderEpoch(int epoch) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, epoch, lastMirroredEpoch, lastMirroredOffset,
                retryAttempt, lastError, previousState, progress, truncation, reconcileRequests, pointInTime);
    }

    public MirrorPartitionRecord withLastMirrored(int epoch, long offset) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, epoch, offset, retryAttempt,
                lastError, previousState, progress, truncation, reconcileRequests, pointInTime);
    }

    public MirrorPartitionRecord withProgress(MirrorProgress next) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retryAttempt, lastError, previousState, next, truncation, reconcileRequests,
                pointInTime);
    }

    public MirrorPartitionRecord withPointInTime(PointInTimeOutcome next) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retryAttempt, lastError, previousState, progress, truncation, reconcileRequests,
                next);
    }

    public MirrorPartitionRecord withTruncation(MirrorTruncation next) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retryAttempt, lastError, previousState, progress, next, reconcileRequests,
                pointInTime);
    }

    /**
     * The record as stored at {@code /mirror_states/<topic>/<partition>}: {@code {"version":1,"state":"MIRRORING",
     * "writerLeaderEpoch":3,"minLeaderEpoch":-1,"lastMirroredEpoch":-1,"lastMirroredOffset":-1,"retryAttempt":0,
     * "lastError":"...","previousState":"UNKNOWN","sourceHighWatermark":-1,"destinationLogEndOffset":-1,
     * "truncations":[{"id":7,"offset":120}],"truncationComplete":true,"newestMirroredTimestamp":1796637600000,
     * "mirroredUpToMs":1796637600000}}, where {@code lastError} is absent without an error, the truncation fields
     * without a truncation, and the times ({@link MirrorProgress}) when unknown; a missing number
     * reads as -1, a missing previous state as UNKNOWN.
     */
    @JsonPropertyOrder({"version", "state", "writerLeaderEpoch", "minLeaderEpoch", "lastMirroredEpoch",
        "lastMirroredOffset", "retryAttempt", "lastError", "previousState", "sourceHighWatermark",
        "destinationLogEndOffset", "truncations", "truncationComplete", "proposedTruncationOffset",
        "truncatedOffsets", "consistentFromOffset", "reconcileRequests", "newestMirroredTimestamp", "mirroredUpToMs",
        "pointInTime"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Document(@JsonProperty("version") int version,
                           @JsonProperty("state") MirrorPartitionState state,
                           @JsonProperty("writerLeaderEpoch") Integer writerLeaderEpoch,
                           @JsonProperty("minLeaderEpoch") Integer minLeaderEpoch,
                           @JsonProperty("lastMirroredEpoch") Integer lastMirroredEpoch,
                           @JsonProperty("lastMirroredOffset") Long lastMirroredOffset,
                           @JsonProperty("retryAttempt") Integer retryAttempt,
                           @JsonProperty("lastError") String lastError,
                           @JsonProperty("previousState") MirrorPartitionState previousState,
                           @JsonProperty("sourceHighWatermark") Long sourceHighWatermark,
                           @JsonProperty("destinationLogEndOffset") Long destinationLogEndOffset,
                           @JsonProperty("truncations") List<TruncationPoints.Point> truncations,
                           @JsonProperty("truncationComplete") Boolean truncationComplete,
                           @JsonProperty("proposedTruncationOffset") Long proposedTruncationOffset,
                           @JsonProperty("truncatedOffsets") Long truncatedOffsets,
                           @JsonProperty("consistentFromOffset") Long consistentFromOffset,
                           @JsonProperty("reconcileRequests") Integer reconcileRequests,
                           @JsonProperty("newestMirroredTimestamp") Long newestMirroredTimestamp,
                           @JsonProperty("mirroredUpToMs") Long mirroredUpToMs,
                           @JsonProperty("pointInTime") PointInTimeOutcome pointInTime) {

        MirrorPartitionRecord toRecord(String what) {
            if (state == null) {
                throw new IllegalStateException("Corrupt mirror partition state record (" + what + "): no state");
            }
            return new MirrorPartitionRecord(state, orUnknown(writerLeaderEpoch), orUnknown(minLeaderEpoch),
                    orUnknown(lastMirroredEpoch), orUnknown(lastMirroredOffset), orUnknown(retryAttempt),
                    Optional.ofNullable(lastError),
                    previousState == null ? MirrorPartitionState.UNKNOWN : previousState,
                    new MirrorProgress(orUnknown(sourceHighWatermark), orUnknown(destinationLogEndOffset),
                            orUnknown(newestMirroredTimestamp), orUnknown(mirroredUpToMs)),
                    new MirrorTruncation(truncations == null ? List.of() : truncations,
                            truncations == null || truncations.isEmpty() || !Boolean.FALSE.equals(truncationComplete),
                            orUnknown(proposedTruncationOffset), truncatedOffsets == null ? 0L : truncatedOffsets,
                            orUnknown(consistentFromOffset)), reconcileRequests == null ? 0 : reconcileRequests,
                    pointInTime == null ? PointInTimeOutcome.NONE : pointInTime);
        }

        private static int orUnknown(Integer value) {
            return value == null ? -1 : value;
        }

        private static long orUnknown(Long value) {
            return value == null ? -1L : value;
        }
    }

    public Document toJson() {
        return new Document(1, state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch, lastMirroredOffset,
                retryAttempt, lastError.orElse(null), previousState, progress.sourceHighWatermark(),
                progress.destinationLogEndOffset(), truncation.isNone() ? null : truncation.points(),
                truncation.isNone() ? null : truncation.complete(),
                truncation.proposed() < 0 ? null : truncation.proposed(),
                truncation.removed() == 0 ? null : truncation.removed(),
                truncation.consistentFrom() < 0 ? null : truncation.consistentFrom(),
                reconcileRequests == 0 ? null : reconcileRequests, MirrorProgress.orNull(
                progress.newestMirroredTimestamp()), MirrorProgress.orNull(progress.mirroredUpToMs()),
                pointInTime.isNone() ? null : pointInTime);
    }

    /** @param path where the record was read, for the error if it is corrupt */
    public static MirrorPartitionRecord fromJson(byte[] data, String path) {
        return Json.decode(data, path, Document.class).toRecord(path);
    }

    /** The record from the raw document the metadata image carries ({@code MirrorImage.MirrorPartition#json}). */
    public static MirrorPartitionRecord fromJson(Map<String, Object> json) {
        return Json.convert(json, "a mirror partition", Document.class).toRecord("from the metadata image");
    }
}
