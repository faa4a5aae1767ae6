package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;

/**
 * Why a mirror API request (or one topic of it) is refused: an error code, Kafka's ({@link Errors}) or Twinlog's
 * ({@link MirrorErrors}), and the message the client shows. The authorizer and the validator return one; the handler
 * turns it into the API's answer, so both stay free of the wire's message classes.
 */
record MirrorApiError(short code, String message) {

    static MirrorApiError of(Errors error, String message) {
        return new MirrorApiError(error.code(), message);
    }

    static MirrorApiError of(MirrorErrors error, String message) {
        return new MirrorApiError(error.code, message);
    }

    /** The request-level answer of {@code api}: this error, every array empty. */
    ApiMessage answer(MirrorApi api) {
        return api.errorResponse(code, message);
    }

    /** The result of one topic of a topic API. */
    TopicResult asTopicResult() {
        return new TopicResult(code, message);
    }
}
