package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData.AlterableMirrorConfig;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link MirrorRequestValidator}: one rule per test, with the code and message the client gets. */
@Timeout(60)
class MirrorRequestValidatorTest {

    private static MirrorDefinition mirror(Map<String, String> configs) {
        return new MirrorDefinition("m", configs, Optional.empty(), MirrorDefinition.State.ACTIVE, Optional.empty());
    }

    private static Map<String, String> withBootstrap(String key, String value) {
        return Map.of(MirrorDefinition.BOOTSTRAP_SERVERS, "source:9092", key, value);
    }

    @Test
    void aNameOfTopicCharactersPassesAndAnyOtherIsAnInvalidName() {
        assertEquals(Optional.empty(), MirrorRequestValidator.name("dr-1.east_2"));
        MirrorApiError error = MirrorRequestValidator.name("a/b").orElseThrow();
        assertEquals(MirrorErrors.INVALID_CLUSTER_MIRROR_NAME.code, error.code());
        assertEquals(MirrorDefinition.validateName("a/b").orElseThrow(), error.message());
        assertTrue(MirrorRequestValidator.name("").isPresent());
    }

    @Test
    void theTopicPrefixChangesOnlyWhileNoTopicOfTheMirrorMirrors() {
        assertEquals(Optional.empty(), MirrorRequestValidator.prefixChangeRefused("dr", Map.of()));
        assertEquals(Optional.empty(), MirrorRequestValidator.prefixChangeRefused("dr",
                Map.of("west.orders", DesiredMirrorState.STOPPED)), "failed over: its name stays, nothing mirrors");
        MirrorApiError refused = MirrorRequestValidator.prefixChangeRefused("dr", Map.of("west.orders",
                DesiredMirrorState.STOPPED, "west.payments", DesiredMirrorState.PAUSED)).orElseThrow();
        assertEquals(Errors.INVALID_CONFIG.code(), refused.code());
        assertTrue(refused.message().contains("west.payments") && refused.message().contains("mirror.topic.prefix"),
                refused.message());
    }

    @Test
    void aMirrorWithoutSourceBootstrapServersIsAnInvalidConfig() {
        MirrorApiError expected = MirrorApiError.of(Errors.INVALID_CONFIG,
                "The mirror needs the source's bootstrap.servers");
        assertEquals(Optional.of(expected), MirrorRequestValidator.sourceBootstrap(Map.of()));
        assertEquals(Optional.of(expected), MirrorRequestValidator.sourceBootstrap(
                Map.of(MirrorDefinition.BOOTSTRAP_SERVERS, "  ")));
        assertEquals(Optional.empty(), MirrorRequestValidator.sourceBootstrap(
                Map.of(MirrorDefinition.BOOTSTRAP_SERVERS, "source:9092")));
    }

    @Test
    void aPatternThatDoesNotCompileIsAnInvalidRegularExpression() {
        for (String key : List.of(MirrorDefinition.TOPIC_INCLUDE, MirrorDefinition.TOPIC_EXCLUDE,
                MirrorDefinition.GROUPS_INCLUDE, MirrorDefinition.GROUPS_EXCLUDE)) {
            MirrorApiError error = MirrorRequestValidator.definition(mirror(withBootstrap(key, "orders,("))).orElseThrow();
            assertEquals(Errors.INVALID_REGULAR_EXPRESSION.code(), error.code(), key);
            assertTrue(error.message().contains("("), error.message());
        }
    }

    @Test
    void anIllegalSettingIsAnInvalidConfig() {
        MirrorApiError error = MirrorRequestValidator.definition(mirror(withBootstrap(
                MirrorDefinition.GROUPS_SYNC_INTERVAL_MS, "0"))).orElseThrow();
        assertEquals(Errors.INVALID_CONFIG.code(), error.code());
        assertTrue(error.message().contains(MirrorDefinition.GROUPS_SYNC_INTERVAL_MS), error.message());
    }

    @Test
    void sourceClientConfigsThatBuildNoChannelAreAnInvalidConfig() {
        MirrorApiError error = MirrorRequestValidator.definition(mirror(withBootstrap("security.protocol",
                "CARRIER_PIGEON"))).orElseThrow();
        assertEquals(Errors.INVALID_CONFIG.code(), error.code());
        assertTrue(error.message().startsWith("Invalid source client configs: "), error.message());
    }

