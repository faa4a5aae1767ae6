package io.twinlog.server.controller;

import io.twinlog.controller.Controller;
import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.replication.IsrChangeSender;
import io.twinlog.replication.Partition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Sends leaders' ISR changes to the controller in batches, as Kafka's {@code AlterPartitionManager} does: at most
 * one AlterPartition request is outstanding; changes proposed meanwhile wait (one per partition, the newest wins)
 * and all go out together in the next request. So a thousand partitions shrinking their ISRs at once cost a few
 * requests, not a thousand, and the controller decides each batch in one event.
 *
 * <p>Threading: leaders call {@link #submit} from request and ISR-expiration threads (never blocked); one sender
 * thread ({@code twinlog-alter-partition-<id>}) sends the batches and may block on the network. A partition is told
 * ({@link Partition#onIsrChangeCompleted}) when its change ends: refused (the error is per partition, one
 * partition's error never affects the others), not sent (network error: every change of the batch, and the
 * sender backs off), or accepted and visible in this broker's metadata — so it is not proposed twice. That last
 * wait is a callback on the metadata image, holding no thread.
 */
public final class AlterPartitionManager implements IsrChangeSender, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AlterPartitionManager.class);
    /** Partitions waiting to be sent; a change beyond it is dropped (the leader proposes it again). */
    static final int MAX_QUEUED = 10_000;
    /** Partitions per AlterPartition request; the rest go in the next one. */
    static final int MAX_PARTITIONS_PER_REQUEST = 2_000;
    private static final long APPLIED_TIMEOUT_MS = 10_000;
    private static final long IDLE_POLL_MS = 200;

    /** Sends one batch to the controller; the error per partition (missing: not answered). Blocking. */
    interface BatchSender {
        Map<TopicPartition, Errors> send(List<IsrChange> batch) throws Exception;
    }

    /** Completes once an accepted change is visible in this broker's metadata (or gave up waiting). */
    interface AppliedWatch {
        CompletableFuture<?> whenApplied(IsrChange accepted);
    }

    private record Pending(IsrChange change, Runnable onCompleted) {
    }

    private final int brokerId;
    private final Supplier<MetadataImage> image;
    private final BatchSender sender;
    private final AppliedWatch applied;
    private final ExponentialBackoff backoff = new ExponentialBackoff(100, 2, 2_000, 0.2);
    private final Object lock = new Object();
    /** Changes not yet sent, in arrival order, one per partition; guarded by lock. */
    private final LinkedHashMap<TopicPartition, Pending> unsent = new LinkedHashMap<>();
    private final AtomicLong requestsSent = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    public AlterPartitionManager(int brokerId, LongSupplier brokerEpoch, MetadataWatcher metadata,
                                 Controller localController, ControllerChannel channel) {
        this(brokerId, metadata::image, new IsrChangeBatchSender(brokerId, brokerEpoch, metadata::image,
                localController, channel), change -> whenApplied(metadata, change));
    }

    AlterPartitionManager(int brokerId, Supplier<MetadataImage> image, BatchSender sender, AppliedWatch applied) {
        this.brokerId = brokerId;
        this.image = image;
        this.sender = sender;
        this.applied = applied;
        this.thread = new Thread(this::run, "twinlog-alter-partition-" + brokerId);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    @Override
    public void submit(Partition partition, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
        submit(new IsrChange(partition.topicPartition(), leaderEpoch, partitionEpoch, newIsr),
                partition::onIsrChangeCompleted);
    }

    /** Queues a change; {@code onCompleted} runs exactly once when it ends (see the class comment). */
    void submit(IsrChange change, Runnable onCompleted) {
        Pending replaced;
        synchronized (lock) {
            if (unsent.size() >= MAX_QUEUED && !unsent.containsKey(change.partition())) {
                replaced = new Pending(change, onCompleted);
            } else {
                // a newer proposal of the same partition supersedes the unsent one
                replaced = unsent.put(change.partition(), new Pending(change, onCompleted));
                lock.notifyAll();
            }
        }
        if (replaced != null && replaced.change() == change) {
            log.warn("[AlterPartitionManager broker={}] {} ISR changes waiting; dropping the change of {} (it will "
                    + "be proposed again)", brokerId, MAX_QUEUED, change.partition());
        }
        if (replaced != null) {
            replaced.onCompleted().run(); // outside the lock: it takes the partition's monitor
        }
    }

    /** AlterPartition requests (or local controller calls) sent so far, for tests and metrics. */
    public long requestsSent() {
        return requestsSent.get();
    }

    @Override
    public boolean isEligibleForIsr(int brokerId, long brokerEpoch) {
        BrokerRegistration b = image.get().brokers().get(brokerId);
        return b != null && !b.shuttingDown() && (brokerEpoch < 0 || b.brokerEpoch() == brokerEpoch);
    }

    private void run() {
        long failures = 0;
        while (running) {
            List<Pending> batch;
            try {
                batch = nextBatch(failures == 0 ? 0 : backoff.backoff(failures - 1));
            } catch (InterruptedException e) {
                return;
            }
            if (batch.isEmpty()) {
                continue;
            }
            failures = send(batch) ? 0 : failures + 1;
        }
        List<Pending> left;
        synchronized (lock) {
            left = new ArrayList<>(unsent.values());
            unsent.clear();
        }
        left.forEach(p -> p.onCompleted().run());
    }

    /** Waits (after {@code backoffMs}) for changes and takes up to one request's worth. */
    private List<Pending> nextBatch(long backoffMs) throws InterruptedException {
        synchronized (lock) {
            if (backoffMs > 0) {
                lock.wait(backoffMs); // may return early on a new change: the change still waits below
            }
            if (unsent.isEmpty()) {
                lock.wait(IDLE_POLL_MS);
            }
            List<Pending> batch = new ArrayList<>();
            Iterator<Pending> it = unsent.values().iterator();
            while (it.hasNext() && batch.size() < MAX_PARTITIONS_PER_REQUEST) {
                batch.add(it.next());
                it.remove();
            }
            return batch;
        }
    }

    /** Sends one batch and settles each of its changes; false if the request itself failed. */
    private boolean send(List<Pending> batch) {
        List<IsrChange> changes = batch.stream().map(Pending::change).toList();
        Map<TopicPartition, Errors> errors;
        try {
            requestsSent.incrementAndGet();
            errors = sender.send(changes);
        } catch (IOException | ApiException e) {
            log.info("[AlterPartitionManager broker={}] {} ISR changes not sent: {}; they will be proposed again",
                    brokerId, batch.size(), e.toString());
            batch.forEach(p -> p.onCompleted().run());
            return false;
        } catch (Exception e) {
            // broad: a send failure of any kind leaves the changes to be proposed again
            log.warn("[AlterPartitionManager broker={}] {} ISR changes not sent; they will be proposed again",
                    brokerId, batch.size(), e);
            batch.forEach(p -> p.onCompleted().run());
            return false;
        }
        for (Pending p : batch) {
            IsrChange c = p.change();
            Errors error = errors.getOrDefault(c.partition(), Errors.UNKNOWN_SERVER_ERROR);
            if (error != Errors.NONE) {
                log.info("[AlterPartitionManager broker={}] ISR change of {} to {} refused by the controller: {}",
                        brokerId, c.partition(), c.newIsr(), error);
                p.onCompleted().run();
                continue;
            }
            applied.whenApplied(c).whenComplete((image, failure) -> p.onCompleted().run());
        }
        return true;
    }

    /** Until the new state (or a newer leadership) is in this broker's image: the change is not proposed twice. */
    private static CompletableFuture<?> whenApplied(MetadataWatcher metadata, IsrChange c) {
        TopicPartition tp = c.partition();
        return metadata.whenApplied("ISR of " + tp + " = " + c.newIsr(), image -> image.partition(tp)
                .map(p -> p.state() == null || p.state().partitionEpoch() > c.partitionEpoch()
                        || p.state().leaderEpoch() != c.leaderEpoch()).orElse(true), APPLIED_TIMEOUT_MS)
                .whenComplete((image, failure) -> {
                    if (failure != null) {
                        log.info("New ISR of {} not yet visible after {} ms: {}", tp, APPLIED_TIMEOUT_MS,
                                failure.toString());
                    }
                });
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        synchronized (lock) {
            lock.notifyAll();
        }
        thread.join(5_000);
    }
}
