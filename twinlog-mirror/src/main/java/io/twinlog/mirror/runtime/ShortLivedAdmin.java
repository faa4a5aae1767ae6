package io.twinlog.mirror.runtime;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ForwardingAdmin;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A Kafka admin client for one pass or one request, whose {@code close()} gives pending calls at most a second:
 * the plain client waits for them to time out (15 s here), so a pass interrupted by a broker shutdown would leave
 * its client reconnecting to a dead cluster long after the broker stopped.
 */
final class ShortLivedAdmin extends ForwardingAdmin {
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(1);

    ShortLivedAdmin(Map<String, Object> configs) {
        super(configs);
    }

    /** A client of this broker's own cluster ({@code local}: address and security) named {@code clientId}. */
    static Admin local(String clientId, Map<String, Object> local, int timeoutMs) {
        Map<String, Object> props = new HashMap<>(local);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
        return new ShortLivedAdmin(props);
    }

    @Override
    public void close() {
        close(CLOSE_TIMEOUT);
    }
}
