package io.twinlog.mirror.fetcher;

import io.twinlog.mirror.partition.SourceProblem;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How the mirror fetcher's metadata answers become a source topic's status, one rule at a time. */
@Timeout(60)
class SourceTopicStatusTest {
    private static final long TIMEOUT_MS = 10_000;
    private static final long MAX_AGE_MS = 30_000;
    private static final Uuid MIRRORED = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");
    private static final Uuid NEW = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAg");

    private final SourceTopicStatus status = new SourceTopicStatus("src:9092", TIMEOUT_MS, 0);

    @Test
    void aTopicWithTheMirroredIdHasNoProblem() {
        status.watch("orders", MIRRORED, 0);
        assertEquals(MAX_AGE_MS, status.onMetadata(answer(Map.of("orders", MIRRORED), Set.of()), 100, MAX_AGE_MS));
        assertEquals(Optional.empty(), status.problem("orders", 100));
        assertTrue(status.isMirroredTopic("orders", MIRRORED));
    }

    @Test
    void aDeletionIsConfirmedByAnswersSpanningHalfTheTimeoutThenItIsGoneNamingTheTopicId() {
        status.watch("orders", MIRRORED, 0);
        assertEquals(SourceTopicStatus.CONFIRM_RETRY_MS, status.onMetadata(answer(Map.of(), Set.of("orders")), 1_000,
                MAX_AGE_MS), "looked up again soon");
        assertEquals(Optional.empty(), status.problem("orders", 1_000), "not yet: a broker may just have started");
        status.onMetadata(answer(Map.of(), Set.of("orders")), 1_000 + TIMEOUT_MS / 2, MAX_AGE_MS);
        SourceProblem p = status.problem("orders", 1_000 + TIMEOUT_MS / 2).orElseThrow();
        assertEquals(SourceProblem.Kind.GONE, p.kind());
        assertTrue(p.reason().contains("was deleted (topic ID " + MIRRORED + ")"), p.reason());
    }

    @Test
    void aTopicThatComesBackBeforeTheConfirmationWasNotDeleted() {
        status.watch("orders", MIRRORED, 0);
        status.onMetadata(answer(Map.of(), Set.of("orders")), 1_000, MAX_AGE_MS);
        status.onMetadata(answer(Map.of("orders", MIRRORED), Set.of()), 2_000, MAX_AGE_MS);
        status.onMetadata(answer(Map.of(), Set.of("orders")), 1_000 + TIMEOUT_MS, MAX_AGE_MS);
        assertEquals(Optional.empty(), status.problem("orders", 1_000 + TIMEOUT_MS), "a new run of answers");
    }

    @Test
    void aTopicCreatedAgainIsGoneAtOnceNamingBothIdsAndIsNotFetched() {
        status.watch("orders", MIRRORED, 0);
        assertEquals(SourceTopicStatus.GONE_RETRY_MS, status.onMetadata(answer(Map.of("orders", NEW), Set.of()), 100,
                MAX_AGE_MS));
        SourceProblem p = status.problem("orders", 100).orElseThrow();
        assertEquals(SourceProblem.Kind.GONE, p.kind());
        assertTrue(p.reason().contains(NEW.toString()) && p.reason().contains(MIRRORED.toString()), p.reason());
        assertFalse(status.isMirroredTopic("orders", NEW));
    }

    @Test
    void aSourceWithoutTopicIdsIsNotCompared() {
        status.watch("orders", MIRRORED, 0);
        status.onMetadata(answer(Map.of("orders", Uuid.ZERO_UUID), Set.of()), 100, MAX_AGE_MS);
        assertEquals(Optional.empty(), status.problem("orders", 100));
        assertTrue(status.isMirroredTopic("orders", Uuid.ZERO_UUID));
    }

    @Test
    void aTopicNotWatchedIsNotFetched() {
        assertFalse(status.isMirroredTopic("orders", MIRRORED), "its destination topic ID is not known yet");
    }

    @Test
    void noAnswerIsUnansweredThenUnreachableAfterTheTimeoutWithTheOutagesFirstErrorThroughout() {
        status.watch("orders", MIRRORED, 0);
        status.onMetadata(answer(Map.of("orders", MIRRORED), Set.of()), 1_000, MAX_AGE_MS);
        status.onNoAnswer("Connection refused", false);
        SourceProblem early = status.problem("orders", 1_000 + TIMEOUT_MS - 1).orElseThrow();
        assertEquals(SourceProblem.Kind.UNANSWERED, early.kind());
        status.onNoAnswer("Connection reset", false);
        SourceProblem late = status.problem("orders", 1_000 + TIMEOUT_MS).orElseThrow();
        assertEquals(SourceProblem.Kind.UNREACHABLE, late.kind());
        assertTrue(late.reason().contains("Connection refused") && late.reason().contains("unreachable"),
                late.reason());
        assertEquals(late, status.problem("orders", 1_000 + 3 * TIMEOUT_MS).orElseThrow(), "the same reason later");
        status.onMetadata(answer(Map.of("orders", MIRRORED), Set.of()), 50_000, MAX_AGE_MS);
        assertEquals(Optional.empty(), status.problem("orders", 50_000), "answering again");
    }

    @Test
    void anotherClusterAnsweringIsAWrongClusterProblemForEveryTopicUntilTheSourceClusterAnswers() {
        status.watch("orders", MIRRORED, 0);
        status.onMetadata(answer(Map.of("orders", MIRRORED), Set.of()), 1_000, MAX_AGE_MS);
        status.onWrongCluster("another cluster at src:9092");
        SourceProblem p = status.problem("orders", 1_000 + 3 * TIMEOUT_MS).orElseThrow();
        assertEquals(SourceProblem.Kind.WRONG_CLUSTER, p.kind());
        assertTrue(p.retriable(), "a doubt, not the topic gone");
        assertEquals(Optional.of("another cluster at src:9092"), status.wrongClusterReason());
        status.onMetadata(answer(Map.of("orders", MIRRORED), Set.of()), 50_000, MAX_AGE_MS);
        assertEquals(Optional.empty(), status.problem("orders", 50_000), "the source cluster answers again");
        assertEquals(Optional.empty(), status.wrongClusterReason());
    }

    @Test
    void aRoundUnansweredAfterAnotherClusterAnsweredIsAnOutageCountedFromTheSourcesLastAnswer() {
        status.watch("orders", MIRRORED, 0);
        status.onMetadata(answer(Map.of("orders", MIRRORED), Set.of()), 1_000, MAX_AGE_MS);
        status.onWrongCluster("another cluster");
        status.onNoAnswer("Connection refused", false);
        assertEquals(SourceProblem.Kind.UNREACHABLE, status.problem("orders", 1_000 + TIMEOUT_MS).orElseThrow()
                .kind(), "another cluster's answers are not the source's");
    }

    @Test
    void aTopicNobodyAsksAboutIsDroppedUnlessItIsFetched() {
        status.watch("orders", MIRRORED, 0);
        status.watch("events", MIRRORED, 0);
        assertEquals(Set.of("orders", "events"), status.topics(Set.of("events"), SourceTopicStatus.WATCH_EXPIRY_MS));
        assertEquals(Set.of("events"), status.topics(Set.of("events"), SourceTopicStatus.WATCH_EXPIRY_MS + 1));
    }

    private static SourceMetadata answer(Map<String, Uuid> ids, Set<String> unknown) {
        return new SourceMetadata(Map.of(), ids, Map.of(), unknown, "cluster", 0);
    }
}
