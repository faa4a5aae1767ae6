package io.twinlog.controller;

import io.twinlog.controller.decisions.AssignmentChange;
import io.twinlog.controller.decisions.StateChange;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.store.ControllerEpoch;
import io.twinlog.controller.store.ControllerMovedException;
import io.twinlog.controller.store.ControllerStore;
import io.twinlog.controller.store.StaleStateException;
import io.twinlog.controller.store.StateWrite;
import io.twinlog.controller.store.StateWriteResult;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The controller's writes of what it decided: partition states and assignments through the {@link ControllerStore},
 * fenced by the controller epoch and the versions read. A committed change is recorded (Kafka's election metrics,
 * {@link UnseenWrites}) and logged ({@link WrittenChanges}); a write not done tells the controller what follows:
 * resign (the controllership was lost) or decide again from fresh metadata, soon after a lost version race, later
 * after any other failure. Runs on the controller's event thread only. Split from {@link Controller}; logs under
 * its logger, as before.
 */
final class ControllerWrites {
    private static final Logger log = LoggerFactory.getLogger(Controller.class);
    static final long RETRY_DELAY_MS = 200;

    /** What the controller does when a write was not done. */
    interface Outcomes {
        /** The controllership was lost (fenced by a newer epoch): stop acting as controller. */
        void resign(String reason);

        /** Decide again from the metadata of {@code delayMs} from now. */
        void decideAgainAfter(long delayMs);
    }

    private final ControllerStore store;
    private final Supplier<ControllerEpoch> epoch;
    private final Supplier<MetadataImage> image;
    private final Supplier<ControllerMetrics> metrics;
    private final UnseenWrites unseenWrites;
    private final String logPrefix;
    private final Outcomes outcomes;

    /**
     * @param epoch   the epoch this controller holds (throws if none: a write after resigning is a bug)
     * @param image   the latest image, what a committed write's topic ID is read from
     * @param metrics null in tests without metrics
     */
    ControllerWrites(ControllerStore store, Supplier<ControllerEpoch> epoch, Supplier<MetadataImage> image,
                     Supplier<ControllerMetrics> metrics, UnseenWrites unseenWrites, String logPrefix,
                     Outcomes outcomes) {
        this.store = store;
        this.epoch = epoch;
        this.image = image;
        this.metrics = metrics;
        this.unseenWrites = unseenWrites;
        this.logPrefix = logPrefix;
        this.outcomes = outcomes;
    }

    /**
     * Writes fenced, then records and logs each change that committed; returns the partitions whose change did. A
     * write split into several transactions may commit in part: the committed changes are done (never reported as
     * failed), and for the rest this arranges what follows (resign, or decide again from fresh metadata).
     */
    Set<TopicPartition> writeStates(List<StateChange> changes) {
        if (changes.isEmpty()) {
            return Set.of();
        }
        long startNanos = System.nanoTime();
        StateWriteResult result = store.writeStates(epoch.get(),
                changes.stream().map(StateChange::write).toList());
        Set<TopicPartition> committed = result.committed().stream().map(StateWrite::partition)
                .collect(Collectors.toSet());
        List<StateChange> done = changes.stream().filter(c -> committed.contains(c.partition())).toList();
        if (!done.isEmpty()) {
            recordElections(done, System.nanoTime() - startNanos);
            unseenWrites.add(image.get(), done);
            done.forEach(c -> WrittenChanges.log(log, logPrefix, c));
        }
        result.worstFailure().ifPresent(failure -> onStatesNotWritten(result, failure));
        return committed;
    }

    /** A lost controllership resigns; a lost version race decides again soon; any other failure later. */
    private void onStatesNotWritten(StateWriteResult result, StateWriteResult.Batch failure) {
        switch (failure.outcome()) {
            case FENCED -> outcomes.resign(failure.reason());
            case STALE -> {
                log.info("{}Partition states: {}; deciding the rest again from fresh metadata", logPrefix,
                        result.summary());
                outcomes.decideAgainAfter(RETRY_DELAY_MS);
            }
            default -> {
                log.warn("{}Could not write partition states: {}; retrying in {} ms", logPrefix, result.summary(),
                        RETRY_DELAY_MS * 5, failure.cause().orElse(null));
                outcomes.decideAgainAfter(RETRY_DELAY_MS * 5);
            }
        }
    }

    /**
     * Kafka's election metrics for one written batch of states: one timed event for the batch when it moved at least
     * one leadership to a new leader (as Kafka times a controller event that elects), and one unclean election per
     * partition elected uncleanly. A partition left without a leader is not an election.
     */
    private void recordElections(List<StateChange> changes, long elapsedNanos) {
        ControllerMetrics m = metrics.get();
        if (m == null) {
            return;
        }
        WrittenChanges.Elections elections = WrittenChanges.elections(changes);
        for (int i = 0; i < elections.unclean(); i++) {
            m.uncleanElection();
        }
        if (elections.elected()) {
            m.electionEvent(elapsedNanos);
        }
    }

    boolean writeAssignment(AssignmentChange change) {
        boolean written = writeFenced("the assignment of " + change.topic(), () -> store.writeAssignment(
                epoch.get(), change.topic(), change.next(), change.expectedVersion(), change.states()));
        if (written) {
            change.events().forEach(event -> log.info("{}{}", logPrefix, event));
        }
        return written;
    }

    /** A store write that may throw. */
    private interface StoreWrite {
        void run() throws Exception;
    }

    /**
     * Runs a fenced write. A lost controllership resigns; a lost version race reconciles again from fresh
     * metadata; any other failure (ZooKeeper unreachable) is logged with its stack trace and retried later.
     */
    private boolean writeFenced(String what, StoreWrite write) {
        try {
            write.run();
            return true;
        } catch (ControllerMovedException e) {
            outcomes.resign(e.getMessage());
        } catch (StaleStateException e) {
            log.info("{}{}; deciding again from fresh metadata", logPrefix, e.getMessage());
            outcomes.decideAgainAfter(RETRY_DELAY_MS);
        } catch (Exception e) {
            // broad: any other failure (ZooKeeper unreachable, ...) is logged with its stack trace and decided again
            log.warn("{}Could not write {}; retrying in {} ms", logPrefix, what, RETRY_DELAY_MS * 5, e);
            outcomes.decideAgainAfter(RETRY_DELAY_MS * 5);
        }
        return false;
    }
}
