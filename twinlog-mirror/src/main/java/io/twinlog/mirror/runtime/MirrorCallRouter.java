package io.twinlog.mirror.runtime;

import io.twinlog.mirror.runtime.MirrorCalls.Outcome;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Which mirror's thread a partition's call runs on, and what a pass does with it: the mirror manager's rule for its
 * calls off its own thread (issue 25, point 3), taken out of {@link MirrorManager} so that the seeded simulation runs
 * the same code over simulated mirror threads (decision 65).
 *
 * <p>Each mirror has its own {@link MirrorCalls}, made by {@code factory} at the mirror's first call and closed once
 * the broker leads none of its partitions. {@link #outcomeOf} gives a pass the outcome of a partition's call on the
 * basis it is asked on (leader epoch and record version, {@link PartitionCalls}), or starts the call and ends the
 * pass ({@link AwaitingCall}); the outcome gives the partition another pass. Manager thread only.
 */
final class MirrorCallRouter {
    private static final Logger log = LoggerFactory.getLogger(MirrorCallRouter.class);

    private final Function<String, MirrorCalls> factory;
    /** Per mirror with a partition led here: the thread its calls run on. */
    private final Map<String, MirrorCalls> calls = new HashMap<>();

    /** @param factory a mirror's calls on its own thread, their outcomes handed to the manager thread */
    MirrorCallRouter(Function<String, MirrorCalls> factory) {
        this.factory = factory;
    }

    /** The partition waits on a call running on its mirror's thread: its pass stops here, the outcome brings another. */
    static final class AwaitingCall extends Exception {
        AwaitingCall(TopicPartition tp, String what) {
            super(tp + " waits for " + what, null, false, false);
        }
    }

    /**
     * The outcome of a call of {@code tp} on {@code basis}: its value once finished; else the call is started on
     * {@code mirror}'s thread (or joins the one of the same {@code sharedKey} in flight), and {@link AwaitingCall}
     * ends the pass. A call that threw is forgotten, so the next pass starts it again, and its error ends this pass.
     * {@code onAccepted} sees the outcome once, on the manager thread, when the partition takes it (while
     * {@code stillLed} holds: the same leadership of the partition), and {@code decideAgain} then gives it a pass.
     */
    @SuppressWarnings("unchecked")
    <T> T outcomeOf(TopicPartition tp, String mirror, PartitionCalls partitionCalls, PartitionCalls.Basis basis,
                    PartitionCalls.Key key, String sharedKey, String what, Callable<T> work,
                    Consumer<Outcome<T>> onAccepted, BooleanSupplier stillLed, Runnable decideAgain)
            throws ExecutionException, AwaitingCall {
        PartitionCalls.Found found = partitionCalls.find(key, basis);
        if (found instanceof PartitionCalls.Found.Finished finished) {
            Outcome<?> outcome = finished.outcome();
            if (outcome.isFailure()) {
                partitionCalls.discard(key);
                throw new ExecutionException(what + " failed", outcome.error());
            }
            return (T) outcome.value();
        }
        if (found instanceof PartitionCalls.Found.NotStarted) {
            MirrorCalls mirrorCalls = callsFor(mirror);
            long token = partitionCalls.started(key, basis, mirrorCalls);
            boolean started = mirrorCalls.call(sharedKey, what, work, outcome -> {
                if (stillLed.getAsBoolean() && partitionCalls.complete(key, token, outcome)) {
                    onAccepted.accept(outcome);
                    decideAgain.run(); // the partition decides again with the outcome in hand
                } else {
                    log.debug("[Mirror {} {}] dropped the outcome of {}: asked again since, or no longer led here",
                            mirror, tp, what);
                }
            });
            if (!started) {
                partitionCalls.discard(key); // the next pass asks again
            } else {
                log.debug("[Mirror {} {}] {} on the mirror's thread", mirror, tp, what);
            }
        }
        throw new AwaitingCall(tp, what);
    }

    /** {@code mirror}'s calls, made at its first call (or again after they were closed). */
    MirrorCalls callsFor(String mirror) {
        MirrorCalls existing = calls.get(mirror);
        if (existing != null && !existing.isClosed()) {
            return existing;
        }
        MirrorCalls created = factory.apply(mirror);
        calls.put(mirror, created);
        return created;
    }

    /** The threads of mirrors this broker leads no partition of any more (deleted, moved away) end. */
    void closeIdle(Set<String> led) {
        for (Iterator<Map.Entry<String, MirrorCalls>> it = calls.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, MirrorCalls> e = it.next();
            if (!led.contains(e.getKey())) {
                log.info("[Mirror {}] this broker leads none of its partitions now; its calls' thread ends",
                        e.getKey());
                e.getValue().close();
                it.remove();
            }
        }
    }

    /** {@code mirror}'s calls end (its source changed): pending ones are asked again from new ones. */
    void close(String mirror) {
        MirrorCalls old = calls.remove(mirror);
        if (old != null) {
            old.close();
        }
    }

    void closeAll() {
        calls.values().forEach(MirrorCalls::close);
        calls.clear();
    }
}
