package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What the registration does before the broker is registered; registering itself runs in every broker test. */
@Timeout(10)
class RegistrationTest {
    private static Registration registration(Map<String, String> props) {
        return new Registration(new BrokerConfig(props), new MockTime());
    }

    @Test
    void advertisedEndpointsTakeTheBoundPortAndLoopbackForAWildcardHost() {
        Registration r = registration(Map.of(BrokerConfig.BROKER_ID, "1",
                BrokerConfig.LISTENERS, "PLAINTEXT://0.0.0.0:0,INTERNAL://:9093",
                BrokerConfig.ADVERTISED_LISTENERS, "PLAINTEXT://0.0.0.0:0,INTERNAL://broker-1.example:9093",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
                "inter.broker.listener.name", "INTERNAL"));
        assertEquals(List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 40000),
                        new Endpoint("INTERNAL", "broker-1.example", 9093)),
                r.advertisedEndpoints(Map.of("PLAINTEXT", 40000, "INTERNAL", 9093)));
        // not bound yet: the port stays 0
        assertEquals(0, r.advertisedEndpoints(Map.of()).get(0).port());
    }

    @Test
    void beforeRegisteringNothingIsWrittenAndNothingWaits() throws Exception {
        Registration r = registration(Map.of(BrokerConfig.BROKER_ID, "1"));
        r.publishOffline(List.of("/data/1"), Set.of(new TopicIdPartition(Uuid.randomUuid(), 0, "orders")));
        r.controlledShutdown(null, null); // never registered: nothing to announce, returns at once
        r.close(); // no registrar: nothing to close
    }
}
