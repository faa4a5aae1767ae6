package io.twinlog.mirror.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.controller.zk.Json;

import java.util.Objects;

/**
 * The last time a mirror synced one group's offsets from its source, as {@code describe} shows it from any broker
 * ({@code /mirror_groups/<mirror>/<group>}). Group IDs are one namespace across group types on a cluster, so one
 * record per ID.
 *
 * @param type           consumer group (committed offsets) or share group (share-partition start offsets)
 * @param lastSyncMs     wall-clock time of the last pass that brought the group's destination offsets in line with
 *                       the source (written or already equal)
 * @param offsetsSynced  partitions covered by that pass
 * @param offsetsClamped of those, partitions whose offset was limited to what the destination holds
 */
public record GroupSyncRecord(String groupId, Type type, long lastSyncMs, int offsetsSynced, int offsetsClamped) {

    /** The kinds of group whose offsets a mirror syncs. */
    public enum Type {
        /** Classic groups of protocol type "consumer" (or none) and KIP-848 consumer groups. */
        CONSUMER,
        /** KIP-932 share groups: their share-partition start offsets. */
        SHARE
    }

    public GroupSyncRecord {
        Objects.requireNonNull(type);
    }

    /**
     * The record as stored: {@code {"version":1,"groupId":"g","lastSyncMs":...,"offsetsSynced":3,
     * "offsetsClamped":0,"type":"SHARE"}}; a missing number reads as -1. {@code type} was added later and is written
     * only for share groups: a record without it is a consumer group's, so records written before it, and consumer
     * groups' records read by brokers that predate it, stay as they were (unknown fields are ignored on read).
     */
    @JsonPropertyOrder({"version", "groupId", "lastSyncMs", "offsetsSynced", "offsetsClamped", "type"})
    public record Document(@JsonProperty("version") int version, @JsonProperty("groupId") String groupId,
                           @JsonProperty("lastSyncMs") Long lastSyncMs,
                           @JsonProperty("offsetsSynced") Integer offsetsSynced,
                           @JsonProperty("offsetsClamped") Integer offsetsClamped,
                           @JsonProperty("type") @JsonInclude(JsonInclude.Include.NON_NULL) String type) {
    }

    public Document toJson() {
        return new Document(1, groupId, lastSyncMs, offsetsSynced, offsetsClamped,
                type == Type.CONSUMER ? null : type.name());
    }

    /** @param path where the record was read, for the error if it is corrupt */
    public static GroupSyncRecord fromJson(byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        Type type;
        try {
            type = d.type() == null ? Type.CONSUMER : Type.valueOf(d.type());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("Corrupt JSON at ZooKeeper path " + path + ": unknown group type "
                    + d.type(), e);
        }
        return new GroupSyncRecord(d.groupId(), type, d.lastSyncMs() == null ? -1L : d.lastSyncMs(),
                d.offsetsSynced() == null ? -1 : d.offsetsSynced(),
                d.offsetsClamped() == null ? -1 : d.offsetsClamped());
    }
}
