package io.twinlog.mirror.store;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.controller.zk.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror's ZooKeeper records bound by Jackson: each writes byte for byte the JSON the hand-built maps wrote,
 * reads documents in that format (including the metadata image's raw maps), and ignores fields a newer version may
 * add.
 */
@Timeout(10)
class MirrorStoreJsonTest {

    @Test
    void definitionKeepsItsFormat() {
        String stored = "{\"version\":1,\"configs\":{\"bootstrap.servers\":\"src:9092\",\"mirror.topic.include\":"
                + "\"orders.*\"},\"sourceClusterId\":\"abc\",\"state\":\"FAILED\",\"stateReason\":\"source changed\"}";
        MirrorDefinition definition = new MirrorDefinition("dr", Map.of("mirror.topic.include", "orders.*",
                "bootstrap.servers", "src:9092"), Optional.of("abc"), MirrorDefinition.State.FAILED,
                Optional.of("source changed"));
        assertEquals(stored, text(definition.toJson()), "configs sorted by key");
        assertEquals(definition, MirrorDefinition.fromJson("dr", bytes(stored), "/mirrors/dr"));
    }

    @Test
    void aNewDefinitionHasNoClusterIdOrReason() {
        String stored = "{\"version\":1,\"configs\":{\"bootstrap.servers\":\"src:9092\"},\"state\":\"ACTIVE\"}";
        MirrorDefinition definition = new MirrorDefinition("dr", Map.of("bootstrap.servers", "src:9092"),
                Optional.empty(), MirrorDefinition.State.ACTIVE, Optional.empty());
        assertEquals(stored, text(definition.toJson()));
        assertEquals(definition, MirrorDefinition.fromJson("dr", bytes("{\"version\":1,\"configs\":"
                + "{\"bootstrap.servers\":\"src:9092\"},\"futureField\":[1]}"), "/mirrors/dr"),
                "no state: ACTIVE; an unknown field is skipped");
    }

    @Test
    void partitionRecordKeepsItsFormat() {
        String stored = "{\"version\":1,\"state\":\"FAILED\",\"writerLeaderEpoch\":4,\"minLeaderEpoch\":6,"
                + "\"lastMirroredEpoch\":3,\"lastMirroredOffset\":350,\"retryAttempt\":2,\"lastError\":\"source down\","
                + "\"previousState\":\"MIRRORING\",\"sourceHighWatermark\":400,\"destinationLogEndOffset\":350,"
                + "\"truncations\":[{\"id\":5,\"offset\":90},{\"id\":77,\"offset\":120}],\"truncationComplete\":false,"
                + "\"reconcileRequests\":2}";
        MirrorPartitionRecord record = new MirrorPartitionRecord(MirrorPartitionState.FAILED, 4, 6, 3, 350L, 2,
                Optional.of("source down"), MirrorPartitionState.MIRRORING, new MirrorProgress(400, 350),
                new MirrorTruncation(List.of(new TruncationPoints.Point(5L, 90L), new TruncationPoints.Point(77L, 120L)),
                        false), 2);
        assertEquals(stored, text(record.toJson()));
        assertEquals(record, MirrorPartitionRecord.fromJson(bytes(stored), "/mirror_states/t/0"));
        assertEquals(record, MirrorPartitionRecord.fromJson(Json.decode(bytes(stored), "/mirror_states/t/0")),
                "from the raw map the metadata image carries");
    }

    @Test
    void partitionRecordWithoutErrorOmitsItAndMissingNumbersReadAsUnknown() {
        MirrorPartitionRecord initial = MirrorPartitionRecord.initial(0);
        assertEquals("{\"version\":1,\"state\":\"UNKNOWN\",\"writerLeaderEpoch\":0,\"minLeaderEpoch\":-1,"
                + "\"lastMirroredEpoch\":-1,\"lastMirroredOffset\":-1,\"retryAttempt\":0,\"previousState\":\"UNKNOWN\","
                + "\"sourceHighWatermark\":-1,\"destinationLogEndOffset\":-1}", text(initial.toJson()));
        MirrorPartitionRecord sparse = MirrorPartitionRecord.fromJson(Map.of("version", 1, "state", "MIRRORING",
                "writerLeaderEpoch", 2, "addedLater", "x"));
        assertEquals(new MirrorPartitionRecord(MirrorPartitionState.MIRRORING, 2, -1, -1, -1L, -1, Optional.empty(),
                MirrorPartitionState.UNKNOWN, MirrorProgress.UNKNOWN, MirrorTruncation.NONE, 0), sparse);
        assertThrows(IllegalStateException.class, () -> MirrorPartitionRecord.fromJson(Map.of("version", 1)),
                "a record without a state is corrupt");
    }

    @Test
    void groupSyncAndProgressKeepTheirFormat() {
        String group = "{\"version\":1,\"groupId\":\"app\",\"lastSyncMs\":1700000000123,\"offsetsSynced\":3,"
                + "\"offsetsClamped\":1}";
        GroupSyncRecord sync = new GroupSyncRecord("app", GroupSyncRecord.Type.CONSUMER, 1_700_000_000_123L, 3, 1);
        assertEquals(group, text(sync.toJson()));
        assertEquals(sync, GroupSyncRecord.fromJson(bytes(group), "/mirror_groups/dr/app"));

        MirrorProgress progress = new MirrorProgress(120, 118);
        assertEquals("{\"version\":2,\"sourceHighWatermark\":120,\"destinationLogEndOffset\":118}",
                text(progress.toJson()), "unknown times are left out");
        // version 1, written before the binding from an unordered map: any field order loads, the times unknown
        assertEquals(progress, MirrorProgress.fromJson(bytes("{\"destinationLogEndOffset\":118,\"version\":1,"
                + "\"sourceHighWatermark\":120}"), "/mirror_progress/t/0"));

        String timed = "{\"version\":2,\"sourceHighWatermark\":120,\"destinationLogEndOffset\":120,"
                + "\"newestMirroredTimestamp\":1796637600000,\"mirroredUpToMs\":1796637605000}";
        MirrorProgress withTimes = new MirrorProgress(120, 120, 1_796_637_600_000L, 1_796_637_605_000L);
        assertEquals(timed, text(withTimes.toJson()));
        assertEquals(withTimes, MirrorProgress.fromJson(bytes(timed), "/mirror_progress/t/0"));
    }

    @Test
    void partitionRecordCarriesTheTimesWhenKnown() {
        MirrorPartitionRecord record = MirrorPartitionRecord.initial(3).transitionTo(MirrorPartitionState.MIRRORING, 3)
                .withProgress(new MirrorProgress(10, 10, 1_000L, 2_000L));
        String json = text(record.toJson());
        assertTrue(json.endsWith(",\"newestMirroredTimestamp\":1000,\"mirroredUpToMs\":2000}"), json);
        assertEquals(record, MirrorPartitionRecord.fromJson(bytes(json), "/mirror_states/t/0"));
    }

    private static String text(Object document) {
        return new String(Json.encode(document), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
