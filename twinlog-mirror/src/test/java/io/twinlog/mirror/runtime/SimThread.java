package io.twinlog.mirror.runtime;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One mirror's call thread in the seeded simulation ({@link MirrorManagerSimulation}): runs its calls one at a time,
 * in order, in simulated time. A call reads the world when it starts and says how long it takes ({@link #takes});
 * its outcome is handed to the manager's loop when it ends ({@link #deliver}), and the next call starts then.
 */
final class SimThread extends AbstractExecutorService {
    /** Where the simulation keeps its time and its queue of events. */
    interface Clock {
        long nowMs();

        void at(long timeMs, Runnable event);
    }

    private final String name;
    private final Clock clock;
    private final Deque<Runnable> queue = new ArrayDeque<>();
    private long busyUntilMs;
    private long currentDurationMs;
    private boolean running;
    private boolean shutdown;
    /** Calls this thread has run (for the isolation invariant: only its own mirror's). */
    private long calls;

    SimThread(String name, Clock clock) {
        this.name = name;
        this.clock = clock;
    }

    /** The call running now takes {@code ms} of simulated time (a blackholed peer: its client's timeout). */
    void takes(long ms) {
        currentDurationMs += ms;
    }

    /** The manager's executor for this thread's outcomes: each runs on the manager's loop when its call ends. */
    void deliver(Runnable outcome) {
        clock.at(clock.nowMs() + currentDurationMs, outcome);
    }

    /** When the calls queued now would all have ended, at the earliest. */
    long busyUntilMs() {
        return Math.max(busyUntilMs, clock.nowMs());
    }

    long calls() {
        return calls;
    }

    String name() {
        return name;
    }

    @Override
    public void execute(Runnable command) {
        if (shutdown) {
            throw new RejectedExecutionException(name + " is shut down");
        }
        queue.addLast(command);
        if (!running) {
            running = true;
            clock.at(busyUntilMs(), this::runNext);
        }
    }

    private void runNext() {
        Runnable next = queue.pollFirst();
        if (next == null || shutdown) {
            running = false;
            return;
        }
        currentDurationMs = 1;
        calls++;
        next.run();
        busyUntilMs = clock.nowMs() + currentDurationMs;
        clock.at(busyUntilMs, this::runNext);
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> dropped = List.copyOf(queue);
        queue.clear();
        return dropped;
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown && queue.isEmpty();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return isTerminated();
    }
}
