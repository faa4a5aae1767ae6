package io.twinlog.mirror.store;

import java.util.LinkedHashMap;
import java.util.Map;

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

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("groupId", groupId);
        m.put("lastSyncMs", lastSyncMs);
        m.put("offsetsSynced", offsetsSynced);
        m.put("offsetsClamped", offsetsClamped);
        return m;
    }

    public static GroupSyncRecord fromJson(Map<String, Object> json) {
        return new GroupSyncRecord((String) json.get("groupId"), number(json, "lastSyncMs").longValue(),
                number(json, "offsetsSynced").intValue(), number(json, "offsetsClamped").intValue());
    }

    private static Number number(Map<String, Object> json, String key) {
        Object v = json.get(key);
        return v instanceof Number n ? n : -1;
    }
}
