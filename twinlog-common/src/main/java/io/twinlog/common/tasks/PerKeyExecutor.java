package io.twinlog.common.tasks;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs the tasks of one key (a mirror's name) one at a time, in the order given, and the tasks of different keys at
 * once: one key's task that waits on an unreachable peer holds only that key's later tasks. The threads come from a
 * pool that makes one when every thread is busy and ends a thread idle for {@code idleMs}, so a key nothing is
 * submitted for any more (a deleted mirror) leaves no thread and no entry behind.
 *
 * <p>While it runs a key's tasks a thread is named {@code <prefix>-<key>}, so a thread dump says whose task waits;
 * idle, {@code <prefix>-<n>}. A task's exception or error is logged with its stack trace and does not stop the key's
 * later tasks. A task that will not run (the executor closed, or no thread could be started for its key) is told so
 * if it is {@link Rejectable}, so that whoever waits on it gets an answer.
 */
public final class PerKeyExecutor implements AutoCloseable {
    /** A task that must answer its caller when it will not run. */
    public interface Rejectable extends Runnable {
        void reject(Throwable why);
    }

    private static final Logger log = LoggerFactory.getLogger(PerKeyExecutor.class);

    private final String prefix;
    private final ThreadPoolExecutor pool;
    /** Tasks waiting per key whose tasks run now; a key is here exactly while a thread runs its tasks. */
    private final Map<String, Deque<Runnable>> waiting = new HashMap<>();

    public PerKeyExecutor(String prefix, long idleMs) {
        this.prefix = prefix;
        AtomicInteger count = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, idleMs, TimeUnit.MILLISECONDS,
                new SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, prefix + "-" + count.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                });
    }

    /** The executor of one key's tasks (what an API that takes an {@link Executor} is given). */
    public Executor forKey(String key) {
        return task -> execute(key, task);
    }

    /**
     * Runs {@code task} after the key's tasks submitted before it.
     *
     * @throws RejectedExecutionException once closed
     */
    public void execute(String key, Runnable task) {
        synchronized (this) {
            Deque<Runnable> queue = waiting.get(key);
            if (queue != null) {
                if (pool.isShutdown()) {
                    throw new RejectedExecutionException(prefix + " is closed");
                }
                queue.add(task);
                return;
            }
            waiting.put(key, new ArrayDeque<>());
        }
        try {
            pool.execute(() -> runAll(key, task));
        } catch (Throwable e) {
            // closed, or no thread could be started (out of native threads): the key must not stay busy for good,
            // and what queued behind this task in the meantime will not run either
            Deque<Runnable> dropped;
            synchronized (this) {
                dropped = waiting.remove(key);
            }
            reject(dropped, e);
            throw e;
        }
    }

    private void reject(Deque<Runnable> dropped, Throwable why) {
        if (dropped == null || dropped.isEmpty()) {
            return;
        }
        log.warn("{}: {} task(s) will not run: {}", prefix, dropped.size(), why.toString());
        for (Runnable task : dropped) {
            if (task instanceof Rejectable rejectable) {
                try {
                    rejectable.reject(why);
                } catch (RuntimeException e) {
                    // broad: one task's faulty rejection must not stop the others being rejected
                    log.error("A task of {} failed to take its rejection", prefix, e);
                }
            }
        }
    }

    /** Whether a task of {@code key} runs or waits now. */
    public synchronized boolean busy(String key) {
        return waiting.containsKey(key);
    }

    private void runAll(String key, Runnable first) {
        Thread thread = Thread.currentThread();
        String idleName = thread.getName();
        thread.setName(prefix + "-" + key);
        try {
            Runnable next = first;
            while (next != null) {
                try {
                    next.run();
                } catch (Throwable t) {
                    // broad: a task's failure of any kind must not stop its key's queue
                    log.error("A task of {} failed on {}", key, prefix, t);
                }
                synchronized (this) {
                    next = pool.isShutdown() ? null : waiting.get(key).poll();
                    if (next == null) {
                        waiting.remove(key);
                    }
                }
                if (next != null) {
                    Thread.interrupted(); // an interrupt a task left behind is not the next task's
                }
            }
        } finally {
            thread.setName(idleName);
        }
    }

    /** Interrupts the running tasks; the waiting ones do not run, and each {@link Rejectable} one is told so. */
    @Override
    public void close() {
        Deque<Runnable> dropped = new ArrayDeque<>();
        synchronized (this) {
            pool.shutdownNow();
            waiting.values().forEach(queue -> {
                dropped.addAll(queue);
                queue.clear();
            });
        }
        reject(dropped, new RejectedExecutionException(prefix + " is closed"));
    }

    /** Waits for the running tasks to end after {@link #close}; false if some still run after {@code timeout}. */
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return pool.awaitTermination(timeout, unit);
    }
}
