package io.twinlog.common.tasks;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.server.util.KafkaScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.event.EventRecordingLogger;
import org.slf4j.event.Level;
import org.slf4j.event.SubstituteLoggingEvent;
import org.slf4j.helpers.SubstituteLogger;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A guarded task keeps its schedule through exceptions and Errors, its last success ages on Kafka's MockTime and a
 * success resets it, its failures are logged without flooding, and its health is in the broker's registry.
 */
@Timeout(30)
class BackgroundTaskTest {
    private static final long PERIOD_MS = 1_000;

    private final MockTime time = new MockTime();
    private final ConcurrentLinkedQueue<SubstituteLoggingEvent> events = new ConcurrentLinkedQueue<>();
    private final EventRecordingLogger log = new EventRecordingLogger(
            new SubstituteLogger("test", events, false), events);

    /** What the body does on its next run. */
    private volatile Runnable next = () -> { };
    private final BackgroundTask task = new BackgroundTask("test-task", PERIOD_MS, time, log, () -> next.run());

    @Test
    void aThrowingTaskKeepsBeingScheduledWhereAnUnguardedOneIsCancelled() throws Exception {
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
        try {
            ScheduledFuture<?> unguarded = executor.scheduleWithFixedDelay(() -> {
                throw new IllegalStateException("boom");
            }, 0, 1, TimeUnit.MILLISECONDS);
            // the executor's own behaviour, the reason for the guard: one exception ends the schedule for good
            assertThrows(ExecutionException.class, () -> unguarded.get(10, TimeUnit.SECONDS));

            // the latch counts down at the start of a run, before that run's failure is recorded: the sixth start
            // means five runs have completed (one thread, fixed delay) and their failures are counted
            CountDownLatch runs = new CountDownLatch(6);
            AtomicInteger n = new AtomicInteger();
            BackgroundTask guarded = new BackgroundTask("thrower", PERIOD_MS, time, log, () -> {
                runs.countDown();
                if (n.incrementAndGet() % 2 == 0) {
                    throw new IllegalStateException("boom");
                }
                throw new StackOverflowError();
            });
            ScheduledFuture<?> future = executor.scheduleWithFixedDelay(guarded, 0, 1, TimeUnit.MILLISECONDS);
            assertTrue(runs.await(10, TimeUnit.SECONDS), "the guarded task ran again after it threw");
            assertFalse(future.isDone());
            assertTrue(guarded.consecutiveFailures() >= 5, "failures: " + guarded.consecutiveFailures());
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void theAgeGrowsWhileItFailsAndASuccessResetsIt() {
        assertEquals(0, task.lastSuccessAgeMs());
        time.sleep(300);
        assertEquals(300, task.lastSuccessAgeMs(), "a task that never succeeded ages from its creation");
        task.run();
        assertEquals(0, task.lastSuccessAgeMs());

        next = () -> {
            throw new IllegalStateException("ZooKeeper is away");
        };
        for (int i = 1; i <= 4; i++) {
            time.sleep(PERIOD_MS);
            task.run();
            assertEquals(i * PERIOD_MS, task.lastSuccessAgeMs());
            assertEquals(i, task.consecutiveFailures());
        }
        TaskHealth failing = task.health();
        assertEquals(TaskStatus.FAILING, failing.status());
        assertEquals(4, failing.failures());
        assertEquals("java.lang.IllegalStateException: ZooKeeper is away", failing.lastError());

        next = () -> { };
        time.sleep(PERIOD_MS);
        task.run();
        TaskHealth recovered = task.health();
        assertEquals(0, recovered.lastSuccessAgeMs());
        assertEquals(0, recovered.consecutiveFailures());
        assertEquals(4, recovered.failures(), "the total is kept");
        assertEquals(TaskStatus.OK, recovered.status());
    }

    @Test
    void anErrorIsCaughtAndCountedLikeAnException() {
        next = () -> {
            throw new OutOfMemoryError("Java heap space");
        };
        task.run();
        time.sleep(PERIOD_MS);
        task.run();
        assertEquals(2, task.consecutiveFailures());
        assertEquals(PERIOD_MS, task.lastSuccessAgeMs());
        assertEquals("java.lang.OutOfMemoryError: Java heap space", task.health().lastError());
    }

    @Test
    void aTaskThatNeitherFailsNorSucceedsForThreePeriodsIsStale() {
        task.run();
        time.sleep(TaskHealth.STALE_PERIODS * PERIOD_MS);
        assertEquals(TaskStatus.OK, task.health().status());
        time.sleep(1);
        assertEquals(TaskStatus.STALE, task.health().status());
    }

    @Test
    void aStreakIsLoggedWithItsStackTraceOnceAndAgainWhenItsKindChanges() {
        next = () -> {
            throw new IllegalStateException("first");
        };
        task.run();
        task.run();
        task.run();
        next = () -> {
            throw new AssertionError("second");
        };
        task.run();
        next = () -> { };
        task.run();

        List<SubstituteLoggingEvent> logged = new ArrayList<>(events);
        assertEquals(List.of(Level.ERROR, Level.WARN, Level.WARN, Level.ERROR, Level.INFO),
                logged.stream().map(SubstituteLoggingEvent::getLevel).toList());
        assertNotNull(logged.get(0).getThrowable(), "the first failure of a streak has its stack trace");
        assertNull(logged.get(1).getThrowable(), "a repeat is one line");
        assertTrue(logged.get(3).getThrowable() instanceof AssertionError);
    }

    @Test
    void itsHealthIsInTheBrokersRegistryUnderKafkasNames() {
        try (BrokerMetrics metrics = BrokerMetrics.unreported(1, time)) {
            metrics.backgroundTasks().register(task);
            next = () -> {
                throw new IllegalStateException("boom");
            };
            time.sleep(700);
            task.run();
            task.run();
            assertEquals(700L, gauge(metrics, BackgroundTasks.LAST_SUCCESS_AGE_MS).value());
            assertEquals(2, gauge(metrics, BackgroundTasks.CONSECUTIVE_FAILURES).value());
            Metric meter = metrics.registry().allMetrics().get(name(BackgroundTasks.FAILURES_PER_SEC));
            assertEquals(2, ((Meter) meter).count());
            assertEquals("kafka.server:type=BackgroundTask,name=LastSuccessAgeMs,task=test-task",
                    name(BackgroundTasks.LAST_SUCCESS_AGE_MS).getMBeanName());
            assertEquals(List.of(task.health()), metrics.backgroundTasks().health());

            metrics.backgroundTasks().remove(task);
            assertTrue(metrics.registry().allMetrics().isEmpty());
            assertTrue(metrics.backgroundTasks().health().isEmpty());
        }
    }

    @Test
    void kafkasSchedulerWrappedGuardsEveryPeriodicTaskItIsGiven() throws Exception {
        KafkaScheduler kafka = new KafkaScheduler(1, true, "test-scheduler-");
        HealthRecordingScheduler scheduler = new HealthRecordingScheduler(kafka, time, log);
        scheduler.startup();
        try {
            CountDownLatch runs = new CountDownLatch(4); // the fourth start: three failures recorded (see above)
            scheduler.schedule("kafka-log-retention", () -> {
                runs.countDown();
                throw new Error("disk");
            }, 0, 1);
            CountDownLatch once = new CountDownLatch(1);
            scheduler.scheduleOnce("delete-file", once::countDown);
            assertTrue(runs.await(10, TimeUnit.SECONDS));
            assertTrue(once.await(10, TimeUnit.SECONDS));
            List<BackgroundTask> periodic = scheduler.periodicTasks();
            assertEquals(List.of("kafka-log-retention"), periodic.stream().map(BackgroundTask::name).toList());
            assertTrue(periodic.get(0).consecutiveFailures() >= 3);
        } finally {
            scheduler.shutdown();
        }
    }

    private static MetricName name(String metric) {
        return BrokerMetrics.unreported(1, new MockTime()).group(BackgroundTasks.GROUP, BackgroundTasks.TYPE)
                .metricName(metric, Map.of("task", "test-task"));
    }

    private static Gauge<?> gauge(BrokerMetrics metrics, String metric) {
        return (Gauge<?>) metrics.registry().allMetrics().get(name(metric));
    }

    /** A loop on its own thread (a fetcher) reports its iterations: stuck inside one, its age grows (decision 69). */
    @Test
    void aLoopAgesWhileStuckInAnIteration() {
        BackgroundTask loop = BackgroundTask.loop("test-loop", PERIOD_MS, time, log);
        loop.iterationCompleted();
        time.sleep(5 * PERIOD_MS); // no iteration completes: stuck
        assertEquals(5 * PERIOD_MS, loop.lastSuccessAgeMs());
        assertEquals(TaskStatus.STALE, loop.health().status());
        loop.iterationFailed(new IllegalStateException("boom"));
        assertEquals(1, loop.consecutiveFailures());
        assertTrue(events.stream().anyMatch(e -> e.getLevel() == Level.ERROR && e.getThrowable() != null
                && e.getMessage().contains("{}") && List.of(e.getArgumentArray()).contains("the loop goes on")),
                "the first failure is logged with its stack trace, saying the loop goes on");
        loop.iterationCompleted();
        assertEquals(0, loop.lastSuccessAgeMs());
        assertEquals(0, loop.consecutiveFailures());
    }
}
