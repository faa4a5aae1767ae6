package io.twinlog.dashboard;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.plain.PlainLoginModule;
import org.apache.kafka.common.security.scram.ScramLoginModule;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Decides with which login a dashboard action (failover, pause, resume) reaches the mirror admin API, so the broker's
 * own authorizer judges the operator and never the broker: the action's client uses this broker's inter-broker
 * listener with its TLS settings, but on a SASL listener it logs in as the operator, with the HTTP Basic credentials
 * of the request (PLAIN or SCRAM, the listener's inter-broker mechanism); the broker's own JAAS login is never used.
 * A TLS-only listener with an authorizer is refused: the only client identity there is the broker's certificate.
 * Pure: client configs in, client configs or a refusal out.
 */
final class ActionLogin {
    private ActionLogin() {
    }

    /** A user name and password from an {@code Authorization: Basic} header. */
    record Credentials(String username, String password) {
        /** Parses the header value; empty when absent or not Basic, or malformed. */
        static Optional<Credentials> fromHeader(String header) {
            if (header == null || !header.regionMatches(true, 0, "Basic ", 0, 6)) {
                return Optional.empty();
            }
            String decoded;
            try {
                decoded = new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return Optional.empty();
            }
            int colon = decoded.indexOf(':');
            if (colon <= 0) {
                return Optional.empty();
            }
            return Optional.of(new Credentials(decoded.substring(0, colon), decoded.substring(colon + 1)));
        }

        @Override
        public String toString() {
            return "Credentials[" + username + ", password hidden]";
        }
    }

    /** The client configs an action uses, or why it cannot be sent ({@code status}: 401 asks for a login). */
    sealed interface Decision permits Allowed, Refused {
    }

    record Allowed(Map<String, Object> clientConfigs) implements Decision {
    }

    record Refused(int status, String message) implements Decision {
    }

    /**
     * @param local             the broker's own client configs for its inter-broker listener (LocalClientConfigs)
     * @param operator          the request's Basic credentials, if any
     * @param authorizerEnabled whether the broker authorizes requests
     */
    static Decision decide(Map<String, Object> local, Optional<Credentials> operator, boolean authorizerEnabled) {
        SecurityProtocol protocol = SecurityProtocol.forName(String.valueOf(local.getOrDefault(
                CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, SecurityProtocol.PLAINTEXT.name)));
        Map<String, Object> configs = new HashMap<>(local);
        configs.remove(SaslConfigs.SASL_JAAS_CONFIG);
        if (protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL) {
            String mechanism = String.valueOf(local.getOrDefault(SaslConfigs.SASL_MECHANISM,
                    SaslConfigs.DEFAULT_SASL_MECHANISM));
            String module;
            if (mechanism.equals("PLAIN")) {
                module = PlainLoginModule.class.getName();
            } else if (mechanism.startsWith("SCRAM-")) {
                module = ScramLoginModule.class.getName();
            } else {
                return new Refused(403, "Dashboard actions log in with a user name and password (PLAIN or SCRAM); "
                        + "this cluster's listener uses " + mechanism + ": use bin/twinlog-mirrors.sh");
            }
            if (operator.isEmpty()) {
                return new Refused(401, "This cluster's listener needs SASL credentials: log in with your Kafka "
                        + "user name and password (" + mechanism + ")");
            }
            configs.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\""
                    + jaasEscape(operator.get().username()) + "\" password=\"" + jaasEscape(operator.get().password())
                    + "\";");
            return new Allowed(configs);
        }
        if (protocol == SecurityProtocol.SSL && authorizerEnabled) {
            return new Refused(403, "Dashboard actions need a SASL listener to carry the operator's identity: "
                    + "on this TLS listener they would act as the broker itself; use bin/twinlog-mirrors.sh");
        }
        return new Allowed(configs);
    }

    /** JAAS option values are double-quoted; the parser (a StreamTokenizer) takes backslash escapes. */
    private static String jaasEscape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
