package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsResponseData;
import io.twinlog.protocol.AdminDeadline;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link MirrorApiCall}: every call is answered, whether it runs, fails, comes too late or is refused a thread. */
@Timeout(60)
class MirrorApiCallTest {
    private static final MirrorApi API = MirrorApi.PAUSE_MIRROR_TOPICS;

    private static AdminDeadline fresh() {
        return new AdminDeadline(System.nanoTime(), AdminDeadline.DEFAULT_TIMEOUT_MS);
    }

    @Test
    void aCallRunsItsWorkOnTheThreadGiven() throws Exception {
        ApiMessage answer = new PauseMirrorTopicsResponseData();
        AtomicBoolean ranInline = new AtomicBoolean();
        ApiMessage result = MirrorApiCall.submit(work -> {
            ranInline.set(true);
            work.run();
        }, API, fresh(), () -> answer, Function.identity()).get(10, TimeUnit.SECONDS);
        assertSame(answer, result);
        assertTrue(ranInline.get());
    }

    @Test
    void aFailureIsTheApisErrorAnswer() throws Exception {
        PauseMirrorTopicsResponseData answer = (PauseMirrorTopicsResponseData) MirrorApiCall.submit(Runnable::run,
                API, fresh(), () -> {
                    throw new NotControllerException("moved");
                }, Function.identity()).get(10, TimeUnit.SECONDS);
        assertEquals(Errors.NOT_CONTROLLER.code(), answer.errorCode());
        assertEquals("moved", answer.errorMessage());
    }

    @Test
    void aCallTakenAfterItsDeadlineIsAnsweredTimedOutAndNotExecuted() throws Exception {
        AtomicBoolean executed = new AtomicBoolean();
        AdminDeadline passed = new AdminDeadline(System.nanoTime() - TimeUnit.SECONDS.toNanos(60), 1_000);
        PauseMirrorTopicsResponseData answer = (PauseMirrorTopicsResponseData) MirrorApiCall.submit(Runnable::run,
                API, passed, () -> {
                    executed.set(true);
                    return new PauseMirrorTopicsResponseData();
                }, Function.identity()).get(10, TimeUnit.SECONDS);
        assertEquals(Errors.REQUEST_TIMED_OUT.code(), answer.errorCode());
        assertFalse(executed.get());
    }

    @Test
    void aCallRefusedAThreadIsAnsweredBrokerNotAvailable() throws Exception {
        PauseMirrorTopicsResponseData answer = (PauseMirrorTopicsResponseData) MirrorApiCall.<ApiMessage>submit(
                work -> {
                    throw new RejectedExecutionException("closing");
                }, API, fresh(), PauseMirrorTopicsResponseData::new, Function.identity()).get(10, TimeUnit.SECONDS);
        assertEquals(Errors.BROKER_NOT_AVAILABLE.code(), answer.errorCode());
        assertEquals("The broker is shutting down", answer.errorMessage());
    }

    @Test
    void theAnswerIsWrappedAsTheCallerWantsIt() throws Exception {
        String wrapped = MirrorApiCall.submit(Runnable::run, API, fresh(), () -> "done",
                answer -> "error " + ((PauseMirrorTopicsResponseData) answer).errorCode()).get(10, TimeUnit.SECONDS);
        assertEquals("done", wrapped);
        String failed = MirrorApiCall.<String>submit(Runnable::run, API, fresh(), () -> {
            throw new IllegalStateException("bug");
        }, answer -> "error " + ((PauseMirrorTopicsResponseData) answer).errorCode()).get(10, TimeUnit.SECONDS);
        assertEquals("error " + Errors.UNKNOWN_SERVER_ERROR.code(), failed);
    }
}
