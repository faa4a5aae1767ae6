package io.twinlog.common.tasks;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.Scheduler;
import org.slf4j.Logger;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;

/**
 * Kafka's {@link Scheduler} with every periodic task guarded by a {@link BackgroundTask}: for the tasks Kafka's own
 * classes schedule on the scheduler they are given ({@code LogManager}'s retention, flusher and checkpoint tasks),
 * whose bodies are not ours to wrap. One-off tasks (a segment's deletion, a flush) pass through unchanged: they have
 * no period to be late by. Thread-safe, as the scheduler it wraps.
 */
public final class HealthRecordingScheduler implements Scheduler {
    private final Scheduler delegate;
    private final Time time;
    private final Logger log;
    private final List<BackgroundTask> periodic = new CopyOnWriteArrayList<>();

    /** @param log the logger of the tasks' owner, where their failures are logged */
    public HealthRecordingScheduler(Scheduler delegate, Time time, Logger log) {
        this.delegate = delegate;
        this.time = time;
        this.log = log;
    }

    @Override
    public void startup() {
        delegate.startup();
    }

    @Override
    public void shutdown() throws InterruptedException {
        delegate.shutdown();
    }

    @Override
    public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
        if (periodMs <= 0) {
            return delegate.schedule(name, task, delayMs, periodMs);
        }
        BackgroundTask guarded = new BackgroundTask(name, periodMs, time, log, task);
        periodic.add(guarded);
        return delegate.schedule(name, guarded, delayMs, periodMs);
    }

    @Override
    public void resizeThreadPool(int newSize) {
        delegate.resizeThreadPool(newSize);
    }

    /** The periodic tasks scheduled so far, for {@link BackgroundTasks#register}. */
    public List<BackgroundTask> periodicTasks() {
        return List.copyOf(periodic);
    }
}
