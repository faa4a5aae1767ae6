package io.twinlog.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import io.twinlog.clients.mirror.MirrorAdmin.MirrorDescription;
import io.twinlog.clients.mirror.MirrorAdmin.PartitionDescription;
import io.twinlog.clients.mirror.MirrorAdmin.TopicDescription;
import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard document: this cluster as the metadata image has it; lag in seconds and bytes from the leader's
 * gauges where this broker leads, 0 for a partition recorded as caught up whoever leads it, null for one behind and
 * led elsewhere.
 */
@Timeout(10)
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
                        partition(0, 100, 40), partition(1, 50, 50), partition(2, 80, 10)), "orders")), Map.of(),
                Map.of());
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

    @Test
    void rpoFromDescribeWhoeverLeadsWithTheMirrorsHighest() {
        DashboardView.Cluster cluster = new DashboardView.Cluster("c", 1, 1,
                List.of(new DashboardView.Broker(1, "h:1", null)), "h:1", Map.of(P0, 1, P1, 2, P2, 2));
        MirrorDescription mirror = new MirrorDescription("dr", "ACTIVE", null, "src:9092", "s", Map.of(), List.of(),
                List.of("orders"), List.of(), Map.of("orders", new TopicDescription("orders", "MIRRORING", List.of(
                        timed(0, 9_000L, 1_500L), timed(1, 8_000L, 2_500L), timed(2, -1L, -1L)), "orders")), Map.of(),
                Map.of());
        JsonNode doc = DashboardView.build(cluster, Map.of("dr", mirror), (name, m, tp) -> OptionalDouble.empty(),
                new MirrorCommands("bin/twinlog-mirrors.sh", "h:1"), false, 10_500L);
        JsonNode partitions = doc.get("mirrors").get(0).get("topics").get(0).get("partitions");
        assertEquals(1.5, partitions.get(0).get("rpoSeconds").asDouble());
        assertEquals(2.5, partitions.get(1).get("rpoSeconds").asDouble(), "led by another broker: from describe");
        assertEquals(8_000L, partitions.get(1).get("mirroredUpToMs").asLong());
        assertTrue(partitions.get(2).get("rpoSeconds").isNull(), "unknown, not 0");
        JsonNode summary = doc.get("mirrors").get(0).get("summary");
        assertEquals(2.5, summary.get("maxRpoSeconds").asDouble());
        assertEquals(8_000L, summary.get("oldestMirroredUpToMs").asLong());
    }

    private static PartitionDescription timed(int p, long mirroredUpToMs, long rpoMs) {
        return new PartitionDescription(p, "MIRRORING", 10, 10, 0, 0, null, -1, -1L, List.of(), -1L, List.of(), 0L,
                -1L, mirroredUpToMs, mirroredUpToMs, rpoMs);
    }

    @Test
    void theClusterHasEachBrokersClientAddressAndEachPartitionsLeader() {
        BrokerRegistration ipv4 = new BrokerRegistration(1, List.of(new Endpoint("CLIENT", "10.0.0.1", 9092),
                new Endpoint("REPLICATION", "10.0.1.1", 9093)), Optional.of("rack-a"));
        BrokerRegistration ipv6 = new BrokerRegistration(2, List.of(new Endpoint("CLIENT", "fd00::2", 9092)),
                Optional.empty());
        BrokerRegistration noClientListener = new BrokerRegistration(3,
                List.of(new Endpoint("REPLICATION", "10.0.1.3", 9093)), Optional.empty());
        TreeMap<Integer, PartitionImage> partitions = new TreeMap<>(Map.of(
                0, new PartitionImage(0, List.of(1, 2), new PartitionState(2, 4, List.of(2, 1), 7), 0),
                1, new PartitionImage(1, List.of(1, 2), null, -1)));
        MetadataImage image = new MetadataImage("cluster-b", Map.of(1, ipv4, 2, ipv6, 3, noClientListener),
                Map.of("orders", new TopicImage("orders", Uuid.randomUuid(), partitions, Map.of(), 0)), Map.of(), 1,
                MirrorImage.EMPTY);

        DashboardView.Cluster cluster = DashboardView.cluster(image, 2, "CLIENT");

        assertEquals(new DashboardView.Cluster("cluster-b", 2, 1, List.of(
                new DashboardView.Broker(1, "10.0.0.1:9092", "rack-a"),
                new DashboardView.Broker(2, "[fd00::2]:9092", null),
                new DashboardView.Broker(3, "", null)), "10.0.0.1:9092,[fd00::2]:9092",
                Map.of(P0, 2, P1, PartitionState.NO_LEADER)), cluster);
    }

    private static PartitionDescription partition(int p, long sourceEnd, long destinationEnd) {
        return new PartitionDescription(p, "MIRRORING", sourceEnd, destinationEnd, sourceEnd - destinationEnd, 0,
                null, -1, -1L, List.of(), -1L, List.of(), 0L, -1L, -1L, -1L, -1L);
    }
}
