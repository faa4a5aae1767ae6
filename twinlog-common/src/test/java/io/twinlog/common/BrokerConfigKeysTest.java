package io.twinlog.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the keys themselves say: which are Twinlog's, which hold secrets. */
@Timeout(10)
class BrokerConfigKeysTest {
    @Test
    void definedKeysAndPerListenerOverridesAreTwinlogs() {
        assertTrue(BrokerConfigKeys.isDefined(BrokerConfig.ZOOKEEPER_CONNECT));
        assertTrue(BrokerConfigKeys.isDefined("listener.name.sasl_ssl.ssl.keystore.location"));
        assertFalse(BrokerConfigKeys.isDefined("nmu.partitions"));
        assertFalse(BrokerConfigKeys.isDefined("group.coordinator.threads.x"));
    }

    @Test
    void passwordTypedAndSecretNamedKeysAreSecret() {
        assertTrue(BrokerConfigKeys.isSecret(BrokerConfig.PASSWORD_ENCODER_SECRET), "password-typed");
        assertTrue(BrokerConfigKeys.isSecret("ssl.keystore.password"));
        assertTrue(BrokerConfigKeys.isSecret("listener.name.sasl_plaintext.plain.sasl.jaas.config"));
        assertTrue(BrokerConfigKeys.isSecret("listener.name.ssl.ssl.keystore.key"));
        assertTrue(BrokerConfigKeys.isSecret("my.client.Secret.thing"), "by name, any case");
        assertFalse(BrokerConfigKeys.isSecret(BrokerConfig.ZOOKEEPER_CONNECT));
        assertFalse(BrokerConfigKeys.isSecret("ssl.keystore.location"));
    }
}
