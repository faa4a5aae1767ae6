package io.twinlog.share.partition;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.timer.Timer;
import org.apache.kafka.server.util.timer.TimerTask;
import org.apache.kafka.server.util.timer.TimerTaskEntry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock and a timer the test moves by hand: tasks run on the test's thread, in deadline order, when the clock
 * passes their deadline. Kafka's acquisition lock tasks read the same clock for their expiry.
 */
final class ManualTimer implements Timer {

    /** The clock {@link ManualTimer} runs on. */
    static final class ManualTime implements Time {
        private final AtomicLong nowMs = new AtomicLong(1_000_000L);

        @Override
        public long milliseconds() {
            return nowMs.get();
        }

        @Override
        public long nanoseconds() {
            return nowMs.get() * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
            nowMs.addAndGet(ms);
        }
    }

    private record Scheduled(long dueMs, long sequence, TimerTask task) {
    }

    final ManualTime time = new ManualTime();
    private final PriorityQueue<Scheduled> tasks = new PriorityQueue<>(
            Comparator.comparingLong(Scheduled::dueMs).thenComparingLong(Scheduled::sequence));
    private long sequence;

    @Override
    public synchronized void add(TimerTask task) {
        long dueMs = time.milliseconds() + task.delayMs;
        new TimerTaskEntry(task, dueMs); // binds the task, as Kafka's timer does: isCancelled() is false until cancel()
        tasks.add(new Scheduled(dueMs, sequence++, task));
    }

    /** Moves the clock and runs every task now due that was not cancelled. */
    void advance(long ms) {
        time.sleep(ms);
        for (TimerTask task : due()) {
            task.run();
        }
    }

    private synchronized List<TimerTask> due() {
        List<TimerTask> due = new ArrayList<>();
        while (!tasks.isEmpty() && tasks.peek().dueMs() <= time.milliseconds()) {
            TimerTask task = tasks.poll().task();
            if (!task.isCancelled()) {
                due.add(task);
            }
        }
        return due;
    }

    @Override
    public boolean advanceClock(long timeoutMs) {
        return false;
    }

    @Override
    public synchronized int size() {
        return (int) tasks.stream().filter(s -> !s.task().isCancelled()).count();
    }

    @Override
    public void close() {
    }
}
