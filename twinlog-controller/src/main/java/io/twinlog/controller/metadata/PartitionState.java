package io.twinlog.controller.metadata;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Leadership of one partition: leader (-1 when offline), leader epoch, in-sync replicas and the partition epoch,
 * which goes up on every change of this record so writers can fence stale updates.
 */
public record PartitionState(int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch) {
    public static final int NO_LEADER = -1;

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("leader", leader);
        m.put("leaderEpoch", leaderEpoch);
        m.put("isr", isr);
        m.put("partitionEpoch", partitionEpoch);
        return m;
    }

    @SuppressWarnings("unchecked")
    public static PartitionState fromJson(Map<String, Object> json) {
        List<Integer> isr = new ArrayList<>();
        for (Object o : (List<Object>) json.getOrDefault("isr", List.of())) {
            isr.add(((Number) o).intValue());
        }
        return new PartitionState(((Number) json.get("leader")).intValue(),
                ((Number) json.get("leaderEpoch")).intValue(), List.copyOf(isr),
                ((Number) json.getOrDefault("partitionEpoch", 0)).intValue());
    }
}
