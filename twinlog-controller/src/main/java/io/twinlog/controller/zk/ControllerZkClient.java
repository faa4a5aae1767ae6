package io.twinlog.controller.zk;

import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.store.ControllerEpoch;
import io.twinlog.controller.store.ControllerMovedException;
import io.twinlog.controller.store.ControllerStore;
import io.twinlog.controller.store.StaleStateException;
import io.twinlog.controller.store.StateWrite;
import io.twinlog.controller.store.StateWriteResult;
import io.twinlog.controller.store.StateWriteResult.Batch;
import io.twinlog.controller.store.StateWriteResult.Outcome;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.TopicPartition;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The controller's ZooKeeper writes ({@link ControllerStore} on ZooKeeper). Every transaction first checks the
 * version of {@code /controller_epoch} (the epoch this controller claimed) and then sets each node at the version
 * the controller read: a deposed controller's write fails on the first check, a write based on a stale read fails
 * on the second.
 *
 * <p>Partition states are written {@value #MAX_OPS_PER_TRANSACTION} per transaction (ZooKeeper caps a request at
 * 1 MiB), so a large write can commit in part: each transaction is all or nothing, and {@link #writeStates}
 * returns each one's outcome. An assignment write is a single transaction.
 */
public final class ControllerZkClient implements ControllerStore {
    /** Partitions per transaction, well inside ZooKeeper's 1 MiB request limit. */
    static final int MAX_OPS_PER_TRANSACTION = 400;

    private final CuratorFramework zk;
    private final int opsPerTransaction;

    public ControllerZkClient(CuratorFramework zk) {
        this(zk, MAX_OPS_PER_TRANSACTION);
    }

    /** With smaller transactions, for tests of writes that span several. */
    ControllerZkClient(CuratorFramework zk, int opsPerTransaction) {
        this.zk = zk;
        this.opsPerTransaction = opsPerTransaction;
    }

    /** Creates the ephemeral /controller node, then claims the next controller epoch. */
    @Override
    public Optional<ControllerEpoch> tryClaim(int brokerId) throws Exception {
        // Win /controller first, then bump the epoch: only the winner may fence its predecessor's writes.
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("brokerId", brokerId);
        try {
            zk.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.CONTROLLER, Json.encode(m));
        } catch (KeeperException.NodeExistsException e) {
            if (!holdsControllership(brokerId)) {
                return Optional.empty();
            }
            // our own node in this session (a retried create, or kept after a local resignation): still ours
        }
        while (true) {
            Stat stat = new Stat();
            try {
                byte[] data = zk.getData().storingStatIn(stat).forPath(ZkPaths.CONTROLLER_EPOCH);
                int epoch = ((Number) Json.decode(data, ZkPaths.CONTROLLER_EPOCH).get("epoch")).intValue() + 1;
                zk.setData().withVersion(stat.getVersion()).forPath(ZkPaths.CONTROLLER_EPOCH, epochJson(epoch));
                return Optional.of(new ControllerEpoch(epoch, stat.getVersion() + 1));
            } catch (KeeperException.NoNodeException e) {
                try {
                    zk.create().forPath(ZkPaths.CONTROLLER_EPOCH, epochJson(1));
                    return Optional.of(new ControllerEpoch(1, 0));
                } catch (KeeperException.NodeExistsException raced) {
                    // created concurrently (by a predecessor's last act); read it again
                }
            } catch (KeeperException.BadVersionException raced) {
                // bumped concurrently; read it again
            }
        }
    }

    @Override
    public StateWriteResult writeStates(ControllerEpoch epoch, List<StateWrite> writes) {
        return StateWriteResult.inTransactions(writes, opsPerTransaction, batch -> writeBatch(epoch, batch));
    }

    /**
     * One transaction: the controller-epoch check, then each state at the version the controller read. A state to
     * create needs its partition's node, which the topic's creation writes; only a transaction refused for a missing
     * node makes them (one round trip each: the initial leadership of 1,000 partitions spent about 7 s making nodes
     * that all existed, decision 94) and is tried once more.
     */
    private Batch writeBatch(ControllerEpoch epoch, List<StateWrite> batch) {
        try {
            try {
                zk.transaction().forOperations(operations(epoch, batch));
                return Batch.committed(batch);
            } catch (KeeperException.NoNodeException e) {
                if (batch.stream().noneMatch(StateWrite::creates)) {
                    return refused(epoch, batch, e);
                }
                for (StateWrite w : batch) {
                    if (w.creates()) {
                        ensurePartitionNode(w.partition());
                    }
                }
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
                return refused(epoch, batch, e);
            }
            try {
                zk.transaction().forOperations(operations(epoch, batch));
                return Batch.committed(batch);
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException
                     | KeeperException.NoNodeException e) {
                return refused(epoch, batch, e);
            }
        } catch (StaleStateException e) {
            return new Batch(batch, Outcome.STALE, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Batch.failed(batch, e);
        } catch (Exception e) {
            // broad: Curator throws Exception; the batch fails with it and its caller answers
            return Batch.failed(batch, e);
        }
    }

    private List<CuratorOp> operations(ControllerEpoch epoch, List<StateWrite> batch) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(zk.transactionOp().check().withVersion(epoch.zkVersion()).forPath(ZkPaths.CONTROLLER_EPOCH));
        for (StateWrite w : batch) {
            String path = ZkPaths.partitionState(w.partition().topic(), w.partition().partition());
            byte[] data = Json.encode(w.state().toJson());
            if (w.creates()) {
                ops.add(zk.transactionOp().create().forPath(path, data));
            } else {
                ops.add(zk.transactionOp().setData().withVersion(w.expectedVersion()).forPath(path, data));
            }
        }
        return ops;
    }

    /**
     * Why ZooKeeper refused a transaction: the controller epoch moved (FENCED), or a state changed since it was
     * read (STALE) — unless every state already holds what this batch writes. That is this very transaction,
     * committed on a first attempt whose answer was lost with the connection and then refused when Curator sent
     * it again: reported as committed, since it is.
     */
    private Batch refused(ControllerEpoch epoch, List<StateWrite> batch, KeeperException e) throws Exception {
        Stat stat = zk.checkExists().forPath(ZkPaths.CONTROLLER_EPOCH);
        if (stat == null || stat.getVersion() != epoch.zkVersion()) {
            return new Batch(batch, Outcome.FENCED, "controller epoch " + epoch.epoch()
                    + " is no longer current; another broker became controller");
        }
        if (alreadyWritten(batch)) {
            return Batch.committed(batch);
        }
        return new Batch(batch, Outcome.STALE, refusedOp(batch, e) + " changed since it was read ("
                + e.code() + ")");
    }

    /** True if every state of the batch is at the version and holds the data this batch writes. */
    private boolean alreadyWritten(List<StateWrite> batch) throws Exception {
        for (StateWrite w : batch) {
            Stat stat = new Stat();
            try {
                byte[] data = zk.getData().storingStatIn(stat)
                        .forPath(ZkPaths.partitionState(w.partition().topic(), w.partition().partition()));
                int writtenVersion = w.creates() ? 0 : w.expectedVersion() + 1;
                if (stat.getVersion() != writtenVersion || !Arrays.equals(data, Json.encode(w.state().toJson()))) {
                    return false;
                }
            } catch (KeeperException.NoNodeException gone) {
                return false;
            }
        }
        return true;
    }

    /** The state whose operation ZooKeeper refused (op 0 is the epoch check, op i the batch's write i - 1). */
    private static String refusedOp(List<StateWrite> batch, KeeperException e) {
        List<OpResult> results = e.getResults();
        if (results != null) {
            for (int i = 1; i < results.size() && i <= batch.size(); i++) {
                if (results.get(i) instanceof OpResult.ErrorResult error
                        && error.getErr() != KeeperException.Code.OK.intValue()
                        && error.getErr() != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                    StateWrite w = batch.get(i - 1);
                    return "the state of " + w.partition() + " (expected at version " + w.expectedVersion() + ")";
                }
            }
        }
        return "a partition state of the batch";
    }

    /** One transaction: the epoch check, the assignment record at its version, the states at theirs. */
    @Override
    public void writeAssignment(ControllerEpoch epoch, String topic, TopicAssignment assignment, int expectedVersion,
                                List<StateWrite> states) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(zk.transactionOp().check().withVersion(epoch.zkVersion()).forPath(ZkPaths.CONTROLLER_EPOCH));
        ops.add(zk.transactionOp().setData().withVersion(expectedVersion).forPath(ZkPaths.topic(topic),
                Json.encode(assignment.toJson())));
        for (StateWrite w : states) {
            ops.add(zk.transactionOp().setData().withVersion(w.expectedVersion())
                    .forPath(ZkPaths.partitionState(w.partition().topic(), w.partition().partition()),
                            Json.encode(w.state().toJson())));
        }
        try {
            zk.transaction().forOperations(ops);
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            Stat stat = zk.checkExists().forPath(ZkPaths.CONTROLLER_EPOCH);
            if (stat == null || stat.getVersion() != epoch.zkVersion()) {
                throw new ControllerMovedException("Controller epoch " + epoch.epoch() + " is no longer current");
            }
            throw new StaleStateException("Topic " + topic + " changed since it was read (" + e.getMessage() + ")");
        }
    }

    /**
     * Makes sure /brokers/topics/t/partitions and /brokers/topics/t/partitions/p exist, so a state node can be
     * created under them: a topic node written alone (by Kafka's ZooKeeper-mode tools, or restored from a copy of
     * the assignments only) is a topic like any other, as Kafka's controller takes it. Never creates the topic's own
     * node: if the topic was deleted since the image was read, a decision based on that image must not resurrect it
     * (an empty topic node would make the next creation of that name fail).
     */
    private void ensurePartitionNode(TopicPartition tp) throws Exception {
        for (String path : List.of(ZkPaths.partitions(tp.topic()), ZkPaths.partition(tp.topic(), tp.partition()))) {
            try {
                zk.create().forPath(path);
            } catch (KeeperException.NodeExistsException ignored) {
                // the usual case
            } catch (KeeperException.NoNodeException e) {
                throw new StaleStateException("Topic " + tp.topic() + " no longer exists");
            }
        }
    }

    @Override
    public boolean holdsControllership(int brokerId) throws Exception {
        Stat stat = new Stat();
        try {
            byte[] data = zk.getData().storingStatIn(stat).forPath(ZkPaths.CONTROLLER);
            int holder = ((Number) Json.decode(data, ZkPaths.CONTROLLER).get("brokerId")).intValue();
            return holder == brokerId && stat.getEphemeralOwner() == zk.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (KeeperException.NoNodeException e) {
            return false;
        }
    }

    @Override
    public void resign(int brokerId) throws Exception {
        try {
            byte[] data = zk.getData().forPath(ZkPaths.CONTROLLER);
            int holder = ((Number) Json.decode(data, ZkPaths.CONTROLLER).get("brokerId")).intValue();
            if (holder == brokerId) {
                zk.delete().forPath(ZkPaths.CONTROLLER);
            }
        } catch (KeeperException.NoNodeException ignored) {
            // nobody holds it
        }
    }

    private static byte[] epochJson(int epoch) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        m.put("epoch", epoch);
        return Json.encode(m);
    }
}
