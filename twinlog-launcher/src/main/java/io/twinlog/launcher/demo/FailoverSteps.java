package io.twinlog.launcher.demo;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorAdmin.PartitionDescription;
import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.launcher.demo.DemoTopic.RecordView;
import io.twinlog.launcher.demo.ClusterView.PartitionView;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

import static io.twinlog.launcher.demo.DemoTopic.PARTITIONS;
import static io.twinlog.launcher.demo.DemoTopic.RECORDS_PER_PARTITION;
import static io.twinlog.launcher.demo.DemoTopic.DESTINATION_WRITES_PER_PARTITION;
import static io.twinlog.launcher.demo.DemoTopic.STRAY_WRITES_PER_PARTITION;
import static io.twinlog.launcher.demo.DemoTopic.FAILBACK_MIRROR;
import static io.twinlog.launcher.demo.DemoTopic.QUARANTINE_TOPIC;
import static io.twinlog.launcher.demo.DemoTopic.GROUP_SYNC_INTERVAL_MS;
import static io.twinlog.launcher.demo.DemoTopic.WAIT;

/**
 * Steps 5 to 9 of the guided demo: fail over to the destination (KIP-1279's RemoveTopicsFromMirror), the group
 * resumes there, writes on the destination and stray writes on the old source, failback (the source truncates to
 * the last mirrored epoch, catches up, fails over back, and the destination mirrors it again), and a batch-by-batch
 * and record-by-record comparison of both clusters.
 */
final class FailoverSteps extends DemoSteps {
    FailoverSteps(ClusterView source, ClusterView destination, String mirror, DemoConsole console, Polls polls,
                  DemoTopic demo) {
        super(source, destination, mirror, console, polls, demo);
    }

