package io.twinlog.mirror.runtime;

import org.apache.kafka.clients.admin.ForwardingAdmin;

import java.time.Duration;
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

    @Override
    public void close() {
        close(CLOSE_TIMEOUT);
    }
}
