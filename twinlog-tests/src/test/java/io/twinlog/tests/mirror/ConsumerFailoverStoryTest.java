package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The disaster-recovery story of issue 5, measured: an application consumes a mirrored topic with a consumer group
 * on the source while producers write; the source cluster dies; the operator fails the topic over; the same
 * application, same group id, pointed at the destination, continues. No record that the destination holds is
 * skipped, and what is read twice is at most what the application consumed during the last sync interval.
 */
@Timeout(300)
class ConsumerFailoverStoryTest {
    private static final String TOPIC = "orders";
    private static final String GROUP = "fulfilment";
    private static final int PARTITIONS = 3;
    private static final long SYNC_INTERVAL_MS = 2_000;

    @Test
    void applicationMovesToTheDestinationWithoutSkippingAndRereadsAtMostOneSyncInterval() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic(TOPIC, PARTITIONS, (short) 1));
            clusters.createMirror("dr", Map.of("mirror.groups.sync.interval.ms", Long.toString(SYNC_INTERVAL_MS)));
            assertEquals(Map.of(), mirrors.startMirrorTopics("dr", List.of(TOPIC), List.of(), List.of()));

            // producers write on the source while the application consumes there, committing after each batch
            List<Processed> onSource = new ArrayList<>();
            long sourceFrom = System.currentTimeMillis();
            try (KafkaProducer<byte[], byte[]> producer = source.producer(Map.of("linger.ms", 1));
                 KafkaConsumer<byte[], byte[]> app = application(source)) {
                app.subscribe(List.of(TOPIC));
                long[] seq = {0};
                Waits.waitUntil("the application runs on the source for several sync intervals", () -> {
                    produce(producer, seq, 6);
                    process(app, onSource);
                    app.commitSync();
                    return System.currentTimeMillis() - sourceFrom > 4 * SYNC_INTERVAL_MS && onSource.size() > 300;
                });
                Waits.waitFor("the group's offsets synced to the destination at least once",
                        () -> mirrors.describeClusterMirrors(List.of("dr")).get("dr").groups(),
                        groups -> groups.containsKey(GROUP) && groups.get(GROUP).offsetsSynced() > 0);
                // the last moments: more writes than the application gets to, then the source dies
                produce(producer, seq, 60);
                process(app, onSource);
                app.commitSync();
                source.killBroker(0);
            }
            long diedAt = System.currentTimeMillis();

            // the operator fails over; the same application moves to the destination
            assertEquals(Map.of(), mirrors.stopMirrorTopics("dr", List.of(TOPIC), List.of()));
            List<String> destinationLog = readAll(destination);
            List<Processed> onDestination = new ArrayList<>();
            Map<TopicPartition, Long> resumedAt = new HashMap<>();
            try (KafkaConsumer<byte[], byte[]> app = application(destination)) {
                app.subscribe(List.of(TOPIC));
                Waits.waitUntil("the application reaches the end of the destination's log", () -> {
                    if (resumedAt.isEmpty() && app.assignment().size() == PARTITIONS) {
                        app.committed(app.assignment()).forEach((tp, o) -> resumedAt.put(tp, o == null ? -1 : o.offset()));
                    }
                    process(app, onDestination);
                    app.commitSync();
                    return app.assignment().size() == PARTITIONS && app.assignment().stream()
                            .allMatch(tp -> app.position(tp) >= app.endOffsets(List.of(tp)).get(tp));
                });
            }
            System.out.println("consumer failover story: resumed at " + resumedAt);

            Set<String> seenAnywhere = values(onSource);
            seenAnywhere.addAll(values(onDestination));
            long skipped = destinationLog.stream().filter(v -> !seenAnywhere.contains(v)).count();
            Set<String> reRead = values(onDestination);
            reRead.retainAll(values(onSource));
            // the bound: what the application consumed on the source in its last sync interval, plus two seconds: the
            // sync checks its interval once a second, and the pass itself and the commit before it take time
            long window = SYNC_INTERVAL_MS + 2_000;
            long consumedInLastInterval = onSource.stream().filter(p -> p.atMs() >= diedAt - window).count();
            System.out.printf("consumer failover story: %d records on the source consumed, %d in the destination "
                            + "log, skipped %d, re-read %d (consumed in the last %d ms before the failure: %d)%n",
                    onSource.size(), destinationLog.size(), skipped, reRead.size(), window, consumedInLastInterval);
            assertEquals(0, skipped, "records the destination holds that the application never processed");
            assertTrue(reRead.size() <= consumedInLastInterval, "re-read " + reRead.size()
                    + " > consumed in the last sync interval " + consumedInLastInterval);

            // the source comes back: both clusters share every partition's records up to its last mirrored offset
            List<MirrorAdmin.PartitionDescription> failedOver = mirrors.describeClusterMirrors(List.of("dr")).get("dr")
                    .topics().get(TOPIC).partitions();
            source.startBroker(0);
            for (MirrorAdmin.PartitionDescription p : failedOver) {
                assertTrue(p.state().equals("STOPPED") && p.lastMirroredOffset() > 0, p.toString());
                MirrorInvariants.awaitSharedPrefix(source, destination, new TopicPartition(TOPIC, p.partition()),
                        p.lastMirroredOffset());
            }
        }
    }

    private record Processed(String value, long atMs) {
    }

    private static KafkaConsumer<byte[], byte[]> application(TestCluster cluster) {
        return cluster.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, GROUP,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 20));
    }

    private static void process(KafkaConsumer<byte[], byte[]> app, List<Processed> into) {
        long now = System.currentTimeMillis();
        for (ConsumerRecord<byte[], byte[]> r : app.poll(Duration.ofMillis(50))) {
            into.add(new Processed(new String(r.value(), StandardCharsets.UTF_8), now));
        }
    }

    private static Set<String> values(List<Processed> processed) {
        Set<String> out = new HashSet<>();
        processed.forEach(p -> out.add(p.value()));
        return out;
    }

    private static void produce(KafkaProducer<byte[], byte[]> producer, long[] seq, int count) throws Exception {
        for (int i = 0; i < count; i++, seq[0]++) {
            producer.send(new ProducerRecord<>(TOPIC, (int) (seq[0] % PARTITIONS), null,
                    ("order-" + seq[0]).getBytes(StandardCharsets.UTF_8)));
        }
        producer.flush();
    }

    /** Every record the destination holds after failover. */
    private static List<String> readAll(TestCluster destination) throws Exception {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = destination.consumer(Map.of())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                tps.add(new TopicPartition(TOPIC, p));
            }
            c.assign(tps);
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            Waits.waitUntil("the whole destination log read", () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return tps.stream().allMatch(tp -> c.position(tp) >= ends.get(tp));
            });
        }
        return out;
    }
}
