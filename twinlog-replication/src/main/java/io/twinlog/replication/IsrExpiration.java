package io.twinlog.replication;

import io.twinlog.common.tasks.BackgroundTask;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The periodic ISR check of the partitions this broker leads, every half of {@code replica.lag.time.max.ms}, on
 * its own thread {@code twinlog-isr-expiration-<id>}: each leader proposes removing the followers that have not
 * caught up for that long ({@link Partition#maybeShrinkIsr}). Guarded as a {@link BackgroundTask} (decision 63):
 * every partition is checked even when one fails, and the run then fails with the first failure, so the task's
 * health shows it and its log says it once per streak rather than once per partition and run. Split from
 * {@link ReplicaManager}; logs under its logger, as before.
 */
final class IsrExpiration implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaManager.class);

    private final ScheduledExecutorService scheduler;
    private final BackgroundTask task;

    IsrExpiration(int localBrokerId, Supplier<Collection<Partition>> partitions, long replicaLagTimeMaxMs,
                  IsrChangeSender isrChanges, Time time) {
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-isr-expiration-" + localBrokerId);
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(100, replicaLagTimeMaxMs / 2);
        this.task = new BackgroundTask("isr-expiration", period, time, log, () -> {
            long now = time.milliseconds();
            checkEach(partitions.get(), p -> p.maybeShrinkIsr(now, replicaLagTimeMaxMs, isrChanges),
                    Partition::topicPartition);
        });
        scheduler.scheduleAtFixedRate(task, period, period, TimeUnit.MILLISECONDS);
    }

    /** The check as a background task, for its health metrics. */
    BackgroundTask task() {
        return task;
    }

    /**
     * Runs {@code check} on every item; if any failed, throws once naming how many and the first of them, with its
     * failure as the cause.
     */
    static <T> void checkEach(Collection<T> items, Consumer<T> check,
                              Function<T, TopicPartition> name) {
        int failed = 0;
        TopicPartition firstFailed = null;
        RuntimeException firstFailure = null;
        for (T item : items) {
            try {
                check.accept(item);
            } catch (RuntimeException e) {
                // broad: one partition's failure must not skip the others; the first is rethrown below as the cause
                if (failed++ == 0) {
                    firstFailed = name.apply(item);
                    firstFailure = e;
                }
            }
        }
        if (firstFailure != null) {
            throw new IllegalStateException("The ISR check of " + failed + " partitions failed, the first of them "
                    + firstFailed, firstFailure);
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
