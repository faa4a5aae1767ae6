package io.twinlog.controller;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.queue.EventQueue;
import org.apache.kafka.queue.KafkaEventQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The controller's one thread, {@code twinlog-controller-<id>-event-handler} (Kafka's {@link KafkaEventQueue}):
 * runs its tasks one at a time, now or after a delay, and makes sure no task's failure is dropped: it is logged
 * with its stack trace, and a request's caller is answered with an error (NOT_CONTROLLER once closing,
 * UNKNOWN_SERVER_ERROR otherwise). Split from {@link Controller}, which decides what the tasks do; logs under the
 * controller's logger, as before.
 */
final class ControllerEventLoop implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Controller.class);

    private final int brokerId;
    private final Time time;
    private final KafkaEventQueue queue;
    private final String logPrefix;

    ControllerEventLoop(int brokerId, Time time, String logPrefix) {
        this.brokerId = brokerId;
        this.time = time;
        this.logPrefix = logPrefix;
        this.queue = new KafkaEventQueue(time, new LogContext("[Controller broker=" + brokerId + "] "),
                "twinlog-controller-" + brokerId + "-");
    }

    /**
     * Runs a request on the event queue. Its caller always gets an answer: NOT_CONTROLLER once the controller is
     * closing, UNKNOWN_SERVER_ERROR (logged with its stack trace) if the task throws. A request already answered
     * when its turn comes (timed out) is not run.
     */
    <T> void submit(String name, CompletableFuture<T> result, Function<ApiError, T> errorAnswer, Runnable task) {
        Runnable unlessAnswered = () -> {
            if (result.isDone()) {
                // its caller gave up (the handler's timeout completed it) while it waited in the queue: an election
                // or a reassignment its client was told had timed out must not happen later (issue 25, point 7)
                log.info("{}{} not executed: its caller stopped waiting for it", logPrefix, name);
                return;
            }
            task.run();
        };
        queue.append(new ControllerEvent(name, unlessAnswered) {
            @Override
            public void handleException(Throwable e) {
                super.handleException(e);
                ApiError error = e instanceof RejectedExecutionException
                        ? new ApiError(Errors.NOT_CONTROLLER, "Broker " + brokerId + " is shutting down")
                        : new ApiError(Errors.UNKNOWN_SERVER_ERROR, "The controller failed: " + e);
                result.complete(errorAnswer.apply(error));
            }
        });
    }

    /** Runs {@code task} after the tasks already queued. */
    void run(String name, Runnable task) {
        queue.append(new ControllerEvent(name, task));
    }

    /** Runs {@code task} after {@code delayMs}; a second scheduling under the same tag keeps the earlier deadline. */
    void schedule(String tag, long delayMs, Runnable task) {
        queue.scheduleDeferred(tag, new EventQueue.EarliestDeadlineFunction(time.nanoseconds()
                + TimeUnit.MILLISECONDS.toNanos(delayMs)), new ControllerEvent(tag, task));
    }

    /** Refuses new tasks (their callers are answered NOT_CONTROLLER) and waits for the thread to finish. */
    @Override
    public void close() throws InterruptedException {
        queue.beginShutdown("controller closing");
        queue.close();
    }

    /** One controller task; a failure is logged with its stack trace, never dropped. */
    private class ControllerEvent implements EventQueue.Event {
        private final String name;
        private final Runnable task;

        ControllerEvent(String name, Runnable task) {
            this.name = name;
            this.task = task;
        }

        @Override
        public void run() {
            task.run();
        }

        @Override
        public void handleException(Throwable e) {
            if (e instanceof RejectedExecutionException) {
                log.debug("{}{} dropped: the controller is closing", logPrefix, name);
            } else {
                log.error("{}{} failed", logPrefix, name, e);
            }
        }
    }
}
