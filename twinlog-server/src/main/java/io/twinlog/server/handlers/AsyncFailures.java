package io.twinlog.server.handlers;

import org.apache.kafka.common.errors.TimeoutException;

import java.util.concurrent.CompletionException;

/** What a handler answering from a callback tells the client when the future it waited on failed. */
final class AsyncFailures {
    private AsyncFailures() {
    }

    /**
     * The failure itself, out of its CompletionException wrapper; a future that timed out (orTimeout) becomes
     * Kafka's TimeoutException, so the client sees REQUEST_TIMED_OUT as it would from a blocking wait.
     */
    static Throwable cause(Throwable error) {
        Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (e instanceof java.util.concurrent.TimeoutException) {
            return new TimeoutException("The controller did not answer in time", e);
        }
        return e;
    }
}