    @Test
    void aBadPatternIsReportedBeforeABadSetting() {
        Map<String, String> configs = Map.of(MirrorDefinition.BOOTSTRAP_SERVERS, "source:9092",
                MirrorDefinition.TOPIC_INCLUDE, "(", MirrorDefinition.REPLICATION_THROTTLED_RATE, "0");
        assertEquals(Errors.INVALID_REGULAR_EXPRESSION.code(),
                MirrorRequestValidator.definition(mirror(configs)).orElseThrow().code());
    }

    @Test
    void aValidMirrorPasses() {
        assertEquals(Optional.empty(), MirrorRequestValidator.definition(mirror(Map.of(
                MirrorDefinition.BOOTSTRAP_SERVERS, "source:9092", MirrorDefinition.TOPIC_INCLUDE, "orders.*",
                MirrorDefinition.REPLICATION_THROTTLED_RATE, "1000"))));
    }

    @Test
    void anAlterSetsEachGivenKeyAndRemovesThoseWithoutAValue() {
        Map<String, String> altered = MirrorRequestValidator.altered(Map.of("a", "1", "b", "2"), List.of(
                new AlterableMirrorConfig().setName("a").setValue(null),
                new AlterableMirrorConfig().setName("b").setValue("3"),
                new AlterableMirrorConfig().setName("c").setValue("4")));
        assertEquals(Map.of("b", "3", "c", "4"), altered);
    }

    @Test
    void topicPatternsAndExclusionsMustCompile() {
        assertEquals(Optional.empty(), MirrorRequestValidator.topicPatterns(List.of("orders.*"), List.of("x")));
        assertEquals(Errors.INVALID_REGULAR_EXPRESSION.code(),
                MirrorRequestValidator.topicPatterns(List.of("orders.*"), List.of("[")).orElseThrow().code());
        assertEquals(Errors.INVALID_REGULAR_EXPRESSION.code(),
                MirrorRequestValidator.topicPatterns(List.of("*"), List.of()).orElseThrow().code());
    }

    @Test
    void namedTopicsComeFirstThenCandidatesMatchingAWholePatternAndNoExclusion() {
        Set<String> selected = MirrorRequestValidator.selectTopics(List.of("named", "orders"),
                List.of("orders.*", "pay"), List.of(".*-internal"),
                List.of("orders", "orders-eu", "orders-internal", "payments", "pay", "xorders"));
        assertEquals(List.of("named", "orders", "orders-eu", "pay"), List.copyOf(selected));
    }

    @Test
    void withoutPatternsOnlyTheNamedTopicsAreSelected() {
        assertEquals(Set.of("a"), MirrorRequestValidator.selectTopics(List.of("a"), List.of(), List.of(),
                List.of("a", "b")));
    }

    @Test
    void aTopicOutsideTheMirrorIsRefusedForEveryDesiredState() {
        for (DesiredMirrorState desired : DesiredMirrorState.values()) {
            assertEquals(Optional.of(new TopicResult(MirrorErrors.TOPIC_NOT_IN_CLUSTER_MIRROR.code,
                    "Topic 't' is not mirrored by cluster mirror 'm'")),
                    MirrorRequestValidator.desiredStateRefused("m", "t", null, desired), desired.name());
        }
    }

    @Test
    void onlyAPausedOrMirroringTopicResumes() {
        assertEquals(Optional.empty(), MirrorRequestValidator.desiredStateRefused("m", "t",
                DesiredMirrorState.PAUSED, DesiredMirrorState.MIRRORING));
        assertEquals(Optional.empty(), MirrorRequestValidator.desiredStateRefused("m", "t",
                DesiredMirrorState.MIRRORING, DesiredMirrorState.MIRRORING));
        assertEquals(Optional.of(new TopicResult(MirrorErrors.MIRROR_TOPIC_NOT_PAUSED.code,
                "Topic 't' is STOPPED, not paused; start it again to mirror it")),
                MirrorRequestValidator.desiredStateRefused("m", "t", DesiredMirrorState.STOPPED,
                        DesiredMirrorState.MIRRORING));
    }

