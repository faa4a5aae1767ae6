package io.twinlog.controller;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.store.ControllerEpoch;
import io.twinlog.controller.store.ControllerMovedException;
import io.twinlog.controller.store.ControllerStore;
import io.twinlog.controller.store.StaleStateException;
import io.twinlog.controller.store.StateWrite;
import io.twinlog.controller.store.StateWriteResult;
import io.twinlog.controller.store.StateWriteResult.Batch;
import io.twinlog.controller.store.StateWriteResult.Outcome;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * A working in-memory {@link ControllerStore} with the same fencing as the ZooKeeper one (controller epoch, record
 * versions, all-or-nothing transactions), plus the cluster around it (registered brokers, topics) so it can build the
 * {@link MetadataImage} the controller decides from. After every change it hands the new image to the listener,
 * as the metadata watcher does. Failures can be injected for the next writes. Thread-safe (the controller writes
 * from its event thread, the test reads from its own).
 */
final class InMemoryControllerStore implements ControllerStore {
    private record Versioned<T>(T value, int version) {
    }

    private final Map<Integer, BrokerRegistration> brokers = new TreeMap<>();
    private final Map<String, Versioned<TopicAssignment>> topics = new TreeMap<>();
    private final Map<TopicPartition, Versioned<PartitionState>> states = new HashMap<>();
    private final Map<TopicPartition, MirrorImage.MirrorPartition> mirrorPartitions = new HashMap<>();
    private static final Exception NO_FAILURE = new Exception("no failure");
    private final Deque<Exception> injectedFailures = new ArrayDeque<>();
    private int controllerId = -1;
    private int controllerEpoch;
    private int controllerEpochVersion = -1;
    private int writeAttempts;
    private int statesPerTransaction = Integer.MAX_VALUE;
    private int staleWrites;
    private Consumer<MetadataImage> listener = image -> { };

    synchronized void onChange(Consumer<MetadataImage> listener) {
        this.listener = listener;
    }

    // ---- the cluster around the controller (what brokers and admin requests would do) ----

    void registerBroker(int id, long brokerEpoch) {
        change(() -> brokers.put(id, new BrokerRegistration(id, List.of(Endpoint.parse("PLAINTEXT://localhost:"
                + (9092 + id), "test")), Optional.empty(), brokerEpoch, false)));
    }

    void unregisterBroker(int id) {
        change(() -> brokers.remove(id));
    }

    /** A new topic as the admin path writes it: the assignment only; the controller writes the states. */
    void createTopic(String name, Map<Integer, List<Integer>> replicas) {
        change(() -> topics.put(name, new Versioned<>(TopicAssignment.of(Uuid.randomUuid(), replicas), 0)));
    }

    /** A mirror partition's state record asking for a leader epoch of at least {@code minLeaderEpoch}. */
    void setMirrorPartition(TopicPartition tp, MirrorImage.MirrorPartition record) {
        change(() -> mirrorPartitions.put(tp, record));
    }

    /** Another broker claims the controllership (as after a session loss of this one). */
    void controllerMovesTo(int otherBroker) {
        change(() -> {
            controllerId = otherBroker;
            controllerEpoch++;
            controllerEpochVersion++;
        });
    }

    /** The controller's node goes away (its session expired, or an operator deleted it); the epoch stays. */
    void controllerNodeGone() {
        change(() -> controllerId = -1);
    }

    synchronized int controllerEpoch() {
        return controllerEpoch;
    }

    /** Splits later state writes into transactions of {@code states} (as ZooKeeper's 1 MiB limit does). */
    synchronized void statesPerTransaction(int states) {
        statesPerTransaction = states;
    }

    /**
     * The next store transaction fails with {@code failure} (StaleStateException: a lost race; others: ZooKeeper
     * down); null lets it through, so that a later one of the same write fails.
     */
    synchronized void failNextWrite(Exception failure) {
        injectedFailures.add(failure == null ? NO_FAILURE : failure);
    }

    synchronized int writeAttempts() {
        return writeAttempts;
    }

    /** Writes refused because a version they expected was no longer current. */
    synchronized int staleWrites() {
        return staleWrites;
    }

    synchronized Optional<PartitionState> state(TopicPartition tp) {
        return Optional.ofNullable(states.get(tp)).map(Versioned::value);
    }

    synchronized TopicAssignment assignment(String topic) {
        return topics.get(topic).value();
    }

    // ---- ControllerStore ----

