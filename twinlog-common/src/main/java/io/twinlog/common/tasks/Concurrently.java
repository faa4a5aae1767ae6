package io.twinlog.common.tasks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs one blocking call per item on a few short-lived threads and waits for them all: for a batch of independent
 * ZooKeeper writes (a mirror start of 100 topics), whose round trips and ZooKeeper's log syncs then overlap instead
 * of following each other (decision 94). Each item's failure is its own; the caller's thread is interrupted only if
 * it was itself, and then the calls still running are interrupted too.
 */
public final class Concurrently {
    private Concurrently() {
    }

    /** One item's blocking call. */
    @FunctionalInterface
    public interface Call<T, R> {
        R call(T item) throws Exception;
    }

    /** One item's outcome: its result, or the exception its call threw (then {@code value} is null). */
    public record Outcome<R>(R value, Exception failure) {
        public boolean failed() {
            return failure != null;
        }
    }

    /**
     * Calls {@code call} for every item, at most {@code threads} at a time (on threads named
     * {@code <threadName>-<n>}; inline for a single item), and returns their outcomes in the items' order.
     */
    public static <T, R> List<Outcome<R>> run(List<T> items, int threads, String threadName, Call<T, R> call)
            throws InterruptedException {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, not " + threads);
        }
        List<Outcome<R>> out = new ArrayList<>(items.size());
        if (items.size() <= 1 || threads == 1) {
            for (T item : items) {
                out.add(callOne(call, item));
            }
            return out;
        }
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, items.size()), r -> {
            Thread t = new Thread(r, threadName + "-" + n.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Outcome<R>>> futures = new ArrayList<>(items.size());
            for (T item : items) {
                futures.add(pool.submit(() -> callOne(call, item)));
            }
            for (Future<Outcome<R>> f : futures) {
                try {
                    out.add(f.get());
                } catch (ExecutionException e) {
                    // callOne catches every Exception but an interruption: an Error, or the pool shut down under it
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private static <T, R> Outcome<R> callOne(Call<T, R> call, T item) throws InterruptedException {
        try {
            return new Outcome<>(call.call(item), null);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            // broad: each call's failure, of any type, is its outcome, handed to the caller
            return new Outcome<>(null, e);
        }
    }
}