    @Test
    void aStoppedTopicDoesNotPauseButStopsAgain() {
        assertEquals(Optional.of(new TopicResult(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED.code,
                "Topic 't' is stopped (failed over)")), MirrorRequestValidator.desiredStateRefused("m", "t",
                DesiredMirrorState.STOPPED, DesiredMirrorState.PAUSED));
        assertEquals(Optional.empty(), MirrorRequestValidator.desiredStateRefused("m", "t",
                DesiredMirrorState.STOPPED, DesiredMirrorState.STOPPED));
        assertEquals(Optional.empty(), MirrorRequestValidator.desiredStateRefused("m", "t",
                DesiredMirrorState.MIRRORING, DesiredMirrorState.PAUSED));
    }

    @Test
    void aStopTimeoutIsBoundedSoTheDeadlineCannotOverflow() {
        assertEquals(Optional.empty(), MirrorRequestValidator.pointInTimeRefused(1000, 24L * 60 * 60 * 1000));
        assertEquals(Optional.empty(), MirrorRequestValidator.pointInTimeRefused(1000, -1));
        MirrorApiError tooLong = MirrorRequestValidator.pointInTimeRefused(1000, Long.MAX_VALUE).orElseThrow();
        assertEquals(Errors.INVALID_REQUEST.code(), tooLong.code());
        assertTrue(tooLong.message().contains("a day"), tooLong.message());
        // and the sums the handler makes saturate instead of wrapping to the past
        assertEquals(Long.MAX_VALUE, MirrorTopicHandlers.saturatedSum(System.currentTimeMillis(), Long.MAX_VALUE));
        assertEquals(30_005, MirrorTopicHandlers.saturatedSum(30_000, 5));
    }

    @Test
    void aSecondStopKeepsTheTimeInForceUntilEveryPartitionIsStopped() {
        PointInTimeStop stored = new PointInTimeStop(1_796_638_440_000L, 1_796_638_500_000L);
        DesiredMirrorState stopped = DesiredMirrorState.STOPPED;
        // the same time: let through, and nothing is written (the stored deadline stays)
        Optional<PointInTimeStop> same = Optional.of(new PointInTimeStop(stored.atMs(), stored.deadlineMs() + 9_000));
        assertEquals(Optional.empty(), MirrorRequestValidator.stopTimeRefused("m", "t", stopped, stored, same, false));
        assertTrue(MirrorRequestValidator.sameStop(stopped, stored, same));
        // another time, or none, while a partition is not STOPPED: refused, naming the time in force
        TopicResult other = MirrorRequestValidator.stopTimeRefused("m", "t", stopped, stored,
                Optional.of(new PointInTimeStop(stored.atMs() + 1, 0)), false).orElseThrow();
        assertEquals(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED.code, other.code());
        assertTrue(other.message().contains("2026-12-07T10:14:00Z (1796638440000)"), other.message());
        assertTrue(other.message().contains("--at 1796638440000"), other.message());
        TopicResult plain = MirrorRequestValidator.stopTimeRefused("m", "t", stopped, stored, Optional.empty(), false)
                .orElseThrow();
        assertTrue(plain.message().contains("a stop without a time"), plain.message());
        assertFalse(MirrorRequestValidator.sameStop(stopped, stored, Optional.empty()));
        // every partition STOPPED: the failover is over, a stop may be sent again as before
        assertEquals(Optional.empty(), MirrorRequestValidator.stopTimeRefused("m", "t", stopped, stored,
                Optional.empty(), true));
        // a topic not yet stopping, or stopped plainly: nothing to keep
        assertEquals(Optional.empty(), MirrorRequestValidator.stopTimeRefused("m", "t", DesiredMirrorState.MIRRORING,
                null, Optional.empty(), false));
        assertEquals(Optional.empty(), MirrorRequestValidator.stopTimeRefused("m", "t", stopped, null,
                Optional.of(stored), false));
        assertFalse(MirrorRequestValidator.sameStop(stopped, null, Optional.of(stored)));
    }
}
