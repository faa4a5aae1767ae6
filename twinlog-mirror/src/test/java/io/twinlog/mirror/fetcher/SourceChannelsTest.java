package io.twinlog.mirror.fetcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The mirror's {@code request.timeout.ms}: Kafka's default when unset, the operator's when set, positive only. */
@Timeout(30)
class SourceChannelsTest {
    private static final String BOOTSTRAP = "127.0.0.1:9092";

    @Test
    void theRequestTimeoutIsKafkasDefaultUnlessSet() {
        assertEquals(30_000, SourceChannels.requestTimeoutMs(Map.of("bootstrap.servers", BOOTSTRAP)));
        assertEquals(1_500, SourceChannels.requestTimeoutMs(Map.of("bootstrap.servers", BOOTSTRAP,
                "request.timeout.ms", "1500")));
        assertEquals(Optional.empty(), SourceChannels.validate(Map.of("bootstrap.servers", BOOTSTRAP,
                "request.timeout.ms", "1500")));
    }

    @Test
    void aRequestTimeoutThatIsNotAPositiveIntIsRefused() {
        for (String bad : new String[] {"0", "-5", "soon", "3000000000"}) {
            Optional<String> error = SourceChannels.validate(Map.of("bootstrap.servers", BOOTSTRAP,
                    "request.timeout.ms", bad));
            assertTrue(error.isPresent() && error.get().contains("request.timeout.ms"), bad + ": " + error);
        }
    }
}