    @Override
    public synchronized Optional<ControllerEpoch> tryClaim(int brokerId) {
        if (controllerId != -1) {
            return Optional.empty();
        }
        controllerId = brokerId;
        controllerEpoch++;
        controllerEpochVersion++;
        ControllerEpoch claimed = new ControllerEpoch(controllerEpoch, controllerEpochVersion);
        publish();
        return Optional.of(claimed);
    }

    /** Each transaction is all or nothing; a write of more states is split, as the ZooKeeper store splits it. */
    @Override
    public synchronized StateWriteResult writeStates(ControllerEpoch epoch, List<StateWrite> writes) {
        StateWriteResult result = StateWriteResult.inTransactions(writes, statesPerTransaction, batch -> {
            try {
                checkBeforeWrite(epoch);
                checkVersions(batch);
                batch.forEach(this::apply);
                return Batch.committed(batch);
            } catch (ControllerMovedException e) {
                return new Batch(batch, Outcome.FENCED, e.getMessage());
            } catch (StaleStateException e) {
                return new Batch(batch, Outcome.STALE, e.getMessage());
            } catch (Exception e) {
                return Batch.failed(batch, e);
            }
        });
        if (!result.committed().isEmpty()) {
            publish();
        }
        return result;
    }

    @Override
    public synchronized boolean holdsControllership(int brokerId) {
        return controllerId == brokerId;
    }

    @Override
    public synchronized void writeAssignment(ControllerEpoch epoch, String topic, TopicAssignment assignment,
                                             int expectedVersion, List<StateWrite> stateWrites) throws Exception {
        checkBeforeWrite(epoch);
        Versioned<TopicAssignment> current = topics.get(topic);
        if (current == null || current.version() != expectedVersion) {
            throw new StaleStateException("Topic " + topic + " changed since it was read");
        }
        checkVersions(stateWrites);
        topics.put(topic, new Versioned<>(assignment, expectedVersion + 1));
        stateWrites.forEach(this::apply);
        publish();
    }

    @Override
    public synchronized void resign(int brokerId) {
        if (controllerId == brokerId) {
            controllerId = -1;
        }
    }

    private void checkBeforeWrite(ControllerEpoch epoch) throws Exception {
        writeAttempts++;
        Exception injected = injectedFailures.poll();
        if (injected != null && injected != NO_FAILURE) {
            throw injected;
        }
        if (epoch.zkVersion() != controllerEpochVersion) {
            throw new ControllerMovedException("Controller epoch " + epoch.epoch() + " is no longer current");
        }
    }

    private void checkVersions(List<StateWrite> writes) throws StaleStateException {
        for (StateWrite w : writes) {
            TopicPartition tp = w.partition();
            if (!topics.containsKey(tp.topic())) {
                throw new StaleStateException("Topic " + tp.topic() + " no longer exists");
            }
            Versioned<PartitionState> current = states.get(tp);
            int version = current == null ? StateWrite.CREATE : current.version();
            if (version != w.expectedVersion()) {
                staleWrites++;
                throw new StaleStateException("State of " + tp + " is at version " + version + ", not "
                        + w.expectedVersion());
            }
        }
    }

    private void apply(StateWrite w) {
        states.put(w.partition(), new Versioned<>(w.state(), w.expectedVersion() + 1));
    }

    // ---- the image, as the metadata watcher would build it ----

    synchronized MetadataImage image() {
        Map<String, TopicImage> topicImages = new HashMap<>();
        topics.forEach((name, assignment) -> {
            SortedMap<Integer, PartitionImage> partitions = new TreeMap<>();
            assignment.value().replicas().forEach((p, replicas) -> {
                Versioned<PartitionState> s = states.get(new TopicPartition(name, p));
                partitions.put(p, new PartitionImage(p, replicas, s == null ? null : s.value(),
                        s == null ? -1 : s.version()));
            });
            topicImages.put(name, new TopicImage(name, assignment.value().topicId(), partitions,
                    assignment.value().reassigning(), assignment.version()));
        });
        return new MetadataImage("test-cluster", brokers, topicImages, Map.of(), controllerId,
                new MirrorImage(Map.of(), mirrorPartitions));
    }

    private synchronized void change(Runnable mutation) {
        mutation.run();
        publish();
    }

    /** Under the lock, so images reach the listener in the order of the changes (it only enqueues). */
    private synchronized void publish() {
        listener.accept(image());
    }
}
