package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The mirror's MirroredUpTo line: the oldest mirrored-up-to time of its partitions with the highest RPO. */
@Timeout(10)
class DescribeMirrorsTest {
    @Test
    void theOldestMirroredUpToTimeWithTheHighestRpoAndWhere() {
        MirrorAdmin.MirrorDescription d = mirror(partition(0, "MIRRORING", 1_000L, 2_500L),
                partition(1, "MIRRORING", 3_000L, 500L), partition(2, "STOPPED", 0L, -1L));
        assertEquals("1970-01-01T00:00:01Z  (highest RPO 2.5 s: orders-0)", DescribeMirrors.mirroredUpTo(d));
    }

    @Test
    void partitionsThatDoNotKnowAreCountedAndNoneKnownIsADash() {
        MirrorAdmin.MirrorDescription some = mirror(partition(0, "MIRRORING", 1_000L, 2_500L),
                partition(1, "MIRRORING", -1L, -1L));
        assertEquals("1970-01-01T00:00:01Z  (highest RPO 2.5 s: orders-0; 1 partition(s) unknown)",
                DescribeMirrors.mirroredUpTo(some));
        assertEquals("-  (1 partition(s) unknown)", DescribeMirrors.mirroredUpTo(mirror(partition(0, "FAILED",
                -1L, -1L))));
        assertEquals("-", DescribeMirrors.mirroredUpTo(mirror()), "no partitions");
    }

    private static MirrorAdmin.MirrorDescription mirror(MirrorAdmin.PartitionDescription... partitions) {
        return new MirrorAdmin.MirrorDescription("dr", "ACTIVE", null, "src:9092", null, Map.of(), List.of(),
                List.of(), List.of(), Map.of("orders", new MirrorAdmin.TopicDescription("orders", "MIRRORING",
                List.of(partitions), "orders")), Map.of(), Map.of());
    }

    private static MirrorAdmin.PartitionDescription partition(int p, String state, long upToMs, long rpoMs) {
        return new MirrorAdmin.PartitionDescription(p, state, 10, 10, 0, 0, null, 1, 9L, List.of(), -1L, List.of(),
                0L, -1L, upToMs, upToMs, rpoMs);
    }
}
