package io.twinlog.mirror.store;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.controller.zk.Json;

/**
 * The last time a mirror synced one consumer group's offsets from its source, as {@code describe} shows it from any
 * broker ({@code /mirror_groups/<mirror>/<group>}).
 *
 * @param lastSyncMs     wall-clock time of the last pass that brought the group's destination offsets in line with
 *                       the source (written or already equal)
 * @param offsetsSynced  partitions covered by that pass
 * @param offsetsClamped of those, partitions whose offset was limited to what the destination holds
 */
public record GroupSyncRecord(String groupId, long lastSyncMs, int offsetsSynced, int offsetsClamped) {

    /**
     * The record as stored: {@code {"version":1,"groupId":"g","lastSyncMs":...,"offsetsSynced":3,
     * "offsetsClamped":0}}; a missing number reads as -1.
     */
    @JsonPropertyOrder({"version", "groupId", "lastSyncMs", "offsetsSynced", "offsetsClamped"})
    public record Document(@JsonProperty("version") int version, @JsonProperty("groupId") String groupId,
                           @JsonProperty("lastSyncMs") Long lastSyncMs,
                           @JsonProperty("offsetsSynced") Integer offsetsSynced,
                           @JsonProperty("offsetsClamped") Integer offsetsClamped) {
    }

    public Document toJson() {
        return new Document(1, groupId, lastSyncMs, offsetsSynced, offsetsClamped);
    }

    /** @param path where the record was read, for the error if it is corrupt */
    public static GroupSyncRecord fromJson(byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        return new GroupSyncRecord(d.groupId(), d.lastSyncMs() == null ? -1L : d.lastSyncMs(),
                d.offsetsSynced() == null ? -1 : d.offsetsSynced(),
                d.offsetsClamped() == null ? -1 : d.offsetsClamped());
    }
}
