package io.twinlog.server.quota;

import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Client quota entities to and from Kafka's ZooKeeper-mode node paths ({@link ClientQuotaPaths}). */
@Timeout(10)
class ClientQuotaPathsTest {

    @Test
    void everyEntityShapeMapsToKafkasPathAndBack() {
        assertRoundTrip(entity("user", "alice"), "/config/users/alice");
        assertRoundTrip(entity("user", null), "/config/users/<default>");
        assertRoundTrip(entity("client-id", "app"), "/config/clients/app");
        assertRoundTrip(entity("client-id", null), "/config/clients/<default>");
        assertRoundTrip(entity("user", "alice", "client-id", "app"), "/config/users/alice/clients/app");
        assertRoundTrip(entity("user", null, "client-id", null), "/config/users/<default>/clients/<default>");
        assertRoundTrip(entity("ip", "10.0.0.1"), "/config/ips/10.0.0.1");
        assertRoundTrip(entity("ip", null), "/config/ips/<default>");
    }

    @Test
    void namesAreSanitizedSoNoNameCanPassForADefaultOrAPathSeparator() {
        assertRoundTrip(entity("client-id", "a/b"), "/config/clients/a%2Fb");
        assertRoundTrip(entity("user", "<default>"), "/config/users/%3Cdefault%3E");
        assertRoundTrip(entity("user", "CN=x,O=y"), "/config/users/CN%3Dx%2CO%3Dy");
    }

    @Test
    void containersAndOtherNodesAreNoEntity() {
        assertEquals(Optional.empty(), ClientQuotaPaths.entity("/config/users"));
        assertEquals(Optional.empty(), ClientQuotaPaths.entity("/config/users/alice/clients"));
        assertEquals(Optional.empty(), ClientQuotaPaths.entity("/config/topics/t"));
    }

    private static void assertRoundTrip(ClientQuotaEntity entity, String path) {
        assertEquals(path, ClientQuotaPaths.path(entity));
        assertEquals(Optional.of(entity), ClientQuotaPaths.entity(path));
    }

    private static ClientQuotaEntity entity(String... typeAndName) {
        Map<String, String> entries = new HashMap<>();
        for (int i = 0; i < typeAndName.length; i += 2) {
            entries.put(typeAndName[i], typeAndName[i + 1]);
        }
        return new ClientQuotaEntity(entries);
    }
}
