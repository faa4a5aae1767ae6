package io.twinlog.protocol.client;

import java.io.IOException;

/**
 * The broker is reachable but serves no version of a request that this broker can build (an older Kafka asked for
 * a newer feature, say ListOffsets' max timestamp of a Kafka 2.8 source). Unlike the other {@link IOException}s of
 * {@link InterBrokerClient}, the connection stays open: the caller can go on with other requests.
 */
public final class UnsupportedApiVersionException extends IOException {
    public UnsupportedApiVersionException(String message, Throwable cause) {
        super(message, cause);
    }
}
