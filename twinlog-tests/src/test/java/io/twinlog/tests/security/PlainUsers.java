package io.twinlog.tests.security;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Clients of a SASL_PLAINTEXT test cluster logging in with SASL/PLAIN as one of its users, whose password is
 * {@code <user>-secret}; short timeouts, so that a refused request fails the test quickly rather than retrying.
 */
final class PlainUsers {
    static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required";
    private final Supplier<String> bootstrapServers;

    PlainUsers(Supplier<String> bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
    }

    /**
     * A one-listener SASL_PLAINTEXT cluster with Kafka's StandardAuthorizer and SASL/PLAIN users: {@code User:admin}
     * is the super user, the brokers' own login and the test kit's client; {@code users} may log in too.
     */
    static TestCluster.Builder authorizedCluster(Collection<String> users) {
        StringBuilder jaas = new StringBuilder(JAAS + " username=\"admin\" password=\"" + password("admin")
                + "\" user_admin=\"" + password("admin") + "\"");
        users.forEach(u -> jaas.append(" user_").append(u).append("=\"").append(password(u)).append('"'));
        return TestCluster.builder()
                .brokerProperty("listeners", "SASL_PLAINTEXT://127.0.0.1:0")
                .brokerProperty("inter.broker.listener.name", "SASL_PLAINTEXT")
                .brokerProperty("sasl.enabled.mechanisms", "PLAIN")
                .brokerProperty("sasl.mechanism.inter.broker.protocol", "PLAIN")
                .brokerProperty("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas + ";")
                .brokerProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                .brokerProperty("super.users", "User:admin")
                .clientProperty(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT")
                .clientProperty(SaslConfigs.SASL_MECHANISM, "PLAIN")
                .clientProperty(SaslConfigs.SASL_JAAS_CONFIG, JAAS + " username=\"admin\" password=\""
                        + password("admin") + "\";");
    }

    static String password(String user) {
        return user + "-secret";
    }

    Map<String, Object> client(String user) {
        Map<String, Object> cfg = new HashMap<>();
        cfg.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers.get());
        cfg.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        cfg.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        cfg.put(SaslConfigs.SASL_JAAS_CONFIG, JAAS + " username=\"" + user + "\" password=\"" + password(user)
                + "\";");
        cfg.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        cfg.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        return cfg;
    }

    KafkaProducer<byte[], byte[]> producer(String user, boolean idempotent) {
        Map<String, Object> cfg = client(user);
        cfg.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent);
        cfg.put(ProducerConfig.ACKS_CONFIG, "all");
        cfg.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
        cfg.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000);
        cfg.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        cfg.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaProducer<>(cfg);
    }

    /** A consumer without a group unless the overrides name one; offsets are never committed on its own. */
    KafkaConsumer<byte[], byte[]> consumer(String user, Map<String, Object> overrides) {
        Map<String, Object> cfg = client(user);
        cfg.put("key.deserializer", ByteArrayDeserializer.class);
        cfg.put("value.deserializer", ByteArrayDeserializer.class);
        cfg.put("enable.auto.commit", false);
        cfg.putAll(overrides);
        return new KafkaConsumer<>(cfg);
    }
}
