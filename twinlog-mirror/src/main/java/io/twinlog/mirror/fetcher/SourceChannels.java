package io.twinlog.mirror.fetcher;

import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Builds the channel (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL) of the mirror fetcher's connections to the source
 * from the mirror's source client configs — the same keys and meaning as for any Kafka client
 * ({@code security.protocol}, {@code ssl.truststore.location}, {@code sasl.mechanism}, {@code sasl.jaas.config},
 * ...), interpreted by kafka-clients itself so every mechanism a Kafka client supports works here too.
 */
public final class SourceChannels {
    private static final Logger log = LoggerFactory.getLogger(SourceChannels.class);

    private SourceChannels() {
    }

    /**
     * @throws ConfigException or {@link KafkaException} when
     *         the configs are invalid (unknown protocol, unreadable keystore, bad JAAS config)
     */
    public static ChannelBuilder channelBuilder(Map<String, String> sourceClientConfigs, String clientId, Time time) {
        return ClientUtils.createChannelBuilder(clientConfig(sourceClientConfigs, clientId), time,
                new LogContext("[" + clientId + "] "));
    }

    /**
     * The mirror's {@code request.timeout.ms}, typed by Kafka's client config definition (its default, 30 s, when
     * unset): how long the mirror fetchers' requests to the source wait for an answer.
     *
     * @throws ConfigException when it is not an int
     */
    public static int requestTimeoutMs(Map<String, String> sourceClientConfigs) {
        return clientConfig(sourceClientConfigs, "twinlog-mirror").getInt(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG);
    }

    private static AdminClientConfig clientConfig(Map<String, String> sourceClientConfigs, String clientId) {
        Map<String, Object> props = new HashMap<>(sourceClientConfigs);
        props.putIfAbsent(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        // the admin client's config definition holds every security setting a Kafka client accepts
        return new AdminClientConfig(props);
    }

    /**
     * Empty when the configs make a usable channel and a positive {@code request.timeout.ms} (Kafka's definition
     * allows 0, which would time every request out at once); else why not, in one line (for create/alter
     * validation).
     */
    public static Optional<String> validate(Map<String, String> sourceClientConfigs) {
        try {
            channelBuilder(sourceClientConfigs, "twinlog-mirror-validation", Time.SYSTEM).close();
            int requestTimeoutMs = requestTimeoutMs(sourceClientConfigs);
            if (requestTimeoutMs <= 0) {
                return Optional.of("Invalid source client configs: " + AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG
                        + " must be a positive number of milliseconds, not " + requestTimeoutMs);
            }
            return Optional.empty();
        } catch (RuntimeException e) {
            // broad: Kafka's channel builders throw any RuntimeException for a bad setting; its message is the
            // error answer, its stack trace at DEBUG
            log.debug("Invalid source client configs", e);
            return Optional.of("Invalid source client configs: " + e.getMessage());
        }
    }
}
