package io.twinlog.clients.network;

import java.io.IOException;

/** Why a {@link BrokerTransport} connection or exchange failed; each client words it for its own callers. */
public final class TransportException extends IOException {
    /** What went wrong. */
    public enum Kind {
        /** Within the reconnect backoff after a failed attempt: no attempt was made. */
        BACKING_OFF,
        /** Refused, closed while being set up, or the address does not resolve. */
        CONNECT_FAILED,
        /** Not set up (TCP, TLS, SASL) within the connection setup timeout. */
        SETUP_TIMED_OUT,
        /** The TLS handshake or SASL authentication failed: the cause is Kafka's AuthenticationException. */
        AUTHENTICATION_FAILED,
        /** Closed by the broker (or not open) before the answer came. */
        DISCONNECTED,
        /** No answer within the request timeout (the connection is closed). */
        TIMED_OUT,
        /** Throttled by the broker for longer than the request may wait: nothing was sent. */
        THROTTLED,
        /** Abandoned by {@code BrokerTransport.abort} (its owner stops): an answer still to come is never read. */
        ABORTED
    }

    private final Kind kind;

    public TransportException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
