package io.twinlog.controller.metadata;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.controller.zk.Json;

import java.util.List;

/**
 * Leadership of one partition: leader (-1 when offline), leader epoch, in-sync replicas and the partition epoch,
 * which goes up on every change of this record so writers can fence stale updates.
 */
public record PartitionState(int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch) {
    public static final int NO_LEADER = -1;

    /**
     * The record as stored at {@code /brokers/topics/<topic>/partitions/<n>/state}:
     * {@code {"version":1,"leader":1,"leaderEpoch":0,"isr":[1,2],"partitionEpoch":0}}.
     */
    @JsonPropertyOrder({"version", "leader", "leaderEpoch", "isr", "partitionEpoch"})
    public record Document(@JsonProperty("version") int version, @JsonProperty("leader") int leader,
                           @JsonProperty("leaderEpoch") int leaderEpoch, @JsonProperty("isr") List<Integer> isr,
                           @JsonProperty("partitionEpoch") int partitionEpoch) {
    }

    public Document toJson() {
        return new Document(1, leader, leaderEpoch, isr, partitionEpoch);
    }

    /** @param path where the record was read, for the error if it is corrupt */
    public static PartitionState fromJson(byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        return new PartitionState(d.leader(), d.leaderEpoch(), d.isr() == null ? List.of() : List.copyOf(d.isr()),
                d.partitionEpoch());
    }
}
