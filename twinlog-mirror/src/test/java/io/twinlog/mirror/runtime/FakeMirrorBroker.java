package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MetadataListener;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.Json;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.partition.EpochHistory;
import io.twinlog.mirror.partition.PartitionView;
import io.twinlog.mirror.partition.SourceProblem;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One destination broker (id 0) as the mirror runtime sees it, in memory: the mirror definitions and state records
 * its seams read and write ({@link MirrorRecords}, version-checked like ZooKeeper), the metadata image made from
 * them ({@link MirrorMetadata}: every write makes a new image, told to the listeners), its partitions
 * ({@link LocalPartitions}), the mirrors' sources ({@link MirrorSource.Factory}) and the peer ({@link MirrorPeer}).
 * Thread-safe: the manager's thread writes, the test thread looks and acts as controller and operator.
 */
final class FakeMirrorBroker implements MirrorRecords, MirrorMetadata, LocalPartitions {
    static final int BROKER = 0;

    private final Map<String, MirrorDefinition> definitions = new ConcurrentHashMap<>();
    /** Topic name to (mirror, desired state, topic ID, partition count). */
    private final Map<String, Topic> topics = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Stored> records = new ConcurrentHashMap<>();
    final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    private final List<MetadataListener> listeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<TopicPartition>> highWatermarkWatchers = new CopyOnWriteArrayList<>();
    /** Every source started, in order. */
    final List<Source> sources = new CopyOnWriteArrayList<>();
    /** The writes the next {@link #writeStates} calls refuse as changed meanwhile. */
    final AtomicInteger refuseNextWrites = new AtomicInteger();
    final AtomicInteger stateWrites = new AtomicInteger();
    private volatile MetadataImage image = MetadataImage.EMPTY;

    private record Topic(String mirror, DesiredMirrorState desired, Uuid topicId, int partitionCount) {
    }

    private record Stored(MirrorPartitionRecord record, int version) {
    }

    // --- the test's hand: operator and controller ---

    synchronized void createMirror(String name, String bootstrap) {
        definitions.put(name, new MirrorDefinition(name, Map.of(MirrorDefinition.BOOTSTRAP_SERVERS, bootstrap),
                Optional.of("source-cluster"), MirrorDefinition.State.ACTIVE, Optional.empty()));
    }

    /** A mirror topic of {@code partitionCount} partitions, each led by this broker in epoch 5 with an empty log. */
    synchronized void mirrorTopic(String mirror, String topic, int partitionCount, DesiredMirrorState desired) {
        topics.put(topic, new Topic(mirror, desired, Uuid.randomUuid(), partitionCount));
        for (int p = 0; p < partitionCount; p++) {
            partitions.putIfAbsent(new TopicPartition(topic, p), new Partition());
        }
        publish();
    }

    synchronized void setDesired(String topic, DesiredMirrorState desired) {
        Topic t = topics.get(topic);
        topics.put(topic, new Topic(t.mirror(), desired, t.topicId(), t.partitionCount()));
        publish();
    }

    /** The topic is no longer a mirror topic (its mirror deleted, say); its partitions stay. */
    synchronized void unmirror(String topic) {
        topics.remove(topic);
        publish();
    }

    /** A record already written for {@code tp} (a partition another leader took to this state). */
    synchronized void storeRecord(TopicPartition tp, MirrorPartitionRecord record) {
        records.put(tp, new Stored(record, 0));
        publish();
    }

    /** The controller raises the leader epoch (EPOCH_FENCING); a new image. */
    synchronized void raiseLeaderEpoch(TopicPartition tp, int epoch) {
        partitions.get(tp).leaderEpoch = epoch;
        publish();
    }

    synchronized void loseLeadership(TopicPartition tp) {
        partitions.get(tp).leader = false;
        publish();
    }

    synchronized void alterMirror(String name, String bootstrap) {
        MirrorDefinition def = definitions.get(name);
        definitions.put(name, new MirrorDefinition(name, Map.of(MirrorDefinition.BOOTSTRAP_SERVERS, bootstrap),
                def.sourceClusterId(), def.state(), def.stateReason()));
    }

    MirrorPartitionState state(TopicPartition tp) {
        Stored s = records.get(tp);
        return s == null ? MirrorPartitionState.UNKNOWN : s.record().state();
    }

    Optional<MirrorPartitionRecord> record(TopicPartition tp) {
        return Optional.ofNullable(records.get(tp)).map(Stored::record);
    }

