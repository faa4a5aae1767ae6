package io.twinlog.protocol;

/**
 * Handles requests of one or more API keys. Implementations must answer every request exactly once, now or later
 * (delayed operations), and must not throw for bad client input: the dispatcher turns an escaped exception into
 * Kafka's error response for the request, but that is a last resort.
 */
@FunctionalInterface
public interface RequestHandler {
    void handle(Request request) throws Exception;
}
