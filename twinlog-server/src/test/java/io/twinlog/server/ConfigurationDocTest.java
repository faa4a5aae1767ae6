package io.twinlog.server;

import io.twinlog.common.BrokerConfigDocs;
import io.twinlog.group.GroupCoordinatorHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/configuration.md is the rendering of every definition the broker checks its properties with, not a copy that
 * drifts (decision 107): its own keys, and those of the Kafka coordinators it hosts ({@link
 * BrokerConfigCheck#HOSTED_DEFINITIONS}) with the defaults the broker gives them.
 */
@Timeout(10)
class ConfigurationDocTest {
    private static final Path COMMITTED = Path.of("..", "docs", "configuration.md");
    private static final Path CURRENT = Path.of("target", "configuration.md");

    @Test
    void committedDocMatchesTheDefinitions() throws IOException {
        String generated = BrokerConfigDocs.markdown(BrokerConfigCheck.HOSTED_DEFINITIONS,
                GroupCoordinatorHost.TWINLOG_DEFAULTS);
        Files.createDirectories(CURRENT.getParent());
        Files.writeString(CURRENT, generated, StandardCharsets.UTF_8);
        assertTrue(Files.exists(COMMITTED), COMMITTED.toAbsolutePath() + " is missing: copy " + CURRENT.toAbsolutePath());
        assertEquals(generated, Files.readString(COMMITTED, StandardCharsets.UTF_8),
                "docs/configuration.md differs from the broker's config definitions: copy " + CURRENT.toAbsolutePath()
                        + " over it");
    }

    @Test
    void everyHostedKeyHasItsSection() {
        String doc = BrokerConfigDocs.markdown(BrokerConfigCheck.HOSTED_DEFINITIONS,
                GroupCoordinatorHost.TWINLOG_DEFAULTS);
        BrokerConfigCheck.HOSTED_DEFINITIONS.configKeys().values().stream().filter(key -> !key.internalConfig)
                .forEach(key -> assertTrue(doc.contains("\n### `" + key.name + "`\n"), key.name));
        GroupCoordinatorHost.TWINLOG_DEFAULTS.forEach((key, value) -> assertTrue(
                doc.contains("| `" + value + "` (Kafka's: "), key + " shows the broker's default"));
    }
}
