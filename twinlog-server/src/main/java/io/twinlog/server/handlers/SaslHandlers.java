package io.twinlog.server.handlers;

import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

/**
 * SaslHandshake and SaslAuthenticate once a connection is past authentication. The exchange itself is Kafka's
 * server authenticator's, inside the channel, before any request reaches a handler; a request that gets here came
 * after it (or on a listener without SASL), and is answered ILLEGAL_SASL_STATE, as Kafka answers it. Registered on
 * every listener so ApiVersions advertises them, as Kafka's does.
 */
public final class SaslHandlers {
    private SaslHandlers() {
    }

    public static RequestHandler handshake() {
        return request -> request.respond(new SaslHandshakeResponse(new SaslHandshakeResponseData()
                .setErrorCode(Errors.ILLEGAL_SASL_STATE.code())));
    }

    public static RequestHandler authenticate() {
        return request -> request.respond(new SaslAuthenticateResponse(new SaslAuthenticateResponseData()
                .setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
                .setErrorMessage("SaslAuthenticate request received after successful authentication")));
    }
}
