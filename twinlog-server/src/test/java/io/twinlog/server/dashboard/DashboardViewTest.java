package io.twinlog.server.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import io.twinlog.clients.mirror.MirrorAdmin.MirrorDescription;
import io.twinlog.clients.mirror.MirrorAdmin.PartitionDescription;
import io.twinlog.clients.mirror.MirrorAdmin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard document's lag in seconds and bytes: the leader's gauges where this broker leads, 0 for a partition
 * recorded as caught up whoever leads it, null for one behind and led elsewhere.
 */
class DashboardViewTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final TopicPartition P2 = new TopicPartition("orders", 2);

    @Test
    void lagSecondsFromLocalGaugesZeroWhenCaughtUpNullWhenBehindElsewhere() {
        // broker 1 leads p0 (behind, with gauges); broker 2 leads p1 (caught up) and p2 (behind)
        DashboardView.Cluster cluster = new DashboardView.Cluster("c", 1, 1,
                List.of(new DashboardView.Broker(1, "h:1", null), new DashboardView.Broker(2, "h:2", null)), "h:1",
                Map.of(P0, 1, P1, 2, P2, 2));
        MirrorDescription mirror = new MirrorDescription("dr", "ACTIVE", null, "src:9092", "s", Map.of(), List.of(),
                List.of("orders"), List.of(), Map.of("orders", new TopicDescription("orders", "MIRRORING", List.of(
                        partition(0, 100, 40), partition(1, 50, 50), partition(2, 80, 10)))), Map.of());
        DashboardView.Gauges gauges = (name, m, tp) -> tp.equals(P0)
                ? OptionalDouble.of(name.equals(LagGauges.LAG_SECONDS) ? 12.5 : 6000) : OptionalDouble.empty();
        JsonNode doc = DashboardView.build(cluster, Map.of("dr", mirror), gauges,
                new MirrorCommands("bin/twinlog-mirrors.sh", "h:1"), false, 0L);
        JsonNode partitions = doc.get("mirrors").get(0).get("topics").get(0).get("partitions");
        assertEquals(12.5, partitions.get(0).get("lagSeconds").asDouble());
        assertEquals(6000, partitions.get(0).get("lagBytes").asDouble());
        assertEquals(0.0, partitions.get(1).get("lagSeconds").asDouble());
        assertEquals(0.0, partitions.get(1).get("lagBytes").asDouble());
        assertTrue(partitions.get(2).get("lagSeconds").isNull());
        assertEquals(70, partitions.get(2).get("lagRecords").asLong());
    }

    private static PartitionDescription partition(int p, long sourceEnd, long destinationEnd) {
        return new PartitionDescription(p, "MIRRORING", sourceEnd, destinationEnd, sourceEnd - destinationEnd, 0,
                null, -1, -1L, List.of(), -1L, List.of(), 0L, -1L);
    }
}