    List<Source> sourcesOf(String mirror) {
        return sources.stream().filter(s -> s.mirror.equals(mirror)).toList();
    }

    // --- MirrorRecords ---

    @Override
    public Optional<MirrorDefinition> definition(String name) {
        return Optional.ofNullable(definitions.get(name));
    }

    @Override
    public synchronized boolean updateDefinition(MirrorDefinition expected, MirrorDefinition next) {
        if (!expected.equals(definitions.get(expected.name()))) {
            return false;
        }
        definitions.put(next.name(), next);
        return true;
    }

    @Override
    public synchronized MirrorStateWriter.Outcome writeStates(List<MirrorStateWriter.StateWrite> writes) {
        List<Integer> versions = new ArrayList<>();
        for (MirrorStateWriter.StateWrite w : writes) {
            Stored now = records.get(w.partition());
            int version = now == null ? -1 : now.version();
            if (version != w.expectedVersion() || refuseNextWrites.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                versions.add(MirrorStateWriter.CHANGED);
                continue;
            }
            records.put(w.partition(), new Stored(w.record(), version + 1));
            stateWrites.incrementAndGet();
            versions.add(version + 1);
        }
        publish();
        return new MirrorStateWriter.Outcome(versions, Optional.empty());
    }

    @Override
    public void writeProgress(Map<TopicPartition, MirrorProgress> progress) {
    }

    // --- MirrorMetadata ---

    @Override
    public MetadataImage image() {
        return image;
    }

    @Override
    public void addListener(MetadataListener listener) {
        listeners.add(listener);
    }

    /** A new image from what is held now, told to every listener (on the caller's thread, as only hand-offs run). */
    private void publish() {
        MetadataImage previous = image;
        Map<String, TopicImage> topicImages = new HashMap<>();
        Map<String, MirrorImage.MirrorTopic> mirrorTopics = new HashMap<>();
        Map<TopicPartition, Long> applied = new HashMap<>();
        topics.forEach((name, t) -> {
            TreeMap<Integer, PartitionImage> parts = new TreeMap<>();
            for (int p = 0; p < t.partitionCount(); p++) {
                Partition partition = partitions.get(new TopicPartition(name, p));
                int leader = partition.leader ? BROKER : 1;
                parts.put(p, new PartitionImage(p, List.of(BROKER), new PartitionState(leader, partition.leaderEpoch,
                        List.of(BROKER), partition.leaderEpoch), partition.leaderEpoch));
                if (partition.appliedTruncation > 0) {
                    applied.put(new TopicPartition(name, p), partition.appliedTruncation);
                }
            }
            topicImages.put(name, new TopicImage(name, t.topicId(), parts, Map.of(), 0));
            mirrorTopics.put(name, new MirrorImage.MirrorTopic(t.mirror(), t.desired()));
        });
        Map<TopicPartition, MirrorImage.MirrorPartition> mirrorPartitions = new HashMap<>();
        records.forEach((tp, s) -> mirrorPartitions.put(tp, new MirrorImage.MirrorPartition(s.record().state(),
                s.record().minLeaderEpoch(), Json.decode(Json.encode(s.record().toJson()), "/mirror_states/" + tp),
                s.version())));
        image = new MetadataImage("destination-cluster", Map.of(), topicImages, Map.of(), BROKER,
                new MirrorImage(mirrorTopics, mirrorPartitions, Map.of(BROKER, applied)));
        MetadataDelta delta = MetadataDelta.between(previous, image);
        listeners.forEach(l -> l.onImage(previous, image, delta));
    }

    // --- LocalPartitions ---

    @Override
    public Optional<MirrorLocalPartition> partition(TopicPartition tp) {
        return Optional.ofNullable(partitions.get(tp));
    }

    @Override
    public void watchHighWatermarks(Consumer<TopicPartition> listener) {
        highWatermarkWatchers.add(listener);
    }

    /** A replica of this broker with an empty log: the leader unless told otherwise; its ISR is itself. */
    final class Partition implements MirrorLocalPartition {
        volatile boolean leader = true;
        volatile int leaderEpoch = 5;
        volatile long logEndOffset;
        volatile long appliedTruncation;
        volatile OptionalLong barrier = OptionalLong.empty();
        final AtomicInteger barriersAppended = new AtomicInteger();

        @Override
        public boolean isLeader() {
            return leader;
        }

        @Override
        public int leaderEpoch() {
            return leaderEpoch;
        }

