package io.twinlog.mirror.runtime;

import io.twinlog.mirror.runtime.MirrorCalls.Outcome;
import io.twinlog.mirror.runtime.PartitionCalls.Basis;
import io.twinlog.mirror.runtime.PartitionCalls.Found;
import io.twinlog.mirror.runtime.PartitionCalls.Key;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One partition's calls off the manager thread: a pass finds a call not started, pending or finished, and never an
 * outcome asked under another leadership or record (issue 25, point 3).
 */
@Timeout(10)
class PartitionCallsTest {
    private static final Basis EPOCH_5_V3 = new Basis(5, 3);
    private static final Key ASK = new Key.AskPeer();

    private final MirrorCalls owner = new MirrorCalls(1, "m", Runnable::run);
    private final PartitionCalls calls = new PartitionCalls();

    @AfterEach
    void tearDown() {
        owner.close();
    }

    @Test
    void aCallIsNotStartedThenPendingThenFinished() {
        assertInstanceOf(Found.NotStarted.class, calls.find(ASK, EPOCH_5_V3));
        long token = calls.started(ASK, EPOCH_5_V3, owner);
        assertInstanceOf(Found.Pending.class, calls.find(ASK, EPOCH_5_V3), "passes meanwhile wait");
        assertTrue(calls.complete(ASK, token, Outcome.of("answer")));
        assertEquals(Optional.of(Outcome.of("answer")), calls.finished(ASK, EPOCH_5_V3));
        assertEquals(Optional.of(Outcome.of("answer")), calls.finished(ASK, EPOCH_5_V3),
                "kept for the passes that follow on the same record (ask, then compare, then cut)");
    }

    @Test
    void aNewLeaderEpochOrRecordMakesTheAnswerStale() {
        long token = calls.started(ASK, EPOCH_5_V3, owner);
        calls.complete(ASK, token, Outcome.of("answer"));
        assertInstanceOf(Found.NotStarted.class, calls.find(ASK, new Basis(6, 3)), "leadership changed");
        assertInstanceOf(Found.NotStarted.class, calls.find(ASK, new Basis(5, 4)), "a new record was written");
    }

    @Test
    void theOutcomeOfACallAskedAgainSinceIsDropped() {
        long first = calls.started(ASK, EPOCH_5_V3, owner);
        long second = calls.started(ASK, new Basis(5, 4), owner);
        assertFalse(calls.complete(ASK, first, Outcome.of("old answer")), "asked on a record since replaced");
        assertInstanceOf(Found.Pending.class, calls.find(ASK, new Basis(5, 4)));
        assertTrue(calls.complete(ASK, second, Outcome.of("new answer")));
        assertFalse(calls.complete(ASK, second, Outcome.of("twice")), "one outcome per call");
        assertEquals(Optional.of(Outcome.of("new answer")), calls.finished(ASK, new Basis(5, 4)));
    }

    @Test
    void keysAreApartAndTheQuarantineCopyIsKeyedByTheTailItCopied() {
        Key copy = new Key.CopyToQuarantine(100, 120);
        long token = calls.started(copy, EPOCH_5_V3, owner);
        calls.complete(copy, token, Outcome.of("copied 20"));
        assertTrue(calls.finished(copy, EPOCH_5_V3).isPresent());
        assertInstanceOf(Found.NotStarted.class, calls.find(new Key.CopyToQuarantine(100, 121), EPOCH_5_V3),
                "a log end that moved since the copy needs a new copy before anything is cut");
        assertInstanceOf(Found.NotStarted.class, calls.find(ASK, EPOCH_5_V3));
        assertInstanceOf(Found.NotStarted.class, calls.find(new Key.ComparePeer(100), EPOCH_5_V3));
    }

    @Test
    void aCallLostWithItsMirrorsThreadIsStartedAgain() {
        calls.started(ASK, EPOCH_5_V3, owner);
        owner.close(); // the mirror's client configs changed: its thread and its pending calls went
        assertInstanceOf(Found.NotStarted.class, calls.find(ASK, EPOCH_5_V3));
    }

    @Test
    void aDiscardedCallIsStartedAgain() {
        long token = calls.started(ASK, EPOCH_5_V3, owner);
        calls.complete(ASK, token, Outcome.failed(new IllegalStateException("boom")));
        assertTrue(calls.finished(ASK, EPOCH_5_V3).get().isFailure());
        calls.discard(ASK);
        assertInstanceOf(Found.NotStarted.class, calls.find(ASK, EPOCH_5_V3));
    }
}
