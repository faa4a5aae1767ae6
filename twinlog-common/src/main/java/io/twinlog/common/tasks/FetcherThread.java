package io.twinlog.common.tasks;

import org.apache.kafka.server.util.ShutdownableThread;

/**
 * The base of Twinlog's fetch loops (the replica fetchers, a mirror's metadata thread and its per-source-broker
 * fetchers), on Kafka's {@link ShutdownableThread}: Kafka's loop ({@code doWork} while running), its shutdown
 * ({@link #initiateShutdown} from any thread, then {@link #awaitShutdown}), its "Starting" / "Shutting down" /
 * "Stopped" lines. What it adds is what all three loops did by hand:
 *
 * <ul>
 *   <li>A round that throws does not end the thread (Kafka's loop would): the failure goes to the loop's
 *       {@link BackgroundTask} (logged with its stack trace at the first failure of a streak, decision 69), and the
 *       thread waits {@code backoffMs} before the next round. A completed round is reported too, so a thread stuck
 *       inside a round ages in the liveness report.</li>
 *   <li>A wait between rounds ({@link #waitForWork}) that new work and shutdown end early ({@link #wake}); Kafka's
 *       {@code pause} ends only at shutdown.</li>
 *   <li>{@link #onShutdownInitiated}, where a subclass wakes a request in flight (its client's {@code wakeup}).</li>
 *   <li>A bounded {@link #awaitShutdown(long)}: a thread blocked in a request to a peer that stopped answering ends
 *       at its request timeout at the latest; its owner need not wait that long (decision 113).</li>
 * </ul>
 *
 * <p>Not interruptible ({@code isInterruptible = false}, as Kafka's fetcher threads): an interrupt would close the
 * NIO channels of the client it uses. A daemon thread, as the loops were before, so a broker that fails to stop
 * them still exits.
 *
 * <p>Threading: {@link #doRound} runs on this thread only; {@link #wake}, {@link #initiateShutdown} and the
 * shutdown methods may be called from any thread.
 */
public abstract class FetcherThread extends ShutdownableThread {
    /** How long {@link #shutdown()} waits for the thread to end, as the hand-written loops' {@code join} did. */
    public static final long SHUTDOWN_WAIT_MS = 5_000;

    private final long backoffMs;
    private final Object wakeup = new Object();
    /**
     * Set when {@link #wake} is called; cleared when a round starts and by {@link #waitForWork}, so a wake during a
     * round is not lost and one from before it does not end a wait after it.
     */
    private boolean woken;
    private BackgroundTask liveness;

    /**
     * @param name      the thread's name ({@code twinlog-replica-fetcher-...}, {@code twinlog-mirror-fetcher-...})
     * @param logPrefix prefix of Kafka's lifecycle lines
     * @param backoffMs the wait after a round that threw
     */
    protected FetcherThread(String name, String logPrefix, long backoffMs) {
        super(name, false, logPrefix);
        setDaemon(true);
        this.backoffMs = backoffMs;
    }

    /**
     * One round of the loop: a fetch (or a metadata lookup) and what follows from its answer, or a wait for work.
     * Whatever it throws is reported and followed by the backoff.
     */
    protected abstract void doRound() throws Exception;

    /** The liveness this loop reports its rounds to; called once, on this thread, before the first round. */
    protected abstract BackgroundTask openLiveness();

    /** This thread's loop ended: its liveness is no longer reported (nothing to do by default). */
    protected void closeLiveness(BackgroundTask liveness) {
    }

    /** Called once when shutdown is initiated, from the initiating thread: wake a request in flight. */
    protected void onShutdownInitiated() {
    }

    @Override
    public final void run() {
        liveness = openLiveness();
        try {
            super.run();
        } finally {
            closeLiveness(liveness);
        }
    }

    @Override
    public final void doWork() {
        // a wake from before this round is answered by it (a round reads its work when it starts); only one that
        // comes while it runs may end the wait after it. Kept, a stale wake cut the first backoff after a failure
        // short (a mirror fetcher reported its source broker unreachable before the metadata could move on)
        synchronized (wakeup) {
            woken = false;
        }
        try {
            doRound();
            liveness.iterationCompleted();
        } catch (Throwable t) { // broad, an Error too: escaping, it would end the thread (Kafka's loop stops on it)
            if (isRunning()) {
                liveness.iterationFailed(t); // logged there, with the stack trace once per streak
                waitForWork(backoffMs);
            }
        }
    }

    @Override
    public boolean initiateShutdown() {
        boolean initiated = super.initiateShutdown();
        if (initiated) {
            onShutdownInitiated();
        }
        wake();
        return initiated;
    }

    /**
     * Waits at most {@code timeoutMs} for the thread to end after {@link #initiateShutdown}.
     *
     * @return whether it ended (or never started)
     */
    public boolean awaitShutdown(long timeoutMs) {
        if (!isShutdownInitiated()) {
            throw new IllegalStateException("initiateShutdown() was not called before awaitShutdown()");
        }
        try {
            join(timeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boolean ended = !isAlive();
        if (!ended) {
            log.warn("Still running {} ms after shutdown was initiated; going on without it", timeoutMs);
        }
        return ended;
    }

    /** {@link #initiateShutdown}, then {@link #awaitShutdown(long)} for {@value #SHUTDOWN_WAIT_MS} ms. */
    @Override
    public void shutdown() {
        initiateShutdown();
        awaitShutdown(SHUTDOWN_WAIT_MS);
    }

    /** Ends the current or next {@link #waitForWork} early: new work, or shutdown. */
    public final void wake() {
        synchronized (wakeup) {
            woken = true;
            wakeup.notifyAll();
        }
    }

    /**
     * Waits up to {@code ms} for {@link #wake} (new work, shutdown), between rounds or as a backoff; returns at once
     * if woken since the last wait.
     */
    protected final void waitForWork(long ms) {
        synchronized (wakeup) {
            try {
                long deadline = System.nanoTime() + ms * 1_000_000L;
                long remaining = ms;
                while (!woken && remaining > 0 && isRunning()) {
                    wakeup.wait(remaining);
                    remaining = (deadline - System.nanoTime()) / 1_000_000L;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                woken = false;
            }
        }
    }
}
