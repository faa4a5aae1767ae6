package io.twinlog.mirror.store;

import io.twinlog.common.mirror.MirrorPartitionState;

import java.util.LinkedHashMap;
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
 * @param retryAttempt       FAILED: retries so far; -1 means not retriable
 * @param previousState      FAILED: the state to retry
 * @param progress           the source high watermark and destination log end the leader last recorded
 */
public record MirrorPartitionRecord(MirrorPartitionState state, int writerLeaderEpoch, int minLeaderEpoch,
                                    int lastMirroredEpoch, long lastMirroredOffset, int retryAttempt,
                                    Optional<String> lastError, MirrorPartitionState previousState,
                                    MirrorProgress progress) {

    public static MirrorPartitionRecord initial(int writerLeaderEpoch) {
        return new MirrorPartitionRecord(MirrorPartitionState.UNKNOWN, writerLeaderEpoch, -1, -1, -1L, 0,
                Optional.empty(), MirrorPartitionState.UNKNOWN, MirrorProgress.UNKNOWN);
    }

    public MirrorPartitionRecord transitionTo(MirrorPartitionState next, int leaderEpoch) {
        return new MirrorPartitionRecord(next, leaderEpoch, minLeaderEpoch, lastMirroredEpoch, lastMirroredOffset,
                next == MirrorPartitionState.FAILED ? retryAttempt : 0,
                next == MirrorPartitionState.FAILED ? lastError : Optional.empty(),
                next == MirrorPartitionState.FAILED ? previousState : state, progress);
    }

    public MirrorPartitionRecord failed(String reason, boolean retriable, int leaderEpoch) {
        return new MirrorPartitionRecord(MirrorPartitionState.FAILED, leaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retriable ? Math.max(0, retryAttempt) + 1 : -1, Optional.of(reason),
                state == MirrorPartitionState.FAILED ? previousState : state, progress);
    }

    public MirrorPartitionRecord withMinLeaderEpoch(int epoch) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, epoch, lastMirroredEpoch, lastMirroredOffset,
                retryAttempt, lastError, previousState, progress);
    }

    public MirrorPartitionRecord withLastMirrored(int epoch, long offset) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, epoch, offset, retryAttempt,
                lastError, previousState, progress);
    }

    public MirrorPartitionRecord withProgress(MirrorProgress next) {
        return new MirrorPartitionRecord(state, writerLeaderEpoch, minLeaderEpoch, lastMirroredEpoch,
                lastMirroredOffset, retryAttempt, lastError, previousState, next);
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("state", state.name());
        m.put("writerLeaderEpoch", writerLeaderEpoch);
        m.put("minLeaderEpoch", minLeaderEpoch);
        m.put("lastMirroredEpoch", lastMirroredEpoch);
        m.put("lastMirroredOffset", lastMirroredOffset);
        m.put("retryAttempt", retryAttempt);
        lastError.ifPresent(e -> m.put("lastError", e));
        m.put("previousState", previousState.name());
        m.put("sourceHighWatermark", progress.sourceHighWatermark());
        m.put("destinationLogEndOffset", progress.destinationLogEndOffset());
        return m;
    }

    public static MirrorPartitionRecord fromJson(Map<String, Object> json) {
        return new MirrorPartitionRecord(MirrorPartitionState.valueOf((String) json.get("state")),
                num(json, "writerLeaderEpoch").intValue(), num(json, "minLeaderEpoch").intValue(),
                num(json, "lastMirroredEpoch").intValue(), num(json, "lastMirroredOffset").longValue(),
                num(json, "retryAttempt").intValue(), Optional.ofNullable((String) json.get("lastError")),
                MirrorPartitionState.valueOf((String) json.getOrDefault("previousState", "UNKNOWN")),
                new MirrorProgress(num(json, "sourceHighWatermark").longValue(),
                        num(json, "destinationLogEndOffset").longValue()));
    }

    private static Number num(Map<String, Object> json, String key) {
        Object v = json.get(key);
        return v == null ? -1 : (Number) v;
    }
}
