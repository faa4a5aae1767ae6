package io.twinlog.share.fetch;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The share-fetch wake-up thread, {@code twinlog-share-wakeup-<id>}: news that waiting ShareFetches may now
 * complete (a high watermark moved, records were released, a partition was initialized or fenced) arrives on
 * threads that must not do the work — a produce request's thread under the partition's leader lock, the persister's
 * thread, a share partition's own lock — and is handled here. Wake-ups for the same key coalesce while they wait,
 * so the queue holds at most one entry per key whatever the produce rate.
 */
final class ShareWakeups implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShareWakeups.class);

    private final ScheduledExecutorService executor;
    private final Consumer<Object> handler;
    private final Set<Object> pending = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();

    ShareWakeups(String threadName, Consumer<Object> handler) {
        this.handler = handler;
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Handles {@code key} soon on the wake-up thread (once, however often it is woken meanwhile). */
    void wake(Object key) {
        if (pending.add(key) && drainScheduled.compareAndSet(false, true)) {
            submit(this::drain);
        }
    }

    /** Runs {@code task} on the wake-up thread after {@code delayMs}. */
    void schedule(Runnable task, long delayMs) {
        try {
            executor.schedule(guarded(task), delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            log.debug("Share wake-up thread closed: a delayed task is dropped");
        }
    }

    private void drain() {
        drainScheduled.set(false);
        Iterator<Object> it = pending.iterator();
        while (it.hasNext()) {
            Object key = it.next();
            it.remove();
            try {
                handler.accept(key);
            } catch (RuntimeException e) {
                // broad: one failed wake-up must not stop the others
                log.error("Share fetch wake-up for {} failed", key, e);
            }
        }
    }

    private void submit(Runnable task) {
        try {
            executor.execute(guarded(task));
        } catch (RejectedExecutionException e) {
            log.debug("Share wake-up thread closed: a wake-up is dropped");
        }
    }

    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                // broad: the wake-up thread must go on with the next task
                log.error("Share wake-up task failed", e);
            }
        };
    }

    @Override
    public void close() throws InterruptedException {
        executor.shutdownNow();
        if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
            log.warn("The share wake-up thread did not stop within 5 s");
        }
    }
}
