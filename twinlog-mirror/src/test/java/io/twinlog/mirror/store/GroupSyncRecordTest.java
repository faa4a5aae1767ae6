package io.twinlog.mirror.store;

import io.twinlog.controller.zk.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(60)
class GroupSyncRecordTest {

    @Test
    void groupIdsBecomeSafeNodeNames() {
        assertEquals("app-1_x", MirrorGroupSyncStore.groupNode("app-1_x"));
        assertEquals("a%2Fb", MirrorGroupSyncStore.groupNode("a/b"), "no path separator reaches ZooKeeper");
        assertEquals("%2E", MirrorGroupSyncStore.groupNode("."));
        assertEquals("%2E%2E", MirrorGroupSyncStore.groupNode(".."));
        assertEquals("caf%C3%A9%20x", MirrorGroupSyncStore.groupNode("café x"));
        for (String id : List.of("app-1_x", "a/b", ".", "..", "café x", "100%", "a%2Fb")) {
            assertEquals(id, MirrorGroupSyncStore.groupIdOf(MirrorGroupSyncStore.groupNode(id)), "round trip of " + id);
        }
    }

    @Test
    void recordsRoundTripThroughJson() {
        for (GroupSyncRecord.Type type : GroupSyncRecord.Type.values()) {
            GroupSyncRecord r = new GroupSyncRecord("a/b", type, 1_700_000_000_123L, 3, 1);
            assertEquals(r, GroupSyncRecord.fromJson(Json.encode(r.toJson()), "/test"));
        }
    }

    @Test
    void theTypeIsWrittenForShareGroupsOnlyAndAbsentReadsAsConsumer() {
        GroupSyncRecord share = new GroupSyncRecord("s", GroupSyncRecord.Type.SHARE, 5, 2, 0);
        assertEquals("{\"version\":1,\"groupId\":\"s\",\"lastSyncMs\":5,\"offsetsSynced\":2,\"offsetsClamped\":0,"
                + "\"type\":\"SHARE\"}", new String(Json.encode(share.toJson()), StandardCharsets.UTF_8));
        // as written before share groups were synced, and as consumer groups' records still are
        GroupSyncRecord old = GroupSyncRecord.fromJson("{\"version\":1,\"groupId\":\"c\",\"lastSyncMs\":5}"
                .getBytes(StandardCharsets.UTF_8), "/test");
        assertEquals(new GroupSyncRecord("c", GroupSyncRecord.Type.CONSUMER, 5, -1, -1), old);
        assertThrows(IllegalStateException.class, () -> GroupSyncRecord.fromJson(
                "{\"version\":1,\"groupId\":\"c\",\"type\":\"NOVEL\"}".getBytes(StandardCharsets.UTF_8), "/test"));
    }

    @Test
    void groupSettingsHaveKip1279Defaults() {
        MirrorDefinition d = new MirrorDefinition("m", Map.of("bootstrap.servers", "h:1"), Optional.empty(),
                MirrorDefinition.State.ACTIVE, Optional.empty());
        assertEquals(List.of(".*"), d.groupIncludePatterns());
        assertEquals(List.of(), d.groupExcludePatterns());
        assertEquals(30_000L, d.groupsSyncIntervalMs());
        MirrorDefinition off = new MirrorDefinition("m", Map.of("mirror.groups.include", ""), Optional.empty(),
                MirrorDefinition.State.ACTIVE, Optional.empty());
        assertEquals(List.of(), off.groupIncludePatterns(), "an empty include turns the sync off");
        MirrorDefinition bad = new MirrorDefinition("m", Map.of("mirror.groups.sync.interval.ms", "-5"),
                Optional.empty(), MirrorDefinition.State.ACTIVE, Optional.empty());
        assertEquals(Optional.of("Invalid value -5 for configuration mirror.groups.sync.interval.ms: Value must be at "
                + "least 1"), bad.validateSettings());
        assertEquals(30_000L, d.metadataRefreshIntervalMs());
        MirrorDefinition badRefresh = new MirrorDefinition("m", Map.of("mirror.metadata.refresh.interval.ms", "soon"),
                Optional.empty(), MirrorDefinition.State.ACTIVE, Optional.empty());
        assertEquals(Optional.of("Invalid value soon for configuration mirror.metadata.refresh.interval.ms: Not a "
                + "number of type LONG"), badRefresh.validateSettings());
    }
}
