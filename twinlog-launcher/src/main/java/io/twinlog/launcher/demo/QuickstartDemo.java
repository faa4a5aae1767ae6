package io.twinlog.launcher.demo;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorAdmin.PartitionDescription;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.common.Deadline;
import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.launcher.demo.ClusterView.PartitionView;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

/**
 * {@code bin/twinlog-quickstart.sh --demo}: a guided first run over the quickstart's two clusters (issue 15 point
 * 3). Nine steps, each printed as a numbered heading with the command an operator would type and its result in
 * plain sentences, each ending in checks: create a topic on the source, produce, mirror it (topic ID, offsets and
 * epochs side by side), a consumer group commits partway on the source, failover with KIP-1279's
 * RemoveTopicsFromMirror, the group resumes on the destination, writes there (and stray writes on the old source),
 * failback (the source truncates to the last mirrored epoch, catches up, fails over back, and the destination
 * mirrors it again), and a batch-by-batch and record-by-record comparison of both clusters.
 *
 * <p>Each step needs the one before: a step that cannot go on (a wait runs out, a call is refused) ends the demo;
 * a check that does not hold is printed as {@code FAILED: ...} and the demo goes on. {@link #run} answers whether
 * every check held. Runs on the caller's thread; clients are made and closed here. A topic name already used on
 * either cluster (an earlier demo in the same data directory) makes it use {@code demo-2}, {@code demo-3}, ...
 */
public final class QuickstartDemo {
    private static final Logger log = LoggerFactory.getLogger(QuickstartDemo.class);
    private static final int STEPS = 9;
    private static final int PARTITIONS = 3;
    /** Records per partition written in step 2, in this many batches. */
    private static final int RECORDS_PER_PARTITION = 30;
    private static final int BATCHES_PER_PARTITION = 3;
    private static final int DESTINATION_WRITES_PER_PARTITION = 10;
    private static final int STRAY_WRITES_PER_PARTITION = 2;
    private static final String FAILBACK_MIRROR = "failback";
    /** Where a mirroring truncation copies what it cuts; each record says its topic in this header. */
    private static final String QUARANTINE_TOPIC = "__twinlog_quarantine";
    private static final String QUARANTINE_TOPIC_HEADER = "twinlog.quarantine.topic";
    /** As the quickstart's own mirror: a group's offsets reach the other cluster within seconds. */
    private static final String GROUP_SYNC_INTERVAL_MS = "5000";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration POLL = Duration.ofMillis(200);

    /** One step: prints its heading, acts, checks; throws when it cannot go on. */
    @FunctionalInterface
    private interface Step {
        void run() throws Exception;
    }

    /** A record as a consumer reads it, for comparing what two clusters hold. */
    private record RecordView(long offset, int leaderEpoch, String key, String value) {
    }

    private final ClusterView source;
    private final ClusterView destination;
    private final String mirror;
    private final short replicationFactor;
    private final DemoConsole console;
    private final Polls polls;
    private final Time time;

    private String topic;
    private String group;
    /** The values step 2 wrote, per partition, in offset order (offset = index). */
    private final Map<Integer, List<String>> written = new TreeMap<>();
    /** The values step 7 wrote on the destination, per partition. */
    private final Map<Integer, List<String>> writtenAfterFailover = new TreeMap<>();
    /** The values step 7 wrote on the old source after the failover, per partition. */
    private final Map<Integer, List<String>> strayWrites = new TreeMap<>();
    /** Where the group committed on the source in step 4. */
    private Map<Integer, Long> committed = Map.of();
    /** Each partition's last mirrored offset, recorded by the destination's failover (step 5). */
    private Map<Integer, Long> lastMirroredOffsets = Map.of();

    private QuickstartDemo(ClusterView source, ClusterView destination, String mirror, short replicationFactor,
                           DemoConsole console, Time time) {
        this.source = source;
        this.destination = destination;
        this.mirror = mirror;
        this.replicationFactor = replicationFactor;
        this.console = console;
        this.time = time;
        this.polls = new Polls(time);
    }

