package io.twinlog.tests.mirror;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A share group's consumers fail over with a mirror (issue 28 point 2; the KIP-1279 prototype's
 * {@code test_share_groups_commit}): an unmodified kafka-clients 4.4 {@code KafkaShareConsumer} (explicit
 * acknowledgement) accepts a mirrored topic's records on the source in two rounds, and holds a third batch it has
 * not acknowledged when the source cluster dies; the topic fails over; a consumer of the same group on the
 * destination gets every record from the synced start offsets on, each once with delivery count 1, none below them,
 * then the records written on the destination after failover.
 *
 * <p>The start offsets synced are those the source persisted, and a share partition persists its advanced start
 * offset only with its next state write (Twinlog as Kafka 4.4). The second round's writes come after the first
 * round's were answered, so they carry at least the start offset the first round left, and the destination delivers
 * again at most the second round's records (and those that were in flight). A round may well be one write: the 4.4
 * client sent the acknowledgements of 100 records it had fetched at once, polled 10 at a time with a commit after
 * each poll, together.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ShareConsumerFailoverTest {
    private static final Logger log = LoggerFactory.getLogger(ShareConsumerFailoverTest.class);
    private static final String GROUP = "tasks";
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
    private static final List<TopicPartition> ORDERS = List.of(ORDERS_0, ORDERS_1);
    private static final TopicPartition OTHER_0 = new TopicPartition("other", 0);
    /** Records of each partition of orders in the first round ({@link GroupSyncClusters#createAndMirror}). */
    private static final int FIRST_ROUND = 100;
    /** Records added to each partition of orders for the second round, and again for the records in flight. */
    private static final int NEXT_ROUND = 50;
    private static final long RECORDS = FIRST_ROUND + 2 * NEXT_ROUND;
    private static final Duration TIMEOUT = GroupSyncClusters.TIMEOUT;

    @Test
    void aShareConsumerResumesOnTheDestinationFromTheSyncedStartOffsets() throws Exception {
        try (GroupSyncClusters c = start()) {
            c.createOnSource("other");
            c.createAndMirror(Map.of(), "orders");
            // the group reads from offset 0 of every partition; set as kafka-share-groups --reset-offsets does, the
            // start offsets are persisted at once (one resolved from share.auto.offset.reset is persisted only with
            // the partition's first state write, and one not persisted is not synced)
            c.sourceAdmin().alterShareGroupOffsets(GROUP, Map.of(ORDERS_0, 0L, ORDERS_1, 0L, OTHER_0, 0L)).all().get();

            Map<TopicPartition, List<Long>> acceptedOnSource = new HashMap<>();
            KafkaShareConsumer<byte[], byte[]> onSource = shareConsumer(c.source(), "on-source");
            Map<TopicPartition, Long> synced;
            try {
                onSource.subscribe(List.of("orders", "other"));
                acceptOnSource(onSource, acceptedOnSource, 2 * FIRST_ROUND, "the first round");
                for (TopicPartition tp : ORDERS) {
                    c.produce("orders", tp.partition(), NEXT_ROUND);
                }
                acceptOnSource(onSource, acceptedOnSource, 2 * (FIRST_ROUND + NEXT_ROUND), "the second round");
                // the source's last moments: more records, fetched and not yet acknowledged when it dies
                for (TopicPartition tp : ORDERS) {
                    c.produce("orders", tp.partition(), NEXT_ROUND);
                }
                Waits.waitUntil("records in flight on the source", () -> !onSource.poll(Duration.ofMillis(200))
                        .isEmpty(), TIMEOUT);

                // the mirror copies the records and syncs what the source persisted
                for (TopicPartition tp : ORDERS) {
                    Waits.waitUntil(tp + " mirrored", () -> c.destination().broker(0).logStore().log(tp)
                            .map(l -> l.logEndOffset() == RECORDS).orElse(false), TIMEOUT);
                }
                synced = Waits.waitFor("the source's start offsets of orders synced to the destination", () -> {
                    Map<TopicPartition, Long> onTheSource = GroupSyncClusters.shareStartOffsets(c.sourceAdmin(), GROUP);
                    onTheSource.keySet().retainAll(ORDERS);
                    return onTheSource.equals(GroupSyncClusters.shareStartOffsets(c.destinationAdmin(), GROUP))
                            ? onTheSource : null;
                }, Objects::nonNull, TIMEOUT);
                c.source().killBroker(0);
            } finally {
                onSource.close(Duration.ofMillis(500)); // its broker is gone, or the test failed
            }

            // the source consumer accepted a gapless prefix of each partition, two rounds; the start offset synced
            // is at most its end (nothing it had not accepted is skipped) and at least where the first round ended
            for (TopicPartition tp : ORDERS) {
                assertEquals(LongStream.range(0, FIRST_ROUND + NEXT_ROUND).boxed().toList(),
                        acceptedOnSource.get(tp), tp.toString());
                long start = synced.get(tp);
                assertTrue(start >= FIRST_ROUND && start <= FIRST_ROUND + NEXT_ROUND,
                        tp + ": synced start offset " + start);
            }

            // the disaster: fail over; the synced start offsets stay, and are no longer synced
            long failoverStartNs = System.nanoTime();
            assertEquals(Map.of(), c.mirrors().stopMirrorTopics("dr", List.of("orders"), List.of()));
            c.awaitPartitionState("orders", "STOPPED");
            assertEquals(synced, GroupSyncClusters.shareStartOffsets(c.destinationAdmin(), GROUP));

            try (KafkaShareConsumer<byte[], byte[]> onDestination = shareConsumer(c.destination(), "on-destination")) {
                onDestination.subscribe(List.of("orders"));
                Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> received = new HashMap<>();
                Waits.waitUntil("orders consumed on the destination from the synced start offsets", () -> {
                    consume(onDestination, received);
                    return ORDERS.stream().allMatch(tp -> received.getOrDefault(tp, List.of()).stream()
                            .anyMatch(r -> r.offset() == RECORDS - 1));
                }, TIMEOUT);
                long resumedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failoverStartNs);
                Map<TopicPartition, Long> again = new HashMap<>();
                for (TopicPartition tp : ORDERS) {
                    List<ConsumerRecord<byte[], byte[]>> records = received.get(tp);
                    List<Long> offsets = records.stream().map(ConsumerRecord::offset).sorted().toList();
                    assertEquals(LongStream.range(synced.get(tp), RECORDS).boxed().toList(), offsets,
                            tp + ": every record from the synced start offset on, once, none below it");
                    assertTrue(records.stream().allMatch(r -> r.deliveryCount().orElseThrow() == 1),
                            tp + ": delivery counts start again at 1");
                    again.put(tp, offsets.stream().filter(o -> o < FIRST_ROUND + NEXT_ROUND).count());
                }
                log.info("Share consumer failover: accepted on the source up to {} of each partition, start offsets "
                                + "synced {}, delivered again on the destination of those accepted {} (at most the "
                                + "last round, {}); every record from the synced start offsets on consumed {} ms "
                                + "after the failover began", FIRST_ROUND + NEXT_ROUND, synced, again, NEXT_ROUND,
                        resumedMs);

                // written on the destination after failover: exactly these come next
                List<Long> written = new ArrayList<>();
                try (KafkaProducer<byte[], byte[]> producer = c.destination().producer(Map.of())) {
                    for (int i = 0; i < 2; i++) {
                        written.add(producer.send(new ProducerRecord<>("orders", 0, null,
                                ("after-" + i).getBytes(StandardCharsets.UTF_8))).get().offset());
                    }
                }
                Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> next = new HashMap<>();
                Waits.waitUntil("the 2 records written after failover", () -> {
                    consume(onDestination, next);
                    return next.values().stream().mapToInt(List::size).sum() >= 2;
                }, TIMEOUT);
                List<ConsumerRecord<byte[], byte[]>> nextRecords = next.getOrDefault(ORDERS_0, List.of());
                assertEquals(List.of(ORDERS_0), List.copyOf(next.keySet()));
                assertEquals(written, nextRecords.stream().map(ConsumerRecord::offset).toList());
                assertEquals(List.of("after-0", "after-1"), nextRecords.stream()
                        .map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList());
                assertTrue(nextRecords.stream().allMatch(r -> r.deliveryCount().orElseThrow() == 1));
            }
        }
    }

    /**
     * Polls, accepts every record and commits after each poll until {@code ordersAccepted} records of orders and all
     * of other are accepted: every fetched batch fully acknowledged, so its acknowledgements are written.
     */
    private static void acceptOnSource(KafkaShareConsumer<byte[], byte[]> consumer,
                                       Map<TopicPartition, List<Long>> accepted, int ordersAccepted, String round) {
        Waits.waitUntil(round + ": " + ordersAccepted + " records of orders accepted on the source", () -> {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                assertEquals((short) 1, r.deliveryCount().orElseThrow(), "no redelivery on the source");
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                accepted.computeIfAbsent(topicPartition(r), tp -> new ArrayList<>()).add(r.offset());
            }
            consumer.commitSync();
            return ORDERS.stream().mapToInt(tp -> accepted.getOrDefault(tp, List.of()).size()).sum()
                    >= ordersAccepted && accepted.getOrDefault(OTHER_0, List.of()).size() == 100;
        }, TIMEOUT);
    }

    /** One poll: each record accepted and kept by partition, then committed. */
    private static void consume(KafkaShareConsumer<byte[], byte[]> consumer,
                                Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> into) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            into.computeIfAbsent(topicPartition(r), tp -> new ArrayList<>()).add(r);
        }
        consumer.commitSync();
    }

    private static TopicPartition topicPartition(ConsumerRecord<?, ?> r) {
        return new TopicPartition(r.topic(), r.partition());
    }

    private static KafkaShareConsumer<byte[], byte[]> shareConsumer(TestCluster cluster, String clientId) {
        Map<String, Object> props = new HashMap<>(cluster.clientProperties());
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10); // a fetched batch is delivered over several polls
        return new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** Share groups are on by default; members heartbeat every 500 ms, so that they join fast. */
    private static GroupSyncClusters start() throws Exception {
        return GroupSyncClusters.start(cluster(), cluster(), GroupSyncClusters::new);
    }

    private static TestCluster.Builder cluster() {
        return GroupSyncClusters.shareGroupCluster()
                .brokerProperty("group.share.min.heartbeat.interval.ms", "500")
                .brokerProperty("group.share.heartbeat.interval.ms", "500");
    }
}
