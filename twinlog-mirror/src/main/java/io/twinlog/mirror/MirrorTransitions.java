package io.twinlog.mirror;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;

import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.PAUSED;
import static io.twinlog.common.mirror.MirrorPartitionState.PAUSING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static io.twinlog.common.mirror.MirrorPartitionState.ULE_RECOVERY;
import static io.twinlog.common.mirror.MirrorPartitionState.UNKNOWN;

/**
 * The mirror partition state machine's rules, as pure functions.
 *
 * <p>Transition table (target ← allowed sources; staying in the same state is always allowed):
 * <pre>
 * LOG_TRUNCATION ← UNKNOWN, STOPPED, FAILED           (start, failback, restart after a failure)
 * EPOCH_FENCING  ← LOG_TRUNCATION, ULE_RECOVERY, MIRRORING, PAUSED, FAILED  (before mirroring; when a batch's
 *                                                     epoch reaches ours; a resume or retry not fenced yet)
 * ULE_RECOVERY   ← MIRRORING, FAILED                  (the source diverged: truncate to the diverging point)
 * MIRRORING      ← LOG_TRUNCATION, EPOCH_FENCING, PAUSED, FAILED
 * PAUSING        ← MIRRORING, EPOCH_FENCING
 * PAUSED         ← PAUSING
 * STOPPING       ← LOG_TRUNCATION, ULE_RECOVERY, EPOCH_FENCING, MIRRORING, PAUSING, PAUSED, FAILED
 * STOPPED        ← STOPPING
 * FAILED         ← any
 * </pre>
 * Unlike the KIP-1279 prototype, STOPPING is allowed from FAILED <em>and</em> accepted by validation: failing over
 * while the source is down (partitions FAILED because it is unreachable) is the disaster case failover exists for.
 */
public final class MirrorTransitions {
    /** Each retry of a FAILED partition waits twice as long as the one before, up to the cap. */
    private static final int RETRY_BACKOFF_MULTIPLIER = 2;
    /** Retries are spread by ±20 % so partitions that failed together do not retry in lockstep. */
    private static final double RETRY_BACKOFF_JITTER = 0.2;
    private static final Map<MirrorPartitionState, Set<MirrorPartitionState>> ALLOWED_FROM = Map.ofEntries(
            Map.entry(LOG_TRUNCATION, EnumSet.of(UNKNOWN, STOPPED, FAILED)),
            Map.entry(EPOCH_FENCING, EnumSet.of(LOG_TRUNCATION, ULE_RECOVERY, MIRRORING, PAUSED, FAILED)),
            Map.entry(ULE_RECOVERY, EnumSet.of(MIRRORING, FAILED)),
            Map.entry(MIRRORING, EnumSet.of(LOG_TRUNCATION, EPOCH_FENCING, PAUSED, FAILED)),
            Map.entry(PAUSING, EnumSet.of(MIRRORING, EPOCH_FENCING)),
            Map.entry(PAUSED, EnumSet.of(PAUSING)),
            Map.entry(STOPPING, EnumSet.of(LOG_TRUNCATION, ULE_RECOVERY, EPOCH_FENCING, MIRRORING, PAUSING, PAUSED, FAILED)),
            Map.entry(STOPPED, EnumSet.of(STOPPING)),
            Map.entry(FAILED, EnumSet.allOf(MirrorPartitionState.class)),
            Map.entry(UNKNOWN, EnumSet.noneOf(MirrorPartitionState.class)));

    private MirrorTransitions() {
    }

    public static boolean isValid(MirrorPartitionState from, MirrorPartitionState to) {
        return from == to || ALLOWED_FROM.get(to).contains(from);
    }

    /**
     * What the partition leader does next given the operator's wish and the partition's actual state; empty when
     * nothing changes. FAILED is left alone (the retry schedule or the operator moves it), except that a stop is
     * honoured at once so failover works while the source is unreachable.
     */
    public static Optional<MirrorPartitionState> reconcile(DesiredMirrorState desired, MirrorPartitionState actual) {
        switch (desired) {
            case STOPPED -> {
                if (actual == STOPPED || actual == STOPPING || actual == UNKNOWN) {
                    return Optional.empty();
                }
                return Optional.of(STOPPING);
            }
            case PAUSED -> {
                if (actual == MIRRORING || actual == EPOCH_FENCING) {
                    return Optional.of(PAUSING);
                }
                return Optional.empty();
            }
            case MIRRORING -> {
                if (actual == PAUSED) {
                    return Optional.of(MIRRORING); // resume continues from the local log end, no truncation
                }
                if (actual == UNKNOWN || actual == STOPPED) {
                    return Optional.of(LOG_TRUNCATION);
                }
                return Optional.empty();
            }
            default -> throw new IllegalArgumentException("Unknown desired state " + desired);
        }
    }

    /**
     * Backoff before retry {@code attempt} (1-based) of a FAILED partition: exponential from {@code initialMs},
     * capped at {@code maxMs}, with ±20 % jitter from the given random value in [0, 1).
     *
     * <p>The curve is Kafka's {@link ExponentialBackoff}, built without jitter: its own jitter draws from
     * {@code ThreadLocalRandom}, which would make the seeded simulation (MirrorSimulationTest) impossible to replay.
     * The jitter is applied here from {@code random}, which the caller takes from its seeded source.
     */
    public static long retryBackoffMs(int attempt, long initialMs, long maxMs, double random) {
        long curve = new ExponentialBackoff(initialMs, RETRY_BACKOFF_MULTIPLIER, maxMs, 0.0)
                .backoff(Math.max(0, attempt - 1));
        double jitter = 1.0 + (random * 2 * RETRY_BACKOFF_JITTER - RETRY_BACKOFF_JITTER);
        return Math.max(1L, Math.round(curve * jitter));
    }
}
