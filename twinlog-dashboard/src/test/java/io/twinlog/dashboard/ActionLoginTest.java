package io.twinlog.dashboard;

import io.twinlog.dashboard.ActionLogin.Allowed;
import io.twinlog.dashboard.ActionLogin.Credentials;
import io.twinlog.dashboard.ActionLogin.Refused;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A dashboard action logs in as the operator, never as the broker; without a usable login it is refused. */
@Timeout(60)
class ActionLoginTest {
    private static final String BROKER_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "username=\"broker\" password=\"broker-secret\";";
    private static final Optional<Credentials> ALICE = Optional.of(new Credentials("alice", "pa\"ss\\word"));

    private static Map<String, Object> sasl(String protocol, String mechanism) {
        return Map.of("bootstrap.servers", "127.0.0.1:9093", "security.protocol", protocol,
                "sasl.mechanism", mechanism, "sasl.jaas.config", BROKER_JAAS);
    }

    @Test
    void plaintextGoesAsIs() {
        Allowed allowed = assertInstanceOf(Allowed.class, ActionLogin.decide(
                Map.of("bootstrap.servers", "127.0.0.1:9092", "security.protocol", "PLAINTEXT"), Optional.empty(),
                true));
        assertEquals("127.0.0.1:9092", allowed.clientConfigs().get("bootstrap.servers"));
    }

    @Test
    void saslWithoutCredentialsAsksForALogin() {
        Refused refused = assertInstanceOf(Refused.class, ActionLogin.decide(sasl("SASL_SSL", "SCRAM-SHA-512"),
                Optional.empty(), true));
        assertEquals(401, refused.status());
        assertTrue(refused.message().contains("needs SASL credentials"), refused.message());
    }

    @Test
    void saslLogsInAsTheOperatorNeverAsTheBroker() {
        Allowed allowed = assertInstanceOf(Allowed.class, ActionLogin.decide(sasl("SASL_PLAINTEXT", "PLAIN"), ALICE,
                true));
        String jaas = (String) allowed.clientConfigs().get("sasl.jaas.config");
        assertEquals("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" "
                + "password=\"pa\\\"ss\\\\word\";", jaas);
        assertFalse(jaas.contains("broker-secret"));
    }

    @Test
    void scramUsesScramsLoginModule() {
        Allowed allowed = assertInstanceOf(Allowed.class, ActionLogin.decide(sasl("SASL_SSL", "SCRAM-SHA-256"), ALICE,
                true));
        assertTrue(((String) allowed.clientConfigs().get("sasl.jaas.config"))
                .startsWith("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\""));
    }

    @Test
    void otherMechanismsAreRefused() {
        Refused refused = assertInstanceOf(Refused.class, ActionLogin.decide(sasl("SASL_SSL", "GSSAPI"), ALICE, true));
        assertEquals(403, refused.status());
    }

    @Test
    void tlsWithAnAuthorizerIsRefused() {
        Refused refused = assertInstanceOf(Refused.class, ActionLogin.decide(Map.of("security.protocol", "SSL"),
                ALICE, true));
        assertEquals(403, refused.status());
        assertInstanceOf(Allowed.class, ActionLogin.decide(Map.of("security.protocol", "SSL"), Optional.empty(),
                false));
    }

    @Test
    void basicHeaderParsing() {
        String header = "Basic " + Base64.getEncoder().encodeToString("bob:se:cret".getBytes(StandardCharsets.UTF_8));
        assertEquals(Optional.of(new Credentials("bob", "se:cret")), Credentials.fromHeader(header));
        assertEquals(Optional.empty(), Credentials.fromHeader(null));
        assertEquals(Optional.empty(), Credentials.fromHeader("Bearer x"));
        assertEquals(Optional.empty(), Credentials.fromHeader("Basic !!!"));
        assertFalse(new Credentials("bob", "secret").toString().contains("secret"));
    }
}