    /**
     * Runs the demo against running clusters: {@code mirror} exists on the destination and pulls from the source.
     *
     * @param replicationFactor of the demo topic (at most the brokers per cluster)
     * @return whether every check held
     */
    public static boolean run(String sourceBootstrap, String destinationBootstrap, String mirror,
                              int replicationFactor, PrintStream out) {
        try (ClusterView source = new ClusterView("source", sourceBootstrap, shortAddress(sourceBootstrap));
             ClusterView destination = new ClusterView("destination", destinationBootstrap,
                     shortAddress(destinationBootstrap))) {
            return new QuickstartDemo(source, destination, mirror, (short) replicationFactor,
                    new DemoConsole(out, STEPS), Time.SYSTEM).walkThrough();
        }
    }

    /** {@code 127.0.0.1:9092,127.0.0.1:9093} as an operator types it on the same machine: {@code :9092}. */
    static String shortAddress(String bootstrap) {
        String first = bootstrap.split(",")[0];
        return first.startsWith("127.0.0.1:") || first.startsWith("localhost:")
                ? first.substring(first.indexOf(':')) : first;
    }

    private boolean walkThrough() {
        long startMs = time.milliseconds();
        console.line("Twinlog guided demo: cluster mirroring as in KIP-1279, in " + STEPS + " steps.");
        console.line("  source cluster " + source.address() + " (" + source.bootstrap() + ")");
        console.line("  destination cluster " + destination.address() + " (" + destination.bootstrap()
                + "), with the cluster mirror '" + mirror + "' pulling from the source");
        console.line("Each step shows the command an operator would type for it ($ ...), what happened, and the checks "
                + "it makes (ok: / FAILED:).");
        List<Step> steps = List.of(this::createTopic, this::produce, this::mirrorTopic, this::commitOnSource,
                this::failOver, this::resumeOnDestination, this::writeOnDestination, this::failBack,
                this::compareClusters);
        int step = 0;
        try {
            chooseNames();
            for (Step s : steps) {
                step++;
                s.run();
            }
        } catch (DemoFailure e) {
            log.error("Demo step {} could not go on", step, e);
            console.failed("step " + step + ": " + e.getMessage());
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.error("Demo step {} failed", step, e);
            console.failed("step " + step + ": " + e);
        }
        if (step < STEPS) {
            console.say("Steps " + (step + 1) + " to " + STEPS + " skipped: each needs the one before.");
        }
        long seconds = (time.milliseconds() - startMs + 500) / 1000;
        console.blank();
        if (console.failures() == 0) {
            console.line("=== Demo done in " + seconds + " s: all " + console.checks() + " checks held. ===");
        } else {
            console.line("=== Demo FAILED in " + seconds + " s: " + console.failures() + " of " + console.checks()
                    + " checks did not hold (the FAILED lines above). ===");
        }
        return console.failures() == 0;
    }

    /** The first of demo, demo-2, demo-3, ... that neither cluster has. */
    private void chooseNames() throws Exception {
        Set<String> taken = new HashSet<>(source.topics());
        taken.addAll(destination.topics());
        topic = "demo";
        for (int i = 2; taken.contains(topic); i++) {
            topic = "demo-" + i;
        }
        group = topic + "-app";
    }