    void failOver() throws Exception {
        console.heading(5, "Fail over: the destination stops mirroring the topic and takes writes");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --remove --topic "
                + topic + " --mirror " + mirror);
        console.say("KIP-1279's failover (RemoveTopicsFromMirror); with --topic '.*' every topic of the mirror fails "
                + "over at once. It works with the source down too.");
        List<PartitionDescription> stopped = demo.failOverTo(destination, mirror);
        Map<Integer, Long> ends = destination.endOffsets(topic, PARTITIONS);
        for (PartitionDescription p : stopped) {
            console.detail(topic + "-" + p.partition() + ": " + p.state() + ", last mirrored offset (LMO) "
                    + p.lastMirroredOffset() + " in last mirrored epoch (LME) " + p.lastMirroredEpoch()
                    + "; log end offset now " + ends.get(p.partition()));
        }
        lastMirroredOffsets.clear();
        stopped.forEach(p -> lastMirroredOffsets.put(p.partition(), p.lastMirroredOffset()));
        console.check(lastMirroredOffsets.values().stream().allMatch(o -> o == RECORDS_PER_PARTITION),
                "every partition is STOPPED with everything the source held mirrored: LMO " + demo.perPartition(
                        lastMirroredOffsets));
        console.say("At its LMO each partition wrote a producer-state barrier (a control record consumers skip; hence "
                + "the log end offset " + (RECORDS_PER_PARTITION + 1) + "): producers that wrote on the source start "
                + "afresh here.");
        console.command("bin/kafka-consumer-groups.sh --bootstrap-server " + destination.address()
                + " --describe --group " + group);
        Map<Integer, Long> onDestination = destination.groupOffsets(group, topic);
        console.check(onDestination.equals(committed), group + "'s committed offsets on the destination: "
                + demo.perPartition(onDestination) + " (as on the source)");
    }

    void resumeOnDestination() throws Exception {
        console.heading(6, "The application moves to the destination and resumes where it stopped");
        console.command("bin/kafka-console-consumer.sh --bootstrap-server " + destination.address() + " --topic "
                + topic + " --group " + group);
        Map<Integer, Long> ends = destination.endOffsets(topic, PARTITIONS);
        Map<Integer, List<ConsumerRecord<String, String>>> read = new TreeMap<>();
        // no reset policy: without a synced offset the consumer fails instead of silently starting elsewhere
        try (KafkaConsumer<String, String> consumer = demo.consumer(destination, group, "none")) {
            consumer.subscribe(List.of(topic));
            demo.pollUntil(consumer, "the group to read to the end of the destination's log " + ends, () ->
                    consumer.assignment().size() == PARTITIONS && consumer.assignment().stream()
                            .allMatch(tp -> consumer.position(tp) >= ends.get(tp.partition())),
                    r -> read.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(r));
            consumer.commitSync(WAIT);
        }
        boolean resumedAtCommitted = true;
        boolean exactlyTheUnread = true;
        long total = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            List<ConsumerRecord<String, String>> records = read.getOrDefault(p, List.of());
            long from = committed.get(p);
            List<Long> offsets = records.stream().map(ConsumerRecord::offset).toList();
            List<Long> unread = LongStream.range(from, RECORDS_PER_PARTITION).boxed().toList();
            resumedAtCommitted &= !records.isEmpty() && records.get(0).offset() == from;
            exactlyTheUnread &= offsets.equals(unread)
                    && DemoTopic.values(records).equals(written.get(p).subList((int) from, RECORDS_PER_PARTITION));
            total += records.size();
            console.detail(topic + "-" + p + ": committed offset " + from + ", first record read at offset "
                    + (records.isEmpty() ? "(none)" : records.get(0).offset()) + ", read " + records.size()
                    + " records" + (records.isEmpty() ? "" : " up to offset " + records.get(records.size() - 1)
                    .offset()));
        }
        console.check(resumedAtCommitted, "the group resumed at its committed offset on every partition");
        console.check(exactlyTheUnread, "it read " + total + " records: exactly those it had not read on the source, "
                + "none skipped, none twice");
    }

    void writeOnDestination() throws Exception {
        console.heading(7, "Write to the destination, where the topic now lives");
        console.command("bin/kafka-console-producer.sh --bootstrap-server " + destination.address() + " --topic "
                + topic);
        Map<Integer, Long> before = destination.endOffsets(topic, PARTITIONS);
        Map<Integer, List<Long>> offsets = demo.produce(destination, DESTINATION_WRITES_PER_PARTITION,
                p -> "after-failover-" + p + "-", writtenAfterFailover);
        List<PartitionView> after = destination.partitions(topic, PARTITIONS);
        console.say("Wrote " + PARTITIONS * DESTINATION_WRITES_PER_PARTITION + " records: " + offsets.entrySet()
                .stream().map(e -> topic + "-" + e.getKey() + " at offsets " + e.getValue().get(0) + "-"
                        + e.getValue().get(e.getValue().size() - 1)).collect(Collectors.joining(", ")) + ".");
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> offsets.get(p).get(0).equals(before.get(p))),
                "they follow the mirrored records: the log end offsets went from " + demo.perPartition(before) + " to "
                        + demo.perPartition(DemoTopic.ends(after)));
        console.check(after.stream().allMatch(v -> v.lastBatchEpoch() == v.leaderEpoch()),
                "they carry the destination's own leader epoch (" + after.stream().map(v -> Integer.toString(
                        v.leaderEpoch())).collect(Collectors.joining(", ")) + "), above every mirrored epoch");
        console.say("Meanwhile an application nobody moved writes " + STRAY_WRITES_PER_PARTITION + " records per "
                + "partition to the old source. The destination never sees them: the two clusters have diverged, "
                + "as in KIP-1279's failback example.");
        console.command("bin/kafka-console-producer.sh --bootstrap-server " + source.address() + " --topic " + topic
                + "    # the old source");
        demo.produce(source, STRAY_WRITES_PER_PARTITION, p -> "stray-" + p + "-", strayWrites);
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        console.check(sourceEnds.values().stream().allMatch(e -> e == RECORDS_PER_PARTITION
                + STRAY_WRITES_PER_PARTITION), "the source's log end offsets: " + demo.perPartition(sourceEnds));
    }

    void failBack() throws Exception {
        console.heading(8, "Fail back: the source mirrors the destination, then takes over again");
        console.say("(a) On the source, a cluster mirror that pulls from the destination:");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + source.address() + " --create --mirror "
                + FAILBACK_MIRROR + " --source-bootstrap-server " + destination.address()
                + " --groups-sync-interval-ms " + GROUP_SYNC_INTERVAL_MS);
        if (source.mirrors().listClusterMirrors(false).stream().noneMatch(m -> m.name().equals(FAILBACK_MIRROR))) {
            source.mirrors().createClusterMirror(FAILBACK_MIRROR, Map.of("bootstrap.servers", destination.bootstrap(),
                    "mirror.groups.sync.interval.ms", GROUP_SYNC_INTERVAL_MS));
        }
        console.say("(b) Start the topic in it. Each partition of the source asks the destination what it last "
                + "mirrored from the source (LastMirroredEpochs), keeps its log up to there, checked batch by batch, "
                + "and cuts the rest (copied to __twinlog_quarantine first); then it copies the destination's "
                + "records.");
        Map<TopicPartition, MirrorAdmin.LastMirrored> lastMirrored = destination.mirrors().lastMirroredEpochs(
                source.clusterId(), Map.of(topic, IntStream.range(0, PARTITIONS).boxed().toList()), Map.of());
        lastMirrored.forEach((tp, m) -> console.detail(tp + ": the destination last mirrored offset " + m.offset()
                + " in epoch " + m.epoch() + " (LMO/LME)"));
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> lastMirrored.get(new TopicPartition(topic, p))
                        .offset() == lastMirroredOffsets.get(p)),
                "the destination answers with what it recorded at failover");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + source.address() + " --start --mirror "
                + FAILBACK_MIRROR + " --topic " + topic);
        demo.startMirroring(source, FAILBACK_MIRROR);
        Map<Integer, Long> destinationEnds = destination.endOffsets(topic, PARTITIONS);
        List<PartitionDescription> failedBack = demo.awaitCaughtUp(source, FAILBACK_MIRROR, destination,
                destinationEnds);
        for (PartitionDescription p : failedBack) {
            long lmo = lastMirroredOffsets.get(p.partition());
            console.detail(topic + "-" + p.partition() + ": truncated at offset " + p.truncationOffset() + ", "
                    + p.truncatedOffsets() + " record(s) cut (offsets " + lmo + "-" + (lmo + p.truncatedOffsets() - 1)
                    + "); then copied offsets " + lmo + "-" + (destinationEnds.get(p.partition()) - 1)
                    + " from the destination");
        }
        console.check(failedBack.stream().allMatch(p -> p.truncationOffset() == lastMirroredOffsets.get(p.partition())
                        && p.truncatedOffsets() == STRAY_WRITES_PER_PARTITION),
                "the source cut exactly its " + STRAY_WRITES_PER_PARTITION + " stray records per partition, at the "
                        + "last mirrored offset, and kept everything before it");
        console.check(true, "the source caught up: log end offsets " + demo.perPartition(destinationEnds) + " on both");
        console.command("bin/kafka-console-consumer.sh --bootstrap-server " + source.address() + " --topic "
                + QUARANTINE_TOPIC + " --from-beginning --formatter-property print.headers=true");
        List<String> quarantined = demo.quarantined(source).stream().sorted().toList();
        List<String> stray = strayWrites.values().stream().flatMap(List::stream).sorted().toList();
        console.check(quarantined.equals(stray), QUARANTINE_TOPIC + " on the source "
                + "holds the records cut: " + String.join(", ", quarantined));
        Map<Integer, Long> groupOnDestination = destination.groupOffsets(group, topic);
        Map<Integer, Long> groupOnSource = polls.await(group + "'s offsets synced back to the source "
                        + groupOnDestination, WAIT, () -> source.groupOffsets(group, topic),
                groupOnDestination::equals);
        console.check(true, group + "'s offsets follow it back: " + demo.perPartition(groupOnSource)
                + " on the source, as on the destination");

        console.say("(c) Fail over back to the source, which serves the topic again:");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + source.address() + " --remove --topic " + topic
                + " --mirror " + FAILBACK_MIRROR);
        demo.failOverTo(source, FAILBACK_MIRROR);
        console.check(true, "every partition of " + topic + " is STOPPED on the source: writable there again (its "
                + "log end offsets are now " + demo.perPartition(source.endOffsets(topic, PARTITIONS)) + ": the source "
                + "wrote its own producer-state barrier)");

        console.say("(d) The destination mirrors the source again, as at the start:");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --start --mirror "
                + mirror + " --topic " + topic);
        demo.startMirroring(destination, mirror);
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        demo.awaitCaughtUp(destination, mirror, source, sourceEnds);
        console.check(true, "the destination is MIRRORING " + topic + " from the source again, caught up at "
                + demo.perPartition(sourceEnds));
    }

    void compareClusters() throws Exception {
        console.heading(9, "Compare the two clusters");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --verify --mirror "
                + mirror + " --topic " + topic + " --full");
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        Map<Integer, Long> destinationEnds = destination.endOffsets(topic, PARTITIONS);
        Map<Integer, List<RecordView>> sourceRecords = demo.readAll(source, sourceEnds);
        Map<Integer, List<RecordView>> destinationRecords = demo.readAll(destination, destinationEnds);
        boolean sameBatches = true;
        boolean sameRecords = true;
        boolean expectedValues = true;
        console.detail(String.format("%-10s %-28s %-9s %-9s %s", "partition", "log end offset (src / dst)",
                "batches", "records", "comparison"));
        for (int p = 0; p < PARTITIONS; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            List<BatchIdentity> a = source.batches(tp, sourceEnds.get(p));
            List<BatchIdentity> b = destination.batches(tp, destinationEnds.get(p));
            boolean batchesEqual = a.equals(b);
            boolean recordsEqual = sourceRecords.get(p).equals(destinationRecords.get(p));
            List<String> expected = new ArrayList<>(written.get(p));
            expected.addAll(writtenAfterFailover.get(p));
            expectedValues &= sourceRecords.get(p).stream().map(RecordView::value).toList().equals(expected);
            sameBatches &= batchesEqual;
            sameRecords &= recordsEqual;
            console.detail(String.format("%-10s %-28s %-9d %-9d %s", tp, sourceEnds.get(p) + " / "
                            + destinationEnds.get(p), a.size(), sourceRecords.get(p).size(),
                    batchesEqual && recordsEqual ? "identical" : "DIFFERENT"));
        }
        console.check(sourceEnds.equals(destinationEnds), "the same log end offsets on both clusters");
        console.check(sameBatches, "the same batches on both clusters, batch by batch: base and last offsets, "
                + "leader epoch and CRC");
        console.check(sameRecords, "the same records, record by record: offset, leader epoch, key and value");
        console.check(expectedValues, "each partition holds the " + RECORDS_PER_PARTITION + " records written on "
                + "the source and the " + DESTINATION_WRITES_PER_PARTITION + " written on the destination, in order; "
                + "the stray writes are gone");
    }
}
