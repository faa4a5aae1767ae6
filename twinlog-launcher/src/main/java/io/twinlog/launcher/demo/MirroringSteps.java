package io.twinlog.launcher.demo;

import io.twinlog.launcher.demo.ClusterView.PartitionView;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.twinlog.launcher.demo.DemoTopic.PARTITIONS;
import static io.twinlog.launcher.demo.DemoTopic.RECORDS_PER_PARTITION;
import static io.twinlog.launcher.demo.DemoTopic.BATCHES_PER_PARTITION;
import static io.twinlog.launcher.demo.DemoTopic.GROUP_SYNC_INTERVAL_MS;
import static io.twinlog.launcher.demo.DemoTopic.WAIT;

/**
 * Steps 1 to 4 of the guided demo: create a topic on the source, produce to it, mirror it to the destination (topic
 * ID, offsets and epochs side by side), and a consumer group that reads part of it on the source and commits (its
 * offsets synced to the destination).
 */
final class MirroringSteps extends DemoSteps {
    private final short replicationFactor;

    MirroringSteps(ClusterView source, ClusterView destination, String mirror, short replicationFactor,
                   DemoConsole console, Polls polls, DemoTopic demo) {
        super(source, destination, mirror, console, polls, demo);
        this.replicationFactor = replicationFactor;
    }

    void createTopic() throws Exception {
        console.heading(1, "Create a topic on the source cluster");
        console.command("bin/kafka-topics.sh --bootstrap-server " + source.address() + " --create --topic " + topic
                + " --partitions " + PARTITIONS + " --replication-factor " + replicationFactor);
        source.admin().createTopics(List.of(new NewTopic(topic, PARTITIONS, replicationFactor))).all()
                .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        TopicDescription d = polls.await("every partition of " + topic + " to have a leader and "
                        + replicationFactor + " in-sync replicas", WAIT, () -> source.describe(topic),
                t -> t.partitions().size() == PARTITIONS && t.partitions().stream()
                        .allMatch(p -> p.leader() != null && p.isr().size() == replicationFactor));
        console.say("Created " + topic + " with topic ID " + d.topicId() + ": " + PARTITIONS + " partitions, each "
                + "stored on " + replicationFactor + " brokers (leaders: " + d.partitions().stream()
                .map(p -> topic + "-" + p.partition() + " on broker " + p.leader().id())
                .collect(Collectors.joining(", ")) + ").");
        console.check(d.partitions().stream().map(TopicPartitionInfo::isr).allMatch(i -> i.size() == replicationFactor),
                "every partition has a leader and " + replicationFactor + " in-sync replicas");
    }

