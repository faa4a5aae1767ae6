package io.twinlog.tests.replication;

import io.twinlog.controller.Controller;
import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.decisions.IsrChangeResult;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A controller task that throws answers its caller with an error at once (and logs the failure with its stack
 * trace) instead of leaving it to wait out its timeout; the controller goes on serving.
 */
@Timeout(300)
class ControllerTaskFailureTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @Test
    void aTaskThatThrowsAnswersItsCallerWithAnErrorAndTheControllerGoesOn() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TP.topic(), 1, (short) 1))).all().get();
            Controller controller = cluster.broker(0).controller();
            Waits.waitUntil("broker 0 is the controller", controller::isActive);
            PartitionImage p = Waits.waitFor("the partition's state", () -> cluster.broker(0).metadata().image()
                    .partition(TP).orElse(null), image -> image != null && image.state() != null);

            // a request the decision code cannot handle (no ISR list at all): it throws inside the controller
            Map<TopicPartition, IsrChangeResult> failed = controller.alterPartition(0, -1,
                    List.of(new IsrChange(TP, p.leaderEpoch(), p.state().partitionEpoch(), null)))
                    .get(10, TimeUnit.SECONDS);
            assertEquals(Errors.UNKNOWN_SERVER_ERROR, failed.get(TP).error());

            // the next request is served as usual
            Map<TopicPartition, IsrChangeResult> served = controller.alterPartition(0, -1,
                    List.of(new IsrChange(TP, p.leaderEpoch(), p.state().partitionEpoch(), List.of(0))))
                    .get(10, TimeUnit.SECONDS);
            assertEquals(Errors.NONE, served.get(TP).error());
        }
    }
}
