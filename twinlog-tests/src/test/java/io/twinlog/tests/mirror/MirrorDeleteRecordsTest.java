package io.twinlog.tests.mirror;

import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A mirror topic's log is its source's: DeleteRecords from a client is refused with POLICY_VIOLATION while it is
 * mirrored (as produce is), and served once the topic has failed over.
 */
@Timeout(120)
class MirrorDeleteRecordsTest {
    @Test
    void mirrorTopicRefusesDeleteRecordsUntilFailedOver() throws Exception {
        TopicPartition tp = new TopicPartition("audit", 0);
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster destination = clusters.destination();
            Admin destinationAdmin = clusters.destinationAdmin();
            clusters.createSourceTopics(new NewTopic("audit", 1, (short) 1));
            clusters.source().produce("audit", 0, 20, "r");
            clusters.mirror("dr", "audit");
            Waits.waitUntil("audit-0 mirrored", () -> destination.broker(0).logStore().log(tp)
                    .map(log -> log.highWatermark()).orElse(-1L) == 20);

            ExecutionException refused = assertThrows(ExecutionException.class, () -> destinationAdmin.deleteRecords(
                    Map.of(tp, RecordsToDelete.beforeOffset(10))).all().get());
            assertInstanceOf(PolicyViolationException.class, refused.getCause());
            assertEquals(0, destination.broker(0).logStore().log(tp).orElseThrow().logStartOffset());

            assertEquals(Map.of(), clusters.mirrors().stopMirrorTopics("dr", List.of("audit"), List.of()));
            // a failed-over topic is the destination's own (retried until this broker's image shows it STOPPED)
            Waits.waitFor("DeleteRecords served after failover", () -> lowWatermarkAfterDelete(destinationAdmin, tp, 10),
                    low -> low == 10);
            assertEquals(10, destination.broker(0).logStore().log(tp).orElseThrow().logStartOffset());
        }
    }

    private static long lowWatermarkAfterDelete(Admin admin, TopicPartition tp, long offset) throws Exception {
        try {
            return admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(offset))).lowWatermarks().get(tp).get()
                    .lowWatermark();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PolicyViolationException) {
                return -1L;
            }
            throw e;
        }
    }
}
