package io.twinlog.mirror.store;

import io.twinlog.controller.zk.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class SecretCodecTest {
    private static final String JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required "
            + "username=\"mirror\" password=\"mirror-secret\";";

    @Test
    void aSecretRoundTripsAndIsNeverWrittenTheSameWayTwice() {
        SecretCodec codec = new SecretCodec("s3cret", Optional.empty());
        String once = codec.encrypt(JAAS);
        String twice = codec.encrypt(JAAS);
        assertNotEquals(once, twice, "a random salt and IV per value");
        assertFalse(once.contains("mirror-secret"));
        assertEquals(JAAS, codec.decrypt(once));
        assertEquals(JAAS, codec.decrypt(twice));
    }

    @Test
    void anotherSecretCannotDecryptItAndTheOldSecretStillDoes() {
        String written = new SecretCodec("old", Optional.empty()).encrypt(JAAS);
        IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class,
                () -> new SecretCodec("new", Optional.empty()).decrypt(written));
        assertTrue(wrong.getMessage().contains("password.encoder.secret"), wrong.getMessage());
        assertEquals(JAAS, new SecretCodec("new", Optional.of("old")).decrypt(written), "rotation");
        String[] parts = written.split(":");
        byte[] ciphertext = Base64.getDecoder().decode(parts[3]);
        ciphertext[0] ^= 1;
        String tampered = String.join(":", parts[0], parts[1], parts[2], Base64.getEncoder().encodeToString(ciphertext));
        IllegalArgumentException rejected = assertThrows(IllegalArgumentException.class,
                () -> new SecretCodec("old", Optional.empty()).decrypt(tampered));
        assertTrue(rejected.getMessage().contains("does not decrypt"), "the GCM tag catches a changed byte");
    }

    @Test
    void aDefinitionKeepsItsSecretsEncryptedInItsStoredForm() {
        SecretCodec codec = new SecretCodec("s3cret", Optional.empty());
        MirrorDefinition dr = new MirrorDefinition("dr", Map.of("bootstrap.servers", "src:9092",
                "sasl.jaas.config", JAAS, "ssl.truststore.password", "trust-me", "security.protocol", "SASL_SSL"),
                Optional.of("abc"), MirrorDefinition.State.ACTIVE, Optional.empty());
        byte[] stored = Json.encode(dr.toJson(Optional.of(codec)));
        String text = new String(stored, StandardCharsets.UTF_8);
        assertFalse(text.contains("mirror-secret") || text.contains("trust-me"), text);
        assertTrue(text.contains("\"security.protocol\":\"SASL_SSL\"") && text.contains("encryptedConfigs"), text);
        assertEquals(dr, MirrorDefinition.fromJson("dr", stored, "/mirrors/dr", Optional.of(codec)));
        IllegalStateException noSecret = assertThrows(IllegalStateException.class,
                () -> MirrorDefinition.fromJson("dr", stored, "/mirrors/dr"));
        assertTrue(noSecret.getMessage().contains("password.encoder.secret"), noSecret.getMessage());
    }
}
