package io.twinlog.controller.store;

import io.twinlog.controller.metadata.TopicAssignment;

import java.util.List;
import java.util.Optional;

/**
 * The controller's durable writes: claiming the controllership, partition states, topic assignments. Every write
 * is fenced twice: by the controller epoch this controller claimed (a deposed controller's write fails with
 * {@link ControllerMovedException}) and by the version of each record as the controller read it (a write based on
 * a stale read fails with {@link StaleStateException}, and the controller decides again from fresh metadata).
 * An assignment write is one transaction, all or nothing. A partition-state write may be split into several
 * transactions, each all or nothing: its {@link StateWriteResult} says which committed.
 *
 * <p>Implementations: {@code ControllerZkClient} (ZooKeeper transactions) and an in-memory one for the
 * controller's unit tests. Called only from the controller's event thread; calls may block.
 */
public interface ControllerStore {

    /**
     * Tries to become controller and, if this broker won, claims the next controller epoch.
     *
     * @return the claimed epoch, or empty if another broker is controller
     */
    Optional<ControllerEpoch> tryClaim(int brokerId) throws Exception;

    /**
     * Writes partition states; a write with expected version -1 creates the state (new partition). Never throws:
     * every failure is reported in the result, per transaction, next to what did commit.
     */
    StateWriteResult writeStates(ControllerEpoch epoch, List<StateWrite> writes);

    /** Rewrites a topic's assignment record together with some of its partition states, atomically. */
    void writeAssignment(ControllerEpoch epoch, String topic, TopicAssignment assignment, int expectedVersion,
                         List<StateWrite> states) throws Exception;

    /**
     * Whether this broker still holds the controllership in its current session (read from the store, not from an
     * image, which may lag). Asked when an image shows no controller while this one thinks it is active.
     */
    boolean holdsControllership(int brokerId) throws Exception;

    /** Gives up the controllership (clean shutdown), if this broker still holds it. */
    void resign(int brokerId) throws Exception;
}
