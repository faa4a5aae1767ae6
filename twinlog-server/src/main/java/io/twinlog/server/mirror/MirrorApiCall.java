package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.common.Failures;
import io.twinlog.common.tasks.PerKeyExecutor;
import io.twinlog.protocol.AdminDeadline;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/**
 * One topic API call on the thread its handler chose; its future always completes with an answer. A failure becomes
 * the API's error answer (logged with its stack trace), wrapped by {@code asResult}. A call the thread takes after
 * its {@code deadline} (the client's default request timeout: these APIs carry none) is answered REQUEST_TIMED_OUT
 * and not executed, as the other admin requests (decision 60): a start queued behind starts waiting on their
 * sources, or a stop behind a ZooKeeper write that waits for a reconnection, must not take effect after its client
 * was told it timed out. Told when it will not run (the broker closing), so its client gets an answer.
 */
record MirrorApiCall<T>(MirrorApi api, AdminDeadline deadline, Callable<T> work, Function<ApiMessage, T> asResult,
                        CompletableFuture<T> result) implements PerKeyExecutor.Rejectable {
    private static final Logger log = LoggerFactory.getLogger(MirrorApiCall.class);

    /** Runs {@code work} on {@code thread}; the future of its result, or of its error answer. */
    static <T> CompletableFuture<T> submit(Executor thread, MirrorApi api, AdminDeadline deadline, Callable<T> work,
                                           Function<ApiMessage, T> asResult) {
        MirrorApiCall<T> call = new MirrorApiCall<>(api, deadline, work, asResult, new CompletableFuture<>());
        try {
            thread.execute(call);
        } catch (RejectedExecutionException e) {
            call.reject(e);
        }
        return call.result();
    }

    @Override
    public void run() {
        try {
            Optional<ApiMessage> expired = MirrorApiRegistration.expiredAnswer(api, deadline);
            result.complete(expired.isPresent() ? asResult.apply(expired.get()) : work.call());
        } catch (Exception e) {
            // broad: whatever the work threw (ZooKeeper, the source, a bug) is this call's error answer, so the
            // client is answered rather than left waiting; the stack trace is logged
            log.error("{} failed", api.name, e);
            result.complete(asResult.apply(api.errorResponse(Errors.forException(e).code(), Failures.rootMessage(e))));
        }
    }

    @Override
    public void reject(Throwable why) {
        result.complete(asResult.apply(api.errorResponse(Errors.BROKER_NOT_AVAILABLE.code(),
                "The broker is shutting down")));
    }
}
