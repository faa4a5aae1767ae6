package io.twinlog.share.fetch;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.share.context.FinalContext;
import org.apache.kafka.server.share.context.ShareFetchContext;
import org.apache.kafka.server.share.context.ShareSessionContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Kafka's share session rules as {@link ShareSessions} applies them, and a closed connection ending its session. */
@Timeout(30)
class ShareSessionsTest {
    private static final String GROUP = "g";
    private static final TopicIdPartition P0 = new TopicIdPartition(Uuid.randomUuid(), 0, "t");
    private static final TopicIdPartition P1 = new TopicIdPartition(P0.topicId(), 1, "t");

    private final InMemorySharePartitions partitions = new InMemorySharePartitions();
    private final ShareSessions sessions = new ShareSessions(1, 2, partitions);

    @AfterEach
    void close() throws InterruptedException {
        sessions.close();
    }

    @Test
    void epochZeroOpensASessionAndEachRequestMustCarryItsNextEpoch() {
        ShareFetchContext opened = sessions.newContext(GROUP, "m1", 0, List.of(P0), List.of(), false, "c1");
        assertInstanceOf(ShareSessionContext.class, opened);
        assertFalse(((ShareSessionContext) opened).isSubsequent());
        ShareFetchContext next = sessions.newContext(GROUP, "m1", 1, List.of(P1), List.of(P0), true, "c1");
        assertTrue(((ShareSessionContext) next).isSubsequent());
        assertEquals(List.of(P1), sessions.partitionsOf(GROUP, "m1"), "P1 added, P0 forgotten");
        assertError(Errors.INVALID_SHARE_SESSION_EPOCH,
                () -> sessions.newContext(GROUP, "m1", 1, List.of(), List.of(), false, "c1"));
        sessions.acknowledgeSessionUpdate(GROUP, "m1", 2);
        assertError(Errors.INVALID_SHARE_SESSION_EPOCH, () -> sessions.acknowledgeSessionUpdate(GROUP, "m1", 2));
        sessions.newContext(GROUP, "m1", 3, List.of(), List.of(), false, "c1");
        assertInstanceOf(FinalContext.class, sessions.newContext(GROUP, "m1", -1, List.of(), List.of(), true, "c1"));
    }

    @Test
    void kafkasErrorsForSessionsThatDoNotExistOrCannotBeOpened() {
        assertError(Errors.SHARE_SESSION_NOT_FOUND,
                () -> sessions.newContext(GROUP, "nobody", 1, List.of(), List.of(), false, "c"));
        assertError(Errors.SHARE_SESSION_NOT_FOUND,
                () -> sessions.newContext(GROUP, "nobody", -1, List.of(), List.of(), false, "c"));
        assertError(Errors.SHARE_SESSION_NOT_FOUND, () -> sessions.acknowledgeSessionUpdate(GROUP, "nobody", 1));
        assertError(Errors.SHARE_SESSION_NOT_FOUND, () -> sessions.acknowledgeSessionUpdate(GROUP, "nobody", -1));
        assertError(Errors.INVALID_SHARE_SESSION_EPOCH, () -> sessions.acknowledgeSessionUpdate(GROUP, "m", 0));
        assertError(Errors.INVALID_REQUEST,
                () -> sessions.newContext(GROUP, "m", 0, List.of(P0), List.of(), true, "c"));
        sessions.newContext(GROUP, "m1", 0, List.of(P0), List.of(), false, "c1");
        sessions.newContext(GROUP, "m2", 0, List.of(P0), List.of(), false, "c2");
        assertError(Errors.SHARE_SESSION_LIMIT_REACHED,
                () -> sessions.newContext(GROUP, "m3", 0, List.of(P0), List.of(), false, "c3"));
        // a member opening again replaces its own session: no third one
        sessions.newContext(GROUP, "m1", 0, List.of(P1), List.of(), false, "c1");
        assertEquals(2, sessions.size());
    }

    @Test
    void aClosedConnectionReleasesItsMembersRecordsAndTheLastOneEmptiesTheGroup() {
        sessions.newContext(GROUP, "m1", 0, List.of(P0), List.of(), false, "c1");
        sessions.newContext(GROUP, "m2", 0, List.of(P1), List.of(), false, "c2");
        sessions.disconnectListener().onDisconnect("c1");
        awaitEquals("m1's records released", List.of(GROUP + "/m1"), () -> List.copyOf(partitions.released));
        assertEquals(List.of(), partitions.emptied, "m2 is still here");
        sessions.disconnectListener().onDisconnect("unknown-connection");
        sessions.disconnectListener().onDisconnect("c2");
        awaitEquals("the group emptied", List.of(GROUP), () -> List.copyOf(partitions.emptied));
        assertEquals(0, sessions.size());
    }

    @Test
    void aFinalRequestClosesTheSessionAndReleasesOnce() {
        sessions.newContext(GROUP, "m1", 0, List.of(P0), List.of(), false, "c1");
        sessions.closeSession(GROUP, "m1", partitions);
        sessions.closeSession(GROUP, "m1", partitions);
        assertEquals(List.of(GROUP + "/m1"), partitions.released);
        assertEquals(0, sessions.size());
    }

    private static void assertError(Errors expected, Executable call) {
        ApiException e = assertThrows(ApiException.class, call);
        assertEquals(expected, Errors.forException(e), e.toString());
    }

    private static <T> void awaitEquals(String what, T expected, Supplier<T> actual) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!expected.equals(actual.get())) {
            if (System.nanoTime() > deadline) {
                assertEquals(expected, actual.get(), what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
