package io.twinlog.protocol;

import org.apache.kafka.common.requests.AbstractResponse;

/**
 * The broker's client quotas, as the network layer sees them: asked once per Kafka response, just before it is
 * written, how long the client must be held back. A positive answer goes into the response's
 * {@code throttle_time_ms}, and the quota side has already called {@link Request#startThrottling()} (so the
 * connection stays muted after the response is written) and will call {@link Request#endThrottling()} when the time
 * is up: KIP-219's order, the response at once, the next request only after the throttle.
 *
 * <p>Called on whichever thread answers (a request handler, a purgatory expiry); must not block.
 */
@FunctionalInterface
public interface ResponseThrottling {
    /** No quotas: nothing is recorded, nothing throttled. */
    ResponseThrottling NONE = (request, response) -> 0;

    /** @return the throttle time in ms to put in {@code response}, 0 for none */
    int onResponse(Request request, AbstractResponse response);
}