    void produce() throws Exception {
        console.heading(2, "Produce records to the source");
        console.command("bin/kafka-console-producer.sh --bootstrap-server " + source.address() + " --topic " + topic);
        int perBatch = RECORDS_PER_PARTITION / BATCHES_PER_PARTITION;
        for (int p = 0; p < PARTITIONS; p++) {
            written.put(p, new ArrayList<>());
        }
        try (KafkaProducer<String, String> producer = demo.producer(source)) {
            for (int batch = 0; batch < BATCHES_PER_PARTITION; batch++) {
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int p = 0; p < PARTITIONS; p++) {
                    for (int i = 0; i < perBatch; i++) {
                        String value = "order-" + p + "-" + written.get(p).size();
                        written.get(p).add(value);
                        sent.add(producer.send(new ProducerRecord<>(topic, p, "key-" + p, value)));
                    }
                }
                producer.flush(); // one batch per partition per round
                for (Future<RecordMetadata> f : sent) {
                    f.get();
                }
            }
        }
        Map<Integer, Long> ends = source.endOffsets(topic, PARTITIONS);
        console.say("Wrote " + PARTITIONS * RECORDS_PER_PARTITION + " records, " + RECORDS_PER_PARTITION
                + " to each partition in " + BATCHES_PER_PARTITION + " batches (values order-0-0 ... order-"
                + (PARTITIONS - 1) + "-" + (RECORDS_PER_PARTITION - 1) + ").");
        console.check(ends.values().stream().allMatch(e -> e == RECORDS_PER_PARTITION),
                "log end offsets on the source: " + demo.perPartition(ends));
    }

    void mirrorTopic() throws Exception {
        console.heading(3, "Mirror the topic to the destination cluster");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --start --mirror "
                + mirror + " --topic " + topic);
        demo.startMirroring(destination, mirror);
        console.say("The destination creates the topic with the source's topic ID and copies its batches as they are. "
                + "Waiting until it has them all (--describe shows each partition's state and lag):");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --describe --mirror "
                + mirror);
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        demo.awaitCaughtUp(destination, mirror, source, sourceEnds);
        console.say("Caught up: every partition is MIRRORING with lag 0. Side by side, as any Kafka client reads them "
                + "(Metadata, ListOffsets, Fetch):");
        List<PartitionView> onSource = source.partitions(topic, PARTITIONS);
        List<PartitionView> onDestination = destination.partitions(topic, PARTITIONS);
        console.detail(String.format("%-10s %-12s %-24s %-15s %-13s %s", "partition", "cluster", "topic ID",
                "log end offset", "leader epoch", "epoch of the last batch"));
        for (int p = 0; p < PARTITIONS; p++) {
            for (PartitionView v : List.of(onSource.get(p), onDestination.get(p))) {
                console.detail(String.format("%-10s %-12s %-24s %-15d %-13d %d", v == onSource.get(p)
                                ? topic + "-" + p : "", v == onSource.get(p) ? "source" : "destination", v.topicId(),
                        v.logEndOffset(), v.leaderEpoch(), v.lastBatchEpoch()));
            }
        }
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> onSource.get(p).topicId()
                        .equals(onDestination.get(p).topicId())),
                "the same topic ID on both clusters: " + onSource.get(0).topicId());
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> onSource.get(p).logEndOffset()
                        == onDestination.get(p).logEndOffset()),
                "the same offsets on both clusters: log end offsets " + demo.perPartition(DemoTopic.ends(onDestination)));
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> onSource.get(p).lastBatchEpoch()
                        == onDestination.get(p).lastBatchEpoch()),
                "the mirrored batches keep the source's leader epochs (last batch's epoch on both: "
                        + onDestination.stream().map(v -> Integer.toString(v.lastBatchEpoch()))
                        .collect(Collectors.joining(", ")) + ")");
        console.check(onDestination.stream().allMatch(v -> v.leaderEpoch() > v.lastBatchEpoch()),
                "the destination leads each partition in an epoch above every mirrored one ("
                        + onDestination.stream().map(v -> Integer.toString(v.leaderEpoch()))
                        .collect(Collectors.joining(", ")) + ")");
        console.say("So a consumer sees the same offsets and the same record.leaderEpoch() on both clusters. The "
                + "destination's own partition leader epoch is higher: while mirroring it moves above every epoch it "
                + "copied, so records written there after a failover never reuse a mirrored epoch (KIP-1279: "
                + "destination leader epoch >= source leader epoch). While mirrored, the topic is read-only on the "
                + "destination.");
    }

    void commitOnSource() throws Exception {
        console.heading(4, "A consumer group reads part of the topic on the source and commits");
        committed.clear();
        for (int p = 0; p < PARTITIONS; p++) {
            committed.put(p, 10L + 5L * p); // partway, a different point per partition
        }
        long toRead = committed.values().stream().mapToLong(Long::longValue).sum();
        console.command("bin/kafka-console-consumer.sh --bootstrap-server " + source.address() + " --topic " + topic
                + " --group " + group + " --from-beginning --max-messages " + toRead);
        Map<Integer, List<ConsumerRecord<String, String>>> read = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = demo.consumer(source, group, "earliest")) {
            consumer.subscribe(List.of(topic));
            demo.pollUntil(consumer, "the group to read " + demo.perPartition(committed) + " records on the source",
                    () -> IntStream.range(0, PARTITIONS).allMatch(p -> read.getOrDefault(p, List.of()).size()
                            >= committed.get(p)), r -> {
                        if (r.offset() < committed.get(r.partition())) {
                            read.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(r);
                        }
                    });
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            committed.forEach((p, o) -> commit.put(new TopicPartition(topic, p), new OffsetAndMetadata(o)));
            consumer.commitSync(commit, WAIT);
        }
        console.say("Group " + group + " read " + toRead + " records (" + committed.entrySet().stream()
                .map(e -> topic + "-" + e.getKey() + " offsets 0-" + (e.getValue() - 1))
                .collect(Collectors.joining(", ")) + ") and committed where it stopped; "
                + (PARTITIONS * RECORDS_PER_PARTITION - toRead) + " records are left unread.");
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> DemoTopic.values(read.get(p))
                        .equals(written.get(p).subList(0, committed.get(p).intValue()))),
                "it read the records in order, from the first one");
        Map<Integer, Long> onSource = source.groupOffsets(group, topic);
        console.command("bin/kafka-consumer-groups.sh --bootstrap-server " + source.address()
                + " --describe --group " + group);
        console.check(onSource.equals(committed), "committed offsets on the source: " + demo.perPartition(onSource));
        console.say("The mirror copies committed offsets to the destination every " + GROUP_SYNC_INTERVAL_MS
                + " ms (mirror.groups.sync.interval.ms) while the group has no members there; waiting for it:");
        Map<Integer, Long> synced = polls.await(group + "'s offsets on the destination to equal its commits on "
                + "the source " + committed, WAIT, () -> destination.groupOffsets(group, topic), committed::equals);
        console.check(true, "offsets synced to the destination: " + demo.perPartition(synced));
    }
}
