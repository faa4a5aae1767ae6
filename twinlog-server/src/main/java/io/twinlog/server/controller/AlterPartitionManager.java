package io.twinlog.server.controller;

import io.twinlog.controller.Controller;
import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.decisions.IsrChangeResult;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.replication.IsrChangeSender;
import io.twinlog.replication.Partition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.AlterPartitionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Sends leaders' ISR changes to the controller, one at a time, on its own thread (so a slow controller never
 * blocks a request handler). When this broker is itself the controller the change goes straight to it; otherwise
 * an AlterPartition request goes over the network. Either way the partition is told when the attempt ends, and the
 * accepted ISR arrives through the metadata like any other leadership change.
 */
public final class AlterPartitionManager implements IsrChangeSender, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AlterPartitionManager.class);
    private static final int MAX_QUEUED = 10_000;

    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final MetadataWatcher metadata;
    private final Controller localController;
    private final ControllerChannel channel;
    private final BlockingQueue<Change> queue = new ArrayBlockingQueue<>(MAX_QUEUED);
    private final Thread thread;
    private volatile boolean running = true;

    private record Change(Partition partition, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
    }

    public AlterPartitionManager(int brokerId, LongSupplier brokerEpoch, MetadataWatcher metadata,
                                 Controller localController, ControllerChannel channel) {
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.metadata = metadata;
        this.localController = localController;
        this.channel = channel;
        this.thread = new Thread(this::run, "twinlog-alter-partition-" + brokerId);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    @Override
    public void submit(Partition partition, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
        if (!queue.offer(new Change(partition, leaderEpoch, partitionEpoch, newIsr))) {
            log.warn("ISR change queue full; dropping the change of {} (it will be proposed again)",
                    partition.topicPartition());
            partition.onIsrChangeCompleted();
        }
    }

    @Override
    public boolean isEligibleForIsr(int brokerId, long brokerEpoch) {
        io.twinlog.controller.metadata.BrokerRegistration b = metadata.image().brokers().get(brokerId);
        return b != null && !b.shuttingDown() && (brokerEpoch < 0 || b.brokerEpoch() == brokerEpoch);
    }

    private void run() {
        while (running) {
            Change c;
            try {
                c = queue.poll(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (c == null) {
                continue;
            }
            try {
                Errors error = send(c);
                if (error != Errors.NONE) {
                    log.info("ISR change of {} to {} refused by the controller: {}", c.partition().topicPartition(),
                            c.newIsr(), error);
                }
            } catch (Exception e) {
                log.info("ISR change of {} to {} not sent: {}; it will be proposed again",
                        c.partition().topicPartition(), c.newIsr(), e.toString());
            } finally {
                c.partition().onIsrChangeCompleted();
            }
        }
    }

    private Errors send(Change c) throws Exception {
        TopicPartition tp = c.partition().topicPartition();
        if (localController.isActive()) {
            Map<TopicPartition, IsrChangeResult> r = localController.alterPartition(brokerId,
                    brokerEpoch.getAsLong(), List.of(new IsrChange(tp, c.leaderEpoch(), c.partitionEpoch(),
                            c.newIsr()))).get(30, TimeUnit.SECONDS);
            Errors error = r.get(tp).error();
            awaitApplied(c, error);
            return error;
        }
        TopicImage topic = metadata.image().topic(tp.topic()).orElseThrow();
        AlterPartitionRequestData data = new AlterPartitionRequestData().setBrokerId(brokerId)
                .setBrokerEpoch(brokerEpoch.getAsLong());
        AlterPartitionRequestData.PartitionData p = new AlterPartitionRequestData.PartitionData()
                .setPartitionIndex(tp.partition()).setLeaderEpoch(c.leaderEpoch()).setPartitionEpoch(c.partitionEpoch());
        c.newIsr().forEach(r -> p.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(r)));
        data.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(topic.topicId()).setPartitions(List.of(p)));
        AlterPartitionResponse response = channel.send(new AlterPartitionRequest.Builder(data));
        Errors error = Errors.forCode(response.data().errorCode());
        for (AlterPartitionResponseData.TopicData t : response.data().topics()) {
            for (AlterPartitionResponseData.PartitionData pd : t.partitions()) {
                error = error != Errors.NONE ? error : Errors.forCode(pd.errorCode());
            }
        }
        awaitApplied(c, error);
        return error;
    }

    /** Keeps the change "in flight" until the new state has reached this broker, so it is not proposed twice. */
    private void awaitApplied(Change c, Errors error) throws InterruptedException {
        if (error != Errors.NONE) {
            return;
        }
        TopicPartition tp = c.partition().topicPartition();
        try {
            metadata.awaitApplied("ISR of " + tp + " = " + c.newIsr(), image -> image.partition(tp)
                    .map(p -> p.state() == null || p.state().partitionEpoch() > c.partitionEpoch()
                            || p.state().leaderEpoch() != c.leaderEpoch()).orElse(true), 10_000);
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            log.info("New ISR of {} not yet visible after 10 s", tp);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(5_000);
    }
}
