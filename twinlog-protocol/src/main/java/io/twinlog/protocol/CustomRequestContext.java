package io.twinlog.protocol;

import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

import java.net.InetAddress;

/**
 * Who sent a Twinlog API request (one outside Kafka's API keys, so without Kafka's {@code RequestContext}), as
 * Kafka's authorizer reads it: the channel's authenticated principal, its address, listener and protocol, and the
 * request's header fields.
 */
record CustomRequestContext(CustomApiHeader header, KafkaPrincipal principal, InetAddress clientAddress,
                            ListenerName listener, SecurityProtocol securityProtocol)
        implements AuthorizableRequestContext {

    @Override
    public String listenerName() {
        return listener.value();
    }

    @Override
    public int requestType() {
        return header.apiKey();
    }

    @Override
    public int requestVersion() {
        return header.apiVersion();
    }

    @Override
    public String clientId() {
        return header.clientId();
    }

    @Override
    public int correlationId() {
        return header.correlationId();
    }
}
