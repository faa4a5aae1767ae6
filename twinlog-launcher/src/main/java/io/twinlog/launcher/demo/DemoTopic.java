package io.twinlog.launcher.demo;

import io.twinlog.clients.mirror.MirrorAdmin.PartitionDescription;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.common.Deadline;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.launcher.demo.ClusterView.PartitionView;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The guided demo's topic on both clusters: its name and group, what the steps wrote and recorded (later steps
 * check against it), and how the steps act on it: produce and read its records, start mirroring it, fail it over,
 * wait until a mirror has caught up. Every wait has a deadline ({@value #WAIT_SECONDS} s) whose expiry ends the
 * demo ({@link DemoFailure}).
 */
final class DemoTopic {
    static final int PARTITIONS = 3;
    /** Records per partition written in step 2, in this many batches. */
    static final int RECORDS_PER_PARTITION = 30;
    static final int BATCHES_PER_PARTITION = 3;
    static final int DESTINATION_WRITES_PER_PARTITION = 10;
    static final int STRAY_WRITES_PER_PARTITION = 2;
    static final String FAILBACK_MIRROR = "failback";
    /** Where a mirroring truncation copies what it cuts; each record says its topic in this header. */
    static final String QUARANTINE_TOPIC = "__twinlog_quarantine";
    static final String QUARANTINE_TOPIC_HEADER = "twinlog.quarantine.topic";
    /** As the quickstart's own mirror: a group's offsets reach the other cluster within seconds. */
    static final String GROUP_SYNC_INTERVAL_MS = "5000";
    static final long WAIT_SECONDS = 60;
    static final Duration WAIT = Duration.ofSeconds(WAIT_SECONDS);
    static final Duration POLL = Duration.ofMillis(200);

    /** A record as a consumer reads it, for comparing what two clusters hold. */
    record RecordView(long offset, int leaderEpoch, String key, String value) {
    }

    final String topic;
    final String group;
    /** The values step 2 wrote, per partition, in offset order (offset = index). */
    final Map<Integer, List<String>> written = new TreeMap<>();
    /** The values step 7 wrote on the destination, per partition. */
    final Map<Integer, List<String>> writtenAfterFailover = new TreeMap<>();
    /** The values step 7 wrote on the old source after the failover, per partition. */
    final Map<Integer, List<String>> strayWrites = new TreeMap<>();
    /** Where the group committed on the source in step 4. */
    final Map<Integer, Long> committed = new TreeMap<>();
    /** Each partition's last mirrored offset, recorded by the destination's failover (step 5). */
    final Map<Integer, Long> lastMirroredOffsets = new TreeMap<>();
    private final Polls polls;
    private final Time time;

    DemoTopic(String topic, Polls polls, Time time) {
        this.topic = topic;
        this.group = topic + "-app";
        this.polls = polls;
        this.time = time;
    }

    /** Starts the demo topic in {@code mirrorName} on {@code cluster}; a refusal ends the demo. */
    void startMirroring(ClusterView cluster, String mirrorName) throws Exception {
        Map<String, MirrorException> errors = cluster.mirrors().startMirrorTopics(mirrorName, List.of(topic),
                List.of(), List.of());
        if (!errors.isEmpty()) {
            throw new DemoFailure("the " + cluster.name() + " refused to start mirroring " + topic + ": " + errors);
        }
    }

    /** Fails the demo topic over to {@code cluster} and waits until every partition is STOPPED (writable). */
    List<PartitionDescription> failOverTo(ClusterView cluster, String mirrorName) throws Exception {
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
    List<PartitionDescription> awaitCaughtUp(ClusterView cluster, String mirrorName, ClusterView from,
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
    Map<Integer, List<Long>> produce(ClusterView cluster, int count, IntFunction<String> prefix,
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
    Map<Integer, List<RecordView>> readAll(ClusterView cluster, Map<Integer, Long> ends) throws Exception {
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
    List<String> quarantined(ClusterView cluster) throws Exception {
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
    void pollUntil(KafkaConsumer<String, String> consumer, String what, BooleanSupplier done,
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

    KafkaProducer<String, String> producer(ClusterView cluster) {
        Map<String, Object> configs = new HashMap<>();
        configs.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        configs.put(ProducerConfig.CLIENT_ID_CONFIG, "twinlog-demo-producer");
        configs.put(ProducerConfig.ACKS_CONFIG, "all");
        configs.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        configs.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) WAIT.toMillis());
        return new KafkaProducer<>(configs, new StringSerializer(), new StringSerializer());
    }

    /** {@code group} null: a consumer without a group (assign only). */
    KafkaConsumer<String, String> consumer(ClusterView cluster, String group, String offsetReset) {
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

    static List<String> values(List<ConsumerRecord<String, String>> records) {
        return records == null ? List.of() : records.stream().map(ConsumerRecord::value).toList();
    }

    static Map<Integer, Long> ends(List<PartitionView> partitions) {
        return partitions.stream().collect(Collectors.toMap(PartitionView::partition, PartitionView::logEndOffset,
                (a, b) -> a, TreeMap::new));
    }

    /** {@code demo-0 30, demo-1 30, demo-2 30}. */
    String perPartition(Map<Integer, Long> values) {
        return values.entrySet().stream().map(e -> topic + "-" + e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
    }
}
