package io.twinlog.mirror.runtime;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The calls of one mirror that may wait on its source or on a long copy — the peer's last-mirrored lookup, the
 * comparison of a log with the peer's, the quarantine copy before a cut — run on this mirror's own threads, off the
 * mirror manager's, so that one mirror's slow or dead peer never delays another mirror's passes (issue 25, point 3).
 * Each result is handed back to the manager's thread ({@code results}) as an event.
 *
 * <p>Threading: {@link #call} and {@link #close} are called on the manager thread, and every {@code onDone} runs
 * there; the work itself runs on up to {@value #CALL_THREADS} threads per mirror (each ended after
 * {@value #IDLE_SECONDS} s without work, and by {@link #close}), fed by a queue of at most {@value #QUEUE_CAPACITY}
 * calls. Calls with the same key while one is in flight join it: a topic's partitions share one lookup. Calls of
 * different partitions run side by side: a failback of thousands of partitions is one comparison per partition,
 * each a handful of round trips to the peer, and one thread took 8.6 minutes for 10,000 (decision 98). The calls of
 * one partition never overlap: its state machine asks for the next only once the last one's outcome is back.
 */
final class MirrorCalls implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorCalls.class);
    static final int QUEUE_CAPACITY = 1_000;
    static final int IDLE_SECONDS = 30;
    /**
     * Threads per mirror: enough to overlap the round trips of a failback's comparisons (each waits on the peer
     * most of its time), few enough that a broker leading partitions of several mirrors keeps its cores and its
     * connections to each source (each thread has its own, see {@link #comparison}) within reason.
     */
    static final int CALL_THREADS = 4;

    private final String mirror;
    private final Executor results;
    /** This mirror's threads (or, in the simulation, the executor that stands for them). */
    private final ExecutorService thread;
    /**
     * The comparisons of this mirror, one per call thread: a comparison holds one blocking connection to the peer,
     * so two threads must not share one. Each is closed when its thread ends.
     */
    private final ThreadLocal<PeerComparison> comparisons = new ThreadLocal<>();
    /** Every comparison not closed yet, so that the pool's end closes what a thread did not. */
    private final Set<PeerComparison> openComparisons = ConcurrentHashMap.newKeySet();
    /** Calls in flight by key, with whoever waits on each; manager thread only. */
    private final Map<String, List<Consumer<Outcome<?>>>> inFlight = new HashMap<>();
    /**
     * Calls refused since the queue was last found full; manager thread only. At 10,000 partitions a failback asks
     * for more calls than the queue holds on every pass: the first refusal of a streak is a warning, the rest are
     * counted and summed up once the queue takes calls again, instead of one warning per partition and pass (half
     * a million lines in one 10,000-partition failback).
     */
    private long refusedWhileFull;
    /**
     * Refusals not reported yet, and when the last streak was reported; manager thread only. With several threads
     * draining it the queue fills and drains again many times in one failback (about 870 streaks per broker at
     * 10,000 partitions): at most one streak per {@value #REPORT_INTERVAL_SECONDS} s is reported, with the count
     * of the refusals since the last report.
     */
    private long refusedUnreported;
    private long lastReportNanos;
    private boolean streakReported;
    private long streaksReported;
    static final int REPORT_INTERVAL_SECONDS = 30;
    private volatile boolean closed;

    /** A call's result: its value, or what it threw. */
    record Outcome<T>(T value, Throwable error) {
        static <T> Outcome<T> of(T value) {
            return new Outcome<>(value, null);
        }

        static <T> Outcome<T> failed(Throwable error) {
            return new Outcome<>(null, error);
        }

        boolean isFailure() {
            return error != null;
        }
    }

    /**
     * @param results runs each call's {@code onDone} on the manager thread (drops it once the manager is closed)
     */
    MirrorCalls(int brokerId, String mirror, Executor results) {
        this.mirror = mirror;
        this.results = results;
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor own = new ThreadPoolExecutor(CALL_THREADS, CALL_THREADS, IDLE_SECONDS, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUE_CAPACITY), r -> {
                    Thread t = new Thread(() -> {
                        try {
                            r.run();
                        } finally {
                            closeComparisonOfThisThread(); // its last call is done: nothing else uses it
                        }
                    }, "twinlog-mirror-calls-" + brokerId + "-" + mirror + "-" + threads.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                }) {
            @Override
            protected void terminated() {
                openComparisons.forEach(PeerComparison::close); // none should be left; a thread that never ran
                openComparisons.clear();
            }
        };
        own.allowCoreThreadTimeOut(true);
        this.thread = own;
    }

    /**
     * With {@code thread} standing for this mirror's thread: the seeded simulation's executor, which runs each call
     * at a simulated time ({@code MirrorManagerSimulation}, decision 65). It must run one call at a time, in order,
     * and refuse calls once shut down: the seeded run replays only if the calls' order is the simulation's.
     */
    MirrorCalls(String mirror, Executor results, ExecutorService thread) {
        this.mirror = mirror;
        this.results = results;
        this.thread = thread;
    }

    String mirror() {
        return mirror;
    }

    /**
     * This mirror's comparisons with its source for the calling thread: call it from work running on one of this
     * mirror's threads, which alone uses what it returns.
     */
    PeerComparison comparison() {
        PeerComparison comparison = comparisons.get();
        if (comparison == null) {
            comparison = new PeerComparison();
            comparisons.set(comparison);
            openComparisons.add(comparison);
        }
        return comparison;
    }

    private void closeComparisonOfThisThread() {
        PeerComparison comparison = comparisons.get();
        if (comparison != null) {
            comparisons.remove();
            openComparisons.remove(comparison);
            comparison.close();
        }
    }

    /** For tests: the comparisons open now, one per call thread that compared. */
    int openComparisons() {
        return openComparisons.size();
    }

    /**
     * Runs {@code work} on this mirror's thread and {@code onDone} with its outcome on the manager thread; joins the
     * call of the same {@code key} in flight, if there is one. A failure is logged with its stack trace and given to
     * {@code onDone}.
     *
     * @return false when the call was not started: the queue is full or this mirror's calls are closed (the caller
     *         asks again at its next pass)
     */
    @SuppressWarnings("unchecked")
    <T> boolean call(String key, String what, Callable<T> work, Consumer<Outcome<T>> onDone) {
        if (closed) {
            return false;
        }
        List<Consumer<Outcome<?>>> waiting = inFlight.get(key);
        Consumer<Outcome<?>> waiter = outcome -> onDone.accept((Outcome<T>) outcome);
        if (waiting != null) {
            waiting.add(waiter);
            return true;
        }
        waiting = new ArrayList<>(List.of(waiter));
        inFlight.put(key, waiting);
        try {
            thread.execute(() -> {
                Outcome<?> outcome = run(what, work);
                results.execute(() -> finished(key, outcome));
            });
        } catch (RejectedExecutionException e) {
            inFlight.remove(key);
            if (!closed) {
                refused(what);
            }
            return false;
        }
        if (refusedWhileFull > 0) {
            if (streakReported) {
                log.info("[Mirror {}] this mirror's threads take calls again; {} were refused while {} waited, each "
                        + "asked again at its partition's next pass", mirror, refusedWhileFull, QUEUE_CAPACITY);
            }
            refusedWhileFull = 0;
            streakReported = false;
        }
        return true;
    }

    private void refused(String what) {
        refusedUnreported++;
        long now = System.nanoTime();
        boolean due = lastReportNanos == 0
                || now - lastReportNanos >= TimeUnit.SECONDS.toNanos(REPORT_INTERVAL_SECONDS);
        refusedWhileFull++;
        // any refusal of a streak not reported yet may report it once due: a queue that stays full for minutes is
        // reported even when it filled up soon after the last report
        if (!streakReported && due) {
            log.warn("[Mirror {}] {} not started: {} calls already wait on this mirror's threads; this and further "
                    + "calls are asked again at their partitions' next passes ({} refused since the last such "
                    + "warning, this one included; the next comes {} s after this one at the earliest)", mirror,
                    what, QUEUE_CAPACITY, refusedUnreported, REPORT_INTERVAL_SECONDS);
            refusedUnreported = 0;
            lastReportNanos = now;
            streakReported = true;
            streaksReported++;
        } else {
            log.debug("[Mirror {}] {} not started: the queue is full", mirror, what);
        }
    }

    /** For tests: the streaks of refusals reported as a warning so far; manager thread only. */
    long streaksReported() {
        return streaksReported;
    }

    /** Calls refused since the queue was last found full (0 once it takes calls again); manager thread only. */
    long refusedWhileFull() {
        return refusedWhileFull;
    }

    private Outcome<?> run(String what, Callable<?> work) {
        try {
            return Outcome.of(work.call());
        } catch (Throwable e) { // an Error too: the waiting partitions must hear of it, not wait for ever
            if (closed) {
                log.debug("[Mirror {}] {} ended by the mirror's shutdown", mirror, what, e);
            } else {
                log.warn("[Mirror {}] {} failed", mirror, what, e);
            }
            return Outcome.failed(e);
        }
    }

    /** On the manager thread: every waiter of the call hears its outcome. */
    private void finished(String key, Outcome<?> outcome) {
        List<Consumer<Outcome<?>>> waiting = inFlight.remove(key);
        if (waiting == null || closed) {
            return;
        }
        for (Consumer<Outcome<?>> waiter : waiting) {
            try {
                waiter.accept(outcome);
            } catch (RuntimeException e) { // broad: one waiter's failure must not keep the outcome from the others
                log.error("[Mirror {}] handling the outcome of {} failed", mirror, key, e);
            }
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Whether any of this mirror's threads is running now (each ends when idle). */
    boolean threadAlive() {
        return thread instanceof ThreadPoolExecutor own ? own.getPoolSize() > 0 : !thread.isTerminated();
    }

    /**
     * Ends this mirror's calls: those running are interrupted, queued ones dropped, and no outcome is delivered
     * afterwards (whoever waited on them asks again from a new instance, or is gone). Does not wait.
     */
    @Override
    public void close() {
        closed = true;
        inFlight.clear();
        thread.shutdownNow();
    }

    /** For tests: waits until this mirror's threads have ended after {@link #close}. */
    boolean awaitTermination(long timeoutMs) throws InterruptedException {
        return thread.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS);
    }
}