        @Override
        public long logEndOffset() {
            return logEndOffset;
        }

        @Override
        public long logStartOffset() {
            return 0;
        }

        @Override
        public Optional<Integer> latestEpoch() {
            return Optional.empty();
        }

        @Override
        public void appendMirrored(MemoryRecords records) {
            throw new UnsupportedOperationException("no records are fetched in these tests");
        }

        @Override
        public void truncateFullyAndStartAt(long offset, String reason) {
            logEndOffset = offset;
        }

        @Override
        public PartitionView view() {
            return new PartitionView(leaderEpoch, logEndOffset, logEndOffset, EpochHistory.EMPTY, barrier,
                    List.of(BROKER), List.of(BROKER));
        }

        @Override
        public void applyTruncationPoint(long id, long offset, String reason) {
            synchronized (FakeMirrorBroker.this) {
                logEndOffset = Math.min(logEndOffset, offset);
                appliedTruncation = id; // and this broker says so, as its metadata thread would
                publish();
            }
        }

        @Override
        public Records read(long offset, int maxBytes) {
            return MemoryRecords.EMPTY;
        }

        @Override
        public List<Long> abortOpenTransactions(long nowMs) {
            return List.of();
        }

        @Override
        public long appendProducerStateBarrier(long nowMs) {
            long offset = logEndOffset;
            logEndOffset = offset + 1; // its own ISR: the high watermark follows at once
            barrier = OptionalLong.of(offset);
            barriersAppended.incrementAndGet();
            highWatermarkWatchers.forEach(w -> partitions.forEach((tp, p) -> {
                if (p == this) {
                    w.accept(tp);
                }
            }));
            return offset;
        }
    }

    // --- MirrorSource.Factory and MirrorPeer ---

    MirrorSource.Factory sources() {
        return (def, listener) -> {
            Source source = new Source(def.name(), def.sourceBootstrap(), listener);
            sources.add(source);
            return source;
        };
    }

    MirrorPeer peer() {
        return new MirrorPeer() {
            @Override
            public Map<Integer, LastMirrored> lastMirrored(MirrorDefinition def, String localClusterId, String topic,
                                                           Uuid topicId, List<Integer> partitions) {
                return Map.of(); // the peer never mirrored from this cluster
            }

            @Override
            public OptionalLong firstDifference(MirrorCalls calls, MirrorDefinition def, TopicPartition tp,
                                                MirrorLocalPartition partition, long upTo) {
                return OptionalLong.empty();
            }

            @Override
            public MirrorQuarantine.Copied copyToQuarantine(String mirror, TopicPartition tp,
                                                            MirrorLocalPartition partition, long from, String reason) {
                return new MirrorQuarantine.Copied(0, from, partition.logEndOffset());
            }
        };
    }

    /** A mirror's source: what the worker asked of it, and its listener for the test to report through. */
    static final class Source implements MirrorSource {
        final String mirror;
        final String bootstrap;
        final MirrorFetchListener listener;
        final Set<TopicPartition> fetched = ConcurrentHashMap.newKeySet();
        volatile boolean detached;
        volatile boolean shutDown;
        volatile long replicationQuota = -1;

        Source(String mirror, String bootstrap, MirrorFetchListener listener) {
            this.mirror = mirror;
            this.bootstrap = bootstrap;
            this.listener = listener;
        }

        @Override
        public void addPartition(TopicPartition tp, String sourceTopic, MirrorLocalPartition partition) {
            fetched.add(tp);
        }

        @Override
        public void removePartition(TopicPartition tp) {
            fetched.remove(tp);
        }

        @Override
        public int partitionCount() {
            return fetched.size();
        }

        @Override
        public Optional<SourceProblem> sourceProblem(String topic, Uuid localTopicId) {
            return Optional.empty();
        }

        @Override
        public void expectClusterId(Optional<String> clusterId) {
        }

        @Override
        public Optional<String> sourceClusterId() {
            return Optional.of("source-cluster");
        }

        @Override
        public Optional<String> wrongClusterReason() {
            return Optional.empty();
        }

        @Override
        public void updateReplicationQuota(long bytesPerSecond) {
            replicationQuota = bytesPerSecond;
        }

        @Override
        public OptionalLong lastAnsweredMs(TopicPartition tp) {
            return OptionalLong.empty();
        }

        @Override
        public void detach() {
            detached = true;
            fetched.clear();
        }

        @Override
        public void shutdown() {
            shutDown = true;
        }
    }
}