    private void createTopic() throws Exception {
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

    private void produce() throws Exception {
        console.heading(2, "Produce records to the source");
        console.command("bin/kafka-console-producer.sh --bootstrap-server " + source.address() + " --topic " + topic);
        int perBatch = RECORDS_PER_PARTITION / BATCHES_PER_PARTITION;
        for (int p = 0; p < PARTITIONS; p++) {
            written.put(p, new ArrayList<>());
        }
        try (KafkaProducer<String, String> producer = producer(source)) {
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
                "log end offsets on the source: " + perPartition(ends));
    }

    private void mirrorTopic() throws Exception {
        console.heading(3, "Mirror the topic to the destination cluster");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --start --mirror "
                + mirror + " --topic " + topic);
        startMirroring(destination, mirror);
        console.say("The destination creates the topic with the source's topic ID and copies its batches as they are. "
                + "Waiting until it has them all (--describe shows each partition's state and lag):");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --describe --mirror "
                + mirror);
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        awaitCaughtUp(destination, mirror, source, sourceEnds);
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
                "the same offsets on both clusters: log end offsets " + perPartition(ends(onDestination)));
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

    private void commitOnSource() throws Exception {
        console.heading(4, "A consumer group reads part of the topic on the source and commits");
        committed = new TreeMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            committed.put(p, 10L + 5L * p); // partway, a different point per partition
        }
        long toRead = committed.values().stream().mapToLong(Long::longValue).sum();
        console.command("bin/kafka-console-consumer.sh --bootstrap-server " + source.address() + " --topic " + topic
                + " --group " + group + " --from-beginning --max-messages " + toRead);
        Map<Integer, List<ConsumerRecord<String, String>>> read = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = consumer(source, group, "earliest")) {
            consumer.subscribe(List.of(topic));
            pollUntil(consumer, "the group to read " + perPartition(committed) + " records on the source", () ->
                    IntStream.range(0, PARTITIONS).allMatch(p -> read.getOrDefault(p, List.of()).size()
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
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> values(read.get(p))
                        .equals(written.get(p).subList(0, committed.get(p).intValue()))),
                "it read the records in order, from the first one");
        Map<Integer, Long> onSource = source.groupOffsets(group, topic);
        console.command("bin/kafka-consumer-groups.sh --bootstrap-server " + source.address()
                + " --describe --group " + group);
        console.check(onSource.equals(committed), "committed offsets on the source: " + perPartition(onSource));
        console.say("The mirror copies committed offsets to the destination every " + GROUP_SYNC_INTERVAL_MS
                + " ms (mirror.groups.sync.interval.ms) while the group has no members there; waiting for it:");
        Map<Integer, Long> synced = polls.await(group + "'s offsets on the destination to equal its commits on "
                + "the source " + committed, WAIT, () -> destination.groupOffsets(group, topic), committed::equals);
        console.check(true, "offsets synced to the destination: " + perPartition(synced));
    }

    private void failOver() throws Exception {
        console.heading(5, "Fail over: the destination stops mirroring the topic and takes writes");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --remove --topic "
                + topic + " --mirror " + mirror);
        console.say("KIP-1279's failover (RemoveTopicsFromMirror); with --topic '.*' every topic of the mirror fails "
                + "over at once. It works with the source down too.");
        List<PartitionDescription> stopped = failOverTo(destination, mirror);
        Map<Integer, Long> ends = destination.endOffsets(topic, PARTITIONS);
        for (PartitionDescription p : stopped) {
            console.detail(topic + "-" + p.partition() + ": " + p.state() + ", last mirrored offset (LMO) "
                    + p.lastMirroredOffset() + " in last mirrored epoch (LME) " + p.lastMirroredEpoch()
                    + "; log end offset now " + ends.get(p.partition()));
        }
        lastMirroredOffsets = new TreeMap<>();
        stopped.forEach(p -> lastMirroredOffsets.put(p.partition(), p.lastMirroredOffset()));
        console.check(lastMirroredOffsets.values().stream().allMatch(o -> o == RECORDS_PER_PARTITION),
                "every partition is STOPPED with everything the source held mirrored: LMO " + perPartition(
                        lastMirroredOffsets));
        console.say("At its LMO each partition wrote a producer-state barrier (a control record consumers skip; hence "
                + "the log end offset " + (RECORDS_PER_PARTITION + 1) + "): producers that wrote on the source start "
                + "afresh here.");
        console.command("bin/kafka-consumer-groups.sh --bootstrap-server " + destination.address()
                + " --describe --group " + group);
        Map<Integer, Long> onDestination = destination.groupOffsets(group, topic);
        console.check(onDestination.equals(committed), group + "'s committed offsets on the destination: "
                + perPartition(onDestination) + " (as on the source)");
    }

    private void resumeOnDestination() throws Exception {
        console.heading(6, "The application moves to the destination and resumes where it stopped");
        console.command("bin/kafka-console-consumer.sh --bootstrap-server " + destination.address() + " --topic "
                + topic + " --group " + group);
        Map<Integer, Long> ends = destination.endOffsets(topic, PARTITIONS);
        Map<Integer, List<ConsumerRecord<String, String>>> read = new TreeMap<>();
        // no reset policy: without a synced offset the consumer fails instead of silently starting elsewhere
        try (KafkaConsumer<String, String> consumer = consumer(destination, group, "none")) {
            consumer.subscribe(List.of(topic));
            pollUntil(consumer, "the group to read to the end of the destination's log " + ends, () ->
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
                    && values(records).equals(written.get(p).subList((int) from, RECORDS_PER_PARTITION));
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

    private void writeOnDestination() throws Exception {
        console.heading(7, "Write to the destination, where the topic now lives");
        console.command("bin/kafka-console-producer.sh --bootstrap-server " + destination.address() + " --topic "
                + topic);
        Map<Integer, Long> before = destination.endOffsets(topic, PARTITIONS);
        Map<Integer, List<Long>> offsets = produce(destination, DESTINATION_WRITES_PER_PARTITION,
                p -> "after-failover-" + p + "-", writtenAfterFailover);
        List<PartitionView> after = destination.partitions(topic, PARTITIONS);
        console.say("Wrote " + PARTITIONS * DESTINATION_WRITES_PER_PARTITION + " records: " + offsets.entrySet()
                .stream().map(e -> topic + "-" + e.getKey() + " at offsets " + e.getValue().get(0) + "-"
                        + e.getValue().get(e.getValue().size() - 1)).collect(Collectors.joining(", ")) + ".");
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> offsets.get(p).get(0).equals(before.get(p))),
                "they follow the mirrored records: the log end offsets went from " + perPartition(before) + " to "
                        + perPartition(ends(after)));
        console.check(after.stream().allMatch(v -> v.lastBatchEpoch() == v.leaderEpoch()),
                "they carry the destination's own leader epoch (" + after.stream().map(v -> Integer.toString(
                        v.leaderEpoch())).collect(Collectors.joining(", ")) + "), above every mirrored epoch");
        console.say("Meanwhile an application nobody moved writes " + STRAY_WRITES_PER_PARTITION + " records per "
                + "partition to the old source. The destination never sees them: the two clusters have diverged, "
                + "as in KIP-1279's failback example.");
        console.command("bin/kafka-console-producer.sh --bootstrap-server " + source.address() + " --topic " + topic
                + "    # the old source");
        produce(source, STRAY_WRITES_PER_PARTITION, p -> "stray-" + p + "-", strayWrites);
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        console.check(sourceEnds.values().stream().allMatch(e -> e == RECORDS_PER_PARTITION
                + STRAY_WRITES_PER_PARTITION), "the source's log end offsets: " + perPartition(sourceEnds));
    }

    private void failBack() throws Exception {
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
                source.clusterId(), Map.of(topic, IntStream.range(0, PARTITIONS).boxed().toList()));
        lastMirrored.forEach((tp, m) -> console.detail(tp + ": the destination last mirrored offset " + m.offset()
                + " in epoch " + m.epoch() + " (LMO/LME)"));
        console.check(IntStream.range(0, PARTITIONS).allMatch(p -> lastMirrored.get(new TopicPartition(topic, p))
                        .offset() == lastMirroredOffsets.get(p)),
                "the destination answers with what it recorded at failover");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + source.address() + " --start --mirror "
                + FAILBACK_MIRROR + " --topic " + topic);
        startMirroring(source, FAILBACK_MIRROR);
        Map<Integer, Long> destinationEnds = destination.endOffsets(topic, PARTITIONS);
        List<PartitionDescription> failedBack = awaitCaughtUp(source, FAILBACK_MIRROR, destination, destinationEnds);
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
        console.check(true, "the source caught up: log end offsets " + perPartition(destinationEnds) + " on both");
        console.command("bin/kafka-console-consumer.sh --bootstrap-server " + source.address() + " --topic "
                + QUARANTINE_TOPIC + " --from-beginning --formatter-property print.headers=true");
        List<String> quarantined = quarantined(source).stream().sorted().toList();
        List<String> stray = strayWrites.values().stream().flatMap(List::stream).sorted().toList();
        console.check(quarantined.equals(stray), QUARANTINE_TOPIC + " on the source "
                + "holds the records cut: " + String.join(", ", quarantined));
        Map<Integer, Long> groupOnDestination = destination.groupOffsets(group, topic);
        Map<Integer, Long> groupOnSource = polls.await(group + "'s offsets synced back to the source "
                        + groupOnDestination, WAIT, () -> source.groupOffsets(group, topic),
                groupOnDestination::equals);
        console.check(true, group + "'s offsets follow it back: " + perPartition(groupOnSource)
                + " on the source, as on the destination");

        console.say("(c) Fail over back to the source, which serves the topic again:");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + source.address() + " --remove --topic " + topic
                + " --mirror " + FAILBACK_MIRROR);
        failOverTo(source, FAILBACK_MIRROR);
        console.check(true, "every partition of " + topic + " is STOPPED on the source: writable there again (its "
                + "log end offsets are now " + perPartition(source.endOffsets(topic, PARTITIONS)) + ": the source "
                + "wrote its own producer-state barrier)");

        console.say("(d) The destination mirrors the source again, as at the start:");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --start --mirror "
                + mirror + " --topic " + topic);
        startMirroring(destination, mirror);
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        awaitCaughtUp(destination, mirror, source, sourceEnds);
        console.check(true, "the destination is MIRRORING " + topic + " from the source again, caught up at "
                + perPartition(sourceEnds));
    }

    private void compareClusters() throws Exception {
        console.heading(9, "Compare the two clusters");
        console.command("bin/twinlog-mirrors.sh --bootstrap-server " + destination.address() + " --verify --mirror "
                + mirror + " --topic " + topic + " --full");
        Map<Integer, Long> sourceEnds = source.endOffsets(topic, PARTITIONS);
        Map<Integer, Long> destinationEnds = destination.endOffsets(topic, PARTITIONS);
        Map<Integer, List<RecordView>> sourceRecords = readAll(source, sourceEnds);
        Map<Integer, List<RecordView>> destinationRecords = readAll(destination, destinationEnds);
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

    /** Starts {@link #topic} in {@code mirrorName} on {@code cluster}; a refusal ends the demo. */
    private void startMirroring(ClusterView cluster, String mirrorName) throws Exception {
        Map<String, MirrorException> errors = cluster.mirrors().startMirrorTopics(mirrorName, List.of(topic),
                List.of(), List.of());
        if (!errors.isEmpty()) {
            throw new DemoFailure("the " + cluster.name() + " refused to start mirroring " + topic + ": " + errors);
        }
    }

    /** Fails {@link #topic} over to {@code cluster} and waits until every partition is STOPPED (writable). */
    private List<PartitionDescription> failOverTo(ClusterView cluster, String mirrorName) throws Exception {
        Map<String, MirrorException> errors = cluster.mirrors().stopMirrorTopics(mirrorName, List.of(topic),
                List.of());
        if (!errors.isEmpty()) {
            throw new DemoFailure("the " + cluster.name() + " refused to fail " + topic + " over: " + errors);
        }
        return polls.await("every partition of " + topic + " STOPPED on the " + cluster.name(), WAIT,
                () -> cluster.mirrorPartitions(mirrorName, topic), ps -> ps.size() == PARTITIONS && ps.stream()
                        .allMatch(p -> p.state().equals(MirrorPartitionState.STOPPED.name())));
    }

    /** Waits until every partition of the topic is MIRRORING on {@code cluster} and it holds {@code ends}. */
    private List<PartitionDescription> awaitCaughtUp(ClusterView cluster, String mirrorName, ClusterView from,
                                                     Map<Integer, Long> ends) throws DemoFailure {
        record Progress(List<String> states, Map<Integer, Long> ends, List<PartitionDescription> partitions) {
            @Override
            public String toString() {
                return "states " + states + ", log end offsets " + ends;
            }
        }
        Progress caughtUp = polls.await("every partition of " + topic + " MIRRORING on the " + cluster.name()
                        + " with the " + from.name() + "'s log end offsets " + ends, WAIT,
                () -> {
                    List<PartitionDescription> ps = cluster.mirrorPartitions(mirrorName, topic);
                    return new Progress(ps.stream().map(PartitionDescription::state).toList(),
                            cluster.endOffsets(topic, PARTITIONS), ps);
                },
                s -> s.states().size() == PARTITIONS && s.states().stream()
                        .allMatch(MirrorPartitionState.MIRRORING.name()::equals)
                        && s.ends().equals(ends));
        return caughtUp.partitions();
    }

    /** Writes {@code count} records to each partition; returns their offsets. */
    private Map<Integer, List<Long>> produce(ClusterView cluster, int count, IntFunction<String> prefix,
                                             Map<Integer, List<String>> values) throws Exception {
        Map<Integer, List<Future<RecordMetadata>>> sent = new TreeMap<>();
        try (KafkaProducer<String, String> producer = producer(cluster)) {
            for (int p = 0; p < PARTITIONS; p++) {
                for (int i = 0; i < count; i++) {
                    String value = prefix.apply(p) + i;
                    values.computeIfAbsent(p, x -> new ArrayList<>()).add(value);
                    sent.computeIfAbsent(p, x -> new ArrayList<>())
                            .add(producer.send(new ProducerRecord<>(topic, p, "key-" + p, value)));
                }
            }
            producer.flush();
        }
        Map<Integer, List<Long>> offsets = new TreeMap<>();
        for (Map.Entry<Integer, List<Future<RecordMetadata>>> e : sent.entrySet()) {
            List<Long> os = new ArrayList<>();
            for (Future<RecordMetadata> f : e.getValue()) {
                os.add(f.get().offset());
            }
            offsets.put(e.getKey(), os);
        }
        return offsets;
    }

    /** Every record of the topic below {@code ends}, as a consumer without a group reads it. */
    private Map<Integer, List<RecordView>> readAll(ClusterView cluster, Map<Integer, Long> ends) throws Exception {
        Map<Integer, List<RecordView>> out = new TreeMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            out.put(p, new ArrayList<>());
        }
        try (KafkaConsumer<String, String> consumer = consumer(cluster, null, "earliest")) {
            consumer.assign(IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p)).toList());
            pollUntil(consumer, "reading all of " + topic + " on the " + cluster.name() + " up to " + ends,
                    () -> consumer.assignment().stream().allMatch(tp -> consumer.position(tp)
                            >= ends.get(tp.partition())),
                    r -> out.get(r.partition()).add(new RecordView(r.offset(), r.leaderEpoch().orElse(-1), r.key(),
                            r.value())));
        }
        return out;
    }

    /** The values of the demo topic's records that truncations on {@code cluster} copied to the quarantine. */
    private List<String> quarantined(ClusterView cluster) throws Exception {
        List<TopicPartition> partitions = cluster.describe(QUARANTINE_TOPIC).partitions().stream()
                .map(p -> new TopicPartition(QUARANTINE_TOPIC, p.partition())).toList();
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(cluster, null, "earliest")) {
            consumer.assign(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            pollUntil(consumer, "reading " + QUARANTINE_TOPIC + " on the " + cluster.name() + " up to " + ends,
                    () -> partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp)), r -> {
                        Header header = r.headers().lastHeader(QUARANTINE_TOPIC_HEADER);
                        if (header != null && topic.equals(new String(header.value(), StandardCharsets.UTF_8))) {
                            out.add(r.value());
                        }
                    });
        }
        return out;
    }

    /** Polls, handing each record to {@code onRecord}, until {@code done}; a deadline ends the demo. */
    private void pollUntil(KafkaConsumer<String, String> consumer, String what, BooleanSupplier done,
                           Consumer<ConsumerRecord<String, String>> onRecord) throws DemoFailure {
        Deadline deadline = Deadline.after(time, WAIT.toMillis());
        while (!done.getAsBoolean()) {
            if (deadline.expired()) {
                throw new DemoFailure("waited " + WAIT.toSeconds() + " s for " + what + "; assignment "
                        + consumer.assignment());
            }
            consumer.poll(POLL).forEach(onRecord);
        }
    }

    private KafkaProducer<String, String> producer(ClusterView cluster) {
        Map<String, Object> configs = new HashMap<>();
        configs.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        configs.put(ProducerConfig.CLIENT_ID_CONFIG, "twinlog-demo-producer");
        configs.put(ProducerConfig.ACKS_CONFIG, "all");
        configs.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        configs.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) WAIT.toMillis());
        return new KafkaProducer<>(configs, new StringSerializer(), new StringSerializer());
    }

    /** {@code group} null: a consumer without a group (assign only). */
    private KafkaConsumer<String, String> consumer(ClusterView cluster, String group, String offsetReset) {
        Map<String, Object> configs = new HashMap<>();
        configs.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        configs.put(ConsumerConfig.CLIENT_ID_CONFIG, "twinlog-demo-consumer");
        if (group != null) {
            configs.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        configs.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        configs.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, offsetReset);
        configs.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) WAIT.toMillis());
        return new KafkaConsumer<>(configs, new StringDeserializer(), new StringDeserializer());
    }

    private static List<String> values(List<ConsumerRecord<String, String>> records) {
        return records == null ? List.of() : records.stream().map(ConsumerRecord::value).toList();
    }

    private static Map<Integer, Long> ends(List<PartitionView> partitions) {
        return partitions.stream().collect(Collectors.toMap(PartitionView::partition, PartitionView::logEndOffset,
                (a, b) -> a, TreeMap::new));
    }

    /** {@code demo-0 30, demo-1 30, demo-2 30}. */
    private String perPartition(Map<Integer, Long> values) {
        return values.entrySet().stream().map(e -> topic + "-" + e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
    }
}
